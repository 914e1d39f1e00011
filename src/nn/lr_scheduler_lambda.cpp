// The schedulers driven by a user's function of the epoch: LambdaLR (the rate is the
// initial one times the function's factor) and MultiplicativeLR (each step multiplies
// the rate by it), with PyTorch 1.13's formulas.
#include <cmath>
#include <cstdint>
#include <memory>

#include "core/error.h"
#include "nn/lr_scheduler.h"

namespace dt::nn {
namespace {

// How many LrLambda calls this thread is inside (refuse_inside_lr_lambda).
thread_local int t_lambda_depth = 0;

// The scheduler kinds that call an LrLambda: `factor` checks what it returns.
class LambdaBase : public LrScheduler {
 protected:
  LambdaBase(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f) : LrScheduler(std::move(opt)), f_(std::move(f)) {}

  // The function's factor at epoch e, a finite number (INVALID_ARGUMENT otherwise).
  double factor(int64_t e) const {
    struct Inside {  // the count goes back down however the call ends
      Inside() { ++t_lambda_depth; }
      ~Inside() { --t_lambda_depth; }
    };
    double v;
    {
      Inside inside;
      v = f_->fn(e, f_->user_data);
    }
    if (!std::isfinite(v))
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": its function returned ", v, " at epoch ", e,
                                        " (a factor must be a finite number)"));
    return v;
  }
  // lr = the rate `of` times the factor v: finite and >= 0, or INVALID_ARGUMENT.
  double scaled(double of, double v, int64_t e) const {
    const double lr = of * v;
    if (!(lr >= 0) || !std::isfinite(lr))
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": its function returned ", v, " at epoch ", e, ", which makes the rate ",
                                        lr, " (a rate must be finite and >= 0)"));
    return lr;
  }
  std::vector<Field> fields() override { return base_fields(); }

  std::unique_ptr<LrLambda> f_;
};

class LambdaScheduler final : public LambdaBase {
 public:
  LambdaScheduler(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f) : LambdaBase(std::move(opt), std::move(f)) {
    initial_step();
  }
  const char* name() const override { return "LambdaLR"; }

 private:
  // Not chained: PyTorch's get_lr is base_lr * lr_lambda(last_epoch).
  double chained_lr(int64_t e, double) override { return scaled(base_lr_, factor(e), e); }
};

class MultiplicativeScheduler final : public LambdaBase {
 public:
  MultiplicativeScheduler(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f)
      : LambdaBase(std::move(opt), std::move(f)) {
    initial_step();
  }
  const char* name() const override { return "MultiplicativeLR"; }

 private:
  // Epoch 0 (construction, a SequentialLR's restart) leaves the rate, as PyTorch's.
  double chained_lr(int64_t e, double current) override {
    return e > 0 ? scaled(current, factor(e), e) : current;
  }
};

}  // namespace

LrScheduler* new_lambda_lr(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f) {
  return new LambdaScheduler(std::move(opt), std::move(f));
}
LrScheduler* new_multiplicative_lr(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f) {
  return new MultiplicativeScheduler(std::move(opt), std::move(f));
}

void refuse_inside_lr_lambda(const char* fn) {
  if (t_lambda_depth > 0)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat(fn, ": called from inside a LambdaLR's or MultiplicativeLR's function, where a scheduler call could",
             " wait on the scheduler being stepped"));
}

}  // namespace dt::nn
