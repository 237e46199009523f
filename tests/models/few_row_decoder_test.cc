// The few-row decoder (models/few_row_decoder.h): its layers give the same
// bits as decode_cache.h's sublayers that CachedDecoder runs, and write the
// same self-attention caches: greedy rows and beams sharing an example's
// encoder output, gated-GELU and ReLU MLPs, one position table or one per
// layer, kernels row-major or stored transposed (StoreKernelsTransposed),
// steps up to and past the cache's last position. Also where it does not
// apply, and the transposed layout itself.
#include "t5xx/models/few_row_decoder.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "t5xx/models/decode_cache.h"
#include "t5xx/models/encoder_decoder_decoding.h"
#include "t5xx/models/networks/int8_weights.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/models/networks/network.h"
#include "t5xx/models/networks/param_blocks.h"

namespace t5xx::models {
namespace {

T5Config Config(bool gated, bool per_layer) {
  T5Config c;
  c.vocab_size = 64;
  c.emb_dim = 32;
  c.num_heads = 4;
  c.head_dim = 8;
  c.num_encoder_layers = 2;
  c.num_decoder_layers = 3;
  c.mlp_dim = 64;
  c.mlp_activations =
      gated ? std::vector<std::string>{"gelu", "linear"} : std::vector<std::string>{"relu"};
  c.relpos_per_layer = per_layer;
  c.dropout_rate = 0.0;
  return c;
}

decoding::Cache Clone(const decoding::Cache& cache) {
  decoding::Cache out;
  for (const auto& [name, t] : cache) out[name] = t.clone();
  return out;
}

// The tensor path's layers (encoder_decoder_decoding.cc's CachedDecoder).
at::Tensor SublayerPath(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                        const at::Tensor& index, int64_t n, const std::vector<at::Tensor>& bias,
                        decoding::Cache& cache) {
  const SublayerSettings s{
      c.num_heads, &c.mlp_activations, 0.0, c.float32_attention_logits, at::kFloat, false, nullptr};
  const int64_t length = cache.at(CachedKeyName(DecoderLayerPrefix(0) + ".self_attention")).size(1);
  const at::Tensor cross_bias = DecodeCrossAttentionBias(cache.at(kEncoderDecoderMask), at::kFloat);
  at::Tensor x = at::embedding(p.Get("token_embedder.embedding"), tokens);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string pre = DecoderLayerPrefix(i);
    const std::string self = pre + ".self_attention", cross = pre + ".encoder_decoder_attention";
    x = CachedSelfAttentionSublayer(p, pre + ".pre_self_attention_layer_norm.scale", self, x,
                                    index.unsqueeze(1), cache.at(CachedKeyName(self)),
                                    cache.at(CachedValueName(self)), length, n,
                                    bias[bias.size() == 1 ? 0 : i], s);
    x = CachedCrossAttentionSublayer(p, pre + ".pre_cross_attention_layer_norm.scale", cross, x,
                                     cache.at(CachedKeyName(cross) + decoding::kPerExampleSuffix),
                                     cache.at(CachedValueName(cross) + decoding::kPerExampleSuffix),
                                     cross_bias, s);
    x = MlpSublayer(p, pre + ".pre_mlp_layer_norm.scale", pre + ".mlp", x, s);
  }
  return x;
}

void ExpectSameBits(bool gated, bool per_layer, bool transposed, int64_t beams) {
  SCOPED_TRACE(std::string(gated ? "gated gelu" : "relu") + (per_layer ? ", table per layer" : "") +
               (transposed ? ", transposed kernels" : ", row-major kernels") + ", beams " +
               std::to_string(beams));
  const T5Config c = Config(gated, per_layer);
  Transformer net(c);
  ParamStore p = net.InitParams(5);
  if (transposed) {
    // Per layer: self q, k, v, o; cross q, o; the MLP's 3 or 2; logits_dense.
    EXPECT_EQ(StoreKernelsTransposed(p, DecodeStepKernel), gated ? 3 * 9 + 1 : 3 * 8 + 1);
  }
  const at::NoGradGuard no_grad;
  // Two examples, padded differently (the cross-attention's mask).
  at::Tensor enc = at::zeros({2, 7}, at::kLong);
  enc[0].narrow(0, 0, 6).copy_(at::arange(3, 9, at::kLong));
  enc[1].narrow(0, 0, 3).copy_(at::arange(20, 23, at::kLong));
  const int64_t length = 5;
  decoding::Cache fused = InitEncoderDecoderCache(net, p, net.Encode(p, enc, at::Tensor(), false),
                                                  enc, length, /*use_cache=*/true);
  for (auto& [name, t] : fused) {  // beams: each example's rows, per-example entries shared
    if (name.find(decoding::kPerExampleSuffix) == std::string::npos) {
      t = t.repeat_interleave(beams, 0);
    }
  }
  decoding::Cache tensor_path = Clone(fused);
  const int64_t rows = 2 * beams;
  // Positions up to and past the cache's end (index >= length: nothing is
  // written, t5x's clamped bias).
  for (int64_t step = 0; step <= length + 1; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const at::Tensor tokens =
        (at::arange(rows, at::kLong) * 7 + step * 3).remainder(64).unsqueeze(1);
    at::Tensor index = fused.at(kCacheIndex);
    if (step == 2 && rows > 1) index[1] = 0;  // rows at different positions
    tensor_path.at(kCacheIndex).copy_(index);
    const int64_t n = AttendLength(index, length);
    std::vector<at::Tensor> bias;
    for (const std::string& table : DecoderRelEmbeddings(c)) {
      bias.push_back(DecodeSelfAttentionBias(p.Get(table), index, n, length,
                                             c.relative_attention_num_buckets,
                                             c.relative_attention_max_distance, true, at::kFloat));
    }
    ASSERT_TRUE(FewRowDecoderApplies(c, p, tokens, fused));
    const at::Tensor got = FewRowDecoderLayers(c, p, tokens, index, n, bias, fused);
    const at::Tensor want = SublayerPath(c, p, tokens, index, n, bias, tensor_path);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(at::equal(got, want)) << "max diff " << (got - want).abs().max().item<double>();
    for (const auto& [name, t] : tensor_path) {
      EXPECT_TRUE(at::equal(fused.at(name), t)) << name;
    }
    fused.at(kCacheIndex) = index + 1;
  }
}

TEST(FewRowDecoderTest, LayersAreTheSublayersBits) {
  for (bool gated : {true, false}) {
    for (bool transposed : {false, true}) ExpectSameBits(gated, false, transposed, 1);
  }
  ExpectSameBits(true, true, true, 1);
  ExpectSameBits(true, false, true, 4);  // 8 rows: beams reading their example's keys
  ExpectSameBits(false, true, false, 2);
}

// A cache for `examples` examples with `beams` rows each.
decoding::Cache CacheOf(const Transformer& net, const ParamStore& p, int64_t examples,
                        int64_t beams) {
  const at::Tensor enc =
      at::arange(1, examples + 1, at::kLong).view({examples, 1}).expand({examples, 4}).contiguous();
  decoding::Cache cache =
      InitEncoderDecoderCache(net, p, net.Encode(p, enc, at::Tensor(), false), enc, 4, true);
  for (auto& [name, t] : cache) {
    if (name.find(decoding::kPerExampleSuffix) == std::string::npos) {
      t = t.repeat_interleave(beams, 0);
    }
  }
  return cache;
}

TEST(FewRowDecoderTest, AppliesOnlyWhereItComputesTheSame) {
  const T5Config c = Config(true, false);
  Transformer net(c);
  const ParamStore p = net.InitParams(5);
  const at::NoGradGuard no_grad;
  const at::Tensor one = at::ones({1, 1}, at::kLong);
  const decoding::Cache cache = CacheOf(net, p, 1, 1);
  ASSERT_TRUE(FewRowDecoderApplies(c, p, one, cache));
  EXPECT_TRUE(FewRowDecoderApplies(c, p, at::ones({8, 1}, at::kLong), CacheOf(net, p, 2, 4)));
  // More rows than kSkinnyMatmulMaxRows; two positions a row.
  EXPECT_FALSE(FewRowDecoderApplies(c, p, at::ones({9, 1}, at::kLong), CacheOf(net, p, 9, 1)));
  EXPECT_FALSE(FewRowDecoderApplies(c, p, at::ones({1, 2}, at::kLong), cache));
  // Caches whose rows do not fit the step's: 3 rows over 2 examples' keys,
  // self caches of 2 rows for 1.
  EXPECT_FALSE(FewRowDecoderApplies(c, p, at::ones({3, 1}, at::kLong), [&] {
    decoding::Cache three = CacheOf(net, p, 2, 2);
    for (auto& [name, t] : three) {
      if (name.find(decoding::kPerExampleSuffix) == std::string::npos) t = t.narrow(0, 0, 3);
    }
    return three;
  }()));
  EXPECT_FALSE(FewRowDecoderApplies(c, p, one, CacheOf(net, p, 1, 2)));
  T5Config bf16 = c;
  bf16.dtype = "bfloat16";
  EXPECT_FALSE(FewRowDecoderApplies(bf16, p, one, cache));
  T5Config swish = c;
  swish.mlp_activations = {"swish", "linear"};
  EXPECT_FALSE(FewRowDecoderApplies(swish, p, one, cache));
  {
    Int8Weights int8(p);
    const Int8WeightsScope scope(&int8);  // --int8_weights: MatmulIn's int8 path instead
    EXPECT_FALSE(FewRowDecoderApplies(c, p, one, cache));
  }
  SetAttentionKernel(AttentionKernel::kFused);  // libtorch's attention kernel instead
  EXPECT_FALSE(FewRowDecoderApplies(c, p, one, cache));
  SetAttentionKernel(AttentionKernel::kAuto);
  decoding::Cache no_cross = cache;
  no_cross.erase(CachedKeyName("decoder.layers_1.encoder_decoder_attention") +
                 decoding::kPerExampleSuffix);
  EXPECT_FALSE(FewRowDecoderApplies(c, p, one, no_cross));
}

TEST(FewRowDecoderTest, StoreKernelsTransposedKeepsValuesAndShapes) {
  Transformer net(Config(true, false));
  ParamStore p = net.InitParams(9);
  const ParamStore before = net.InitParams(9);
  p.GetParam("decoder.layers_0.mlp.wo.kernel").value.set_requires_grad(true);  // left alone
  EXPECT_EQ(StoreKernelsTransposed(p, DecodeStepKernel), 3 * 9 + 1 - 1);
  for (const Param& q : p.params()) {
    SCOPED_TRACE(q.name);
    EXPECT_TRUE(at::equal(q.value, before.Get(q.name)));
    const bool decoder_kernel = q.name.rfind("decoder.", 0) == 0 && q.value.dim() == 2 &&
                                q.name.size() > 7 && q.name.substr(q.name.size() - 7) == ".kernel";
    const bool cross_kv = q.name.find("encoder_decoder_attention.key") != std::string::npos ||
                          q.name.find("encoder_decoder_attention.value") != std::string::npos;
    EXPECT_EQ(DecodeStepKernel(q), decoder_kernel && !cross_kv);
    const bool moved = DecodeStepKernel(q) && q.name != "decoder.layers_0.mlp.wo.kernel";
    EXPECT_EQ(q.value.dim() == 2 && q.value.stride(0) == 1 && q.value.stride(1) == q.value.size(0),
              moved);
  }
  EXPECT_EQ(StoreKernelsTransposed(p, DecodeStepKernel), 0);  // already so laid out
}

}  // namespace
}  // namespace t5xx::models
