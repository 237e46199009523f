// Tests for T5's span corruption (t5xx/data/preprocessors/span_corruption.h). Exact masks
// need TF's Philox RNG, so these check counts and structure; golden numbers
// come from hand arithmetic written next to them.
#include <set>

#include <gtest/gtest.h>

#include "test_util.h"

#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

// Minimal T5-convention vocabulary: pad 0, eos 1, unk 2; base ids < base;
// `extra` sentinel ids on top. Encode maps each byte to 3 + byte % (base-3).
using FakeVocab = ::t5xx::testing::FakeVocabulary;

using Lengths = std::pair<int64_t, int64_t>;
constexpr int32_t kBase = 1000, kExtra = 100, kVocabSize = kBase + kExtra;

OutputFeatures Features() {
  auto v = std::make_shared<FakeVocab>(kBase, kExtra);
  return {{"inputs", {v, true, true}}, {"targets", {v, true, true}}};
}

int64_t CountNoise(const NoiseMask& m) {
  int64_t n = 0;
  for (bool b : m) n += b;
  return n;
}
int64_t CountSpans(const NoiseMask& m) {
  int64_t n = 0;
  for (size_t i = 0; i < m.size(); ++i) n += m[i] && (i == 0 || !m[i - 1]);
  return n;
}

// Random documents of ids in [3, kBase).
std::vector<Example> MakeDocs(int n, uint64_t seed, int64_t max_len) {
  std::vector<Example> docs;
  StatelessRng rng(seed, 0, 0);
  for (int i = 0; i < n; ++i) {
    const int64_t len = rng.UniformInt(max_len + 1);  // may be 0 (dropped)
    Tokens t;
    for (int64_t j = 0; j < len; ++j) t.push_back(3 + rng.UniformInt(kBase - 3));
    docs.push_back({{"targets", t}, {"text", std::string("doc")}});
  }
  return docs;
}

// ---------------------------------------------------------------------------

TEST(RandomSpansHelper, HandArithmetic) {
  // inputs 10, d 0.15, mean 3: t=10 -> noise round(1.5)=2, spans round(.67)=1,
  // inputs (10-2)+1+1 = 10 <= 10; t=11 -> noise round(1.65)=2, inputs 11 > 10.
  // targets = 2+1+1 = 4.
  EXPECT_EQ(RandomSpansHelper(10, 0.15, 3.0), (Lengths{10, 4}));
  // d 0.5, mean 1, inputs 12: inputs(t) = t+1 so t = 11; noise round(5.5)=6,
  // spans 6 -> targets 13 > inputs 12, so both drop by 1: (10, 12).
  EXPECT_EQ(RandomSpansHelper(12, 0.5, 1.0), (Lengths{10, 12}));
  // Same at inputs 10: t=9, noise round(4.5)=4 (half-even), targets 9 <= 10:
  // no adjustment.
  EXPECT_EQ(RandomSpansHelper(10, 0.5, 1.0), (Lengths{9, 9}));
  EXPECT_THROW(RandomSpansHelper(0, 0.15, 3.0), Error);
  EXPECT_THROW(RandomSpansHelper(10, 1.0, 3.0), Error);
  EXPECT_THROW(RandomSpansHelper(10, 0.15, 0.0), Error);
}

TEST(RandomSpansNoiseMask, HandCases) {
  // length 10, d .15, mean 3: noise round(1.5)=2, spans round(2/3)=1, so the
  // only possible mask is 8 clean then 2 noise.
  NoiseMask want(10, false);
  want[8] = want[9] = true;
  for (uint64_t seed = 0; seed < 5; ++seed)
    EXPECT_EQ(RandomSpansNoiseMask(10, 0.15, seed, 3.0), want);
  // length 1: L = 2 -> [clean, noise], cut back to 1 -> [clean].
  EXPECT_EQ(RandomSpansNoiseMask(1, 0.15, 7, 3.0), NoiseMask{false});
  EXPECT_TRUE(RandomSpansNoiseMask(0, 0.15, 7, 3.0).empty());
  // density 0: nothing is noise.
  EXPECT_EQ(RandomSpansNoiseMask(6, 0.0, 7, 3.0), NoiseMask(6, false));
  // 568 at .15/3: 568*.15 = 85.2 -> 85 noise; 85/3 = 28.3 -> 28 spans.
  const auto c = RandomSpansNoiseCounts(568, 0.15, 3.0);
  EXPECT_EQ(c.num_noise_tokens, 85);
  EXPECT_EQ(c.num_noise_spans, 28);
  EXPECT_THROW(RandomSpansNoiseMask(-1, 0.15, 0, 3.0), Error);
}

TEST(RandomSpansNoiseMask, StructureOverManySeeds) {
  for (int64_t length : {2, 3, 5, 10, 37, 100, 568}) {
    for (double d : {0.15, 0.3, 0.5}) {
      for (double mean : {1.0, 2.0, 3.0}) {
        const auto c = RandomSpansNoiseCounts(length, d, mean);
        std::set<NoiseMask> distinct;
        for (uint64_t seed = 0; seed < 50; ++seed) {
          SCOPED_TRACE("length " + std::to_string(length) + " d " +
                       std::to_string(d) + " mean " + std::to_string(mean) +
                       " seed " + std::to_string(seed));
          const NoiseMask m = RandomSpansNoiseMask(length, d, seed, mean);
          ASSERT_EQ(static_cast<int64_t>(m.size()), length);
          EXPECT_FALSE(m.front()) << "starts clean";
          EXPECT_TRUE(m.back()) << "ends noisy";
          EXPECT_EQ(CountNoise(m), c.num_noise_tokens);
          EXPECT_EQ(CountSpans(m), c.num_noise_spans);
          EXPECT_EQ(RandomSpansNoiseMask(length, d, seed, mean), m) << "deterministic";
          distinct.insert(m);
        }
        // Random unless every run is forced (e.g. 50 noise + 50 clean tokens
        // in 50 spans can only alternate).
        const int64_t clean = c.padded_length - c.num_noise_tokens;
        if (length >= 37 && (c.num_noise_tokens > c.num_noise_spans ||
                             clean > c.num_noise_spans)) {
          EXPECT_GT(distinct.size(), 1u) << "seeds must matter";
        }
      }
    }
  }
}

TEST(Sentinels, UniqueSentinelsCountDownAndNeverTouch) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const int64_t n = 200;
    Tokens tokens;
    for (int64_t i = 0; i < n; ++i) tokens.push_back(3 + static_cast<int32_t>(i));
    const NoiseMask m = RandomSpansNoiseMask(n, 0.15, seed, 3.0);
    const Tokens in = NoiseSpanToUniqueSentinel(tokens, m, kVocabSize);
    const Tokens tg = NonnoiseSpanToUniqueSentinel(tokens, m, kVocabSize);
    const int64_t spans = CountSpans(m), noise = CountNoise(m);
    EXPECT_EQ(static_cast<int64_t>(in.size()), n - noise + spans);
    EXPECT_EQ(static_cast<int64_t>(tg.size()), noise + spans);
    // A mask starting clean and ending noisy has as many clean runs as noise
    // runs, so the targets carry the same sentinel sequence as the inputs.
    int32_t want = kVocabSize - 1;
    for (int32_t t : in) {
      if (t >= kBase) { EXPECT_EQ(t, want--); }
    }
    EXPECT_EQ(kVocabSize - 1 - want, spans);
    want = kVocabSize - 1;
    for (int32_t t : tg) {
      if (t >= kBase) { EXPECT_EQ(t, want--); }
    }
    EXPECT_EQ(tg.front(), kVocabSize - 1);  // targets start with a sentinel
    EXPECT_LT(in.back(), kBase + 0 + kExtra);
    EXPECT_GE(in.back(), kBase);  // inputs end with a sentinel (no trailing clean)
  }
}

// Replaces each sentinel of `inputs` with the target tokens that follow the
// same sentinel in `targets`.
Tokens Reconstruct(const Tokens& inputs, const Tokens& targets) {
  std::map<int32_t, Tokens> spans;
  int32_t cur = -1;
  for (int32_t t : targets) {
    if (t >= kBase) cur = t, spans[cur];
    else spans[cur].push_back(t);
  }
  Tokens out;
  for (int32_t t : inputs) {
    if (t >= kBase) {
      const Tokens& s = spans.at(t);
      out.insert(out.end(), s.begin(), s.end());
    } else {
      out.push_back(t);
    }
  }
  return out;
}

std::vector<Example> RunSpanCorruption(const std::vector<Example>& docs,
                                       int64_t inputs_length, int64_t targets_length,
                                       uint64_t seed) {
  auto ds = SpanCorruption(FromVector(docs),
                           {{"inputs", inputs_length}, {"targets", targets_length}},
                           Features(), seed);
  return Collect(*ds);
}

void CheckSpanCorruption(int64_t inputs_length, uint64_t seed, int ndocs,
                         int64_t max_doc) {
  SCOPED_TRACE("inputs_length " + std::to_string(inputs_length) + " seed " +
               std::to_string(seed));
  const auto [t, targets_length] = RandomSpansHelper(inputs_length, 0.15, 3.0);
  const auto docs = MakeDocs(ndocs, seed + 1000, max_doc);
  const auto out = RunSpanCorruption(docs, inputs_length, targets_length, seed);
  ASSERT_FALSE(out.empty());
  Tokens original, rebuilt;
  for (const auto& d : docs) {
    const Tokens& x = GetTokens(d, "targets");
    original.insert(original.end(), x.begin(), x.end());
  }
  size_t full_pieces = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const Tokens& in = GetTokens(out[i], "inputs");
    const Tokens& tg = GetTokens(out[i], "targets");
    EXPECT_EQ(out[i].size(), 2u) << "only inputs and targets remain";
    // No two sentinels adjacent, in inputs or in targets.
    for (const Tokens* s : {&in, &tg})
      for (size_t j = 1; j < s->size(); ++j)
        EXPECT_FALSE((*s)[j] >= kBase && (*s)[j - 1] >= kBase) << "adjacent sentinels";
    // Sentinels descend from vocab_size - 1 in both.
    for (const Tokens* s : {&in, &tg}) {
      int32_t want = kVocabSize - 1;
      for (int32_t x : *s) {
        if (x >= kBase) { EXPECT_EQ(x, want--); }
      }
    }
    const Tokens piece = Reconstruct(in, tg);
    rebuilt.insert(rebuilt.end(), piece.begin(), piece.end());
    if (piece.size() == 1) {
      // t5 masks max(1, 2) = 2 positions [clean, noise] and cuts back to 1:
      // the token stays in the inputs and the targets hold one sentinel.
      EXPECT_EQ(in, piece);
      EXPECT_EQ(tg, Tokens{kVocabSize - 1});
      EXPECT_EQ(i + 1, out.size());
      continue;
    }
    const auto c = RandomSpansNoiseCounts(static_cast<int64_t>(piece.size()), 0.15, 3.0);
    EXPECT_EQ(static_cast<int64_t>(in.size()),
              static_cast<int64_t>(piece.size()) - c.num_noise_tokens + c.num_noise_spans);
    EXPECT_EQ(static_cast<int64_t>(tg.size()), c.num_noise_tokens + c.num_noise_spans);
    EXPECT_LE(static_cast<int64_t>(piece.size()), t);
    if (static_cast<int64_t>(piece.size()) == t) {
      ++full_pieces;
      // With its EOS, a full piece is exactly the helper's lengths.
      EXPECT_EQ(static_cast<int64_t>(in.size()) + 1, inputs_length);
      EXPECT_EQ(static_cast<int64_t>(tg.size()) + 1, targets_length);
    } else {
      EXPECT_EQ(i + 1, out.size()) << "only the last piece of a run is short";
    }
  }
  EXPECT_GT(full_pieces, 0u);
  EXPECT_EQ(rebuilt, original) << "inputs+targets must rebuild the documents";
}

TEST(SpanCorruption, StructureAndReconstructionManySeeds) {
  for (uint64_t seed = 0; seed < 20; ++seed) CheckSpanCorruption(64, seed, 40, 120);
  for (uint64_t seed = 0; seed < 3; ++seed) CheckSpanCorruption(512, seed, 30, 400);
}

TEST(SpanCorruption, DeterministicForASeedAndSeedsDiffer) {
  const auto docs = MakeDocs(20, 5, 200);
  const auto [t, tl] = RandomSpansHelper(64, 0.15, 3.0);
  (void)t;
  const auto a = RunSpanCorruption(docs, 64, tl, 1);
  const auto b = RunSpanCorruption(docs, 64, tl, 1);
  const auto c = RunSpanCorruption(docs, 64, tl, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(SpanCorruption, WithAppendEosAfterTrimGivesHelperLengths) {
  const auto [t, tl] = RandomSpansHelper(512, 0.15, 3.0);
  EXPECT_EQ(t, 568);
  EXPECT_EQ(tl, 114);
  // One 1136-token document = two full pieces of 568.
  Tokens doc;
  for (int i = 0; i < 1136; ++i) doc.push_back(3 + i % 900);
  FeatureLengths lengths = {{"inputs", 512}, {"targets", 114}};
  auto ds = SpanCorruption(FromVector({{{"targets", doc}}}), lengths, Features(), 9);
  ds = AppendEosAfterTrim(std::move(ds), Features(), lengths);
  const auto out = Collect(*ds);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& ex : out) {
    // 568 - 85 noise + 28 sentinels + EOS = 512; 85 + 28 + EOS = 114.
    EXPECT_EQ(GetTokens(ex, "inputs").size(), 512u);
    EXPECT_EQ(GetTokens(ex, "targets").size(), 114u);
    EXPECT_EQ(GetTokens(ex, "inputs").back(), 1);
    EXPECT_EQ(GetTokens(ex, "targets").back(), 1);
  }
}

TEST(SpanCorruption, TargetsLengthTooSmallIsAnError) {
  try {
    RunSpanCorruption(MakeDocs(3, 1, 50), 512, 113, 0);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("114"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SpanCorruption(FromVector({}), {{"inputs", 512}}, Features(), 0), Error);
}

TEST(SelectRandomChunk, AlignedWindowsAndEmptyDocsDropped) {
  Tokens doc;
  for (int i = 1; i <= 10; ++i) doc.push_back(i);
  std::set<Tokens> seen;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto ds = SelectRandomChunk(
        FromVector({{{"targets", Tokens{}}}, {{"targets", doc}, {"x", std::string("y")}}}),
        seed, 4);
    const auto out = Collect(*ds);
    ASSERT_EQ(out.size(), 1u);  // the empty document is dropped
    EXPECT_EQ(out[0].size(), 1u);
    seen.insert(GetTokens(out[0], "targets"));
  }
  // Windows start at multiples of 4: [1..4], [5..8], [9,10].
  EXPECT_EQ(seen, (std::set<Tokens>{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10}}));
}

TEST(ReduceConcatAndSplit, Basics) {
  std::vector<Example> docs = {{{"targets", Tokens{1, 2}}}, {{"targets", Tokens{3, 0, 4}}},
                               {{"targets", Tokens{5}}},    {{"targets", Tokens{6, 7}}},
                               {{"targets", Tokens{8}}}};
  auto ds = ReduceConcatTokens(FromVector(docs), 2);
  const auto out = Collect(*ds);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(GetTokens(out[0], "targets"), (Tokens{1, 2, 3, 4}));  // 0 dropped
  EXPECT_EQ(GetTokens(out[1], "targets"), (Tokens{5, 6, 7}));
  EXPECT_EQ(GetTokens(out[2], "targets"), (Tokens{8}));

  auto split = SplitTokens(FromVector({{{"targets", Tokens{1, 2, 3, 4, 5, 6, 7}}},
                                       {{"targets", Tokens{}}}}),
                           3);
  const auto pieces = Collect(*split);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(GetTokens(pieces[0], "targets"), (Tokens{1, 2, 3}));
  EXPECT_EQ(GetTokens(pieces[1], "targets"), (Tokens{4, 5, 6}));
  EXPECT_EQ(GetTokens(pieces[2], "targets"), (Tokens{7}));
  EXPECT_THROW(SplitTokens(FromVector({}), 0), Error);
}

TEST(Sentinels, LengthMismatchIsAnError) {
  EXPECT_THROW(NoiseSpanToUniqueSentinel({1, 2}, {true}, 10), Error);
}

// Denoise computes span_corruption's pair of sentinel functions from the
// mask's runs; the same functions behind lambdas go through the mask
// (RandomSpansNoiseMask + the functions), the independent reference.
TEST(Denoise, UniqueSentinelPairFromRunsEqualsThroughTheMask) {
  std::vector<Example> input;
  for (int32_t n = 0; n < 300; ++n) {
    Tokens t(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = 3 + (i * 7 + n) % 90;
    input.push_back(Example{{"targets", t}});
  }
  for (double density : {0.0, 0.15, 0.5}) {
    auto fast = Denoise(FromVector(input), Features(), /*seed=*/11, density, 3.0);
    auto reference = Denoise(
        FromVector(input), Features(), 11, density, 3.0,
        [](const Tokens& t, const NoiseMask& m, int32_t v) { return NoiseSpanToUniqueSentinel(t, m, v); },
        [](const Tokens& t, const NoiseMask& m, int32_t v) { return NonnoiseSpanToUniqueSentinel(t, m, v); });
    const auto want = Collect(*reference);
    ASSERT_EQ(want.size(), input.size());
    EXPECT_EQ(Collect(*fast), want) << "noise_density " << density;
  }
}

}  // namespace
}  // namespace t5xx::seqio
