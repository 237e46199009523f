#include "t5xx/models/networks/network.h"

#include <gtest/gtest.h>

#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/flops.h"

namespace t5xx::models {
namespace {

T5Config TestConfig() {
  T5Config c;
  c.vocab_size = 50;
  c.emb_dim = 16;
  c.num_heads = 2;
  c.head_dim = 8;
  c.num_encoder_layers = 2;
  c.num_decoder_layers = 2;
  c.mlp_dim = 32;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  return c;
}

at::Tensor Row(std::vector<int64_t> v) {
  return at::tensor(v, at::kLong).reshape({1, static_cast<int64_t>(v.size())});
}

TEST(TransformerTest, ParameterNamesAxesAndShapes) {
  Transformer t(TestConfig());
  ParamStore p = t.InitParams(0);
  EXPECT_EQ(p.Get("token_embedder.embedding").sizes(), (std::vector<int64_t>{50, 16}));
  EXPECT_EQ(p.GetParam("encoder.layers_0.attention.query.kernel").axes,
            (std::vector<std::string>{"embed", "joined_kv"}));
  EXPECT_EQ(p.GetParam("decoder.layers_1.encoder_decoder_attention.out.kernel").axes,
            (std::vector<std::string>{"joined_kv", "embed"}));
  EXPECT_EQ(p.GetParam("encoder.layers_1.mlp.wi_1.kernel").axes,
            (std::vector<std::string>{"embed", "mlp"}));
  EXPECT_EQ(p.GetParam("decoder.relpos_bias.rel_embedding").value.sizes(),
            (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(p.GetParam("decoder.logits_dense.kernel").axes,
            (std::vector<std::string>{"embed", "vocab"}));
  // 1 embedding + 2 relpos + 2 final norms + logits + enc 2*(2 norms + 4 attn
  // + 3 mlp) + dec 2*(3 norms + 8 attn + 3 mlp)
  EXPECT_EQ(p.params().size(), 1u + 2 + 2 + 1 + 2 * 9 + 2 * 14);
  // Query init is scaled by 1/sqrt(head_dim) relative to key init:
  // std(q) ~ sqrt(1/16)/sqrt(8) = 0.0884, std(k) ~ 0.25.
  double sq = p.Get("encoder.layers_0.attention.query.kernel").std().item<double>();
  double sk = p.Get("encoder.layers_0.attention.key.kernel").std().item<double>();
  EXPECT_NEAR(sq / sk, 1.0 / std::sqrt(8.0), 0.06);
  // Same seed, same parameters.
  ParamStore p2 = t.InitParams(0);
  EXPECT_TRUE(at::equal(p.Get("decoder.logits_dense.kernel"),
                        p2.Get("decoder.logits_dense.kernel")));
}

// Keeps the second half of dim 0 of every parameter with an even dim 0
// (what a process at coordinate 1 of a 2-way split keeps), counting the
// whole values it is handed.
class SecondHalfPlacement final : public ParamPlacement {
 public:
  at::Tensor Place(const ParamSpec& spec, const std::function<at::Tensor()>& make) const override {
    ++made;
    const at::Tensor whole = make();
    EXPECT_EQ(whole.sizes().vec(), spec.shape) << spec.name;
    if (spec.shape[0] % 2 != 0) return whole;
    return whole.narrow(0, spec.shape[0] / 2, spec.shape[0] / 2).clone();
  }
  mutable int made = 0;
};

TEST(TransformerTest, PlacedInitialisationKeepsSlicesOfTheWholeValues) {
  // Sharded initialisation: each parameter made whole from (seed, name),
  // then only the placement's piece kept -- equal to slicing a whole
  // initialisation, parameter by parameter.
  Transformer t(TestConfig());
  const ParamStore whole = t.InitParams(7);
  SecondHalfPlacement half;
  const ParamStore placed = t.InitParams(7, &half);
  ASSERT_EQ(placed.params().size(), whole.params().size());
  EXPECT_EQ(half.made, static_cast<int>(whole.params().size()));
  for (size_t i = 0; i < whole.params().size(); ++i) {
    const Param& w = whole.params()[i];
    const Param& p = placed.params()[i];
    EXPECT_EQ(p.name, w.name);
    EXPECT_EQ(p.axes, w.axes);
    const int64_t rows = w.value.size(0);
    const at::Tensor want = rows % 2 ? w.value : w.value.narrow(0, rows / 2, rows / 2);
    EXPECT_TRUE(at::equal(p.value, want)) << w.name;
  }
  // The specs alone: every name, global shape and axis, and no storage.
  EncoderDecoderModel model(Transformer(TestConfig()), 0.0, 0.0, {});
  const std::vector<ParamSpec> specs = model.ParamSpecs();
  ASSERT_EQ(specs.size(), whole.params().size());
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].name, whole.params()[i].name);
    EXPECT_EQ(specs[i].shape, whole.params()[i].value.sizes().vec());
    EXPECT_EQ(specs[i].axes, whole.params()[i].axes);
  }
}

TEST(TransformerTest, LogitsShape) {
  Transformer t(TestConfig());
  ParamStore p = t.InitParams(1);
  FeatureBatch b;
  b["encoder_input_tokens"] = at::randint(1, 50, {3, 7}, at::kLong);
  b["decoder_input_tokens"] = at::randint(1, 50, {3, 5}, at::kLong);
  b["decoder_target_tokens"] = at::randint(1, 50, {3, 5}, at::kLong);
  EXPECT_EQ(t(p, b, false).sizes(), (std::vector<int64_t>{3, 5, 50}));
}

TEST(TransformerTest, DecoderCannotSeeTheFuture) {
  Transformer t(TestConfig());
  ParamStore p = t.InitParams(2);
  FeatureBatch b;
  b["encoder_input_tokens"] = Row({5, 6, 7, 1});
  b["decoder_input_tokens"] = Row({0, 8, 9, 10});
  b["decoder_target_tokens"] = Row({8, 9, 10, 1});
  at::Tensor before = t(p, b, false);
  FeatureBatch b2 = b;
  b2["decoder_input_tokens"] = Row({0, 8, 42, 43});  // change positions 2, 3
  at::Tensor after = t(p, b2, false);
  EXPECT_TRUE(at::allclose(before.narrow(1, 0, 2), after.narrow(1, 0, 2), 0, 1e-6));
  EXPECT_FALSE(at::allclose(before.narrow(1, 2, 1), after.narrow(1, 2, 1), 0, 1e-4));
}

TEST(TransformerTest, PackedSegmentsCannotSeeEachOther) {
  Transformer t(TestConfig());
  ParamStore p = t.InitParams(3);
  FeatureBatch b;
  b["encoder_input_tokens"] = Row({5, 6, 1, 7, 8, 9, 1, 0});
  b["encoder_segment_ids"] = Row({1, 1, 1, 2, 2, 2, 2, 0});
  b["decoder_input_tokens"] = Row({0, 11, 0, 12, 13, 0});
  b["decoder_target_tokens"] = Row({11, 1, 12, 13, 1, 0});
  b["decoder_segment_ids"] = Row({1, 1, 2, 2, 2, 0});
  at::Tensor before = t(p, b, false);
  FeatureBatch b2 = b;
  b2["encoder_input_tokens"] = Row({5, 6, 1, 30, 31, 32, 1, 0});  // segment 2
  b2["decoder_input_tokens"] = Row({0, 11, 0, 33, 34, 0});
  at::Tensor after = t(p, b2, false);
  EXPECT_TRUE(at::allclose(before.narrow(1, 0, 2), after.narrow(1, 0, 2), 0, 1e-6));
  EXPECT_FALSE(at::allclose(before.narrow(1, 2, 3), after.narrow(1, 2, 3), 0, 1e-4));
}

// A prompt whose rows are the embeddings of tokens a, b, c is the same to the
// network as those tokens written before the inputs (prompt-tuning's
// prefix_prompt, its masks and relative positions): equal logits, and equal
// beam-search decodes through the cached decoder (cross-attention mask).
TEST(TransformerTest, PromptEqualsItsTokensPrepended) {
  const T5Config plain_config = TestConfig();
  EncoderDecoderModel plain(Transformer(plain_config), 0, 0, {});
  const ParamStore plain_params = plain.InitParams(5);
  const at::Tensor rows =
      plain_params.Get("token_embedder.embedding").index_select(0, at::tensor({11, 12, 13}, at::kLong));
  T5Config prompted_config = plain_config;
  prompted_config.prompt_length = 3;
  prompted_config.prompt_init_values.assign(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
  EncoderDecoderModel prompted(Transformer(prompted_config), 0, 0, {});
  const ParamStore prompted_params = prompted.InitParams(5);
  EXPECT_EQ(prompted_params.GetParam(Transformer::kPromptParam).axes,
            (std::vector<std::string>{"prompt", "prompt_embed"}));
  FeatureBatch with_tokens, with_prompt;
  with_tokens["encoder_input_tokens"] = at::cat({Row({11, 12, 13, 5, 6, 7, 1, 0}),
                                                 Row({11, 12, 13, 8, 9, 1, 0, 0})});
  with_prompt["encoder_input_tokens"] = at::cat({Row({5, 6, 7, 1, 0}), Row({8, 9, 1, 0, 0})});
  for (FeatureBatch* b : {&with_tokens, &with_prompt}) {
    (*b)["decoder_input_tokens"] = at::cat({Row({0, 21, 22, 23}), Row({0, 31, 0, 0})});
    (*b)["decoder_target_tokens"] = at::cat({Row({21, 22, 23, 1}), Row({31, 1, 0, 0})});
  }
  const at::NoGradGuard no_grad;
  const at::Tensor want = plain.ComputeLogits(plain_params, with_tokens, false, nullptr);
  const at::Tensor got = prompted.ComputeLogits(prompted_params, with_prompt, false, nullptr);
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5)) << (got - want).abs().max();
  EXPECT_EQ(prompted.module().Encode(prompted_params, with_prompt["encoder_input_tokens"],
                                     at::Tensor(), false).sizes(),
            (std::vector<int64_t>{2, 8, 16}));
  with_tokens["decoder_input_tokens"] = with_prompt["decoder_input_tokens"] = at::zeros({2, 6}, at::kLong);
  EXPECT_TRUE(at::equal(prompted.PredictBatch(prompted_params, with_prompt),
                        plain.PredictBatch(plain_params, with_tokens)));
  // Packed inputs are refused, as prompt-tuning refuses them.
  EXPECT_THROW(prompted.module().Encode(prompted_params, Row({5, 6, 1}), Row({1, 1, 1}), false),
               std::exception);
}

TEST(EncoderDecoderModelTest, PackedLossesEqualUnpacked) {
  EncoderDecoderModel model(Transformer(TestConfig()), 1e-4, 0.0, {});
  ParamStore p = model.module().InitParams(4);
  // Two examples, unpacked (padded) ...
  FeatureBatch u;
  u["encoder_input_tokens"] = at::tensor({5, 6, 7, 1, 0, 0, 8, 9, 1, 0, 0, 0}, at::kLong).reshape({2, 6});
  u["decoder_target_tokens"] = at::tensor({11, 12, 1, 0, 13, 1, 0, 0}, at::kLong).reshape({2, 4});
  u["decoder_input_tokens"] = at::tensor({0, 11, 12, 1, 0, 13, 1, 0}, at::kLong).reshape({2, 4});
  u["decoder_loss_weights"] = (u["decoder_target_tokens"] > 0).to(at::kFloat);
  // ... and packed into one row.
  FeatureBatch k;
  k["encoder_input_tokens"] = Row({5, 6, 7, 1, 8, 9, 1, 0});
  k["encoder_segment_ids"] = Row({1, 1, 1, 1, 2, 2, 2, 0});
  k["decoder_target_tokens"] = Row({11, 12, 1, 13, 1, 0});
  k["decoder_input_tokens"] = Row({0, 11, 12, 0, 13, 0});
  k["decoder_segment_ids"] = Row({1, 1, 1, 2, 2, 0});
  k["decoder_loss_weights"] = (k["decoder_target_tokens"] > 0).to(at::kFloat);
  LossOutput lu = model.Loss(p, u, false);
  LossOutput lk = model.Loss(p, k, false);
  at::Tensor pu = lu.per_token_loss, pk = lk.per_token_loss;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(pk[0][i].item<double>(), pu[0][i].item<double>(), 1e-5) << i;
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(pk[0][3 + i].item<double>(), pu[1][i].item<double>(), 1e-5) << i;
  }
  EXPECT_NEAR(lk.loss.item<double>(), lu.loss.item<double>(), 1e-4);
  EXPECT_DOUBLE_EQ(lk.weight_sum.item<double>(), 5.0);
}

TEST(FlopsTest, HandCountedTinyCase) {
  // E=2, H*D=2, F=3, gated (A=3), V=5, one layer each, Le=Ld=1:
  // enc = 1*(2*4*2*2 + 2*3*2*3) + 2*2*1*1*2 = 32 + 36 + 8 = 76
  // dec = 1*(32 + 2*2*2*2 + 36) + 2*2*5 + 1*2*2*2*2 + (2*2*2 + 2*2*2) = 84 + 20 + 16 + 16 = 136
  T5Config c;
  c.emb_dim = 2; c.num_heads = 1; c.head_dim = 2; c.mlp_dim = 3; c.vocab_size = 5;
  c.num_encoder_layers = 1; c.num_decoder_layers = 1;
  c.mlp_activations = {"gelu", "linear"};
  EXPECT_DOUBLE_EQ(EncoderDecoderForwardFlops(c, 1, 1), 76.0 + 136.0);
  EXPECT_DOUBLE_EQ(EncoderDecoderTrainFlops(c, 2, 1, 1), 3 * 2 * 212.0);
}

}  // namespace
}  // namespace t5xx::models
