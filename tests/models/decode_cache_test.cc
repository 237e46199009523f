// The decoding cache (models/decode_cache.h, encoder_decoder_decoding.h,
// decoder_only_decoding.h): decode steps over the key/value cache give the
// logits of the training-path forward pass, and decoding with the cache
// gives exactly the tokens of decoding without it (greedy, sampled with the
// same generator seed, beam search; encoder-decoder and decoder-only with
// prompts of different lengths, prefix LM and causal; float32 and
// bfloat16).
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <vector>

#include "t5xx/models/decode_cache.h"
#include "t5xx/models/decoder_only_decoding.h"
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_decoding.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

T5Config EncDecConfig(const std::string& dtype = "float32") {
  T5Config c;
  c.vocab_size = 64;
  c.emb_dim = 32;
  c.num_heads = 4;
  c.head_dim = 8;
  c.num_encoder_layers = 2;
  c.num_decoder_layers = 3;
  c.mlp_dim = 64;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  c.dtype = dtype;
  return c;
}

DecoderOnlyConfig DecoderConfig(const std::string& dtype = "float32",
                                bool logits_via_embedding = false) {
  DecoderOnlyConfig c;
  c.vocab_size = 64;
  c.emb_dim = 32;
  c.num_heads = 4;
  c.head_dim = 8;
  c.num_layers = 3;
  c.mlp_dim = 64;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  c.dtype = dtype;
  c.logits_via_embedding = logits_via_embedding;
  return c;
}

at::Tensor Rows(const std::vector<std::vector<int64_t>>& rows, int64_t length) {
  at::Tensor t = at::zeros({static_cast<int64_t>(rows.size()), length}, at::kLong);
  for (size_t b = 0; b < rows.size(); ++b) {
    for (size_t i = 0; i < rows[b].size(); ++i) t[b][i] = rows[b][i];
  }
  return t;
}

// Three rows padded differently.
FeatureBatch EncDecBatch(int64_t decode_length) {
  FeatureBatch b;
  b["encoder_input_tokens"] =
      Rows({{5, 12, 7, 33, 2, 9, 1}, {8, 3, 21, 1}, {30, 14, 1}}, 8);
  b["decoder_input_tokens"] = at::zeros({3, decode_length}, at::kLong);
  return b;
}

// seqio's PrefixLMFeatureConverter rows (inputs, targets) of prompts with
// 4, 2 and 6 tokens: decoder_input_tokens (shifted right, BOS 0) and
// decoder_causal_attention (1 on BOS + inputs).
FeatureBatch PrefixLmBatch(int64_t length) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> rows = {
      {{9, 4, 6, 1}, {3, 9, 1}}, {{15, 1}, {7, 33, 20, 11, 1}}, {{5, 8, 13, 21, 34, 1}, {2, 1}}};
  FeatureBatch b;
  b["decoder_input_tokens"] = at::zeros({3, length}, at::kLong);
  b["decoder_causal_attention"] = at::zeros({3, length}, at::kLong);
  for (int64_t r = 0; r < 3; ++r) {
    std::vector<int64_t> seq = rows[r].first;
    seq.insert(seq.end(), rows[r].second.begin(), rows[r].second.end());
    for (size_t i = 0; i + 1 < seq.size() && static_cast<int64_t>(i) + 1 < length; ++i) {
      b["decoder_input_tokens"][r][i + 1] = seq[i];
    }
    for (size_t i = 0; i <= rows[r].first.size(); ++i) b["decoder_causal_attention"][r][i] = 1;
  }
  return b;
}

decoding::DecodeFnConfig Greedy() {
  decoding::DecodeFnConfig f;
  f.kind = decoding::DecodeFnConfig::Kind::kTemperatureSample;
  f.temperature_sample.rescale_log_probs = false;  // scores are log-probabilities
  return f;
}
decoding::DecodeFnConfig Sampled() {
  decoding::DecodeFnConfig f;
  f.kind = decoding::DecodeFnConfig::Kind::kTemperatureSample;
  f.temperature_sample.topk = 0;
  f.temperature_sample.temperature = 1.0;
  return f;
}
decoding::DecodeFnConfig Beam() {
  decoding::DecodeFnConfig f;
  f.kind = decoding::DecodeFnConfig::Kind::kBeamSearch;
  return f;
}

struct Decoded {
  at::Tensor predictions, scores;
};

Decoded Predict(BaseTransformerModel& model, const ParamStore& params, const FeatureBatch& batch,
                const decoding::DecodeFnConfig& fn, bool use_cache, int64_t num_decodes,
                uint64_t seed = 0) {
  model.set_decode_fn(fn);
  model.set_use_decode_cache(use_cache);
  at::Generator gen = compat::MakeCpuGenerator(seed);
  PredictionsWithAux out =
      model.PredictBatchWithAux(params, batch, &gen, /*return_all_decodes=*/true, num_decodes);
  return {out.predictions, out.aux.at("scores")};
}

// The same tokens with and without the cache; scores within rounding.
void ExpectSameDecodes(BaseTransformerModel& model, const ParamStore& params,
                       const FeatureBatch& batch, const decoding::DecodeFnConfig& fn,
                       int64_t num_decodes, double score_tol) {
  const Decoded with = Predict(model, params, batch, fn, true, num_decodes, 7);
  const Decoded without = Predict(model, params, batch, fn, false, num_decodes, 7);
  EXPECT_TRUE(at::equal(with.predictions, without.predictions))
      << with.predictions << "\nvs\n" << without.predictions;
  EXPECT_TRUE(at::allclose(with.scores, without.scores, 1e-5, score_tol))
      << with.scores << "\nvs\n" << without.scores;
  // Something was decoded: not all rows empty.
  EXPECT_GT(with.predictions.ne(0).sum().item<int64_t>(), 0);
}

// Teacher-forced decode steps over `tokens` [B, L] (position 0 = BOS) give
// the training path's logits at every position.
// Also with scalable_t5's table per layer (relpos_per_layer).
TEST(DecodeCacheTest, EncoderDecoderStepsMatchTheForwardPass) {
 for (bool per_layer : {false, true}) {
  SCOPED_TRACE(per_layer ? "relpos_per_layer" : "one table per stack");
  T5Config config = EncDecConfig();
  config.relpos_per_layer = per_layer;
  Transformer net(config);
  const ParamStore p = net.InitParams(3);
  const FeatureBatch batch = EncDecBatch(6);
  const at::Tensor enc = batch.at("encoder_input_tokens");
  const at::Tensor dec_in = Rows({{0, 4, 17, 25, 3, 1}, {0, 11, 6, 1, 9, 9}, {0, 22, 9, 13, 1, 2}}, 6);
  const at::NoGradGuard no_grad;
  // decode=True masks: every decoder position counts (targets all nonzero).
  FeatureBatch full = batch;
  full["decoder_input_tokens"] = dec_in;
  full["decoder_target_tokens"] = at::ones_like(dec_in);
  const at::Tensor expected = net(p, full, /*train=*/false);
  const at::Tensor encoded = net.Encode(p, enc, at::Tensor(), false);
  for (bool use_cache : {true, false}) {
    decoding::Cache cache = InitEncoderDecoderCache(net, p, encoded, enc, 6, use_cache);
    for (int64_t i = 0; i < 6; ++i) {
      const at::Tensor logits = EncoderDecoderDecodeStep(net, p, dec_in.select(1, i), cache);
      EXPECT_TRUE(at::allclose(logits, expected.select(1, i), 1e-5, 1e-5))
          << "use_cache " << use_cache << " position " << i << ": max diff "
          << (logits - expected.select(1, i)).abs().max().item<double>();
    }
    EXPECT_TRUE(at::equal(cache.at(kCacheIndex), at::full({3}, 6, at::kLong)));
  }
 }
}

TEST(DecodeCacheTest, EncoderDecoderCacheLayoutAndBytes) {
  Transformer net(EncDecConfig());
  const ParamStore p = net.InitParams(3);
  const FeatureBatch batch = EncDecBatch(10);
  const at::Tensor enc = batch.at("encoder_input_tokens");
  const at::Tensor encoded = net.Encode(p, enc, at::Tensor(), false);
  decoding::Cache cache = InitEncoderDecoderCache(net, p, encoded, enc, 10, true);
  const auto& self_key = cache.at("decoder.layers_2.self_attention.cached_key");
  EXPECT_EQ(self_key.sizes(), (std::vector<int64_t>{3, 10, 32}));
  EXPECT_EQ(cache.at("decoder.layers_0.encoder_decoder_attention.cached_value:per_example").sizes(),
            (std::vector<int64_t>{3, 8, 32}));
  EXPECT_TRUE(at::equal(cache.at(kEncoderDecoderMask), enc > 0));
  // 3 layers x (self k, v: 3*10*32 + cross k, v: 3*8*32) float32, the index
  // (3 int64) and the mask (24 bools).
  EXPECT_EQ(CacheBytes(cache), 3 * 2 * (3 * 10 * 32 + 3 * 8 * 32) * 4 + 3 * 8 + 24);
}

TEST(DecodeCacheTest, EncoderDecoderDecodesTheSameTokensWithAndWithoutTheCache) {
  EncoderDecoderModel model(Transformer(EncDecConfig()), 0, 0, {});
  const ParamStore p = model.InitParams(11);
  const FeatureBatch batch = EncDecBatch(12);
  ExpectSameDecodes(model, p, batch, Greedy(), 1, 1e-4);
  ExpectSameDecodes(model, p, batch, Sampled(), 3, 1e-4);
  ExpectSameDecodes(model, p, batch, Beam(), 4, 1e-4);
  // A beam search longer than the decoder input runs rows past the cache's
  // last position (t5x then attends to every cached key).
  decoding::DecodeFnConfig longer = Beam();
  longer.beam_search.max_decode_len = 15;
  ExpectSameDecodes(model, p, batch, longer, 2, 1e-4);
  // scalable_t5's tables per layer, through the same paths.
  T5Config per_layer = EncDecConfig();
  per_layer.relpos_per_layer = true;
  EncoderDecoderModel scalable(Transformer(per_layer), 0, 0, {});
  const ParamStore q = scalable.InitParams(11);
  ExpectSameDecodes(scalable, q, batch, Greedy(), 1, 1e-4);
  ExpectSameDecodes(scalable, q, batch, longer, 2, 1e-4);
}

TEST(DecodeCacheTest, EncoderDecoderBfloat16DecodesTheSameTokens) {
  EncoderDecoderModel model(Transformer(EncDecConfig("bfloat16")), 0, 0, {});
  const ParamStore p = model.InitParams(11);
  const FeatureBatch batch = EncDecBatch(12);
  ExpectSameDecodes(model, p, batch, Greedy(), 1, 0.1);
  ExpectSameDecodes(model, p, batch, Beam(), 4, 0.1);
}

TEST(DecodeCacheTest, EncoderDecoderPromptWithTargetsIsForced) {
  EncoderDecoderModel model(Transformer(EncDecConfig()), 0, 0, {});
  const ParamStore p = model.InitParams(11);
  FeatureBatch batch = EncDecBatch(8);
  // The EOS (1) of the prompt is stripped, as t5x does; 4, 17 are forced.
  batch["decoder_input_tokens"] = Rows({{0, 4, 17, 1}, {0, 11}, {0}}, 8);
  model.set_decode_fn(Greedy());
  for (bool use_cache : {true, false}) {
    model.set_use_decode_cache(use_cache);
    const at::Tensor pred =
        model.PredictBatchWithAux(p, batch, nullptr, false, 1, /*prompt_with_targets=*/true)
            .predictions;
    EXPECT_EQ(pred[0][0].item<int64_t>(), 4);
    EXPECT_EQ(pred[0][1].item<int64_t>(), 17);
    EXPECT_EQ(pred[1][0].item<int64_t>(), 11);
  }
}

// Prefill + decode steps over a fixed continuation give the training path's
// logits after the prompt.
void ExpectDecoderOnlyStepsMatch(bool bidirectional, const std::string& dtype, double tol) {
  DecoderOnlyTransformer net(DecoderConfig(dtype, /*logits_via_embedding=*/bidirectional));
  const ParamStore p = net.InitParams(5);
  const int64_t length = 12;
  const FeatureBatch prompt = PrefixLmBatch(length);
  const at::Tensor causal = prompt.at("decoder_causal_attention");
  const at::Tensor inputs = prompt.at("decoder_input_tokens") * causal;
  // A full sequence: the prompt, then arbitrary tokens.
  const at::Tensor cont = at::randint(2, 64, {3, length}, compat::MakeCpuGenerator(1), at::kLong);
  const at::Tensor tokens = at::where(causal > 0, inputs, cont);
  const at::NoGradGuard no_grad;
  FeatureBatch full;
  full["decoder_input_tokens"] = tokens;
  full["decoder_target_tokens"] = at::ones_like(tokens);
  if (bidirectional) full["decoder_causal_attention"] = causal;
  const at::Tensor expected = net(p, full, /*train=*/false);
  for (bool use_cache : {true, false}) {
    PrefilledCache pc = PrefillDecoderOnlyCache(net, p, inputs, causal, bidirectional, use_cache);
    EXPECT_TRUE(at::equal(pc.initial_index, at::tensor({4, 2, 6}, at::kLong)));
    // Each row from its own prompt end to the last position.
    at::Tensor index = pc.initial_index.clone();
    for (int64_t step = 0; step < length - 2; ++step) {
      const at::Tensor cur = tokens.gather(1, index.clamp_max(length - 1).unsqueeze(1)).squeeze(1);
      const at::Tensor logits = DecoderOnlyDecodeStep(net, p, cur, pc.cache);
      for (int64_t b = 0; b < 3; ++b) {
        const int64_t i = index[b].item<int64_t>();
        if (i >= length) continue;
        const at::Tensor want = expected[b][i];
        EXPECT_TRUE(at::allclose(logits[b], want, tol, tol))
            << "bidirectional " << bidirectional << " use_cache " << use_cache << " row " << b
            << " position " << i << ": max diff " << (logits[b] - want).abs().max().item<double>();
      }
      index += 1;
    }
  }
}

TEST(DecodeCacheTest, DecoderOnlyPrefillAndStepsMatchTheForwardPass) {
  ExpectDecoderOnlyStepsMatch(/*bidirectional=*/true, "float32", 1e-5);
  ExpectDecoderOnlyStepsMatch(/*bidirectional=*/false, "float32", 1e-5);
}

TEST(DecodeCacheTest, DecoderOnlyPrefillKeepsThePromptBeforeItsLastToken) {
  DecoderOnlyTransformer net(DecoderConfig());
  const ParamStore p = net.InitParams(5);
  const FeatureBatch prompt = PrefixLmBatch(12);
  const at::Tensor causal = prompt.at("decoder_causal_attention");
  PrefilledCache pc = PrefillDecoderOnlyCache(net, p, prompt.at("decoder_input_tokens") * causal,
                                              causal, true, true);
  const at::Tensor key = pc.cache.at("decoder.layers_1.self_attention.cached_key");
  EXPECT_EQ(key.sizes(), (std::vector<int64_t>{3, 12, 32}));
  // Row 1's prompt has 2 tokens: positions 0 (BOS) and 1 are cached, the
  // prompt's last token (position 2) is fed again by the first decode step.
  const at::Tensor written = key.abs().sum(-1) > 0;
  EXPECT_TRUE(at::equal(written[1], at::arange(12) < 2));
  EXPECT_TRUE(at::equal(written[2], at::arange(12) < 6));
  EXPECT_TRUE(at::equal(pc.cache.at(kCacheIndex), pc.initial_index));
}

TEST(DecodeCacheTest, DecoderOnlyDecodesTheSameTokensWithAndWithoutTheCache) {
  for (bool bidirectional : {true, false}) {
    SCOPED_TRACE(bidirectional ? "prefix LM" : "causal");
    DecoderOnlyModel model(DecoderOnlyTransformer(DecoderConfig()), bidirectional, 0, 0, {});
    const ParamStore p = model.InitParams(13);
    const FeatureBatch batch = PrefixLmBatch(14);
    ExpectSameDecodes(model, p, batch, Greedy(), 1, 1e-4);
    ExpectSameDecodes(model, p, batch, Sampled(), 2, 1e-4);
    ExpectSameDecodes(model, p, batch, Beam(), 4, 1e-4);
  }
}

TEST(DecodeCacheTest, DecoderOnlyBfloat16DecodesTheSameTokens) {
  DecoderOnlyModel model(DecoderOnlyTransformer(DecoderConfig("bfloat16")), true, 0, 0, {});
  const ParamStore p = model.InitParams(13);
  ExpectSameDecodes(model, p, PrefixLmBatch(14), Greedy(), 1, 0.1);
}

TEST(DecodeCacheTest, OneQueryBiasIsARowOfTheTrainingBias) {
  const at::Tensor rel = at::randn({3, 32}, compat::MakeCpuGenerator(2));
  const int64_t length = 6;
  // The training path's causal bias [1, 3, 6, 6] (mask and position bias).
  const at::Tensor full = CausalSelfAttentionBias(rel, length, at::Tensor(), 32, 128, at::kFloat);
  const at::Tensor index = at::tensor({0, 4, 5, 6, 9}, at::kLong);
  for (bool clamp : {true, false}) {
    const at::Tensor b = DecodeSelfAttentionBias(rel, index, length, length, 32, 128, clamp,
                                                 at::kFloat);
    ASSERT_EQ(b.sizes(), (std::vector<int64_t>{5, 3, 1, 6}));
    for (int64_t r = 0; r < 3; ++r) {
      const int64_t i = index[r].item<int64_t>();
      EXPECT_TRUE(at::equal(b[r].squeeze(1), full[0].select(1, i))) << "row " << i;
    }
    // Past the end: every key visible; the last row's position bias
    // (clamped, t5x's enc-dec dynamic_slice) or none (decoder-only one-hot).
    for (int64_t r = 3; r < 5; ++r) {
      const at::Tensor want = clamp ? RelativePositionBias(rel, length, length, false, 32, 128)
                                          [0].select(1, length - 1)
                                    : at::zeros({3, length});
      EXPECT_TRUE(at::equal(b[r].squeeze(1), want)) << "clamp " << clamp << " row " << r;
    }
  }
  // Prefix LM: the prompt (first 3 positions) attends to itself both ways.
  const at::Tensor prompt = at::tensor({1, 1, 1, 0, 0, 0}, at::kLong).unsqueeze(0);
  const at::Tensor prefix = CausalSelfAttentionBias(rel, length, prompt, 32, 128, at::kFloat);
  EXPECT_GT(prefix[0][0][0][2].item<float>(), -1e9);  // position 0 sees position 2
  EXPECT_LT(prefix[0][0][0][3].item<float>(), -1e9);  // but not 3
  EXPECT_LT(prefix[0][0][3][4].item<float>(), -1e9);  // causal after the prompt
}

TEST(DecodeCacheTest, RemovePrefixAsT5x) {
  // t5x's remove_prefix docstring example, and a second row with prefix 0.
  const at::Tensor seq = Rows({{1, 2, 3, 4, 5, 6, 7, 0}, {1, 2, 3, 4, 5, 6, 7, 0}}, 8);
  const at::Tensor out = RemovePrefix(seq, at::tensor({2, 0}, at::kLong));
  EXPECT_TRUE(at::equal(out, Rows({{3, 4, 5, 6, 7, 0, 0, 0}, {1, 2, 3, 4, 5, 6, 7, 0}}, 8)));
  // [B, N, L]: the row's prefix for each of its decodes.
  const at::Tensor all = RemovePrefix(seq.unsqueeze(1).repeat({1, 2, 1}), at::tensor({7, 3}));
  EXPECT_TRUE(at::equal(all[0][1], at::tensor({0, 0, 0, 0, 0, 0, 0, 0}, at::kLong)));
  EXPECT_TRUE(at::equal(all[1][0], at::tensor({4, 5, 6, 7, 0, 0, 0, 0}, at::kLong)));
}

TEST(DecodeCacheTest, BadInputsAreNamed) {
  DecoderOnlyModel model(DecoderOnlyTransformer(DecoderConfig()), true, 0, 0, {});
  const ParamStore p = model.InitParams(13);
  FeatureBatch batch = PrefixLmBatch(8);
  FeatureBatch lm = batch;
  lm.erase("decoder_causal_attention");
  try {
    model.PredictBatch(p, lm);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("decoder_causal_attention"), std::string::npos);
  }
  EXPECT_THROW(model.PredictBatchWithAux(p, batch, nullptr, false, 1, true), Error);
  EXPECT_THROW(model.PredictBatchWithAux(p, batch, nullptr, false, 0), Error);
  decoding::Cache empty;
  EXPECT_THROW(DecoderOnlyDecodeStep(model.module(), p, at::zeros({1}, at::kLong), empty),
               std::invalid_argument);
}

}  // namespace
}  // namespace t5xx::models
