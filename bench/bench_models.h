// The models and batches the training benchmarks time (t5xx_train_bench,
// t5xx_contention_bench, t5xx_step_profile), built one way for all.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"

namespace t5xx::bench {

struct BenchModel {
  std::unique_ptr<models::BaseTransformerModel> model;
  std::string name;  // "t5_1_1 tiny", "t5_1_1 small", "decoder_only base"
};

// which: 0 = T5.1.1 tiny, 1 = T5.1.1 small (t5x's t5_1_1/{tiny,small}.gin),
// 2 = decoder-only base (t5x/examples/decoder_only/models/base.gin: tied
// logits, gated GELU). Vocabulary 32128, no dropout, z-loss 1e-4, activations
// in `dtype` ("float32" or "bfloat16").
// remat_policy: $T5XX_BENCH_REMAT ('none', 'minimal', 'full') when set, else
// 'none' -- so that each policy's step time can be measured.
inline BenchModel MakeBenchModel(int64_t which, const std::string& dtype) {
  BenchModel out;
  const char* remat_env = std::getenv("T5XX_BENCH_REMAT");
  const std::string remat = remat_env && *remat_env ? remat_env : "none";
  if (which < 2) {
    out.name = which == 0 ? "t5_1_1 tiny" : "t5_1_1 small";
    models::T5Config cfg = models::T5_1_1Config(which == 0 ? "tiny" : "small");
    cfg.vocab_size = 32128;
    cfg.dtype = dtype;
    cfg.remat_policy = remat;
    cfg.Validate();
    out.model = std::make_unique<models::EncoderDecoderModel>(models::Transformer(cfg), 1e-4, 0.0,
                                                              models::LossNormalizingFactor{});
  } else {
    out.name = "decoder_only base";
    models::DecoderOnlyConfig cfg;
    cfg.vocab_size = 32128;
    cfg.dtype = dtype;
    cfg.emb_dim = 768;
    cfg.num_heads = 12;
    cfg.num_layers = 12;
    cfg.head_dim = 64;
    cfg.mlp_dim = 2048;
    cfg.mlp_activations = {"gelu", "linear"};
    cfg.dropout_rate = 0.0;
    cfg.logits_via_embedding = true;
    cfg.remat_policy = remat;
    cfg.Validate();
    out.model = std::make_unique<models::DecoderOnlyModel>(
        models::DecoderOnlyTransformer(cfg), false, 1e-4, 0.0, models::LossNormalizingFactor{});
  }
  return out;
}

// Random tokens in [3, 32000) (libtorch generator seeded 0), no padding or
// packing, loss weights all ones; in_len = 0 for decoder-only.
inline models::FeatureBatch RandomBenchBatch(int64_t batch, int64_t in_len, int64_t tg_len) {
  at::manual_seed(0);
  models::FeatureBatch b;
  if (in_len > 0) b["encoder_input_tokens"] = at::randint(3, 32000, {batch, in_len}, at::kLong);
  b["decoder_target_tokens"] = at::randint(3, 32000, {batch, tg_len}, at::kLong);
  b["decoder_input_tokens"] = at::randint(3, 32000, {batch, tg_len}, at::kLong);
  b["decoder_loss_weights"] = at::ones({batch, tg_len});
  return b;
}

// The sequence lengths BaseTransformerModel::TrainFlops takes.
inline std::map<std::string, int64_t> BenchLengths(int64_t in_len, int64_t tg_len) {
  std::map<std::string, int64_t> lens = {{"decoder_target_tokens", tg_len}};
  if (in_len > 0) lens["encoder_input_tokens"] = in_len;
  return lens;
}

// A model the step benchmarks take by name, with the first (shortest)
// batch shape t5xx_train_bench times for it.
struct BenchConfig {
  std::string name;  // "tiny", "small", "base"
  int64_t which;     // MakeBenchModel's model
  int64_t batch;     // sequences
  int64_t in_len;    // encoder positions; 0 for decoder-only
  int64_t tg_len;    // decoder positions
};

// tiny: T5.1.1 tiny, 32 x (128 + 32); small: T5.1.1 small, 8 x (128 + 32);
// base: decoder-only base, 2 x 512.
inline const std::vector<BenchConfig>& BenchConfigs() {
  static const std::vector<BenchConfig> all = {
      {"tiny", 0, 32, 128, 32}, {"small", 1, 8, 128, 32}, {"base", 2, 2, 0, 512}};
  return all;
}

// The config called `name`, or nullptr when there is none.
inline const BenchConfig* FindBenchConfig(const std::string& name) {
  for (const BenchConfig& c : BenchConfigs()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// "tiny, small, base": the names FindBenchConfig knows, for error messages.
inline std::string BenchConfigNames() {
  std::string out;
  for (const BenchConfig& c : BenchConfigs()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

}  // namespace t5xx::bench
