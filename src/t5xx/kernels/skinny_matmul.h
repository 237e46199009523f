// x @ w for a few rows of x (a decode step at a small batch: the
// projections and the logits of one position per row) on float32 CPU
// tensors, inference only, as one stream over the weights.
//
// Why (issue 54): at batch 1 a decode step is matrix-vector products whose
// cost is reading the weights (T5.1.1 small: ~100 MB per token with the
// demo vocabulary). ATen's mm (sgemm with M = 1) read them at 12 GB/s on a
// 2-core machine whose memory gives ~50 GB/s; greedy decoding spent 68% of
// its time there.
//
// Method: each thread owns blocks of output columns. w [K, N] row-major (a
// kernel as stored): w's rows stream through the block, out[m, block] +=
// x[m, k] * w[k, block] into kSumLanes partial sums per output (lane k mod
// kSumLanes), every row of x at once (w is read once for all of them). w
// given as the transpose of a row-major [N, K] (t5x's logits through the
// embedding; kernels StoreKernelsTransposed laid out for inference, whose
// matrix-vector products stream ~10% faster): out[m, n] = dot(x[m], w^T[n])
// with the same kSumLanes partial sums (DotLanes). Both layouts add the
// same products in the same order, so they give the same bits, on any
// thread count (where only these products read a kernel, its layout
// changes no result); results differ from sgemm's by float rounding only.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace t5xx::models {

// The most rows (the product of x's leading dimensions) SkinnyMatmul takes;
// beyond it sgemm's blocking wins.
inline constexpr int64_t kSkinnyMatmulMaxRows = 8;

// How SkinnyMatmul reads a float32 CPU kernel w [K, N]: row-major, as the
// transpose of a row-major [N, K] (StoreKernelsTransposed's layout), or
// neither (then it does not apply). A w of one row or column is both; it
// reads as row-major.
enum class SkinnyLayout { kNeither, kRowMajor, kTransposed };
SkinnyLayout SkinnyLayoutOf(const at::Tensor& w);

// Whether SkinnyMatmul applies: x float32 CPU [..., K] (any strides: its
// few rows are copied when they are not a [rows, K] block) with at most
// kSkinnyMatmulMaxRows rows; w float32 CPU [K, N],
// row-major or the transpose of a row-major [N, K]; none requiring
// gradients while grad mode is on.
bool SkinnyMatmulFused(const at::Tensor& x, const at::Tensor& w);

// x @ w as float32 [..., N] (x's leading shape), contiguous. Throws
// std::invalid_argument when SkinnyMatmulFused is false. No autograd.
at::Tensor SkinnyMatmul(const at::Tensor& x, const at::Tensor& w);

// SkinnyMatmul on raw float32 data: out [rows, n] = x [rows, k] @ w, w
// row-major [k, n] or (w_transposed) row-major [n, k] read as its transpose,
// all contiguous, rows in [1, kSkinnyMatmulMaxRows] (the same bits as
// SkinnyMatmul). For a caller that already holds the data (a fused decode
// step, few_row_decoder.h). No checks beyond the row count (throws
// std::invalid_argument).
void SkinnyMatmulInto(const float* x, int64_t rows, int64_t k, const float* w, int64_t n,
                      bool w_transposed, float* out);

}  // namespace t5xx::models
