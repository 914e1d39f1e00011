// The host half of the CUDA plugin's cuDNN graph-API convolutions (src/cuda/conv_cudnn_graph.cpp),
// checked without a GPU: cuDNN validates a convolution's tensors, settings and operation
// node on the host, so every pass, dtype and geometry the plugin describes must finalize
// here, and shapes that do not fit must come back as DT_ERR_NOT_SUPPORTED (the plugin then
// hands the pass to the classic calls) with cuDNN's reason. The plans and their runs need
// a GPU: script/gpu-session runs the convolution reference cases with DEVTENSOR_CUDNN_API=graph.
// This program links the two plugin files themselves (not the plugin), with its own raise().
#include <gtest/gtest.h>

#include <string>

#include "core/plugin_abi.h"
#include "cuda/conv_cudnn_graph.h"
#include "cuda/cudnn_library.h"
#include "cuda/runtime.h"

namespace dt::cudap {
// The plugin's raise (runtime.cpp, which needs the CUDA runtime): the same Failure.
[[noreturn]] void raise(int32_t code, std::string message) { throw Failure{code, std::move(message)}; }
}  // namespace dt::cudap

namespace {

using dt::cudap::ConvProblem;

const dt::cudap::CudnnLibrary* Library(std::string* why) { return dt::cudap::cudnn_library(why); }

#define REQUIRE_GRAPH_API()                                                      \
  std::string why;                                                               \
  const dt::cudap::CudnnLibrary* lib = Library(&why);                            \
  if (!lib) GTEST_SKIP() << "no cuDNN here: " << why;                            \
  if (!lib->graph_api) GTEST_SKIP() << why << " lacks the graph (backend) API"

// out = (in + 2 pad - dilation (k - 1) - 1) / stride + 1, PyTorch's output size, by hand below.
ConvProblem Problem(int32_t hook, cudnnDataType_t data, cudnnDataType_t compute) {
  ConvProblem p;
  p.hook = hook;
  p.data = data;
  p.compute = compute;
  return p;
}

void Sizes(int64_t (&dst)[4], int64_t a, int64_t b, int64_t c, int64_t d) {
  dst[0] = a;
  dst[1] = b;
  dst[2] = c;
  dst[3] = d;
}

// ResNet-18's stem: [8, 3, 224, 224] * [64, 3, 7, 7], stride 2, padding 3 -> [8, 64, 112, 112]
// ((224 + 6 - 6 - 1) / 2 + 1 = 112).
ConvProblem Stem(int32_t hook, cudnnDataType_t data, cudnnDataType_t compute) {
  ConvProblem p = Problem(hook, data, compute);
  Sizes(p.x, 8, 3, 224, 224);
  Sizes(p.w, 64, 3, 7, 7);
  Sizes(p.y, 8, 64, 112, 112);
  p.stride[0] = p.stride[1] = 2;
  p.pad[0] = p.pad[1] = 3;
  return p;
}

// Two groups, dilation 2, stride 2, padding 1, odd sizes: [2, 4, 9, 11] * [6, 2, 3, 3]
// -> [2, 6, 4, 5] ((9 + 2 - 4 - 1) / 2 + 1 = 4, (11 + 2 - 4 - 1) / 2 + 1 = 5).
ConvProblem Grouped(int32_t hook, cudnnDataType_t data, cudnnDataType_t compute) {
  ConvProblem p = Problem(hook, data, compute);
  Sizes(p.x, 2, 4, 9, 11);
  Sizes(p.w, 6, 2, 3, 3);
  Sizes(p.y, 2, 6, 4, 5);
  p.stride[0] = p.stride[1] = 2;
  p.pad[0] = p.pad[1] = 1;
  p.dilation[0] = p.dilation[1] = 2;
  return p;
}

const int32_t kPasses[] = {DTP_HOOK_CONV2D_FORWARD, DTP_HOOK_CONV2D_INPUT_GRAD, DTP_HOOK_CONV2D_WEIGHT_GRAD};

struct Types {
  cudnnDataType_t data, compute;
  const char* name;
};
const Types kTypes[] = {{CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, "float32"},
                        {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, "float64"},
                        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, "float16"},
                        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, "bfloat16"}};

TEST(CudnnGraphConv, EveryPassAndDtypeDescribesTheStemAndAGroupedDilatedConvolution) {
  REQUIRE_GRAPH_API();
  for (int32_t hook : kPasses)
    for (const Types& t : kTypes)
      for (const ConvProblem& p : {Stem(hook, t.data, t.compute), Grouped(hook, t.data, t.compute)}) {
        SCOPED_TRACE(std::string("pass ") + std::to_string(hook) + ", " + t.name + ", x [" + std::to_string(p.x[0]) +
                     ", " + std::to_string(p.x[1]) + ", ...]");
        try {
          auto op = dt::cudap::describe_conv(*lib, p, 0);
          ASSERT_NE(op, nullptr);
          EXPECT_NE(op->op.get(), nullptr);
        } catch (const dt::cudap::Failure& f) {
          ADD_FAILURE() << "refused: " << f.message;
        }
      }
}

// Each way a described convolution can fail to fit: every pass refuses it, as
// NOT_SUPPORTED (not a crash, not a backend error), and the message is cuDNN's.
TEST(CudnnGraphConv, ShapesThatDoNotFitAreHandedBackWithCudnnsReason) {
  REQUIRE_GRAPH_API();
  struct Bad {
    const char* what;
    ConvProblem p;
  };
  std::vector<Bad> bad;
  for (int32_t hook : kPasses) {
    ConvProblem tall = Grouped(hook, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT);
    tall.y[2] = 5;  // the output height is 4
    bad.push_back({"an output one row too tall", tall});
    ConvProblem channels = Grouped(hook, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT);
    channels.w[1] = 3;  // 4 input channels are not groups of 3
    bad.push_back({"input channels that are no multiple of the weight's", channels});
    ConvProblem outs = Grouped(hook, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT);
    outs.y[1] = 5;  // the weight makes 6 channels
    bad.push_back({"an output channel count unlike the weight's", outs});
  }
  for (const Bad& b : bad) {
    SCOPED_TRACE(std::string(b.what) + ", pass " + std::to_string(b.p.hook));
    try {
      (void)dt::cudap::describe_conv(*lib, b.p, 0);
      ADD_FAILURE() << "described";
    } catch (const dt::cudap::Failure& f) {
      EXPECT_EQ(f.code, DT_ERR_NOT_SUPPORTED) << f.message;
      EXPECT_NE(f.message.find("cuDNN"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("cuda:0"), std::string::npos) << f.message;
    }
  }
}

TEST(CudnnGraphConv, APassThatIsNoConvolutionIsRefused) {
  REQUIRE_GRAPH_API();
  ConvProblem p = Grouped(DTP_HOOK_MAX_POOL2D_FORWARD, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT);
  try {
    (void)dt::cudap::describe_conv(*lib, p, 0);
    ADD_FAILURE() << "described";
  } catch (const dt::cudap::Failure& f) {
    EXPECT_EQ(f.code, DT_ERR_NOT_SUPPORTED);
    EXPECT_NE(f.message.find("not a convolution pass"), std::string::npos) << f.message;
  }
}

}  // namespace
