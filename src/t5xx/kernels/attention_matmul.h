// The batched products inside attention (q k^T and probs v) on float32 CPU
// tensors, through kernels/cpu/cpu_batched_gemm.h: no copies of the
// [B, L, H, D] projections into [B*H, L, D] buffers, one single-threaded
// sgemm per (batch, head) entry with the entries split among threads, and
// gradients laid out as their inputs so the head reshapes stay views
// (issue 16: libtorch 1.13's at::matmul/at::bmm ran these at about a fifth of
// the sgemm peak on T5.1.1 small).
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

// Whether AttentionMatmul takes its own path for these operands: float32
// CPU tensors of 4 dimensions with equal batch sizes, and
// device::CpuBatchedMatmulAvailable(). Otherwise AttentionMatmul is
// at::matmul.
bool AttentionMatmulFused(const at::Tensor& a, const at::Tensor& b);

// a @ b over the batch dimensions. a: [B, H, M, K], b: [B, H, K, N], any
// strides; returns [B, H, M, N] float32 with autograd (no double backward).
// With `heads_inner_out` the result's memory is laid out as [B, M, H, N], so
// result.transpose(1, 2).reshape({B, M, H * N}) is a view (t5x's
// combine-heads of the attention output). Gradients of a and b have a's and
// b's own strides where those are dense (empty_like's preserve format).
// Values equal at::matmul's to float32 rounding (one sgemm per entry,
// float32 accumulation) and do not depend on the thread count. Where
// AttentionMatmulFused(a, b) is false this is at::matmul(a, b) (any dtype,
// device, broadcasting).
at::Tensor AttentionMatmul(const at::Tensor& a, const at::Tensor& b, bool heads_inner_out);

}  // namespace t5xx::models
