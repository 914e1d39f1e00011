//go:build devtensor_nopkgconfig

package devtensor

// With the build tag devtensor_nopkgconfig, only -ldevtensor is passed; supply the
// paths yourself, e.g.
//
//	CGO_CFLAGS=-I$PREFIX/include CGO_LDFLAGS="-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib"

// #cgo LDFLAGS: -ldevtensor
import "C"

// cgoBuildTags is the build tag that chose this file, for the tests that build a package
// importing this one (TestVetReportsCopies).
const cgoBuildTags = "devtensor_nopkgconfig"
