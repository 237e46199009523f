// Tests for t5xx/data/preprocessors/lm_preprocessors.h (t5 prefix_lm / full_lm /
// iid_denoising).
#include "t5xx/data/preprocessors/lm_preprocessors.h"

#include <memory>
#include <set>

#include "test_util.h"

namespace t5xx::seqio {
namespace {

using t5xx::testing::FakeVocabulary;

OutputFeatures Features(bool add_eos = true) {
  auto vocab = std::make_shared<FakeVocabulary>(100, 10);  // vocab_size 110
  return {{"inputs", Feature{vocab, add_eos}}, {"targets", Feature{vocab, add_eos}}};
}

Tokens Range(int32_t from, int32_t n) {
  Tokens t;
  for (int32_t i = 0; i < n; ++i) t.push_back(from + i);
  return t;
}

std::vector<Example> Docs(std::vector<Tokens> docs) {
  std::vector<Example> out;
  for (auto& d : docs) out.push_back(Example{{"targets", d}});
  return out;
}

TEST(RandomPrefixNoiseMask, IsAPrefixWithinT5Range) {
  // d = 0.5, length 10: k uniform in [max(1, round(0 * 9)), 9] = [1, 9].
  std::set<int64_t> seen;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    NoiseMask m = RandomPrefixNoiseMask(10, 0.5, seed);
    ASSERT_EQ(m.size(), 10u);
    int64_t k = 0;
    while (k < 10 && m[k]) ++k;
    for (int64_t i = k; i < 10; ++i) EXPECT_FALSE(m[i]);  // a prefix
    seen.insert(k);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // d = 0.25: lo = round_half_even(0.5 * 9 = 4.5) = 4 -> k in [4, 9].
  for (uint64_t seed = 0; seed < 200; ++seed) {
    NoiseMask m = RandomPrefixNoiseMask(10, 0.25, seed);
    int64_t k = 0;
    while (k < 10 && m[k]) ++k;
    EXPECT_GE(k, 4);
    EXPECT_LE(k, 9);
  }
  // length 1: max_input = 0, lo = min(0, 1) = 0 -> k = 0 (all targets).
  EXPECT_EQ(RandomPrefixNoiseMask(1, 0.5, 3), NoiseMask{false});
  EXPECT_TRUE(RandomPrefixNoiseMask(0, 0.5, 3).empty());
  EXPECT_EQ(RandomPrefixNoiseMask(10, 0.5, 7), RandomPrefixNoiseMask(10, 0.5, 7));
  EXPECT_ERROR_CONTAINS(RandomPrefixNoiseMask(10, 0.6, 0), "noise_density");
}

TEST(IidNoiseMask, DensityAndDeterminism) {
  EXPECT_EQ(IidNoiseMask(5, 0.0, 1), NoiseMask(5, false));
  EXPECT_EQ(IidNoiseMask(5, 1.0, 1), NoiseMask(5, true));
  NoiseMask m = IidNoiseMask(20000, 0.15, 42);
  int64_t noise = 0;
  for (bool b : m) noise += b;
  // Expected 3000, sd = sqrt(20000 * 0.15 * 0.85) ~= 50.5; allow ~6 sd.
  EXPECT_NEAR(noise, 3000, 300);
  EXPECT_EQ(m, IidNoiseMask(20000, 0.15, 42));
  EXPECT_NE(m, IidNoiseMask(20000, 0.15, 43));
  EXPECT_ERROR_CONTAINS(IidNoiseMask(3, 1.5, 0), "noise_density");
}

TEST(PrefixLm, SplitsToInputsLengthMinusEosThenPrefixes) {
  // One 20-token document; inputs length 8 with add_eos -> segments of 7:
  // [3..9], [10..16], [17..22] (7, 7, 6 tokens; no reduce_concat in t5).
  for (uint64_t seed : {0u, 1u, 2u}) {
    auto ds = PrefixLm(FromVector(Docs({Range(3, 20)})),
                       {{"inputs", 8}, {"targets", 8}}, Features(), seed);
    auto out = Collect(*ds);
    ASSERT_EQ(out.size(), 3u);
    const std::vector<Tokens> pieces = {Range(3, 7), Range(10, 7), Range(17, 6)};
    for (size_t i = 0; i < 3; ++i) {
      Tokens in = GetTokens(out[i], "inputs"), tg = GetTokens(out[i], "targets");
      EXPECT_GE(in.size(), 1u);  // k in [1, n-1]
      EXPECT_GE(tg.size(), 1u);
      in.insert(in.end(), tg.begin(), tg.end());
      EXPECT_EQ(in, pieces[i]);
    }
  }
  // Without EOS on inputs the segment is the full length 8: 8, 8, 4 tokens.
  auto out = Collect(*PrefixLm(FromVector(Docs({Range(3, 20)})), {{"inputs", 8}},
                               Features(false), 5));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(GetTokens(out[2], "inputs").size() + GetTokens(out[2], "targets").size(), 4u);
}

TEST(PrefixLm, DeterministicPerSeedAndStreamPosition) {
  auto run = [](uint64_t seed) {
    return Collect(*PrefixLm(FromVector(Docs({Range(3, 50), Range(60, 30)})),
                             {{"inputs", 11}}, Features(), seed));
  };
  EXPECT_EQ(run(9), run(9));
  bool differs = false;
  for (uint64_t s = 10; s < 20 && !differs; ++s) differs = run(s) != run(9);
  EXPECT_TRUE(differs);
}

TEST(PrefixLm, Errors) {
  EXPECT_ERROR_CONTAINS(PrefixLm(FromVector({}), {{"targets", 8}}, Features(), 0),
                        "'inputs'");
  EXPECT_ERROR_CONTAINS(PrefixLm(FromVector({}), {{"inputs", 1}}, Features(), 0),
                        "no room");
}

TEST(FullLm, EosAtDocumentBoundariesThenSplit) {
  // [3,4,5] + EOS(1) + [6,7] + EOS = [3,4,5,1,6,7,1]; split at 4:
  // [3,4,5,1], [6,7,1]. Zeros (padding) are stripped by reduce_concat.
  auto out = Collect(*FullLm(FromVector(Docs({{3, 4, 5}, {6, 0, 7}})),
                             {{"targets", 4}}, Features(), 0));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(GetTokens(out[0], "targets"), (Tokens{3, 4, 5, 1}));
  EXPECT_EQ(GetTokens(out[1], "targets"), (Tokens{6, 7, 1}));
  EXPECT_EQ(out[0].count("inputs"), 0u);
  EXPECT_ERROR_CONTAINS(FullLm(FromVector({}), {{"inputs", 4}}, Features(), 0),
                        "'targets'");
}

// Rebuilds the original tokens from unique-sentinel inputs/targets: each
// sentinel in inputs stands for the next noise run, and the noise runs are
// the maximal sentinel-free runs of targets (two noise runs are always
// separated by a clean run, i.e. by a sentinel in targets).
Tokens Reconstruct(const Tokens& inputs, const Tokens& targets, int32_t sentinel_floor) {
  std::vector<Tokens> noise_runs;
  bool in_run = false;
  for (int32_t t : targets) {
    if (t >= sentinel_floor) { in_run = false; continue; }
    if (!in_run) noise_runs.emplace_back();
    in_run = true;
    noise_runs.back().push_back(t);
  }
  Tokens out;
  size_t next = 0;
  for (int32_t t : inputs) {
    if (t < sentinel_floor) { out.push_back(t); continue; }
    if (next < noise_runs.size()) {
      out.insert(out.end(), noise_runs[next].begin(), noise_runs[next].end());
      ++next;
    }
  }
  return out;
}

TEST(IidDenoising, UniqueSentinelStructure) {
  // Vocab 110, tokens < 100: sentinels are 109, 108, ... in order.
  auto out = Collect(*IidDenoising(FromVector(Docs({Range(3, 60), Range(63, 30)})),
                                   {{"inputs", 21}, {"targets", 21}}, Features(), 4,
                                   0.3));
  // reduce_concat joins 90 tokens; split to 21 - 1 = 20 -> 5 pieces.
  ASSERT_EQ(out.size(), 5u);
  Tokens all;
  int64_t total_noise = 0;
  for (const Example& ex : out) {
    const Tokens& in = GetTokens(ex, "inputs");
    const Tokens& tg = GetTokens(ex, "targets");
    std::vector<int32_t> s_in, s_tg;
    for (int32_t t : in) if (t >= 100) s_in.push_back(t);
    for (int32_t t : tg) if (t >= 100) s_tg.push_back(t);
    for (size_t k = 0; k < s_in.size(); ++k) EXPECT_EQ(s_in[k], 109 - int32_t(k));
    for (size_t k = 0; k < s_tg.size(); ++k) EXPECT_EQ(s_tg[k], 109 - int32_t(k));
    // inputs: one sentinel per noise run; targets: one per clean run. Runs
    // alternate, so the counts differ by at most 1. (An iid mask may start
    // noisy; then, as in t5, the numbering of the two sides is offset.)
    EXPECT_LE(s_in.size(), s_tg.size() + 1);
    EXPECT_LE(s_tg.size(), s_in.size() + 1);
    total_noise += static_cast<int64_t>(tg.size() - s_tg.size());
    Tokens piece = Reconstruct(in, tg, 100);
    all.insert(all.end(), piece.begin(), piece.end());
  }
  Tokens expect = Range(3, 60);
  Tokens second = Range(63, 30);
  expect.insert(expect.end(), second.begin(), second.end());
  EXPECT_EQ(all, expect);
  EXPECT_GT(total_noise, 0);
  EXPECT_LT(total_noise, 90);
}

TEST(IidDenoising, DensityZeroAndErrors) {
  auto out = Collect(*IidDenoising(FromVector(Docs({{5, 6, 7}})), {{"inputs", 8}},
                                   Features(), 0, 0.0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(GetTokens(out[0], "inputs"), (Tokens{5, 6, 7}));
  EXPECT_EQ(GetTokens(out[0], "targets"), (Tokens{109}));  // one clean run
  OutputFeatures no_vocab = {{"targets", Feature{}}};
  EXPECT_ERROR_CONTAINS(IidDenoising(FromVector({}), {{"inputs", 8}}, no_vocab, 0),
                        "vocabulary");
  auto run = [](uint64_t s) {
    return Collect(*IidDenoising(FromVector(Docs({Range(3, 40)})), {{"inputs", 41}},
                                 Features(), s));
  };
  EXPECT_EQ(run(1), run(1));
}

TEST(LmPreprocessors, PreprocessorFormsUseContext) {
  PreprocessContext ctx;
  ctx.sequence_length = {{"inputs", 8}, {"targets", 4}};
  ctx.output_features = Features();
  ctx.seed = 3;
  auto a = Collect(*PrefixLmPreprocessor()(FromVector(Docs({Range(3, 20)})), ctx));
  auto b = Collect(*PrefixLm(FromVector(Docs({Range(3, 20)})), ctx.sequence_length,
                             ctx.output_features, 3));
  EXPECT_EQ(a, b);
  EXPECT_EQ(Collect(*FullLmPreprocessor()(FromVector(Docs({{3, 4, 5}})), ctx)).size(), 1u);
  EXPECT_EQ(Collect(*IidDenoisingPreprocessor()(FromVector(Docs({Range(3, 20)})), ctx)).size(), 3u);
}

}  // namespace
}  // namespace t5xx::seqio
