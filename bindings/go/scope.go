package devtensor

// #include "shim.h"
import "C"

import "sync"

// Scope closes every Tensor made through it, for loops that allocate (on the GPU
// especially) and should not wait for the garbage collector:
//
//	s := devtensor.NewScope()
//	defer s.Close()
//	c, err := s.Track(a.Add(b))
//
// A Scope is safe for concurrent use.
type Scope struct {
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
// release slot, at once: one cgo call for the lot. Closing twice is a no-op; the error
// is always nil.
func (s *Scope) Close() error {
	s.mu.Lock()
	ts := s.tensors
	s.tensors = nil
	s.closed = true
	s.mu.Unlock()
	hs := make([]C.uintptr_t, 0, len(ts))
	for i := len(ts) - 1; i >= 0; i-- { // newest first
		if t := ts[i]; t.h != 0 { // a Tensor tracked twice, or closed already, is skipped
			hs = append(hs, t.h)
			t.h = 0
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
