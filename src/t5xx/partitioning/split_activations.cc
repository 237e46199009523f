// See split_activations.h.
#include "t5xx/partitioning/split_activations.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include "t5xx/models/networks/remat.h"
#include "t5xx/partitioning/released_storage.h"
#include "t5xx/util/error.h"

namespace t5xx::partitioning {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = x r (scale), r = rsqrt(sum_group(x^2) / E + eps). With x^ = x r and
// gs = g scale, the row's gradient is dx = r (gs - x^ sum_group(gs x^) / E)
// (fused_rms_norm.h's formula, its two row sums taken over the group), and
// dscale = sum over rows of g x^. Without a scale, `scale` is a stand-in
// (libtorch 1.13's Function takes no undefined inputs) and has_scale false.
struct SplitRmsNormFn : public torch::autograd::Function<SplitRmsNormFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& scale,
                            bool has_scale, double epsilon, int64_t whole_width, int64_t group) {
    const Communicator& g = *reinterpret_cast<const Communicator*>(group);
    at::Tensor squares = (x * x).sum({-1}, /*keepdim=*/true);
    g.AllReduceSum(squares);
    const at::Tensor r = at::rsqrt(squares / static_cast<double>(whole_width) + epsilon);
    ctx->save_for_backward({x, has_scale ? scale : at::Tensor(), r});
    ctx->saved_data["width"] = whole_width;
    ctx->saved_data["group"] = group;
    const at::Tensor y = x * r;
    return has_scale ? y * scale : y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &scale = saved[1], &r = saved[2];
    const Communicator& g =
        *reinterpret_cast<const Communicator*>(ctx->saved_data["group"].toInt());
    const double width = static_cast<double>(ctx->saved_data["width"].toInt());
    const at::Tensor& gy = grad[0];
    const at::Tensor xh = x * r;
    const at::Tensor gs = scale.defined() ? gy * scale : gy;
    at::Tensor dot = (gs * xh).sum({-1}, /*keepdim=*/true);
    g.AllReduceSum(dot);
    const at::Tensor dx = r * (gs - xh * (dot / width));
    at::Tensor dscale;
    if (scale.defined() && scale.requires_grad()) {
      dscale = (gy * xh).reshape({-1, x.size(-1)}).sum(0);
    }
    return {dx, dscale, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor SplitRmsNorm(const at::Tensor& x, const at::Tensor& scale, double epsilon,
                        int64_t whole_width, const Communicator& group) {
  T5XX_CHECK(x.scalar_type() == at::kFloat && x.dim() >= 1 &&
                 x.size(-1) * group.size() == whole_width &&
                 (!scale.defined() || scale.numel() == x.size(-1)),
             "SplitRmsNorm: a float32 piece of width " + std::to_string(whole_width) + " / " +
                 std::to_string(group.size()) + " (and a scale of that width) was expected");
  const bool has_scale = scale.defined();
  return SplitRmsNormFn::apply(x.contiguous(), has_scale ? scale.to(at::kFloat) : at::ones({1}),
                               has_scale, epsilon, whole_width,
                               reinterpret_cast<int64_t>(&group));
}

void ReleaseUntilBackward(const at::Tensor& whole, const at::Tensor& piece,
                          const std::vector<at::Tensor>& outputs,
                          std::shared_ptr<const Communicator> group) {
  if (!at::GradMode::is_enabled() || models::Recomputing() || group->size() == 1) return;
  bool needed = false;
  for (const at::Tensor& y : outputs) needed = needed || y.requires_grad();
  if (!needed || !ReleasedStorage::Releasable(whole)) return;
  auto kept = std::make_shared<ReleasedStorage>(whole);
  const at::Tensor held = piece.detach();
  const int64_t dim = whole.dim() - 1;
  kept->Release();
  for (const at::Tensor& y : outputs) {
    if (!y.requires_grad()) continue;
    y.register_hook([kept, held, dim, group](const at::Tensor&) {
      if (!kept->IsReleased()) return;
      // [n, piece...]: every member's piece in rank order.
      at::NoGradGuard no_grad;
      kept->Refill(group->AllGather(held.contiguous().unsqueeze(0)), dim);
    });
  }
}

}  // namespace t5xx::partitioning
