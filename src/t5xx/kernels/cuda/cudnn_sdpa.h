// cuDNN's fused attention forward and backward graphs (cudnn-frontend's
// graph API: Graph::sdpa / Graph::sdpa_backward), built once per shape and
// cached, run on the current CUDA stream -- the CUDA half of
// kernels/cudnn_attention.h, whose dispatch and autograd function call
// these. Defined only in a CUDA build with cudnn-frontend's headers
// (T5XX_WITH_CUDNN_FRONTEND); argument rules as CudnnAttention's.
#pragma once

#include <ATen/ATen.h>

namespace t5xx::kernels::cuda {

struct SdpaForward {
  at::Tensor out;    // [B, H, Lq, D], q's dtype, contiguous
  at::Tensor stats;  // [B, H, Lq, 1] float32: each row's log-sum-exp
};
SdpaForward CudnnSdpaForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& bias, const at::Tensor& q_lengths,
                             const at::Tensor& kv_lengths, bool causal);

struct SdpaGrads {
  at::Tensor dq, dk, dv;  // q's, k's, v's shapes, contiguous
  at::Tensor dbias;       // [1, H, Lq, Lk] when asked, else undefined
};
SdpaGrads CudnnSdpaBackward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& bias, const at::Tensor& q_lengths,
                            const at::Tensor& kv_lengths, bool causal, const SdpaForward& fwd,
                            const at::Tensor& dout, bool want_dbias);

}  // namespace t5xx::kernels::cuda
