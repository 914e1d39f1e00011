package devtensor

// #include "shim.h"
import "C"

import (
	"sync"
	"sync/atomic"
)

// Scope closes every Tensor made through it, for loops that allocate (on the GPU
// especially) and should not wait for the garbage collector:
//
//	s := devtensor.NewScope()
//	defer s.Close()
//	c, err := s.Track(a.Add(b))
//
// A Scope is safe for concurrent use: Track, Len and Close may be called from several
// goroutines at once (a Track that comes after Close closes its Tensor, and a second
// Close finds nothing left). A Scope must not be copied by value (go vet reports it).
type Scope struct {
	_       noCopy // go vet: a Scope must not be copied (lifetime.go)
	mu      sync.Mutex
	tensors []*Tensor
	closed  bool
}

// NewScope returns an empty Scope.
func NewScope() *Scope { return &Scope{} }

// Track registers t (when err is nil) to be closed with the Scope and returns its
// arguments, so that a call can be wrapped: s.Track(a.Add(b)). Tracking on a closed
// Scope closes t and returns ErrClosed.
func (s *Scope) Track(t *Tensor, err error) (*Tensor, error) {
	if err != nil || t == nil {
		return t, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = t.Close()
		return nil, &Error{Code: ErrClosed, Op: "Scope.Track", Msg: "scope is closed"}
	}
	s.tensors = append(s.tensors, t)
	return t, nil
}

// Len returns the number of Tensors the Scope holds.
func (s *Scope) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tensors)
}

// Close closes every tracked Tensor and releases them, and the tensor waiting in the
// release slot, at once: one cgo call for the lot. Closing twice, or from two goroutines
// at once, is a no-op the second time (the tracked list is taken under the Scope's
// lock), and a Tensor of the Scope closed concurrently elsewhere is released once (its
// handle is swapped out atomically, as in Tensor.Close). The error is always nil: a
// failed release is counted, as Tensor.Close's deferred ones are (see ReleasePending).
func (s *Scope) Close() error {
	s.mu.Lock()
	ts := s.tensors
	s.tensors = nil
	s.closed = true
	s.mu.Unlock()
	hs := make([]C.uintptr_t, 0, len(ts))
	for i := len(ts) - 1; i >= 0; i-- { // newest first
		// A Tensor tracked twice, or closed already, is skipped.
		if t := ts[i]; atomic.LoadUintptr(&t.h) != 0 {
			if h := atomic.SwapUintptr(&t.h, 0); h != 0 {
				hs = append(hs, C.uintptr_t(h))
			}
		}
	}
	if h := takeSlot(); h != 0 { // the waiting tensor goes in the same call
		hs = append(hs, h)
	}
	if len(hs) > 0 {
		C.gdt_release_many(&hs[0], C.size_t(len(hs)))
	}
	return nil
}
