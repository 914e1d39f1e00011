//go:build !devtensor_nopkgconfig

package devtensor

// By default the compiler and linker flags come from pkg-config (devtensor.pc, which
// adds an rpath). Set PKG_CONFIG_PATH to <prefix>/lib/pkgconfig for a private install.

// #cgo pkg-config: devtensor
import "C"

// cgoBuildTags is the build tag that chose this file, for the tests that build a package
// importing this one (TestVetReportsCopies).
const cgoBuildTags = ""
