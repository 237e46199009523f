// See index_select_columns.h.
#include "t5xx/kernels/index_select_columns.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "t5xx/kernels/cpu/intra_op_parallel.h"

namespace t5xx::models {
namespace {

class IndexSelectColumnsFunction
    : public torch::autograd::Function<IndexSelectColumnsFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& table,
                            const at::Tensor& index) {
    const at::Tensor idx = index.contiguous();
    ctx->save_for_backward({idx});
    ctx->saved_data["columns"] = table.size(1);
    return table.index_select(1, idx);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const at::Tensor idx = ctx->get_saved_variables()[0];
    const int64_t columns = ctx->saved_data["columns"].toInt();
    const at::Tensor g = grad_out[0].contiguous();
    const int64_t rows = g.size(0), n = g.size(1);
    at::Tensor grad = at::zeros({rows, columns}, g.options());
    const float* pg = g.data_ptr<float>();
    const int64_t* pi = idx.data_ptr<int64_t>();
    float* out = grad.data_ptr<float>();
    device::IntraOpParallelFor(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* gr = pg + r * n;
        float* o = out + r * columns;
        for (int64_t j = 0; j < n; ++j) o[pi[j]] += gr[j];
      }
    });
    return {grad, at::Tensor()};
  }
};

}  // namespace

at::Tensor IndexSelectColumns(const at::Tensor& table, const at::Tensor& index) {
  if (!(table.is_cpu() && table.scalar_type() == at::kFloat && table.dim() == 2 &&
        index.dim() == 1 && index.scalar_type() == at::kLong)) {
    return table.index_select(1, index);
  }
  return IndexSelectColumnsFunction::apply(table, index);
}

}  // namespace t5xx::models
