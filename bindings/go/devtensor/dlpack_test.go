package devtensor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/devtensor/devtensor/bindings/go/devtensor/internal/dlpacktest"
)

// The Go flag constants are DLPack's, as the C declaration has them.
func TestDLPackFlagConstants(t *testing.T) {
	if DLPackFlagReadOnly != dlpacktest.FlagReadOnly || DLPackFlagIsCopied != dlpacktest.FlagIsCopied {
		t.Fatalf("flags %#x %#x, C has %#x %#x", DLPackFlagReadOnly, DLPackFlagIsCopied,
			dlpacktest.FlagReadOnly, dlpacktest.FlagIsCopied)
	}
}

// A versioned export says 1.0 with no flags, describes the tensor, and imports back
// zero-copy: a write through either side is seen by the other, and the import keeps
// the memory alive after the original closes.
func TestDLPackVersionedRoundTrip(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int64{2, 3}, CPU(0)))
	p, err := x.ToDLPackVersioned()
	if err != nil {
		t.Fatal(err)
	}
	h := dlpacktest.Read(p)
	if h.Major != 1 || h.Minor != 0 || h.Flags != 0 || !h.HasDeleter {
		t.Fatalf("export: version %d.%d flags %#x deleter %v, want 1.0, 0, set",
			h.Major, h.Minor, h.Flags, h.HasDeleter)
	}
	if !reflect.DeepEqual(h.Shape, []int64{2, 3}) || h.DeviceType != 1 || h.DeviceID != 0 ||
		h.Code != 2 || h.Bits != 32 || h.Lanes != 1 {
		t.Fatalf("export describes %+v, want a 2x3 float32 cpu:0 tensor", h)
	}
	if h.Strides != nil && !reflect.DeepEqual(h.Strides, []int64{3, 1}) {
		t.Fatalf("export strides %v, want [3 1]", h.Strides)
	}
	if got := dlpacktest.Float32s(p, 6); !reflect.DeepEqual(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("export's memory holds %v", got)
	}
	y, err := FromDLPackVersioned(p) // devtensor owns p from here
	if err != nil {
		t.Fatal(err)
	}
	if ro := must(y.IsReadOnly()); ro {
		t.Fatal("an import without the READ_ONLY flag is read-only")
	}
	if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("import holds %v", got)
	}
	if s := must(y.Shape()); !reflect.DeepEqual(s, []int64{2, 3}) {
		t.Fatalf("import shape %v", s)
	}
	if err := y.AddScalarInPlace(10); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](x)); got[0] != 11 || got[5] != 16 {
		t.Fatalf("a write through the import is not seen by the original: %v", got)
	}
	if err := x.MulScalarInPlace(2); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](y)); got[0] != 22 || got[5] != 32 {
		t.Fatalf("a write through the original is not seen by the import: %v", got)
	}
	_ = x.Close()
	if got := must(ToSlice[float32](y)); got[1] != 24 {
		t.Fatalf("the import lost its memory when the original closed: %v", got)
	}
	_ = y.Close()

	// A versioned export nobody imports: its deleter releases it.
	z := must(Zeros([]int64{3}, Float32, CPU(0)))
	q, err := z.ToDLPackVersioned()
	if err != nil {
		t.Fatal(err)
	}
	_ = z.Close()
	dlpacktest.Delete(q)

	_, err = FromDLPackVersioned(nil)
	wantCode(t, err, ErrInvalidArgument)
	_, err = z.ToDLPackVersioned()
	wantCode(t, err, ErrClosed)
	_, err = z.IsReadOnly()
	wantCode(t, err, ErrClosed)
}

// A foreign read-only tensor: readable, never written, exported only as versioned with
// the flag, and its producer's deleter runs once, after the last user lets go.
func TestDLPackVersionedReadOnlyImport(t *testing.T) {
	noLeaks(t)
	deleted := dlpacktest.NewCounter()
	defer deleted.Free()
	p := dlpacktest.NewFloat32([]float32{1, 2, 3, 4}, []int64{2, 2}, 1, 0,
		dlpacktest.FlagReadOnly, deleted)
	if p == nil {
		t.Fatal("out of memory")
	}
	x, err := FromDLPackVersioned(p)
	if err != nil {
		dlpacktest.Free(p)
		t.Fatal(err)
	}
	if !must(x.IsReadOnly()) {
		t.Fatal("IsReadOnly is false for an import flagged READ_ONLY")
	}
	v := must(x.Narrow(0, 1, 1)) // a view shares the read-only memory
	if !must(v.IsReadOnly()) {
		t.Fatal("a view of a read-only tensor is not read-only")
	}

	wantReadOnly := func(what string, err error) {
		t.Helper()
		e := wantCode(t, err, ErrInvalidArgument)
		if !strings.Contains(e.Error(), "read-only") {
			t.Fatalf("%s: %q does not say read-only", what, e.Error())
		}
	}
	wantReadOnly("AddScalarInPlace", x.AddScalarInPlace(1))
	wantReadOnly("AddInPlace", x.AddInPlace(x))
	wantReadOnly("view MulScalarInPlace", v.MulScalarInPlace(2))
	wantReadOnly("CopyFromSlice", CopyFromSlice(x, []float32{9, 9, 9, 9}))
	if got := must(ToSlice[float32](x)); !reflect.DeepEqual(got, []float32{1, 2, 3, 4}) {
		t.Fatalf("a refused write changed the memory: %v", got)
	}

	y, err := x.AddScalar(1) // out of place: reads freely, result is writable
	if err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float32](y)); !reflect.DeepEqual(got, []float32{2, 3, 4, 5}) {
		t.Fatalf("AddScalar of the read-only tensor gave %v", got)
	}
	if must(y.IsReadOnly()) {
		t.Fatal("the out-of-place result is read-only")
	}
	c := must(x.Clone())
	if must(c.IsReadOnly()) {
		t.Fatal("Clone of a read-only tensor is read-only")
	}
	if err := c.AddScalarInPlace(1); err != nil {
		t.Fatal(err)
	}
	closeAll(t, y, c)

	_, err = x.ToDLPack()
	wantCode(t, err, ErrNotSupported)
	q, err := v.ToDLPackVersioned()
	if err != nil {
		t.Fatal(err)
	}
	if h := dlpacktest.Read(q); h.Major != 1 || h.Minor != 0 || h.Flags != dlpacktest.FlagReadOnly {
		t.Fatalf("export of a read-only view: version %d.%d flags %#x, want 1.0, READ_ONLY",
			h.Major, h.Minor, h.Flags)
	}
	if got := dlpacktest.Float32s(q, 2); !reflect.DeepEqual(got, []float32{3, 4}) {
		t.Fatalf("export of the view holds %v", got)
	}

	// The producer's memory lives while any tensor, view or export uses it.
	closeAll(t, x, v)
	ReleasePending()
	if n := deleted.Count(); n != 0 {
		t.Fatalf("the deleter ran %d times while an export still used the memory", n)
	}
	r, err := FromDLPackVersioned(q) // re-import the export: still read-only
	if err != nil {
		t.Fatal(err)
	}
	if !must(r.IsReadOnly()) {
		t.Fatal("re-importing a READ_ONLY export is writable")
	}
	wantReadOnly("re-import AddScalarInPlace", r.AddScalarInPlace(1))
	if got := must(ToSlice[float32](r)); !reflect.DeepEqual(got, []float32{3, 4}) {
		t.Fatalf("re-import holds %v", got)
	}
	_ = r.Close()
	ReleasePending()
	if n := deleted.Count(); n != 1 {
		t.Fatalf("the producer's deleter ran %d times after the last release, want 1", n)
	}
}

// Only major version 1 is taken; a refused tensor stays the caller's, deleter uncalled.
func TestDLPackVersionedRejectsMajorVersion(t *testing.T) {
	noLeaks(t)
	deleted := dlpacktest.NewCounter()
	defer deleted.Free()
	for _, major := range []uint32{2, 0} {
		p := dlpacktest.NewFloat32([]float32{1, 2}, []int64{2}, major, 0, 0, deleted)
		if p == nil {
			t.Fatal("out of memory")
		}
		x, err := FromDLPackVersioned(p)
		if err == nil {
			_ = x.Close()
			t.Fatalf("major version %d was accepted", major)
		}
		wantCode(t, err, ErrNotSupported)
		if n := deleted.Count(); n != 0 {
			t.Fatalf("major version %d refused, yet the deleter ran %d times", major, n)
		}
		dlpacktest.Free(p)
	}
	// Minor versions of 1 are fine; IS_COPIED changes nothing.
	p := dlpacktest.NewFloat32([]float32{1, 2}, []int64{2}, 1, 7, dlpacktest.FlagIsCopied, deleted)
	x, err := FromDLPackVersioned(p)
	if err != nil {
		dlpacktest.Free(p)
		t.Fatal(err)
	}
	if must(x.IsReadOnly()) {
		t.Fatal("IS_COPIED made the tensor read-only")
	}
	if err := x.AddScalarInPlace(1); err != nil {
		t.Fatal(err)
	}
	_ = x.Close()
	ReleasePending()
	if n := deleted.Count(); n != 1 {
		t.Fatalf("deleter ran %d times, want 1", n)
	}
}
