package devtensor

import (
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// threadStreamIsDefault reports whether dev's current stream, as the calling goroutine's
// OS thread sees it, is the default one.
func threadStreamIsDefault(t *testing.T, dev Device) bool {
	t.Helper()
	s, err := ThreadStream(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return must(s.IsDefault())
}

// A new stream is on its device, not the default, and on the CPU always finished, with
// no native handle. Close releases it (the live-handle count is back), twice is a no-op.
func TestStreamCreateClose(t *testing.T) {
	noLeaks(t)
	before := LiveHandles()
	s := must(NewStream(CPU(1)))
	if n := LiveHandles(); n != before+1 {
		t.Errorf("NewStream: %d live handles, want %d", n, before+1)
	}
	if d := must(s.Device()); d != CPU(1) {
		t.Errorf("NewStream(cpu:1) is on %v", d)
	}
	if must(s.IsDefault()) {
		t.Error("a new stream is the default stream")
	}
	if done := must(s.Query()); !done {
		t.Error("a CPU stream has unfinished work")
	}
	if err := s.Synchronize(); err != nil {
		t.Error(err)
	}
	if h := must(s.NativeHandle()); h != 0 {
		t.Errorf("a CPU stream has the native handle %#x, want 0", h)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := LiveHandles(); n != before {
		t.Errorf("after Close: %d live handles, want %d", n, before)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var nilStream *Stream
	if err := nilStream.Close(); err != nil {
		t.Errorf("Close of a nil Stream: %v", err)
	}

	// The process default device, and devices that are not there.
	d := must(NewStream(DefaultDevice))
	defer d.Close()
	if dev := must(d.Device()); dev != CPU(0) {
		t.Errorf("NewStream(DefaultDevice) is on %v, want cpu:0", dev)
	}
	_, err := NewStream(CPU(9))
	wantCode(t, err, ErrInvalidDevice)
	_, err = DefaultStream(CPU(9))
	wantCode(t, err, ErrInvalidDevice)
	_, err = NewEvent(CPU(9))
	wantCode(t, err, ErrInvalidDevice)
	if !CUDAIsAvailable() {
		_, err = NewStream(CUDA(0))
		wantCode(t, err, ErrDeviceUnavailable)
	}
}

func TestDefaultStream(t *testing.T) {
	noLeaks(t)
	for _, dev := range []Device{CPU(0), CPU(3)} {
		s := must(DefaultStream(dev))
		if !must(s.IsDefault()) {
			t.Errorf("DefaultStream(%v) is not the default", dev)
		}
		if d := must(s.Device()); d != dev {
			t.Errorf("DefaultStream(%v) is on %v", dev, d)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
	// Outside WithStream a goroutine is on the default stream, wherever it runs.
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("ThreadStream outside WithStream is not the default stream")
	}
}

// WithStream sets the thread's stream for its device only, keeps the goroutine on that
// thread while fn runs, runs ops there, and restores the default afterwards: after a
// return, an error and a panic alike.
func TestWithStreamRunsOpsAndRestores(t *testing.T) {
	noLeaks(t)
	s := must(NewStream(CPU(0)))
	defer s.Close()
	a := must(FromSlice([]float32{1, 2, 3}, []int64{3}, CPU(0)))
	b := must(FromSlice([]float32{10, 20, 30}, []int64{3}, CPU(0)))
	defer closeAll(t, a, b)
	ran := false
	err := WithStream(s, func() error {
		ran = true
		cur := must(ThreadStream(CPU(0)))
		defer cur.Close()
		if must(cur.IsDefault()) || must(cur.Device()) != CPU(0) {
			t.Error("inside WithStream the thread's cpu:0 stream is not s")
		}
		if !threadStreamIsDefault(t, CPU(1)) {
			t.Error("WithStream on cpu:0 changed cpu:1's stream")
		}
		// The goroutine stays on its thread (and so on s) across scheduling points.
		for i := 0; i < 50; i++ {
			runtime.Gosched()
			time.Sleep(50 * time.Microsecond)
			if threadStreamIsDefault(t, CPU(0)) {
				t.Fatal("the goroutine left WithStream's thread")
			}
		}
		// Another goroutine runs on another thread, on the default stream.
		other := make(chan bool)
		go func() {
			s, err := ThreadStream(CPU(0))
			if err != nil {
				other <- false
				return
			}
			d, _ := s.IsDefault()
			s.Close() // before the send: the test's leak check may run as soon as it is received
			other <- d
		}()
		if !<-other {
			t.Error("a goroutine started inside WithStream is not on the default stream")
		}
		c, err := a.Add(b)
		if err != nil {
			return err
		}
		defer c.Close()
		if got := must(ToSlice[float32](c)); !reflect.DeepEqual(got, []float32{11, 22, 33}) {
			t.Errorf("a + b on the stream = %v", got)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("WithStream: %v (fn ran: %v)", err, ran)
	}
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("after WithStream the thread's stream is not the default again")
	}

	// fn's error comes back, and the stream is restored.
	sentinel := errors.New("fn failed")
	runtime.LockOSThread() // so the checks below see the thread WithStream used
	defer runtime.UnlockOSThread()
	if err := WithStream(s, func() error { return sentinel }); err != sentinel {
		t.Errorf("WithStream returned %v, want fn's error", err)
	}
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("not restored after fn failed")
	}
	// A panic goes on, after the restore.
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want fn's panic", r)
			}
		}()
		_ = WithStream(s, func() error { panic("boom") })
	}()
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("not restored after fn panicked")
	}

	// Calls nest; the default stream sets the default back for the inner call.
	def := must(DefaultStream(CPU(0)))
	defer def.Close()
	err = WithStream(s, func() error {
		if err := WithStream(def, func() error {
			if !threadStreamIsDefault(t, CPU(0)) {
				t.Error("WithStream(DefaultStream) is not on the default stream")
			}
			return nil
		}); err != nil {
			return err
		}
		if threadStreamIsDefault(t, CPU(0)) {
			t.Error("the inner WithStream did not restore the outer one's stream")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !threadStreamIsDefault(t, CPU(0)) {
		t.Error("not restored after nested calls")
	}
}

// fn does not run when the stream cannot be set.
func TestWithStreamRefusesClosedStream(t *testing.T) {
	noLeaks(t)
	s := must(NewStream(CPU(0)))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ran := false
	wantCode(t, WithStream(s, func() error { ran = true; return nil }), ErrClosed)
	wantCode(t, WithStream(nil, func() error { ran = true; return nil }), ErrInvalidArgument)
	if ran {
		t.Error("fn ran without its stream")
	}
}

// On the CPU an event completes when it is recorded, and elapsed time is the host clock.
func TestEventRecordElapsedCPU(t *testing.T) {
	noLeaks(t)
	s := must(NewStream(CPU(0)))
	defer s.Close()
	start := must(NewEvent(CPU(0)))
	defer start.Close()
	end := must(NewEvent(CPU(0)))
	defer end.Close()
	if d := must(start.Device()); d != CPU(0) {
		t.Errorf("NewEvent(cpu:0) is on %v", d)
	}
	// Never recorded: finished, nothing to wait for, no time.
	if !must(start.Query()) {
		t.Error("an event never recorded is not finished")
	}
	if err := start.Synchronize(); err != nil {
		t.Error(err)
	}
	_, err := start.ElapsedMs(end)
	if e := wantCode(t, err, ErrInvalidArgument); e.Op != "Event.ElapsedMs" {
		t.Errorf("error from %q", e.Op)
	}

	if err := start.Record(nil); err != nil { // the thread's current stream: the default
		t.Fatal(err)
	}
	if !must(start.Query()) {
		t.Error("a CPU event is not finished once recorded")
	}
	_, err = start.ElapsedMs(end) // end still never recorded
	wantCode(t, err, ErrInvalidArgument)
	time.Sleep(20 * time.Millisecond)
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Error(err)
	}
	ms := must(start.ElapsedMs(end))
	if ms < 19.99 || ms > 10000 {
		t.Errorf("ElapsedMs = %v across a 20 ms sleep", ms)
	}
	if back := must(end.ElapsedMs(start)); back > -19.99 {
		t.Errorf("ElapsedMs from the later mark = %v, want <= -20", back)
	}
	// Streams wait for events and for each other (already ordered on the CPU).
	if err := s.WaitEvent(start); err != nil {
		t.Error(err)
	}
	def := must(DefaultStream(CPU(0)))
	defer def.Close()
	if err := s.WaitStream(def); err != nil {
		t.Error(err)
	}
	if err := def.WaitStream(s); err != nil {
		t.Error(err)
	}
	// Recording inside WithStream (nil: WithStream's stream) works the same.
	if err := WithStream(s, func() error { return start.Record(nil) }); err != nil {
		t.Error(err)
	}
	if ms := must(start.ElapsedMs(end)); ms > 0 {
		t.Errorf("start re-recorded after end, ElapsedMs = %v, want <= 0", ms)
	}

	// Device rules: another device's stream cannot be recorded on, and events of two
	// devices have no elapsed time; waiting on another device's event is allowed.
	other := must(NewStream(CPU(1)))
	defer other.Close()
	wantCode(t, start.Record(other), ErrDeviceMismatch)
	ev1 := must(NewEvent(CPU(1)))
	defer ev1.Close()
	if err := ev1.Record(other); err != nil {
		t.Fatal(err)
	}
	_, err = start.ElapsedMs(ev1)
	wantCode(t, err, ErrInvalidArgument)
	if err := s.WaitEvent(ev1); err != nil {
		t.Errorf("WaitEvent on another device's event: %v", err)
	}
	_, err = start.ElapsedMs(nil)
	wantCode(t, err, ErrInvalidArgument)
}

func TestTensorRecordStream(t *testing.T) {
	noLeaks(t)
	x := must(Ones([]int64{4}, Float32, CPU(0)))
	defer x.Close()
	s := must(NewStream(CPU(0)))
	if err := x.RecordStream(s); err != nil { // nothing to do on the CPU, and no error
		t.Error(err)
	}
	other := must(NewStream(CPU(2)))
	defer other.Close()
	wantCode(t, x.RecordStream(other), ErrDeviceMismatch)
	wantCode(t, x.RecordStream(nil), ErrInvalidArgument)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, x.RecordStream(s), ErrClosed)
	if got := must(ToSlice[float32](x)); !reflect.DeepEqual(got, []float32{1, 1, 1, 1}) {
		t.Errorf("x = %v after RecordStream", got)
	}
}

// A closed Stream or Event fails with ErrClosed; a handle released by another owner
// (outside this binding) fails with the library's ErrInvalidHandle, and never crashes.
func TestReleasedStreamAndEvent(t *testing.T) {
	noLeaks(t)
	s := must(NewStream(CPU(0)))
	e := must(NewEvent(CPU(0)))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Synchronize(), ErrClosed)
	_, err := s.Query()
	wantCode(t, err, ErrClosed)
	_, err = s.Device()
	wantCode(t, err, ErrClosed)
	_, err = s.IsDefault()
	wantCode(t, err, ErrClosed)
	_, err = s.NativeHandle()
	wantCode(t, err, ErrClosed)
	wantCode(t, e.Record(nil), ErrClosed)
	wantCode(t, e.Synchronize(), ErrClosed)
	_, err = e.Query()
	wantCode(t, err, ErrClosed)
	_, err = e.Device()
	wantCode(t, err, ErrClosed)

	live := must(NewStream(CPU(0)))
	defer live.Close()
	liveEv := must(NewEvent(CPU(0)))
	defer liveEv.Close()
	wantCode(t, live.WaitEvent(e), ErrClosed)
	wantCode(t, live.WaitStream(s), ErrClosed)
	wantCode(t, s.WaitEvent(liveEv), ErrClosed)
	_, err = liveEv.ElapsedMs(e)
	wantCode(t, err, ErrClosed)

	// A second owner of one handle (what a copy by value would make, and go vet
	// reports): once the first releases it, the library refuses the stale handle.
	s2 := must(NewStream(CPU(0)))
	alias := &Stream{h: atomic.LoadUintptr(&s2.h)}
	e2 := must(NewEvent(CPU(0)))
	evAlias := &Event{h: atomic.LoadUintptr(&e2.h)}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, alias.Synchronize(), ErrInvalidHandle)
	wantCode(t, WithStream(alias, func() error { t.Error("fn ran on a released stream"); return nil }),
		ErrInvalidHandle)
	wantCode(t, evAlias.Record(live), ErrInvalidHandle)
	wantCode(t, live.WaitEvent(evAlias), ErrInvalidHandle)
	wantCode(t, alias.Close(), ErrInvalidHandle) // a double release is reported, not done
	wantCode(t, evAlias.Close(), ErrInvalidHandle)
}

func TestStreamCloseConcurrent(t *testing.T) {
	noLeaks(t)
	for round := 0; round < 20; round++ {
		s := must(NewStream(CPU(0)))
		e := must(NewEvent(CPU(0)))
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Close(); err != nil {
					t.Error(err)
				}
				if err := e.Close(); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
}

// A forgotten Stream or Event is released by its finalizer.
func TestStreamFinalizer(t *testing.T) {
	noLeaks(t)
	before := LiveHandles()
	func() {
		for i := 0; i < 10; i++ {
			must(NewStream(CPU(0)))
			must(NewEvent(CPU(0)))
		}
	}()
	for i := 0; i < 50 && LiveHandles() != before; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := LiveHandles(); n != before {
		t.Errorf("%d live handles after the finalizers, want %d", n, before)
	}
}

// The DLPack imports ordered after a producer's stream: host memory takes -1 or 0 (no
// stream) and refuses anything else, leaving the struct the caller's.
func TestDLPackStreamImports(t *testing.T) {
	noLeaks(t)
	x := must(FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, CPU(0)))
	defer x.Close()

	p := must(x.ToDLPack())
	_, err := FromDLPackStream(p, 7)
	wantCode(t, err, ErrInvalidArgument)
	_, err = FromDLPackStream(p, 1) // a CUDA stream value, for host memory
	wantCode(t, err, ErrInvalidArgument)
	y := must(FromDLPackStream(p, -1)) // still ours after the failures: import it now
	defer y.Close()
	p = must(x.ToDLPack())
	z := must(FromDLPackStream(p, 0))
	defer z.Close()
	for _, u := range []*Tensor{y, z} {
		if got := must(ToSlice[float32](u)); !reflect.DeepEqual(got, []float32{1, 2, 3, 4}) {
			t.Errorf("import holds %v", got)
		}
	}

	v := must(x.ToDLPackVersioned())
	_, err = FromDLPackVersionedStream(v, 3)
	wantCode(t, err, ErrInvalidArgument)
	s := must(NewStream(CPU(0)))
	defer s.Close()
	var w *Tensor
	if err := WithStream(s, func() (err error) {
		w, err = FromDLPackVersionedStream(v, -1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := must(ToSlice[float32](w)); !reflect.DeepEqual(got, []float32{1, 2, 3, 4}) {
		t.Errorf("versioned import holds %v", got)
	}
	_, err = FromDLPackStream(nil, -1)
	wantCode(t, err, ErrInvalidArgument)
	_, err = FromDLPackVersionedStream(nil, 0)
	wantCode(t, err, ErrInvalidArgument)
}

// On a GPU: a stream of its own has a native handle and is not the default; ops inside
// WithStream give the right values; events time work.
func TestStreamsOnCUDA(t *testing.T) {
	if !CUDAIsAvailable() {
		t.Skip("CUDA is not usable here")
	}
	noLeaks(t)
	dev := CUDA(0)
	s := must(NewStream(dev))
	defer s.Close()
	def := must(DefaultStream(dev))
	defer def.Close()
	if must(s.IsDefault()) || !must(def.IsDefault()) {
		t.Error("IsDefault is wrong on cuda:0")
	}
	if h := must(s.NativeHandle()); h == 0 || h == must(def.NativeHandle()) {
		t.Errorf("a new CUDA stream has the native handle %#x", h)
	}
	a := must(Ones([]int64{1 << 20}, Float32, dev))
	defer a.Close()
	start := must(NewEvent(dev))
	defer start.Close()
	end := must(NewEvent(dev))
	defer end.Close()
	var c *Tensor
	err := WithStream(s, func() (err error) {
		if err = s.WaitStream(def); err != nil { // a was made on the default stream
			return err
		}
		if err = start.Record(nil); err != nil {
			return err
		}
		if c, err = a.Add(a); err != nil {
			return err
		}
		return end.Record(nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := def.WaitEvent(end); err != nil {
		t.Fatal(err)
	}
	if err := a.RecordStream(s); err != nil {
		t.Error(err)
	}
	if ms := must(start.ElapsedMs(end)); ms < 0 {
		t.Errorf("ElapsedMs = %v", ms)
	}
	if !must(end.Query()) || !must(s.Query()) {
		t.Error("work not finished after ElapsedMs waited for it")
	}
	got := must(ToSlice[float32](c))
	for i, v := range got {
		if v != 2 {
			t.Fatalf("c[%d] = %v, want 2", i, v)
		}
	}
}
