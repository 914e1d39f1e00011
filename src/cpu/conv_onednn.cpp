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
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/openmp.h"
#include "cpu/parallel.h"
#endif

namespace dt::cpu {

#ifdef DT_HAVE_ONEDNN
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

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
memory::desc activation_desc(const memory::dims& d) { return memory::desc(d, kF32, Tag::nchw); }

// Images [n0, n1) of a contiguous NCHW tensor: their address and dims.
struct Rows {
  void* data;
  memory::dims dims;
};
Rows rows(const Tensor& t, int64_t n0, int64_t n1) {
  memory::dims d = dims_of(t);
  const int64_t per_image = d[1] * d[2] * d[3];
  d[0] = n1 - n0;
  return {t.data_as<float>() + n0 * per_image, d};
}
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

// Empty operands go to im2col's path, which handles them: here an empty tensor's other
// sizes (which may be huge) would be multiplied into per-image strides.
bool any_empty(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->numel() == 0) return true;
  return false;
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

  void input(int arg, const memory::desc& want, const memory::desc& plain, void* data) {
    memory user(plain, cpu_engine(), data);
    if (want == plain) {
      args_[arg] = user;
      return;
    }
    memory mine = buffer(want);
    dnnl::reorder(user, mine).execute(stream_, user, mine);
    args_[arg] = mine;
  }
  void output(int arg, const memory::desc& want, const memory::desc& plain, void* data) {
    memory user(plain, cpu_engine(), data);
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
// for these operands) means "not here", and the caller falls back to im2col, computing
// the pass afresh (so what a failed pass wrote to its output does not matter).
template <typename F>
bool guarded(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_out_of_memory)
      fail(DT_ERR_OUT_OF_MEMORY, cat(what, ": out of memory in oneDNN (", e.what(), ")"));
    return false;
  }
}

// How many shares over_batch cuts a batch of N images into (1: oneDNN takes it whole).
int64_t batch_parts(int64_t N) {
  const int64_t threads = num_threads();
  return threads == 1 || N < threads ? 1 : threads;
}

// Runs pass(n0, n1, part) over the batch of N images in `parts` shares. With at least as
// many images as devtensor has threads (dt_set_num_threads), each thread takes a share and
// runs oneDNN on one thread: then no OpenMP team exists, whose workers spin after each
// call on the cores devtensor's own threads need next (perf: a third of LeNet-5's training
// step went to libgomp's spinning and the ops slowed beside it). A smaller batch (one
// image of inference) goes to oneDNN whole, on OpenMP's threads. `parts` comes from
// batch_parts, read once by the caller, so a dt_set_num_threads on another thread cannot
// change the count between sizing per-share buffers and using them.
template <typename F>
void over_batch(int64_t N, int64_t parts, F&& pass) {
  if (parts == 1) {
    set_openmp_threads(num_threads());
    pass(int64_t{0}, N, int64_t{0});
    return;
  }
  parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
    set_openmp_threads(1);
    for (int64_t part = begin; part < end; ++part) pass(N * part / parts, N * (part + 1) / parts, part);
  });
}

void forward_rows(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias, const ConvGeometry& g,
                  int64_t n0, int64_t n1) {
  const Geometry geo = geometry_of(g);
  const Rows xs = rows(x, n0, n1), os = rows(out, n0, n1);
  const memory::desc xd = activation_desc(xs.dims), wd = weight_desc(w, g.groups), od = activation_desc(os.dims);
  const memory::desc bd = bias ? memory::desc({bias->size(0)}, kF32, Tag::x) : memory::desc();
  const auto pd = forward_pd(dnnl::prop_kind::forward_inference, xd, wd, bias ? &bd : nullptr, od, geo);
  Pass pass;
  pass.input(DNNL_ARG_SRC, pd.src_desc(), xd, xs.data);
  pass.input(DNNL_ARG_WEIGHTS, pd.weights_desc(), wd, w.data());
  if (bias) pass.input(DNNL_ARG_BIAS, pd.bias_desc(), bd, bias->data());
  pass.output(DNNL_ARG_DST, pd.dst_desc(), od, os.data);
  pass.scratchpad(pd.scratchpad_desc());
  pass.run(dnnl::convolution_forward(pd));
}

void input_grad_rows(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g, int64_t n0,
                     int64_t n1) {
  const Geometry geo = geometry_of(g);
  const Rows xs = rows(gx, n0, n1), os = rows(gout, n0, n1);
  const memory::desc xd = activation_desc(xs.dims), wd = weight_desc(w, g.groups), od = activation_desc(os.dims);
  const auto hint = forward_pd(dnnl::prop_kind::forward_training, xd, wd, nullptr, od, geo);
  const dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, any_like(xd), any_like(wd),
                                                any_like(od), geo.strides, geo.dilates, geo.pad_l, geo.pad_r);
  const dnnl::convolution_backward_data::primitive_desc pd(d, user_scratchpad(), cpu_engine(), hint);
  Pass pass;
  pass.input(DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), od, os.data);
  pass.input(DNNL_ARG_WEIGHTS, pd.weights_desc(), wd, w.data());
  pass.output(DNNL_ARG_DIFF_SRC, pd.diff_src_desc(), xd, xs.data);
  pass.scratchpad(pd.scratchpad_desc());
  pass.run(dnnl::convolution_backward_data(pd));
}

// The weight gradient of images [n0, n1) into gw_data (gw's shape).
void weight_grad_rows(void* gw_data, const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g,
                      int64_t n0, int64_t n1) {
  const Geometry geo = geometry_of(g);
  const Rows xs = rows(x, n0, n1), os = rows(gout, n0, n1);
  const memory::desc xd = activation_desc(xs.dims), wd = weight_desc(gw, g.groups), od = activation_desc(os.dims);
  const auto hint = forward_pd(dnnl::prop_kind::forward_training, xd, wd, nullptr, od, geo);
  const dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, any_like(xd), any_like(wd),
                                                   any_like(od), geo.strides, geo.dilates, geo.pad_l, geo.pad_r);
  const dnnl::convolution_backward_weights::primitive_desc pd(d, user_scratchpad(), cpu_engine(), hint);
  Pass pass;
  pass.input(DNNL_ARG_SRC, pd.src_desc(), xd, xs.data);
  pass.input(DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), od, os.data);
  pass.output(DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc(), wd, gw_data);
  pass.scratchpad(pd.scratchpad_desc());
  pass.run(dnnl::convolution_backward_weights(pd));
}

}  // namespace

bool CpuBackend::conv2d_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias,
                                const ConvGeometry& g) {
  if (!all_float32({&out, &x, &w, bias}) || any_empty({&out, &x, &w})) return false;
  return guarded("conv2d", [&] {
    over_batch(x.size(0), batch_parts(x.size(0)),
               [&](int64_t n0, int64_t n1, int64_t) { forward_rows(out, x, w, bias, g, n0, n1); });
  });
}

bool CpuBackend::conv2d_input_grad(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g) {
  if (!all_float32({&gx, &gout, &w}) || any_empty({&gx, &gout, &w})) return false;
  return guarded("conv2d backward", [&] {
    over_batch(gx.size(0), batch_parts(gx.size(0)),
               [&](int64_t n0, int64_t n1, int64_t) { input_grad_rows(gx, gout, w, g, n0, n1); });
  });
}

bool CpuBackend::conv2d_weight_grad(const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g) {
  if (!all_float32({&gw, &x, &gout}) || any_empty({&gw, &x, &gout})) return false;
  return guarded("conv2d backward", [&] {
    // Each share of the batch gives a partial sum: the first into gw, the others into
    // buffers added to it after.
    const int64_t parts = batch_parts(x.size(0)), n = gw.numel();
    std::vector<std::unique_ptr<HostBuffer>> partial;
    for (int64_t p = 1; p < parts; ++p) partial.push_back(std::make_unique<HostBuffer>(n * sizeof(float)));
    over_batch(x.size(0), parts, [&](int64_t n0, int64_t n1, int64_t part) {
      weight_grad_rows(part == 0 ? gw.data() : partial[part - 1]->get(), gw, x, gout, g, n0, n1);
    });
    float* sum = gw.data_as<float>();
    for (const auto& b : partial) {
      const float* add = static_cast<const float*>(b->get());
      for (int64_t i = 0; i < n; ++i) sum[i] += add[i];
    }
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
