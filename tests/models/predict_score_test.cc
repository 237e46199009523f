// The inference APIs of BaseTransformerModel (base_model.h): ScoreBatch
// against the training loss's per-token cross-entropy (losses.h) and a
// log-softmax computed here, PredictBatchWithAux's shapes, defaults and
// beam order.
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <vector>

#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/losses.h"

namespace t5xx::models {
namespace {

T5Config EncDecConfig() {
  T5Config c;
  c.vocab_size = 48;
  c.emb_dim = 16;
  c.num_heads = 2;
  c.head_dim = 8;
  c.num_encoder_layers = 2;
  c.num_decoder_layers = 2;
  c.mlp_dim = 32;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.1;  // scoring must not drop out
  return c;
}

at::Tensor Rows(const std::vector<std::vector<int64_t>>& rows, int64_t length) {
  at::Tensor t = at::zeros({static_cast<int64_t>(rows.size()), length}, at::kLong);
  for (size_t b = 0; b < rows.size(); ++b) {
    for (size_t i = 0; i < rows[b].size(); ++i) t[b][i] = rows[b][i];
  }
  return t;
}

FeatureBatch EncDecBatch() {
  FeatureBatch b;
  b["encoder_input_tokens"] = Rows({{5, 12, 7, 33, 2, 9, 1}, {8, 3, 21, 1}}, 7);
  b["decoder_target_tokens"] = Rows({{4, 17, 25, 3, 1}, {11, 6, 1}}, 5);
  b["decoder_input_tokens"] = Rows({{0, 4, 17, 25, 3}, {0, 11, 6, 1}}, 5);
  // Weights other than (targets > 0): scores follow them, as t5x's.
  b["decoder_loss_weights"] =
      at::tensor({1.f, 1.f, 0.f, 1.f, 1.f, 1.f, 0.5f, 1.f, 0.f, 0.f}).reshape({2, 5});
  return b;
}

TEST(ScoreBatchTest, EqualsTheLossPerTokenLogLikelihoods) {
  EncoderDecoderModel model(Transformer(EncDecConfig()), /*z_loss=*/1e-4,
                            /*label_smoothing=*/0.1, {});
  const ParamStore p = model.InitParams(2);
  const FeatureBatch batch = EncDecBatch();
  const ScoreBatchOutput out = model.ScoreBatch(p, batch, /*return_intermediates=*/true);
  const at::Tensor& weights = batch.at("decoder_loss_weights");
  const at::Tensor& targets = batch.at("decoder_target_tokens");
  const at::NoGradGuard no_grad;
  const at::Tensor logits = model.ComputeLogits(p, batch, /*train=*/false, nullptr);
  // The training loss's cross-entropy without smoothing or z-loss.
  const LossOutput ce = ComputeWeightedCrossEntropy(logits, targets, weights, 0.0, 0.0, 1.0);
  const at::Tensor want_tokens = -ce.per_token_loss * weights;
  // And a log-softmax at the targets, computed here in float64.
  const at::Tensor log_p =
      at::log_softmax(logits.to(at::kDouble), -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1);
  const at::Tensor& tokens = out.intermediates.at("decoder.token_scores");
  EXPECT_EQ(tokens.sizes(), (std::vector<int64_t>{2, 5}));
  EXPECT_TRUE(at::allclose(tokens, want_tokens, 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(tokens.to(at::kDouble), log_p * weights.to(at::kDouble), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(out.sequence_scores, want_tokens.sum(-1), 1e-6, 1e-5));
  // Scores are log-probabilities: negative, and 0 where the weight is 0.
  EXPECT_TRUE((out.sequence_scores < 0).all().item<bool>());
  EXPECT_EQ(tokens[1][3].item<float>(), 0.f);
  EXPECT_FLOAT_EQ(tokens[1][1].item<float>(), 0.5f * log_p[1][1].item<float>());
  EXPECT_TRUE(at::equal(out.intermediates.at("decoder.target_tokens"), targets));
  // Deterministic (no dropout) and without intermediates unless asked.
  const ScoreBatchOutput again = model.ScoreBatch(p, batch);
  EXPECT_TRUE(at::equal(again.sequence_scores, out.sequence_scores));
  EXPECT_TRUE(again.intermediates.empty());
}

TEST(ScoreBatchTest, DecoderOnlyPrefixLmUsesTheBidirectionalPrompt) {
  DecoderOnlyConfig c;
  c.vocab_size = 48;
  c.emb_dim = 16;
  c.num_heads = 2;
  c.head_dim = 8;
  c.num_layers = 2;
  c.mlp_dim = 32;
  c.dropout_rate = 0.0;
  FeatureBatch b;
  b["decoder_target_tokens"] = Rows({{9, 4, 6, 1, 3, 9, 1}}, 8);
  b["decoder_input_tokens"] = Rows({{0, 9, 4, 6, 1, 3, 9, 1}}, 8);
  b["decoder_causal_attention"] = Rows({{1, 1, 1, 1, 1}}, 8);
  b["decoder_loss_weights"] = Rows({{0, 0, 0, 0, 1, 1, 1}}, 8).to(at::kFloat);
  DecoderOnlyModel prefix_lm(DecoderOnlyTransformer(c), true, 0, 0, {});
  DecoderOnlyModel causal(DecoderOnlyTransformer(c), false, 0, 0, {});
  const ParamStore p = prefix_lm.InitParams(4);
  const at::Tensor s1 = prefix_lm.ScoreBatch(p, b).sequence_scores;
  const at::Tensor s2 = causal.ScoreBatch(p, b).sequence_scores;
  EXPECT_EQ(s1.sizes(), (std::vector<int64_t>{1}));
  // The prompt attends to itself both ways in one and causally in the
  // other: the targets' scores differ.
  EXPECT_GT((s1 - s2).abs().item<double>(), 1e-4);
  FeatureBatch no_weights = b;
  no_weights.erase("decoder_loss_weights");
  EXPECT_THROW(prefix_lm.ScoreBatch(p, no_weights), std::invalid_argument);
}

TEST(PredictBatchTest, DefaultsShapesAndBeamOrder) {
  EncoderDecoderModel model(Transformer(EncDecConfig()), 0, 0, {});
  const ParamStore p = model.InitParams(9);
  // t5x's defaults: beam_search, eos 1, one decode, the best only.
  EXPECT_EQ(model.decode_fn().kind, decoding::DecodeFnConfig::Kind::kBeamSearch);
  EXPECT_EQ(model.eos_id(), 1);
  FeatureBatch batch = EncDecBatch();
  batch["decoder_input_tokens"] = at::zeros({2, 9}, at::kLong);
  const PredictionsWithAux best = model.PredictBatchWithAux(p, batch);
  EXPECT_EQ(best.predictions.sizes(), (std::vector<int64_t>{2, 9}));
  EXPECT_EQ(best.aux.at("scores").sizes(), (std::vector<int64_t>{2}));
  EXPECT_TRUE(at::equal(model.PredictBatch(p, batch), best.predictions));
  // Beams ascending in score, the best last, equal to return_all_decodes=false.
  const PredictionsWithAux all = model.PredictBatchWithAux(p, batch, nullptr, true, 4);
  EXPECT_EQ(all.predictions.sizes(), (std::vector<int64_t>{2, 4, 9}));
  const at::Tensor scores = all.aux.at("scores");
  EXPECT_EQ(scores.sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE((scores.narrow(1, 1, 3) >= scores.narrow(1, 0, 3)).all().item<bool>()) << scores;
  const PredictionsWithAux top = model.PredictBatchWithAux(p, batch, nullptr, false, 4);
  EXPECT_TRUE(at::equal(top.predictions, all.predictions.select(1, 3)));
  EXPECT_TRUE(at::equal(top.aux.at("scores"), scores.select(1, 3)));
  // default_decoder_params supply unset arguments, as t5x's DecoderParams.
  model.set_default_decoder_params({/*return_all_decodes=*/true, /*num_decodes=*/3});
  EXPECT_EQ(model.PredictBatchWithAux(p, batch).predictions.sizes(),
            (std::vector<int64_t>{2, 3, 9}));
  // Tokens after EOS are 0 and every prediction is a vocabulary id.
  EXPECT_TRUE((all.predictions >= 0).all().item<bool>());
  EXPECT_TRUE((all.predictions < 48).all().item<bool>());
}

TEST(PredictBatchTest, EosIdStopsDecoding) {
  EncoderDecoderModel model(Transformer(EncDecConfig()), 0, 0, {});
  const ParamStore p = model.InitParams(9);
  decoding::DecodeFnConfig greedy;
  model.set_decode_fn(greedy);
  FeatureBatch batch = EncDecBatch();
  batch["decoder_input_tokens"] = at::zeros({2, 9}, at::kLong);
  const at::Tensor pred = model.PredictBatch(p, batch);
  // Take the first token of row 0 as the EOS id: decoding stops right there.
  const int64_t first = pred[0][0].item<int64_t>();
  model.set_eos_id(first);
  const at::Tensor stopped = model.PredictBatch(p, batch);
  EXPECT_EQ(stopped[0][0].item<int64_t>(), first);
  EXPECT_TRUE((stopped[0].narrow(0, 1, 8) == 0).all().item<bool>()) << stopped;
}

}  // namespace
}  // namespace t5xx::models
