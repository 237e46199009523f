// transformers_t5.h: the name table, config.json both ways, and the float
// conversions. The whole mapping is checked against Transformers itself in
// tests/interop/transformers_test.py; these run everywhere.
#include "t5xx/checkpoints/transformers/transformers_t5.h"

#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

using t5xx::testing::TempDir;

TEST(TransformersT5Test, NamesCoverEveryParameterOnce) {
  // Counted by hand from modeling_t5.py: shared + 2 position biases + 2
  // final norms; an encoder block has 2 norms + 4 attention + 3 (gated) MLP
  // weights; a decoder block 3 norms + 8 attention + 3 MLP; lm_head.
  const auto gated = TransformersT5Names({2, 3, true, false});
  EXPECT_EQ(gated.size(), 1u + 2 + 2 + 2 * 9 + 3 * 14 + 1);
  const auto tied = TransformersT5Names({1, 1, false, true});
  EXPECT_EQ(tied.size(), 1u + 2 + 2 + 8 + 13);
  std::set<std::string> t5x, hf;
  for (const auto& n : gated) {
    EXPECT_TRUE(t5x.insert(n.t5x).second) << n.t5x;
    EXPECT_TRUE(hf.insert(n.hf).second) << n.hf;
  }
  EXPECT_TRUE(hf.count("decoder.block.2.layer.1.EncDecAttention.o.weight"));
  EXPECT_TRUE(t5x.count("decoder.layers_2.encoder_decoder_attention.out.kernel"));
  EXPECT_FALSE(hf.count("encoder.embed_tokens.weight"));
  for (const auto& n : tied) EXPECT_NE(n.hf, "lm_head.weight");
  // The one pair per kind, as modeling_t5.py and network.py name them.
  const std::vector<TransformersT5Name> want = {
      {"encoder.relpos_bias.rel_embedding",
       "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", true},
      {"encoder.layers_0.attention.query.kernel", "encoder.block.0.layer.0.SelfAttention.q.weight",
       true},
      {"encoder.layers_1.mlp.wi_1.kernel", "encoder.block.1.layer.1.DenseReluDense.wi_1.weight",
       true},
      {"decoder.layers_0.pre_mlp_layer_norm.scale", "decoder.block.0.layer.2.layer_norm.weight",
       false},
      {"decoder.logits_dense.kernel", "lm_head.weight", true}};
  for (const auto& w : want) {
    bool found = false;
    for (const auto& n : gated) found |= n.t5x == w.t5x && n.hf == w.hf && n.transpose == w.transpose;
    EXPECT_TRUE(found) << w.t5x;
  }
  EXPECT_EQ(TransformersT5TiedCopies(true).back(), "lm_head.weight");
  EXPECT_EQ(TransformersT5TiedCopies(false).size(), 2u);
}

TEST(TransformersT5Test, FeedForwardProjBothWays) {
  EXPECT_EQ(MlpActivationsFromFeedForwardProj("gated-gelu", "x"),
            (std::vector<std::string>{"gelu", "linear"}));
  EXPECT_EQ(MlpActivationsFromFeedForwardProj("relu", "x"), (std::vector<std::string>{"relu"}));
  EXPECT_EQ(MlpActivationsFromFeedForwardProj("gelu_new", "x"), (std::vector<std::string>{"gelu"}));
  EXPECT_ERROR_CONTAINS(MlpActivationsFromFeedForwardProj("gelu", "config.json"),
                        "config.json: feed_forward_proj 'gelu' has no t5x counterpart");
  EXPECT_ERROR_CONTAINS(MlpActivationsFromFeedForwardProj("gated-silu", "c"), "'gated-gelu'");
  EXPECT_EQ(FeedForwardProjFromMlpActivations({"gelu", "linear"}), "gated-gelu");
  EXPECT_EQ(FeedForwardProjFromMlpActivations({"relu", "linear"}), "gated-relu");
  EXPECT_EQ(FeedForwardProjFromMlpActivations({"relu"}), "relu");
  EXPECT_EQ(FeedForwardProjFromMlpActivations({"gelu"}), "gelu_new");
  EXPECT_ERROR_CONTAINS(FeedForwardProjFromMlpActivations({"gelu", "gelu"}),
                        "mlp_activations ('gelu', 'gelu') have no Transformers T5 counterpart");
}

TEST(TransformersT5Test, ConfigJsonRoundTrips) {
  TempDir dir;
  TransformersT5Config c;
  c.model_type = "mt5";
  c.vocab_size = 250112;
  c.d_model = 512;
  c.d_kv = 64;
  c.d_ff = 1024;
  c.num_heads = 6;
  c.num_layers = 8;
  c.num_decoder_layers = 8;
  c.feed_forward_proj = "gated-gelu";
  c.tie_word_embeddings = false;
  const std::string path = dir.path + "/config.json";
  std::ofstream(path) << TransformersT5ConfigJson(c);
  const TransformersT5Config r = ReadTransformersT5Config(path);
  EXPECT_EQ(r.model_type, "mt5");
  EXPECT_EQ(r.vocab_size, 250112);
  EXPECT_EQ(r.d_ff, 1024);
  EXPECT_EQ(r.num_decoder_layers, 8);
  EXPECT_EQ(r.feed_forward_proj, "gated-gelu");
  EXPECT_FALSE(r.tie_word_embeddings);
  const auto j = nlohmann::json::parse(TransformersT5ConfigJson(c));
  EXPECT_EQ(j["architectures"][0], "MT5ForConditionalGeneration");
  EXPECT_EQ(j["layer_norm_epsilon"], 1e-6);
}

TEST(TransformersT5Test, ConfigErrorsAreReportedTogether) {
  TempDir dir;
  const std::string path = dir.path + "/config.json";
  auto expect_parts = [&](const std::vector<std::string>& parts) {
    const std::string msg = t5xx::testing::ErrorOf([&] { ReadTransformersT5Config(path); });
    for (const std::string& part : parts) {
      EXPECT_NE(msg.find(part), std::string::npos) << part << "\n" << msg;
    }
    return msg;
  };
  // Another model: named alone, without its sizes' noise.
  std::ofstream(path) << R"({"model_type": "bart", "architectures": ["BartModel"], "d_model": 16})";
  const std::string bart = expect_parts({"config.json: not a Transformers T5 config t5xx can import:",
                                         "model_type 'bart' is not one t5xx has",
                                         "architectures [\"BartModel\"]"});
  EXPECT_EQ(bart.find("d_kv"), std::string::npos) << bart;
  // A T5 config with every other kind of problem: all listed at once.
  std::ofstream(path) << R"({"model_type": "t5", "d_model": 16, "d_kv": "8", "num_heads": 2,
    "num_layers": 0, "relative_attention_num_buckets": null, "layer_norm_epsilon": 1e-5,
    "feed_forward_proj": "gated-relu", "dense_act_fn": "silu", "is_gated_act": false,
    "decoder_start_token_id": 1, "vocab_size": 10})";
  expect_parts({"d_kv = \"8\" is not an integer", "d_ff is missing",
                "num_layers = 0 is not an integer >= 1",
                "relative_attention_num_buckets = null is not an integer",
                "layer_norm_epsilon = 1e-05: t5x's network uses 1e-6",
                "dense_act_fn = \"silu\" disagrees with feed_forward_proj 'gated-relu'",
                "is_gated_act = false disagrees", "decoder_start_token_id 1, pad_token_id 0, "
                "eos_token_id 1: t5x's models start decoding with 0"});
  std::ofstream(path) << R"({"model_type": 5})";
  expect_parts({"model_type 5 is not one t5xx has"});
  std::ofstream(path) << R"({"model_type": "t5", "feed_forward_proj": null})";
  expect_parts({"feed_forward_proj 'null' has no t5x counterpart"});
  std::ofstream(path) << "{";
  expect_parts({"config.json: not JSON"});
}

TEST(TransformersT5Test, FloatConversionsAreExact) {
  // By hand: F16 0x3c00 = 1.0, 0xc000 = -2.0, 0x0001 = 2^-24 (subnormal),
  // 0x7c00 = inf; BF16 0x3f80 = 1.0, 0x4049 = 3.140625.
  const auto f16 = Float32FromBytes({0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c}, "F16");
  ASSERT_TRUE(f16.has_value());
  EXPECT_EQ((*f16)[0], 1.0f);
  EXPECT_EQ((*f16)[1], -2.0f);
  EXPECT_EQ((*f16)[2], 5.9604644775390625e-8f);
  EXPECT_TRUE(std::isinf((*f16)[3]));
  const auto bf16 = Float32FromBytes({0x80, 0x3f, 0x49, 0x40}, "BF16");
  EXPECT_EQ((*bf16)[0], 1.0f);
  EXPECT_EQ((*bf16)[1], 3.140625f);
  EXPECT_FALSE(Float32FromBytes({0, 0, 0, 0}, "I32").has_value());
}

}  // namespace
}  // namespace t5xx::checkpoints
