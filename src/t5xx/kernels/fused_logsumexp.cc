// See fused_logsumexp.h.
#include "t5xx/kernels/fused_logsumexp.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "t5xx/kernels/cpu/cpu_row_max.h"
#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/util/error.h"

namespace t5xx::models {
namespace {

constexpr int kLanes = device::kSumLanes;

// The first index of m in x (0 when absent: a row of NaN), by blocks of
// kLanes compared at once.
T5XX_CPU_CLONES
int64_t FirstIndexOf(const float* x, float m, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    int hit = 0;
    for (int j = 0; j < kLanes; ++j) hit |= x[i + j] == m;
    if (hit) break;
  }
  for (; i < n; ++i) {
    if (x[i] == m) return i;
  }
  return 0;
}

// sum exp(x - m).
T5XX_CPU_CLONES
float SumExp(const float* x, float m, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += device::ExpApprox(x[i + j] - m);
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] += device::ExpApprox(x[i] - m);
  float total = 0.0f;
  for (int j = 0; j < kLanes; ++j) total += acc[j];
  return total;
}

// d = g * exp(x - lse).
T5XX_CPU_CLONES
void ScaledSoftmax(const float* x, float lse, float g, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = g * device::ExpApprox(x[i] - lse);
}

class FusedLogSumExpFunction : public torch::autograd::Function<FusedLogSumExpFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& logits_in,
                                                const at::Tensor& targets_in) {
    RECORD_USER_SCOPE("t5xx::logsumexp");  // a row in bench/step_profile's per-op profile
    const at::Tensor logits = logits_in.contiguous();
    const at::Tensor targets = targets_in.contiguous();
    const int64_t v = logits.size(-1), rows = logits.numel() / v;
    const auto shape = targets.sizes();
    at::Tensor lse = at::empty(shape, logits.options());
    at::Tensor target_logit = at::empty(shape, logits.options());
    at::Tensor argmax = at::empty(shape, targets.options());
    const float* px = logits.data_ptr<float>();
    const int64_t* pt = targets.data_ptr<int64_t>();
    float* plse = lse.data_ptr<float>();
    float* ptl = target_logit.data_ptr<float>();
    int64_t* parg = argmax.data_ptr<int64_t>();
    for (int64_t r = 0; r < rows; ++r) {
      T5XX_CHECK(pt[r] >= 0 && pt[r] < v,
                 "cross-entropy target " + std::to_string(pt[r]) + " at flat position " +
                     std::to_string(r) + " is outside the vocabulary [0, " + std::to_string(v) +
                     "): the targets' vocabulary is larger than the model's vocab_size");
    }
    device::IntraOpParallelFor(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* x = px + r * v;
        const float m = device::RowMax(x, v);
        parg[r] = FirstIndexOf(x, m, v);
        // A row of -inf (or +inf) has no finite shift: ATen's logsumexp gives
        // -inf (or +inf) there too.
        plse[r] = std::isfinite(m) ? m + std::log(SumExp(x, m, v)) : m;
        ptl[r] = x[pt[r]];
      }
    });
    ctx->save_for_backward({logits, targets, lse});
    ctx->mark_non_differentiable({argmax});
    return {lse, target_logit, argmax};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& logits = saved[0];
    const at::Tensor& targets = saved[1];
    const at::Tensor& lse = saved[2];
    const int64_t v = logits.size(-1), rows = logits.numel() / v;
    const at::Tensor g_lse = grad_out[0].defined() ? grad_out[0].contiguous()
                                                   : at::zeros(lse.sizes(), lse.options());
    const at::Tensor g_target = grad_out[1].defined() ? grad_out[1].contiguous()
                                                      : at::zeros(lse.sizes(), lse.options());
    at::Tensor d = at::empty(logits.sizes(), logits.options());
    const float* px = logits.data_ptr<float>();
    const int64_t* pt = targets.data_ptr<int64_t>();
    const float* plse = lse.data_ptr<float>();
    const float* pgl = g_lse.data_ptr<float>();
    const float* pgt = g_target.data_ptr<float>();
    float* pd = d.data_ptr<float>();
    device::IntraOpParallelFor(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        ScaledSoftmax(px + r * v, plse[r], pgl[r], pd + r * v, v);
        pd[r * v + pt[r]] += pgt[r];
      }
    });
    return {d, at::Tensor()};
  }
};

}  // namespace

bool FusedLogSumExpApplies(const at::Tensor& logits, const at::Tensor& targets) {
  if (!(logits.dim() >= 1 && logits.is_cpu() && logits.scalar_type() == at::kFloat &&
        logits.size(-1) >= 1 && targets.is_cpu() && targets.scalar_type() == at::kLong &&
        targets.dim() == logits.dim() - 1)) {
    return false;
  }
  for (int64_t d = 0; d < targets.dim(); ++d) {
    if (targets.size(d) != logits.size(d)) return false;
  }
  return true;
}

LogSumExpPieces FusedLogSumExp(const at::Tensor& logits, const at::Tensor& targets) {
  T5XX_CHECK(FusedLogSumExpApplies(logits, targets),
             "FusedLogSumExp takes float32 CPU logits [..., V] and int64 CPU targets [...]");
  const auto out = FusedLogSumExpFunction::apply(logits, targets);
  return {out[0], out[1], out[2]};
}

}  // namespace t5xx::models
