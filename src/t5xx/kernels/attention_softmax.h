// Attention's softmax(logits + bias) over the key axis as one pass per row
// forward and one backward on float32 CPU tensors.
//
// Why (issue 16): as ATen ops the bias add, the softmax and its backward
// read and wrote [B, H, Lq, Lk] five times; for T5.1.1 small at
// 2 x (512 + 114) that was ~30 ms of a 710 ms step on 2 cores.
//
// Forward per row: v = logits + bias, p = exp(v - max v) * (1 / sum), as
// ATen's CPU softmax (exp is device::ExpApprox, which gives exactly 0 where a
// -1e10 mask bias pushes v - max below -87.3). Backward: dlogits = p (g -
// sum(g p)), as ATen's softmax backward; dbias is dlogits summed over the
// bias's broadcast dimensions. Row sums use 16 interleaved partial sums in a
// fixed order: results do not depend on the thread count.
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

// Whether AttentionSoftmax takes its fused path: logits a float32 CPU
// tensor with >= 1 dimension, and bias undefined or a float32 CPU tensor of
// no more dimensions, broadcastable to logits, whose last size is logits'
// (not broadcast along keys). Otherwise AttentionSoftmax is
// at::softmax(logits + bias, -1).
bool AttentionSoftmaxFused(const at::Tensor& logits, const at::Tensor& bias);

// softmax(logits + bias, -1) with autograd for logits and bias (no double
// backward). logits: [..., Lk] float32; bias: undefined or broadcastable to
// logits' shape (t5x's combined mask and position bias, [B or 1, H or 1,
// Lq, Lk]). Returns logits' shape, float32. Agrees with ATen's
// at::softmax(logits + bias, -1) to about 1e-6 relative.
at::Tensor AttentionSoftmax(const at::Tensor& logits, const at::Tensor& bias);

}  // namespace t5xx::models
