// Tests for truncate_inputs_left, PassThroughFeatureConverter and
// DecoderFeatureConverter. Expected values are hand-derived.
#include <gtest/gtest.h>

#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;

TEST(TruncateInputsLeft, KeepsLastTokens) {
  EXPECT_EQ(TruncateLeft({1, 2, 3, 4, 5}, 3), (Tokens{3, 4, 5}));
  EXPECT_EQ(TruncateLeft({1, 2}, 3), (Tokens{1, 2}));
  EXPECT_EQ(TruncateLeft({1, 2}, 0), (Tokens{}));
  EXPECT_THROW(TruncateLeft({1}, -1), Error);
  auto ds = TruncateInputsLeft(
      FromVector({{{"inputs", Tokens{1, 2, 3, 4}}, {"targets", Tokens{9, 8, 7}}},
                  {{"targets", Tokens{5}}}}),
      {{"inputs", 2}});
  auto out = Collect(*ds);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<Tokens>(out[0].at("inputs")), (Tokens{3, 4}));
  EXPECT_EQ(std::get<Tokens>(out[0].at("targets")), (Tokens{9, 8, 7}));
  EXPECT_EQ(out[1].count("inputs"), 0u);
  EXPECT_THROW(TruncateInputsLeft(FromVector({}), {{"targets", 2}}), Error);
  PreprocessContext ctx;
  ctx.sequence_length = {{"inputs", 1}};
  auto p = TruncateInputsLeftPreprocessor()(
      FromVector({{{"inputs", Tokens{1, 2}}}}), ctx);
  EXPECT_EQ(std::get<Tokens>(Collect(*p)[0].at("inputs")), (Tokens{2}));
}

TEST(PassThroughFeatureConverter, PassesFeaturesUnchanged) {
  PassThroughFeatureConverter conv;
  auto out = conv.Convert({{{"inputs", Tokens{1, 2}}, {"targets", Tokens{3}},
                            {"inputs_pretokenized", std::string("x")}}},
                          {{"inputs", 4}, {"targets", 2}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<Tokens>(out[0].at("inputs")), (Tokens{1, 2}));
  EXPECT_EQ(std::get<Tokens>(out[0].at("targets")), (Tokens{3}));
  EXPECT_EQ(std::get<std::string>(out[0].at("inputs_pretokenized")), "x");
  EXPECT_EQ(conv.GetModelFeatureLengths({{"a", 3}}), (FeatureLengths{{"a", 3}}));
}

TEST(PassThroughFeatureConverter, Errors) {
  EXPECT_THROW(PassThroughFeatureConverter(/*pack=*/true), Error);
  PassThroughFeatureConverter conv;
  std::string msg = ErrorOf([&] {
    conv.Convert({{{"inputs", Tokens{1, 2, 3}}}}, {{"inputs", 2}}, "t");
  });
  EXPECT_NE(msg.find("inputs longer than its task feature length (3 > 2)"),
            std::string::npos) << msg;
  EXPECT_THROW(conv.Convert({{{"x", Tokens{1}}}}, {{"inputs", 2}}), Error);
  EXPECT_THROW(conv.Convert({}, {{"inputs", 0}}), Error);
}

TEST(DecoderFeatureConverter, ChoosesByKeys) {
  DecoderFeatureConverter conv(/*pack=*/false);
  EXPECT_EQ(conv.ChosenName({{"targets", 4}}), "LMFeatureConverter");
  EXPECT_EQ(conv.ChosenName({{"inputs", 2}, {"targets", 3}}),
            "PrefixLMFeatureConverter");
  // LM: same as LMFeatureConverter.
  std::vector<Example> lm_in = {{{"targets", Tokens{3, 4, 1}}}};
  auto a = conv.Convert(lm_in, {{"targets", 4}});
  auto b = LMFeatureConverter(false).Convert(lm_in, {{"targets", 4}});
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::get<Tokens>(a[0].at("decoder_target_tokens")), (Tokens{3, 4, 1, 0}));
  EXPECT_EQ(std::get<Tokens>(a[0].at("decoder_input_tokens")), (Tokens{0, 3, 4, 1}));
  // PrefixLM: inputs [5], targets [6, 1]; L = 2 + 3 = 5.
  std::vector<Example> p_in = {{{"inputs", Tokens{5}}, {"targets", Tokens{6, 1}}}};
  auto c = conv.Convert(p_in, {{"inputs", 2}, {"targets", 3}});
  auto d = PrefixLMFeatureConverter(false).Convert(p_in, {{"inputs", 2}, {"targets", 3}});
  EXPECT_EQ(c, d);
  EXPECT_EQ(std::get<Tokens>(c[0].at("decoder_target_tokens")), (Tokens{5, 6, 1, 0, 0}));
  EXPECT_EQ(std::get<Tokens>(c[0].at("decoder_causal_attention")),
            (Tokens{1, 1, 0, 0, 0}));
  EXPECT_EQ(conv.GetModelFeatureLengths({{"targets", 4}}).at("decoder_target_tokens"), 4);
}

TEST(DecoderFeatureConverter, Errors) {
  DecoderFeatureConverter conv(false);
  std::string msg = ErrorOf([&] { conv(FromVector({}), {{"inputs", 3}}); });
  EXPECT_NE(msg.find("'inputs'"), std::string::npos) << msg;
  EXPECT_THROW(conv(FromVector({}), {{"targets", 3}, {"extra", 1}}), Error);
  EXPECT_THROW(conv.GetModelFeatureLengths({}), Error);
  EXPECT_THROW(conv.Convert({{{"targets", Tokens{1, 2, 3}}}}, {{"targets", 2}}),
               Error);
}

}  // namespace
}  // namespace t5xx::seqio
