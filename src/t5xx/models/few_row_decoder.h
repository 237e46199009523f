// The T5 decoder's layers for one decode step of a few rows, as plain loops
// over float32 data: the same arithmetic as encoder_decoder_decoding.cc's
// CachedDecoder (decode_cache.h's sublayers) without a tensor operation per
// step of it.
//
// Why (issue 54): greedy decoding at batch 1 reads ~100 MB of weights per
// token (T5.1.1 small), which takes ~5 ms; the ~1,250 ATen operations of a
// step (views, empty, add, index_put, arange, ...) added ~1.5-2 ms more.
// Here each layer is RmsNormRowsInto, SkinnyMatmulInto, a copy into the
// cache, DecodeAttentionInto and GatedGeluInto (kernels/) on buffers held
// for the step: the same functions on the same values as the tensor path,
// so the logits are the same bits.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "t5xx/decoding/decoding.h"
#include "t5xx/models/networks/t5_config.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

// Whether FewRowDecoderLayers applies: single-device parameters (no
// partitioner's hooks) with no --int8_weights scope open, a float32
// network, tokens [R, 1] with R <= kSkinnyMatmulMaxRows, MLP activations
// ('gelu', 'linear') or ('relu',), and every kernel the layers read a
// float32 CPU tensor laid out [K, N] row-major or as the transpose of a
// row-major [N, K] (StoreKernelsTransposed), the cache's float32 entries
// with unit stride along their last dimension.
bool FewRowDecoderApplies(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                          const decoding::Cache& cache);

// The decoder layers of one step (before the final norm and the logits):
// tokens int64 [R, 1] at `index` (int64 [R]: each row's position; its key
// and value are written there in the self-attention caches, none for a
// position >= the cache length), attending over cached positions [0, n)
// with self_bias (float32 [R, H, 1, n]: one, or one per layer) and over
// the encoder output with the cache's encoder_decoder_mask. Returns the
// last layer's output, float32 [R, 1, E], or an undefined tensor, having
// written nothing, where FewRowDecoderApplies is false (then the tensor
// path runs the step). Throws t5xx::Error for a token id outside the
// embedding or a self_bias of another shape.
at::Tensor FewRowDecoderLayers(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                               const at::Tensor& index, int64_t n,
                               const std::vector<at::Tensor>& self_bias, decoding::Cache& cache);

// Whether `p` is a kernel the few-row decode step multiplies by at every
// token (the decoder's attention projections but the cross-attention's
// keys and values, which the encoder's output meets once through sgemm;
// its MLP; logits_dense): those StoreKernelsTransposed lays out for a run
// that decodes at most kSkinnyMatmulMaxRows rows.
bool DecodeStepKernel(const Param& p);

}  // namespace t5xx::models
