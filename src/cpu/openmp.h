// The OpenMP thread count of the calling thread, for the oneDNN calls (oneDNN threads with
// OpenMP, whose thread count is a per-thread setting). libgomp comes with libdnnl, so the
// symbol is looked up at run time rather than linked; without it this does nothing.
#pragma once

namespace dt::cpu {

void set_openmp_threads(int n);

}  // namespace dt::cpu
