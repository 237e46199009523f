// softmax(q k^T + bias) v on NVIDIA GPUs through cuDNN's fused flash
// attention (the graph API of NVIDIA's cudnn-frontend, header-only, from its
// PyPI wheel nvidia-cudnn-frontend; scripts/cuda_build_check.sh and
// gpu_perf_prepare.sh fetch it), with what T5 needs and libtorch's SDPA
// lacks: the gradient of an additive bias of shape [1, H, Lq, Lk] (T5's
// relative-position bias: the table learns through it) without any
// [B, H, Lq, Lk] tensor -- padding comes as per-row lengths, causality as
// a flag, never as a materialised mask. The CUDA code is in
// kernels/cuda/cudnn_attention.cc, compiled only in a CUDA build that found
// the headers (T5XX_WITH_CUDNN_FRONTEND); libcudnn is loaded at run time
// (the one libtorch loaded), so nothing more is linked.
//
// Status: compiled in CI's CUDA build, never yet run on a GPU (issue 49:
// no device lent). Nothing uses it by default; tests/kernels/
// cudnn_attention_test.cc compares it with libtorch's math attention on a
// GPU (T5XX_TEST_DEVICE=cuda, scripts/gpu_perf_check.sh) and skips
// elsewhere.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace t5xx::kernels {

// Whether this build has it (a CUDA libtorch and cudnn-frontend's headers).
bool HaveCudnnAttention();

// The attention of heads q [B, H, Lq, D], k and v [B, H, Lk, D] (bfloat16
// or float16, on one CUDA device, any strides with the last dim
// contiguous), scale 1 (T5 folds 1/sqrt(D) into its query kernel), plus
//   bias        [1, H, Lq, Lk] of q's dtype, or undefined; when it requires
//               grad its gradient (same shape, float32 accumulation, q's
//               dtype) flows back;
//   q_lengths, kv_lengths   int32 [B] on the device: row b attends only
//               keys j < kv_lengths[b], and its queries i >= q_lengths[b]
//               give 0 (cuDNN's padding mask); undefined: full lengths;
//   causal      key j > query i masked (decoder self-attention; cuDNN skips
//               the masked blocks).
// Returns [B, H, Lq, D] in q's dtype; gradients flow to q, k, v and the
// bias. The softmax is in float32. Throws t5xx::Error naming what is
// unsupported (no such build, CPU tensors, another dtype or shape, or
// cuDNN's own refusal from check_support, e.g. head dims it has no kernel
// for) before any work is queued.
at::Tensor CudnnAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, const at::Tensor& q_lengths,
                          const at::Tensor& kv_lengths, bool causal);

}  // namespace t5xx::kernels
