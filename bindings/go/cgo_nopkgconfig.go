//go:build devtensor_nopkgconfig

package devtensor

// With the build tag devtensor_nopkgconfig, only -ldevtensor is passed; supply the
// paths yourself, e.g.
//
//	CGO_CFLAGS=-I$PREFIX/include CGO_LDFLAGS="-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib"

// #cgo LDFLAGS: -ldevtensor
import "C"
