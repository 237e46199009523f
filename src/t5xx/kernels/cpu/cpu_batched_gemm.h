// Batched float32 matrix products on the CPU without copies: one oneDNN
// sgemm per batch entry, batch entries split among libtorch's intra-op
// threads, operands read through their strides.
//
// Why (issue 16): attention's products (q k^T and probs v, and their
// gradients) are batched over [batch, heads] with small matrices (T5.1.1
// small: 48 products of 128 x 64 x 128 per layer). libtorch 1.13's CPU
// at::bmm for float32 loops over the batch and calls a multi-threaded
// sgemm_ per entry, after at::matmul has copied the [B, L, H, D] views into
// contiguous [B*H, L, D] buffers; each tiny product then pays a parallel
// region on 2 threads. Measured on T5.1.1 small (8 x (128+32), 2 cores):
// bmm forward + backward 57 ms of a 724 ms step for 5 GFLOP, about 90
// GFLOP/s against a 500 GFLOP/s sgemm peak, plus ~15 ms of copies and
// select/as_strided views.
//
// Here each entry's product runs single-threaded on one thread (oneDNN's
// sgemm runs on one thread inside a parallel region), entries split among
// threads, and operands whose matrices have a unit stride in either of their
// last two dimensions are read in place (a transposed view is sgemm's 'T').
//
// Results: each entry is one dnnl_sgemm call (float32 accumulation), so
// values match at::matmul through oneDNN to float32 rounding; they do not
// depend on the thread count (an entry's product always runs on one thread).
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::device {

// Whether CpuBatchedMatmulInto can run: this build carries oneDNN's sgemm
// (cpu_gemm.h) and T5XX_CPU_GEMM does not select the system BLAS. When
// false, callers use at::matmul.
bool CpuBatchedMatmulAvailable();

// out[i] = a[i] @ b[i] over the leading (batch) dimensions.
// a: [..., M, K], b: [..., K, N], out: [..., M, N]; float32 CPU tensors of
// the same number of dimensions (>= 2) and the same batch sizes (no
// broadcasting), any strides (an operand with no unit stride in its last two
// dimensions is copied first; an `out` with a unit stride only in dimension
// -2 is written as out^T = b^T a^T; any other `out` is computed in a
// temporary and copied in). `out` must not overlap a or b. Throws t5xx::Error
// for mismatched shapes, dtypes or devices, or when
// CpuBatchedMatmulAvailable() is false.
void CpuBatchedMatmulInto(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out);

}  // namespace t5xx::device
