// float32 2-d convolutions on the CPU through oneDNN (Debian's libdnnl, the library
// libtorch's CPU convolutions run on). The operands stay in devtensor's plain NCHW / OIHW
// layout; each pass asks oneDNN for the layout its fastest kernel wants (format "any",
// blocked channels on AVX2) and reorders into and out of it, as libtorch's ideep layer
// does for plain tensors. oneDNN keeps its own cache of compiled kernels, so a repeated
// shape costs only the descriptor. Without oneDNN (DT_HAVE_ONEDNN unset: the TSan build,
// or a machine without libdnnl-dev) the hooks return false and nn/grad_conv.cpp uses
// im2col and BLAS.
#include "cpu/cpu_backend.h"

#ifdef DT_HAVE_ONEDNN
#include <dlfcn.h>

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/parallel.h"
#endif

namespace dt::cpu {

#ifdef DT_HAVE_ONEDNN
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

// oneDNN threads with OpenMP, whose thread count belongs to the calling thread: each pass
// sets it to devtensor's (dt_set_num_threads). libgomp comes with libdnnl, so the symbol
// is looked up rather than linked.
void use_devtensor_thread_count() {
  using SetThreads = void (*)(int);
  static const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set) set(num_threads());
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::dims dims_of(const Tensor& t) {
  memory::dims d;
  for (int i = 0; i < t.ndim(); ++i) d.push_back(t.size(i));
  return d;
}

// The plain layouts devtensor keeps: activations NCHW; weights OIHW, or GOIHW when grouped
// (oneDNN's grouped weights have the group as a leading dimension).
memory::desc activation_desc(const Tensor& t) { return memory::desc(dims_of(t), kF32, Tag::nchw); }
memory::desc weight_desc(const Tensor& w, int64_t groups) {
  if (groups == 1) return memory::desc(dims_of(w), kF32, Tag::oihw);
  return memory::desc({groups, w.size(0) / groups, w.size(1), w.size(2), w.size(3)}, kF32, Tag::goihw);
}
memory::desc any_like(const memory::desc& d) { return memory::desc(d.dims(), kF32, Tag::any); }

struct Geometry {
  memory::dims strides, dilates, pad_l, pad_r;
};
Geometry geometry_of(const ConvGeometry& g) {
  // oneDNN counts dilation from 0 (0 = dense), PyTorch from 1.
  return {{g.stride[0], g.stride[1]},
          {g.dilation[0] - 1, g.dilation[1] - 1},
          {g.pad_begin[0], g.pad_begin[1]},
          {g.pad_end[0], g.pad_end[1]}};
}

bool all_float32(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t && (t->dtype() != DType::Float32 || !t->is_contiguous())) return false;
  return true;
}

// A buffer for oneDNN from devtensor's caching host allocator: fresh pages from the
// system would cost a page fault each on every pass (reorders ran at 0.6 GB/s so).
class HostBuffer {
 public:
  explicit HostBuffer(size_t nbytes) : nbytes_(nbytes), p_(nbytes ? host_allocator().allocate(nbytes) : nullptr) {}
  ~HostBuffer() {
    if (p_) host_allocator().deallocate(p_, nbytes_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* get() const { return p_; }

 private:
  size_t nbytes_;
  void* p_;
};

// One pass's memory arguments: inputs reordered into the primitive's layouts before it
// runs, outputs reordered back into the caller's tensors after.
class Pass {
 public:
  Pass() : stream_(cpu_engine()) {}

  void input(int arg, const memory::desc& want, const memory::desc& plain, const Tensor& t) {
    memory user(plain, cpu_engine(), t.data());
    if (want == plain) {
      args_[arg] = user;
      return;
    }
    memory mine = buffer(want);
    dnnl::reorder(user, mine).execute(stream_, user, mine);
    args_[arg] = mine;
  }
  void output(int arg, const memory::desc& want, const memory::desc& plain, const Tensor& t) {
    memory user(plain, cpu_engine(), t.data());
    if (want == plain) {
      args_[arg] = user;
      return;
    }
    args_[arg] = buffer(want);
    copy_back_.push_back({args_[arg], user});
  }
  void scratchpad(const memory::desc& d) { args_[DNNL_ARG_SCRATCHPAD] = buffer(d); }

  void run(const dnnl::primitive& p) {
    p.execute(stream_, args_);
    for (auto& [from, to] : copy_back_) dnnl::reorder(from, to).execute(stream_, from, to);
    stream_.wait();
  }

 private:
  memory buffer(const memory::desc& d) {
    buffers_.push_back(std::make_unique<HostBuffer>(d.get_size()));
    return memory(d, cpu_engine(), buffers_.back()->get());
  }

  std::vector<std::unique_ptr<HostBuffer>> buffers_;  // outlive the memory objects below
  dnnl::stream stream_;
  std::unordered_map<int, memory> args_;
  std::vector<std::pair<memory, memory>> copy_back_;
};

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The forward descriptor: what the passes' kernels are chosen for (the backward passes
// need it as a hint).
dnnl::convolution_forward::primitive_desc forward_pd(dnnl::prop_kind kind, const memory::desc& x,
                                                     const memory::desc& w, const memory::desc* bias,
                                                     const memory::desc& out, const Geometry& geo) {
  const dnnl::convolution_forward::desc d(kind, dnnl::algorithm::convolution_direct, any_like(x), any_like(w),
                                          bias ? *bias : memory::desc(), any_like(out), geo.strides, geo.dilates,
                                          geo.pad_l, geo.pad_r);
  return dnnl::convolution_forward::primitive_desc(d, user_scratchpad(), cpu_engine());
}

// Runs f, mapping oneDNN's errors: out of memory is devtensor's; any other (no kernel
// for these operands) means "not here", and the caller falls back. Nothing is written to
// an output before every descriptor is made, so a fallback starts clean.
template <typename F>
bool guarded(const char* what, F&& f) {
  try {
    use_devtensor_thread_count();
    f();
    return true;
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_out_of_memory)
      fail(DT_ERR_OUT_OF_MEMORY, cat(what, ": out of memory in oneDNN (", e.what(), ")"));
    return false;
  }
}

}  // namespace

bool CpuBackend::conv2d_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias,
                                const ConvGeometry& g) {
  if (!all_float32({&out, &x, &w, bias})) return false;
  return guarded("conv2d", [&] {
    const Geometry geo = geometry_of(g);
    const memory::desc xd = activation_desc(x), wd = weight_desc(w, g.groups), od = activation_desc(out);
    const memory::desc bd = bias ? memory::desc({bias->size(0)}, kF32, Tag::x) : memory::desc();
    const auto pd = forward_pd(dnnl::prop_kind::forward_inference, xd, wd, bias ? &bd : nullptr, od, geo);
    Pass pass;
    pass.input(DNNL_ARG_SRC, pd.src_desc(), xd, x);
    pass.input(DNNL_ARG_WEIGHTS, pd.weights_desc(), wd, w);
    if (bias) pass.input(DNNL_ARG_BIAS, pd.bias_desc(), bd, *bias);
    pass.output(DNNL_ARG_DST, pd.dst_desc(), od, out);
    pass.scratchpad(pd.scratchpad_desc());
    pass.run(dnnl::convolution_forward(pd));
  });
}

bool CpuBackend::conv2d_input_grad(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g) {
  if (!all_float32({&gx, &gout, &w})) return false;
  return guarded("conv2d backward", [&] {
    const Geometry geo = geometry_of(g);
    const memory::desc xd = activation_desc(gx), wd = weight_desc(w, g.groups), od = activation_desc(gout);
    const auto hint = forward_pd(dnnl::prop_kind::forward_training, xd, wd, nullptr, od, geo);
    const dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, any_like(xd), any_like(wd),
                                                  any_like(od), geo.strides, geo.dilates, geo.pad_l, geo.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(d, user_scratchpad(), cpu_engine(), hint);
    Pass pass;
    pass.input(DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), od, gout);
    pass.input(DNNL_ARG_WEIGHTS, pd.weights_desc(), wd, w);
    pass.output(DNNL_ARG_DIFF_SRC, pd.diff_src_desc(), xd, gx);
    pass.scratchpad(pd.scratchpad_desc());
    pass.run(dnnl::convolution_backward_data(pd));
  });
}

bool CpuBackend::conv2d_weight_grad(const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g) {
  if (!all_float32({&gw, &x, &gout})) return false;
  return guarded("conv2d backward", [&] {
    const Geometry geo = geometry_of(g);
    const memory::desc xd = activation_desc(x), wd = weight_desc(gw, g.groups), od = activation_desc(gout);
    const auto hint = forward_pd(dnnl::prop_kind::forward_training, xd, wd, nullptr, od, geo);
    const dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, any_like(xd), any_like(wd),
                                                     any_like(od), geo.strides, geo.dilates, geo.pad_l, geo.pad_r);
    const dnnl::convolution_backward_weights::primitive_desc pd(d, user_scratchpad(), cpu_engine(), hint);
    Pass pass;
    pass.input(DNNL_ARG_SRC, pd.src_desc(), xd, x);
    pass.input(DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), od, gout);
    pass.output(DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc(), wd, gw);
    pass.scratchpad(pd.scratchpad_desc());
    pass.run(dnnl::convolution_backward_weights(pd));
  });
}

#else  // no oneDNN in this build

bool CpuBackend::conv2d_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor*, const ConvGeometry&) {
  return false;
}
bool CpuBackend::conv2d_input_grad(const Tensor&, const Tensor&, const Tensor&, const ConvGeometry&) { return false; }
bool CpuBackend::conv2d_weight_grad(const Tensor&, const Tensor&, const Tensor&, const ConvGeometry&) { return false; }

#endif

}  // namespace dt::cpu
