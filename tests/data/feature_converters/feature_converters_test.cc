// Tests for feature converters and batching beyond the testvectors
// (t5xx/data/feature_converters/feature_converters.h). Expected values are hand-derived in the
// comments.
#include <gtest/gtest.h>

#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;


TEST(FeatureConverter, LengthKeysMustMatchTaskFeaturesUpFront) {
  EncDecFeatureConverter enc_dec(/*pack=*/false);
  // operator() throws before any example is read.
  std::string msg = ErrorOf([&] { enc_dec(FromVector({}), {{"inputs", 4}}); });
  EXPECT_NE(msg.find("missing [targets]"), std::string::npos) << msg;
  msg = ErrorOf([&] {
    enc_dec(FromVector({}), {{"inputs", 4}, {"targets", 4}, {"extra", 1}});
  });
  EXPECT_NE(msg.find("unexpected [extra]"), std::string::npos) << msg;
  LMFeatureConverter lm(false);
  EXPECT_THROW(lm.GetModelFeatureLengths({{"inputs", 3}, {"targets", 3}}), Error);
  EXPECT_THROW(lm.GetModelFeatureLengths({{"targets", 0}}), Error);
}

TEST(FeatureConverter, OverLengthIsAnErrorNamingTaskExampleAndFeature) {
  EncDecFeatureConverter enc_dec(/*pack=*/true);
  std::vector<Example> ex = {{{"inputs", Tokens{1}}, {"targets", Tokens{1}}},
                             {{"inputs", Tokens{1}}, {"targets", Tokens{5, 6, 7, 1}}}};
  const std::string msg = ErrorOf(
      [&] { enc_dec.Convert(ex, {{"inputs", 3}, {"targets", 3}}, "my_task"); });
  EXPECT_NE(msg.find("my_task"), std::string::npos) << msg;
  EXPECT_NE(msg.find("example 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("targets longer than its task feature length (4 > 3)"),
            std::string::npos)
      << msg;
  // Missing and string task features are errors too.
  EXPECT_THROW(enc_dec.Convert({{{"inputs", Tokens{1}}}}, {{"inputs", 3}, {"targets", 3}}),
               Error);
  EXPECT_THROW(enc_dec.Convert({{{"inputs", Tokens{1}}, {"targets", std::string("x")}}},
                               {{"inputs", 3}, {"targets", 3}}),
               Error);
}

TEST(FeatureConverter, ExtraFeaturesAreDroppedAndModelFeaturesExact) {
  EncDecFeatureConverter unpacked(false), packed(true);
  Example ex = {{"inputs", Tokens{4, 1}},
                {"targets", Tokens{5, 1}},
                {"inputs_pretokenized", std::string("a")}};
  for (const FeatureConverter* c :
       std::vector<const FeatureConverter*>{&unpacked, &packed}) {
    const auto rows = c->Convert({ex, ex, ex}, {{"inputs", 4}, {"targets", 3}});
    const auto want = c->GetModelFeatureLengths({{"inputs", 4}, {"targets", 3}});
    EXPECT_EQ(want.size(), c->ModelFeatures().size());
    for (const auto& row : rows) {
      EXPECT_EQ(row.size(), want.size());
      for (const auto& [k, L] : want) EXPECT_EQ(GetTokens(row, k).size(), static_cast<size_t>(L));
    }
  }
  EXPECT_EQ(unpacked.ModelFeatures().size(), 4u);
  EXPECT_EQ(packed.ModelFeatures().size(), 8u);
  // Packed, max(4,3)=4 examples per block; targets [5,1] x3 = 6 > 3 tokens,
  // so each row holds one example: 3 rows.
  EXPECT_EQ(packed.Convert({ex, ex, ex}, {{"inputs", 4}, {"targets", 3}}).size(), 3u);
}

TEST(PrefixLMFeatureConverter, PackedEmptyInputs) {
  // ex1: inputs [] targets [3,4]; ex2: inputs [5] targets [6]; L = 2 + 3 = 5.
  // Row tokens [3,4,5,6,0], positions [0,1,0,1,0], segments [1,1,2,2,0];
  // widths [0,0,1,1,0] (ex1's 0 survives packing), widths+1 [1,1,2,2,0].
  // loss = (pos<w) XOR (tok!=0) = [1,1,0,1,0];
  // causal = pos < w+1 = [1,0,1,1,0];
  // decoder inputs: shift right [0,3,4,5,6], bos at segment changes (index 2
  // and the first padding slot 4) -> [0,3,0,5,0].
  PrefixLMFeatureConverter conv(/*pack=*/true);
  const auto rows = conv.Convert({{{"inputs", Tokens{}}, {"targets", Tokens{3, 4}}},
                                  {{"inputs", Tokens{5}}, {"targets", Tokens{6}}}},
                                 {{"inputs", 2}, {"targets", 3}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(GetTokens(rows[0], "decoder_target_tokens"), (Tokens{3, 4, 5, 6, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_loss_weights"), (Tokens{1, 1, 0, 1, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_causal_attention"), (Tokens{1, 0, 1, 1, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_input_tokens"), (Tokens{0, 3, 0, 5, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_segment_ids"), (Tokens{1, 1, 2, 2, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_positions"), (Tokens{0, 1, 0, 1, 0}));
}

TEST(PrefixLMFeatureConverter, UnpackedEmptyTargets) {
  // inputs [7,8], targets [], L = 4: tokens [7,8,0,0]; w = 2;
  // loss = (pos<2) XOR (tok!=0) = [0,0,0,0]; causal = pos < 3 = [1,1,1,0].
  PrefixLMFeatureConverter conv(/*pack=*/false);
  const auto rows = conv.Convert({{{"inputs", Tokens{7, 8}}, {"targets", Tokens{}}}},
                                 {{"inputs", 2}, {"targets", 2}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(GetTokens(rows[0], "decoder_loss_weights"), (Tokens{0, 0, 0, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_causal_attention"), (Tokens{1, 1, 1, 0}));
  EXPECT_EQ(GetTokens(rows[0], "decoder_input_tokens"), (Tokens{0, 7, 8, 0}));
}

TEST(LMFeatureConverter, BosId) {
  LMFeatureConverter conv(/*pack=*/false, /*bos_id=*/7);
  const auto rows = conv.Convert({{{"targets", Tokens{3, 1}}}}, {{"targets", 3}});
  EXPECT_EQ(GetTokens(rows[0], "decoder_input_tokens"), (Tokens{7, 3, 1}));
}

std::vector<Example> Rows(int n) {
  std::vector<Example> v;
  for (int i = 0; i < n; ++i) v.push_back({{"a", Tokens{i, i}}, {"b", Tokens{-i}}});
  return v;
}

TEST(BatchIterator, DropRemainderRowMajor) {
  BatchIterator it(FromVector(Rows(5)), 2, {{"a", 2}, {"b", 1}});
  auto b0 = it.Next();
  ASSERT_TRUE(b0);
  EXPECT_EQ(b0->batch_size, 2);
  EXPECT_EQ(b0->features.at("a"), (Tokens{0, 0, 1, 1}));  // [2, 2] row-major
  EXPECT_EQ(b0->features.at("b"), (Tokens{0, -1}));
  EXPECT_EQ(b0->Row("a", 1), (Tokens{1, 1}));
  EXPECT_THROW(b0->Row("a", 2), Error);
  EXPECT_TRUE(it.HasNext());
  EXPECT_TRUE(it.HasNext());  // idempotent
  Batch b1 = it.NextBatch();
  EXPECT_EQ(b1.features.at("a"), (Tokens{2, 2, 3, 3}));
  EXPECT_FALSE(it.HasNext());  // example 4 alone is dropped
  EXPECT_FALSE(it.Next());
  EXPECT_THROW(it.NextBatch(), Error);
}

TEST(BatchIterator, InfersLengthsAndChecksThem) {
  BatchIterator it(FromVector(Rows(2)), 2);
  auto b = it.Next();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->lengths, (FeatureLengths{{"a", 2}, {"b", 1}}));
  BatchIterator bad(FromVector(Rows(2)), 2, {{"a", 3}});
  const std::string msg = ErrorOf([&] { bad.Next(); });
  EXPECT_NE(msg.find("expected exactly 3"), std::string::npos) << msg;
  EXPECT_THROW(BatchIterator(FromVector({}), 0), Error);
}

}  // namespace
}  // namespace t5xx::seqio
