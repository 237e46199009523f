// Checks t5xx::seqio against the language-neutral cases in T5XX_TESTVECTORS
// (shared/testvectors/seqio.json, or its copy in tests/testdata/; derived
// from seqio's and t5's public unit tests). Vocabulary/metrics cases are owned by other tests.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;

const json& Vectors() {
  static const json j = [] {
    const std::string path = T5XX_TESTVECTORS;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return json::parse(in);
  }();
  return j;
}

Tokens ToTokens(const json& j) { return j.get<std::vector<int32_t>>(); }

NoiseMask ToMask(const json& j) {
  NoiseMask m;
  for (const auto& b : j) m.push_back(b.get<bool>());
  return m;
}

FeatureLengths ToLengths(const json& j) {
  FeatureLengths out;
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it.value();
  return out;
}

std::vector<Example> ToExamples(const json& j) {
  std::vector<Example> out;
  for (const auto& e : j) {
    Example ex;
    for (auto it = e.begin(); it != e.end(); ++it) ex[it.key()] = ToTokens(it.value());
    out.push_back(std::move(ex));
  }
  return out;
}

// Compares every feature listed in `expected` (a json object) to `actual`.
void ExpectFeatures(const json& expected, const Example& actual,
                    const std::string& what) {
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    SCOPED_TRACE(what + " feature " + it.key());
    ASSERT_TRUE(actual.count(it.key())) << "missing " << it.key();
    EXPECT_EQ(GetTokens(actual, it.key()), ToTokens(it.value()));
  }
}

TEST(TestVectors, FileHasTheSections) {
  for (const char* k :
       {"trim_and_pack", "autoregressive_inputs", "enc_dec_feature_converter",
        "lm_feature_converter", "prefix_lm_feature_converter", "sentinels",
        "random_spans_helper", "random_spans_noise_mask_counts",
        "append_eos_after_trim"}) {
    ASSERT_TRUE(Vectors().contains(k)) << k;
    EXPECT_FALSE(Vectors()[k].empty()) << k;
  }
}

TEST(TestVectors, TrimAndPack) {
  int i = 0;
  for (const auto& c : Vectors()["trim_and_pack"]) {
    const std::string what = "trim_and_pack case " + std::to_string(i++);
    SCOPED_TRACE(what);
    const auto lengths = ToLengths(c["lengths"]);
    const auto rows = TrimAndPack(ToExamples(c["examples"]), lengths);
    if (c.contains("expected")) {
      ASSERT_EQ(rows.size(), c["expected"].size());
      for (size_t r = 0; r < rows.size(); ++r)
        ExpectFeatures(c["expected"][r], rows[r], what + " row " + std::to_string(r));
    }
    if (c.contains("expected_row_2")) {
      ASSERT_EQ(rows.size(), 2u);
      ExpectFeatures(c["expected_row_2"], rows[1], what + " row 2");
    }
    // Every output feature has exactly its length (padding included).
    for (const auto& row : rows)
      for (const auto& [k, L] : lengths) {
        EXPECT_EQ(GetTokens(row, k).size(), static_cast<size_t>(L));
        EXPECT_EQ(GetTokens(row, k + "_segment_ids").size(), static_cast<size_t>(L));
        EXPECT_EQ(GetTokens(row, k + "_positions").size(), static_cast<size_t>(L));
      }
    // The lazy dataset form agrees with the eager one.
    auto ds = TrimAndPackDataset(FromVector(ToExamples(c["examples"])), lengths);
    EXPECT_EQ(Collect(*ds), rows);
  }
}

TEST(TestVectors, AutoregressiveInputs) {
  int i = 0;
  for (const auto& c : Vectors()["autoregressive_inputs"]) {
    SCOPED_TRACE("autoregressive_inputs case " + std::to_string(i++));
    const int32_t bos = c.value("bos_id", 0);
    const Tokens targets = ToTokens(c["targets"]);
    const Tokens got = c.contains("segment_ids")
                           ? MakeAutoregressiveInputs(targets, ToTokens(c["segment_ids"]), bos)
                           : MakeAutoregressiveInputs(targets, bos);
    EXPECT_EQ(got, ToTokens(c["expected"]));
  }
}

void RunConverterCases(const json& cases, const std::string& section,
                       const std::function<std::unique_ptr<FeatureConverter>(bool, int32_t)>& make) {
  int i = 0;
  for (const auto& c : cases) {
    const std::string what = section + " case " + std::to_string(i++);
    SCOPED_TRACE(what);
    auto conv = make(c["pack"].get<bool>(), c.value("bos_id", 0));
    const auto lengths = ToLengths(c["lengths"]);
    if (c.contains("expected_error")) {
      // "inputs longer than its task feature length (6 > 5) must be an error,
      // not a silent cut": the message must carry that first part.
      const std::string want = c["expected_error"].get<std::string>();
      const std::string needle = want.substr(0, want.find(" must be"));
      try {
        conv->Convert(ToExamples(c["examples"]), lengths, "demo_task");
        ADD_FAILURE() << "expected t5xx::Error containing: " << needle;
      } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        EXPECT_NE(msg.find("demo_task"), std::string::npos) << msg;
        EXPECT_NE(msg.find("example 0"), std::string::npos) << msg;
      }
      continue;
    }
    const auto rows = conv->Convert(ToExamples(c["examples"]), lengths);
    const auto model_lengths = conv->GetModelFeatureLengths(lengths);
    for (const auto& row : rows) {
      EXPECT_EQ(row.size(), model_lengths.size());
      for (const auto& [k, L] : model_lengths)
        EXPECT_EQ(GetTokens(row, k).size(), static_cast<size_t>(L)) << k;
    }
    if (c.contains("expected")) {
      ASSERT_EQ(rows.size(), c["expected"].size());
      for (size_t r = 0; r < rows.size(); ++r)
        ExpectFeatures(c["expected"][r], rows[r], what);
    }
    if (c.contains("expected_decoder_input_tokens")) {
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(GetTokens(rows[0], "decoder_input_tokens"),
                ToTokens(c["expected_decoder_input_tokens"]));
    }
  }
}

TEST(TestVectors, EncDecFeatureConverter) {
  RunConverterCases(Vectors()["enc_dec_feature_converter"], "enc_dec",
                    [](bool pack, int32_t bos) {
                      return std::make_unique<EncDecFeatureConverter>(pack, bos);
                    });
}

TEST(TestVectors, LMFeatureConverter) {
  RunConverterCases(Vectors()["lm_feature_converter"], "lm",
                    [](bool pack, int32_t bos) {
                      return std::make_unique<LMFeatureConverter>(pack, bos);
                    });
}

TEST(TestVectors, PrefixLMFeatureConverter) {
  RunConverterCases(Vectors()["prefix_lm_feature_converter"], "prefix_lm",
                    [](bool pack, int32_t bos) {
                      return std::make_unique<PrefixLMFeatureConverter>(pack, bos);
                    });
}

TEST(TestVectors, Sentinels) {
  for (const auto& c : Vectors()["sentinels"]) {
    const int32_t V = c["vocab_size"];
    const Tokens t = ToTokens(c["tokens"]);
    const NoiseMask m = ToMask(c["noise_mask"]);
    EXPECT_EQ(NoiseTokenToSentinel(t, m, V), ToTokens(c["noise_token_to_sentinel"]));
    EXPECT_EQ(NoiseSpanToSentinel(t, m, V), ToTokens(c["noise_span_to_sentinel"]));
    EXPECT_EQ(NonnoiseSpanToSentinel(t, m, V), ToTokens(c["nonnoise_span_to_sentinel"]));
    EXPECT_EQ(NoiseSpanToUniqueSentinel(t, m, V),
              ToTokens(c["noise_span_to_unique_sentinel"]));
    EXPECT_EQ(DropNoiseTokens(t, m), ToTokens(c["drop_noise_tokens"]));
    EXPECT_EQ(DropNonnoiseTokens(t, m), ToTokens(c["drop_nonnoise_tokens"]));
    // Not in the file; hand-derived from the same case: clean runs [12,13]
    // and [15] become 999 and 998 -> [10, 11, 999, 14, 998].
    EXPECT_EQ(NonnoiseSpanToUniqueSentinel(t, m, V), (Tokens{10, 11, 999, 14, 998}));
  }
}

TEST(TestVectors, RandomSpansHelper) {
  for (const auto& c : Vectors()["random_spans_helper"]) {
    const auto [tokens_length, targets_length] =
        RandomSpansHelper(c["inputs_length"], c["noise_density"],
                          c["mean_noise_span_length"]);
    EXPECT_EQ(tokens_length, c["expected"][0].get<int64_t>());
    EXPECT_EQ(targets_length, c["expected"][1].get<int64_t>());
  }
}

TEST(TestVectors, RandomSpansNoiseMaskCounts) {
  for (const auto& c : Vectors()["random_spans_noise_mask_counts"]) {
    const int64_t length = c["length"];
    const double d = c["noise_density"], mean = c["mean_noise_span_length"];
    const auto counts = RandomSpansNoiseCounts(length, d, mean);
    EXPECT_EQ(counts.num_noise_tokens, c["num_noise_tokens"].get<int64_t>());
    EXPECT_EQ(counts.num_noise_spans, c["num_noise_spans"].get<int64_t>());
    for (uint64_t seed = 0; seed < 20; ++seed) {
      const NoiseMask m = RandomSpansNoiseMask(length, d, seed, mean);
      ASSERT_EQ(static_cast<int64_t>(m.size()), length);
      int64_t noise = 0, spans = 0;
      for (size_t i = 0; i < m.size(); ++i) {
        noise += m[i];
        spans += m[i] && (i == 0 || !m[i - 1]);
      }
      EXPECT_EQ(noise, c["num_noise_tokens"].get<int64_t>());
      EXPECT_EQ(spans, c["num_noise_spans"].get<int64_t>());
      EXPECT_EQ(!m.front(), c["mask_starts_clean"].get<bool>());
      EXPECT_EQ(m.back(), c["mask_ends_noisy"].get<bool>());
    }
  }
}

TEST(TestVectors, AppendEosAfterTrim) {
  for (const auto& c : Vectors()["append_eos_after_trim"]) {
    EXPECT_EQ(AppendEosAfterTrim(ToTokens(c["targets"]), c["eos_id"].get<int32_t>(),
                                 c["length"].get<int64_t>()),
              ToTokens(c["expected"]));
  }
}

}  // namespace
}  // namespace t5xx::seqio
