package devtensor

// #include "shim.h"
import "C"

import "runtime"

func (t *Tensor) like(op string, kind C.int) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_like(kind, h)
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// EmptyLike returns a new, uninitialised tensor with t's shape, dtype and device, as
// torch.empty_like (dt_empty_like). The result is the caller's to Close. Errors:
// ErrOutOfMemory; ErrClosed for a closed t, ErrInvalidArgument for a nil one,
// ErrInvalidHandle.
func (t *Tensor) EmptyLike() (*Tensor, error) { return t.like("Tensor.EmptyLike", C.GDT_L_EMPTY) }

// ZerosLike returns a new tensor of zeros with t's shape, dtype and device, as
// torch.zeros_like (dt_zeros_like). The result is the caller's to Close. Errors: as
// EmptyLike.
func (t *Tensor) ZerosLike() (*Tensor, error) { return t.like("Tensor.ZerosLike", C.GDT_L_ZEROS) }

// OnesLike returns a new tensor of ones with t's shape, dtype and device, as
// torch.ones_like (dt_ones_like). The result is the caller's to Close. Errors: as
// EmptyLike.
func (t *Tensor) OnesLike() (*Tensor, error) { return t.like("Tensor.OnesLike", C.GDT_L_ONES) }

// RandLike returns a new tensor with t's shape, dtype and device holding uniform values
// in [0, 1) from the device's Philox generator (advancing its offset), as
// torch.rand_like (dt_rand_like). The result is the caller's to Close. Errors: as
// EmptyLike, plus ErrDTypeMismatch when t's dtype is not floating.
func (t *Tensor) RandLike() (*Tensor, error) { return t.like("Tensor.RandLike", C.GDT_L_RAND) }

// RandnLike returns a new tensor with t's shape, dtype and device holding standard
// normal values from the device's Philox generator (advancing its offset), as
// torch.randn_like (dt_randn_like). The result is the caller's to Close. Errors: as
// RandLike.
func (t *Tensor) RandnLike() (*Tensor, error) { return t.like("Tensor.RandnLike", C.GDT_L_RANDN) }

// FullLike returns a tensor like t filled with value.
func (t *Tensor) FullLike(value float64) (*Tensor, error) {
	h, err := t.handle("Tensor.FullLike")
	if err != nil {
		return nil, err
	}
	r := C.gdt_full_like(h, C.double(value))
	runtime.KeepAlive(t)
	return takeTensor("Tensor.FullLike", r)
}

func join(op string, stack C.int, ts []*Tensor, dim int64) (*Tensor, error) {
	hs := make([]C.uintptr_t, len(ts))
	for i, t := range ts {
		h, err := t.handle(op)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	var p *C.uintptr_t
	if len(hs) > 0 {
		p = &hs[0]
	}
	r := C.gdt_join(stack, p, C.size_t(len(hs)), C.int64_t(dim))
	runtime.KeepAlive(ts)
	runtime.KeepAlive(hs)
	return takeTensor(op, r)
}

// Cat concatenates tensors along dim.
func Cat(ts []*Tensor, dim int64) (*Tensor, error) { return join("Cat", 0, ts, dim) }

// Stack stacks tensors of one shape along a new dimension dim.
func Stack(ts []*Tensor, dim int64) (*Tensor, error) { return join("Stack", 1, ts, dim) }

func (t *Tensor) split(op string, bySize C.int, k, dim int64) ([]*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	var n C.size_t
	r := C.gdt_split(bySize, h, C.int64_t(k), C.int64_t(dim), nil, 0, &n)
	if err := resErr(op, r); err != nil {
		runtime.KeepAlive(t)
		return nil, err
	}
	if n == 0 {
		runtime.KeepAlive(t)
		return []*Tensor{}, nil
	}
	hs := make([]C.uintptr_t, int(n))
	r = C.gdt_split(bySize, h, C.int64_t(k), C.int64_t(dim), &hs[0], n, &n)
	runtime.KeepAlive(t)
	if err := resErr(op, r); err != nil {
		return nil, err
	}
	out := make([]*Tensor, len(hs))
	for i, x := range hs {
		out[i] = newTensor(x)
	}
	return out, nil
}

// Chunk splits t into views along dim, as torch.chunk. Close every piece.
func (t *Tensor) Chunk(chunks, dim int64) ([]*Tensor, error) {
	return t.split("Tensor.Chunk", 0, chunks, dim)
}

// Split splits t into views of splitSize along dim, as torch.split. Close every piece.
func (t *Tensor) Split(splitSize, dim int64) ([]*Tensor, error) {
	return t.split("Tensor.Split", 1, splitSize, dim)
}

// IndexSelect returns the elements at the indices (a 1-d integer tensor) along dim.
func (t *Tensor) IndexSelect(dim int64, index *Tensor) (*Tensor, error) {
	return t.index("Tensor.IndexSelect", 0, dim, index)
}

// Gather is torch.gather along dim.
func (t *Tensor) Gather(dim int64, index *Tensor) (*Tensor, error) {
	return t.index("Tensor.Gather", 1, dim, index)
}

// IndexAdd is torch.index_add: a new tensor, t with source's slices added at the
// positions index names along dim (repeated indices add up).
func (t *Tensor) IndexAdd(dim int64, index, source *Tensor) (*Tensor, error) {
	return t.scatter("Tensor.IndexAdd", 0, dim, index, source)
}

// ScatterAdd is torch.scatter_add: a new tensor, t with src's elements added where index
// points along dim (repeated indices add up).
func (t *Tensor) ScatterAdd(dim int64, index, src *Tensor) (*Tensor, error) {
	return t.scatter("Tensor.ScatterAdd", 1, dim, index, src)
}

func (t *Tensor) scatter(op string, scatter C.int, dim int64, index, src *Tensor) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	ih, err := index.handle(op)
	if err != nil {
		return nil, err
	}
	sh, err := src.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_scatter(scatter, h, C.int64_t(dim), ih, sh)
	runtime.KeepAlive(t)
	runtime.KeepAlive(index)
	runtime.KeepAlive(src)
	return takeTensor(op, r)
}

func (t *Tensor) index(op string, gather C.int, dim int64, index *Tensor) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	ih, err := index.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_index(gather, h, C.int64_t(dim), ih)
	runtime.KeepAlive(t)
	runtime.KeepAlive(index)
	return takeTensor(op, r)
}

func (t *Tensor) categorical(op string, oneHot bool, n int64, replacement bool) (*Tensor, error) {
	h, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	r := C.gdt_categorical(cBool(oneHot), h, C.int64_t(n), cBool(replacement))
	runtime.KeepAlive(t)
	return takeTensor(op, r)
}

// Multinomial draws numSamples category indices (Int64) from each row of t, a 1-d
// [categories] or 2-d [rows, categories] floating tensor of non-negative weights (they
// need not sum to 1), as torch.multinomial (dt_multinomial): a [numSamples] or [rows,
// numSamples] tensor on t's device. With replacement each draw is independent and a
// category of weight 0 is never drawn; without, no index repeats in a row, and categories
// of weight 0 come only after all the others, in index order. Not differentiable; waits
// for t's device. Errors: ErrInvalidArgument for t not 1-d or 2-d, numSamples < 1, more
// samples than categories without replacement, a negative or non-finite weight, a row of
// weights summing to 0; ErrDTypeMismatch for a non-floating t; ErrClosed or
// ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Multinomial(numSamples int64, replacement bool) (*Tensor, error) {
	return t.categorical("Tensor.Multinomial", false, numSamples, replacement)
}

// OneHot returns the Int64 tensor of shape [..., numClasses] that is 1 at each of t's
// class indices (Int64, any shape) and 0 elsewhere, as torch.nn.functional.one_hot
// (dt_one_hot); numClasses -1 takes the largest index + 1. Not differentiable; waits for
// t's device. Errors: ErrInvalidArgument for numClasses < -1, a negative index or one >=
// numClasses; ErrDTypeMismatch for a non-Int64 t; ErrClosed or ErrInvalidArgument for a
// closed or nil t.
func (t *Tensor) OneHot(numClasses int64) (*Tensor, error) {
	return t.categorical("Tensor.OneHot", true, numClasses, false)
}

// distance runs one of normalize (o nil), cosine_similarity and pairwise_distance.
func (t *Tensor) distance(op string, kind C.int, o *Tensor, p float64, dim int64, eps float64, keepdim bool) (*Tensor, error) {
	a, err := t.handle(op)
	if err != nil {
		return nil, err
	}
	var b C.uintptr_t
	if kind != C.GDT_DIST_NORMALIZE {
		if b, err = o.handle(op); err != nil {
			return nil, err
		}
	}
	r := C.gdt_distance(kind, a, b, C.double(p), C.int64_t(dim), C.double(eps), cBool(keepdim))
	runtime.KeepAlive(t)
	runtime.KeepAlive(o)
	return takeTensor(op, r)
}

// Normalize returns t / max(||t||_p along dim, eps), as torch.nn.functional.normalize
// (dt_normalize; PyTorch's defaults: p 2, dim 1, eps 1e-12). Floating tensors.
// Differentiable. The caller owns the result and must Close it. Errors:
// ErrInvalidArgument (dim out of range, p NaN), ErrDTypeMismatch (not floating);
// ErrClosed or ErrInvalidArgument for a closed or nil t.
func (t *Tensor) Normalize(p float64, dim int64, eps float64) (*Tensor, error) {
	return t.distance("Tensor.Normalize", C.GDT_DIST_NORMALIZE, nil, p, dim, eps, false)
}

// CosineSimilarity returns the cosine of the angle between t's and o's vectors along dim
// (t and o broadcast together), as torch.nn.functional.cosine_similarity
// (dt_cosine_similarity; PyTorch 1.13's formula, defaults dim 1, eps 1e-8): each vector
// divided by its norm clamped below at eps, then the dot product. Floating tensors.
// Differentiable in both. The caller owns the result and must Close it. Errors:
// ErrInvalidArgument (dim out of range), ErrShapeMismatch, ErrDTypeMismatch,
// ErrDeviceMismatch; ErrClosed or ErrInvalidArgument for a closed or nil t or o.
func (t *Tensor) CosineSimilarity(o *Tensor, dim int64, eps float64) (*Tensor, error) {
	return t.distance("Tensor.CosineSimilarity", C.GDT_DIST_COSINE, o, 0, dim, eps, false)
}

// PairwiseDistance returns ||t - o + eps||_p over the last dim (t and o broadcast
// together), as torch.nn.functional.pairwise_distance (dt_pairwise_distance; defaults
// p 2, eps 1e-6, keepdim false). Floating tensors. Differentiable in both. The caller
// owns the result and must Close it. Errors: ErrInvalidArgument (p NaN),
// ErrShapeMismatch, ErrDTypeMismatch, ErrDeviceMismatch; ErrClosed or
// ErrInvalidArgument for a closed or nil t or o.
func (t *Tensor) PairwiseDistance(o *Tensor, p, eps float64, keepdim bool) (*Tensor, error) {
	return t.distance("Tensor.PairwiseDistance", C.GDT_DIST_PAIRWISE, o, p, 0, eps, keepdim)
}
