module github.com/devtensor/devtensor/bindings/go/devtensor

go 1.19
