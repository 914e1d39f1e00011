module github.com/devtensor/devtensor/bindings/go

go 1.19
