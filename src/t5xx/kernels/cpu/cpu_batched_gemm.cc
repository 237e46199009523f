// See cpu_batched_gemm.h.
#include "t5xx/kernels/cpu/cpu_batched_gemm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/StringUtil.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "t5xx/kernels/cpu/cpu_gemm.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/kernels/cpu/tensor_offsets.h"
#include "t5xx/util/error.h"

#if T5XX_WITH_ONEDNN_GEMM
#include <oneapi/dnnl/dnnl.h>
#endif

namespace t5xx::device {
namespace {

#if T5XX_WITH_ONEDNN_GEMM
// How sgemm reads one operand's matrices (row-major): 'N' with leading
// dimension ld when rows are ld apart and columns adjacent, 'T' when the
// stored matrix is the transpose (columns ld apart, rows adjacent).
struct MatrixLayout {
  char trans = 'N';
  int64_t ld = 0;
};

// The layout of t's last two dimensions, or false when neither has a unit
// stride (or a leading dimension too small or too large for sgemm's int).
bool LayoutOf(const at::Tensor& t, MatrixLayout* layout) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t s_row = t.stride(-2), s_col = t.stride(-1);
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if ((cols <= 1 || s_col == 1) && (rows <= 1 || s_row >= std::max<int64_t>(cols, 1))) {
    layout->trans = 'N';
    layout->ld = rows <= 1 ? std::max<int64_t>(cols, 1) : s_row;
    return layout->ld <= kMaxInt;
  }
  if ((rows <= 1 || s_row == 1) && (cols <= 1 || s_col >= std::max<int64_t>(rows, 1))) {
    layout->trans = 'T';
    layout->ld = cols <= 1 ? std::max<int64_t>(rows, 1) : s_col;
    return layout->ld <= kMaxInt;
  }
  return false;
}

// An operand as sgemm reads it: contiguous() when its strides do not fit.
at::Tensor Readable(const at::Tensor& t, MatrixLayout* layout) {
  if (LayoutOf(t, layout)) return t;
  at::Tensor c = t.contiguous();
  T5XX_CHECK(LayoutOf(c, layout), "CpuBatchedMatmulInto: a matrix dimension of " +
                                      std::to_string(c.size(-1)) +
                                      " exceeds sgemm's int leading dimension");
  return c;
}

// out (already known to be 'N' with leading dimension ldc) = a @ b.
void RunBatched(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor& out,
                int64_t ldc) {
  MatrixLayout la, lb;
  const at::Tensor a = Readable(a_in, &la);
  const at::Tensor b = Readable(b_in, &lb);
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1);
  const std::vector<int64_t> off_a = LeadingOffsets(a, 2), off_b = LeadingOffsets(b, 2),
                             off_c = LeadingOffsets(out, 2);
  const int64_t count = static_cast<int64_t>(off_c.size());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = out.data_ptr<float>();
  std::vector<dnnl_status_t> status(static_cast<size_t>(count), dnnl_success);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      status[static_cast<size_t>(i)] =
          dnnl_sgemm(la.trans, lb.trans, m, n, k, 1.0f, pa + off_a[i], la.ld, pb + off_b[i],
                     lb.ld, 0.0f, pc + off_c[i], ldc);
    }
  };
  // One entry per thread at a time while there are enough entries to share
  // evenly; otherwise one entry at a time with sgemm's own threads.
  const int64_t threads = at::get_num_threads();
  if (threads > 1 && (count >= 4 * threads || count % threads == 0)) {
    IntraOpParallelFor(count, run);
  } else {
    run(0, count);
  }
  for (int64_t i = 0; i < count; ++i) {
    T5XX_CHECK(status[static_cast<size_t>(i)] == dnnl_success,
               "CpuBatchedMatmulInto: dnnl_sgemm failed (status " +
                   std::to_string(static_cast<int>(status[static_cast<size_t>(i)])) +
                   ") for a " + std::to_string(m) + " x " + std::to_string(k) + " x " +
                   std::to_string(n) + " product");
  }
}
#endif

}  // namespace

bool CpuBatchedMatmulAvailable() {
  return CpuGemmForwarderBuilt() && ActiveCpuGemmBackend() == CpuGemmBackend::kOneDnn;
}

void CpuBatchedMatmulInto(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  T5XX_CHECK(CpuBatchedMatmulAvailable(),
             "CpuBatchedMatmulInto needs oneDNN's sgemm (a build with libdnnl-dev and "
             "T5XX_CPU_GEMM unset or 'onednn'); check CpuBatchedMatmulAvailable() first");
  for (const at::Tensor* t : {&a, &b, &out}) {
    T5XX_CHECK(t->device().is_cpu() && t->scalar_type() == at::kFloat,
               "CpuBatchedMatmulInto takes float32 CPU tensors, got " +
                   std::string(at::toString(t->scalar_type())) + " on " + t->device().str());
  }
  const int64_t dims = out.dim();
  T5XX_CHECK(dims >= 2 && a.dim() == dims && b.dim() == dims,
             "CpuBatchedMatmulInto: a, b and out need the same number (>= 2) of dimensions, "
             "got " + std::to_string(a.dim()) + ", " + std::to_string(b.dim()) + " and " +
                 std::to_string(dims));
  bool same = a.size(-1) == b.size(-2) && out.size(-2) == a.size(-2) &&
              out.size(-1) == b.size(-1);
  for (int64_t d = 0; d + 2 < dims; ++d) {
    same = same && a.size(d) == out.size(d) && b.size(d) == out.size(d);
  }
  T5XX_CHECK(same, "CpuBatchedMatmulInto: shapes " + c10::str(a.sizes()) + " @ " +
                       c10::str(b.sizes()) + " do not give " + c10::str(out.sizes()) +
                       " (batch dimensions must be equal)");
  if (out.numel() == 0) return;
  if (a.size(-1) == 0) {
    out.zero_();
    return;
  }
  T5XX_CHECK(std::max({a.size(-2), a.size(-1), b.size(-1)}) <= std::numeric_limits<int>::max(),
             "CpuBatchedMatmulInto: a matrix dimension exceeds sgemm's int");
#if T5XX_WITH_ONEDNN_GEMM
  MatrixLayout lc;
  if (LayoutOf(out, &lc) && lc.trans == 'N') {
    RunBatched(a, b, out, lc.ld);
    return;
  }
  const at::Tensor out_t = out.transpose(-2, -1);
  if (LayoutOf(out_t, &lc) && lc.trans == 'N') {
    RunBatched(b.transpose(-2, -1), a.transpose(-2, -1), out_t, lc.ld);
    return;
  }
  const at::Tensor tmp = at::empty(out.sizes(), out.options());
  RunBatched(a, b, tmp, tmp.size(-1));
  out.copy_(tmp);
#endif
}

}  // namespace t5xx::device
