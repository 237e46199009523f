// Tests for Example/Dataset basics, utils (RNG, shuffle, packing edge cases)
// and seqio's generic preprocessors (t5xx/data/preprocessors/preprocessors.h).
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "test_util.h"

#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

// pad 0, eos 1, unk 2; byte c -> 3 + c mod 97; 5 extra ids.
class FakeVocab : public ::t5xx::testing::FakeVocabulary {
 public:
  FakeVocab() : FakeVocabulary(100, 5) {}
};

OutputFeatures Features(bool inputs_eos = false) {
  auto v = std::make_shared<FakeVocab>();
  return {{"inputs", {v, inputs_eos, true}}, {"targets", {v, true, true}}};
}

TEST(Example, AccessorsNameTheFeature) {
  Example ex = {{"text", std::string("hi")}, {"ids", Tokens{4, 5}}};
  EXPECT_EQ(GetString(ex, "text"), "hi");
  EXPECT_EQ(GetTokens(ex, "ids"), (Tokens{4, 5}));
  GetMutableTokens(ex, "ids").push_back(6);
  EXPECT_EQ(GetTokens(ex, "ids").size(), 3u);
  try {
    GetTokens(ex, "nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
  EXPECT_THROW(GetTokens(ex, "text"), Error);
  EXPECT_THROW(GetString(ex, "ids"), Error);
}

TEST(Dataset, Combinators) {
  std::vector<Example> v;
  for (int i = 0; i < 5; ++i) v.push_back({{"x", Tokens{i}}});
  auto ds = Filter(Map(FromVector(v),
                       [](Example e) {
                         GetMutableTokens(e, "x")[0] *= 10;
                         return e;
                       }),
                   [](const Example& e) { return GetTokens(e, "x")[0] != 20; });
  ds = FlatMap(std::move(ds), [](Example e) { return std::vector<Example>{e, e}; });
  auto out = Collect(*ds);
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(GetTokens(out[0], "x")[0], 0);
  EXPECT_EQ(GetTokens(out[2], "x")[0], 10);
  EXPECT_EQ(GetTokens(out[4], "x")[0], 30);

  auto rep = Repeat([&] { return FromVector(v); }, 3);
  EXPECT_EQ(Collect(*rep).size(), 15u);
  auto forever = Repeat([&] { return FromVector(v); }, -1);
  EXPECT_EQ(Collect(*forever, 23).size(), 23u);
  auto empty_forever = Repeat([] { return FromVector({}); }, -1);
  EXPECT_TRUE(Collect(*empty_forever).empty());  // terminates
  EXPECT_THROW(Repeat([] { return FromVector({}); }, -2), Error);
}

TEST(Utils, StatelessRngIsCounterBased) {
  StatelessRng a(1, 2, 3), b(1, 2, 3), c(1, 3, 3);
  EXPECT_EQ(a.NextU64(), b.NextU64());
  EXPECT_NE(a.NextU64(), c.NextU64());
  StatelessRng r(7, 0, 0);
  std::vector<int> hist(4, 0);
  for (int i = 0; i < 4000; ++i) ++hist[r.UniformInt(4)];
  for (int h : hist) EXPECT_NEAR(h, 1000, 150);
  for (int i = 0; i < 100; ++i) {
    const double u = r.Uniform01();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  EXPECT_THROW(r.UniformInt(0), Error);
}

TEST(Utils, ShuffleIsADeterministicPermutation) {
  std::vector<Example> v;
  for (int i = 0; i < 50; ++i) v.push_back({{"x", Tokens{i}}});
  auto run = [&](uint64_t seed, int64_t buf) {
    auto ds = Shuffle(FromVector(v), buf, seed);
    Tokens order;
    for (const auto& e : Collect(*ds)) order.push_back(GetTokens(e, "x")[0]);
    return order;
  };
  const Tokens a = run(3, 10);
  EXPECT_EQ(a, run(3, 10));
  EXPECT_NE(a, run(4, 10));
  Tokens sorted = a;
  std::sort(sorted.begin(), sorted.end());
  Tokens ids(50);
  for (int i = 0; i < 50; ++i) ids[i] = i;
  EXPECT_EQ(sorted, ids);
  EXPECT_EQ(run(3, 1), ids);  // a buffer of 1 keeps the order
  // Bounded displacement: with buffer 10, element k can't come out before
  // position k - 9.
  for (int pos = 0; pos < 50; ++pos) EXPECT_LE(a[pos], pos + 9);
  EXPECT_THROW(Shuffle(FromVector(v), 0, 1), Error);
}

TEST(Utils, PackingEdgeCases) {
  // Interior zero: [5, 0, 6] has 2 non-zero tokens, taken as the prefix
  // [5, 0], so 6 is lost (seqio's TF path).
  auto rows = TrimAndPack({{{"targets", Tokens{5, 0, 6}}}, {{"targets", Tokens{7}}}},
                          {{"targets", 4}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(GetTokens(rows[0], "targets"), (Tokens{5, 0, 7, 0}));
  EXPECT_EQ(GetTokens(rows[0], "targets_positions"), (Tokens{0, 1, 0, 0}));
  // segment ids = cumsum(pos==0) * (tok!=0) = [1,1,2,3]*[1,0,1,0].
  EXPECT_EQ(GetTokens(rows[0], "targets_segment_ids"), (Tokens{1, 0, 2, 0}));
  // Blocks of max(lengths)=2 examples: rows never cross blocks, so three
  // 1-token examples make two rows even though all fit in one.
  rows = TrimAndPack({{{"t", Tokens{3}}}, {{"t", Tokens{4}}}, {{"t", Tokens{5}}}},
                     {{"t", 2}});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(GetTokens(rows[0], "t"), (Tokens{3, 4}));
  EXPECT_EQ(GetTokens(rows[1], "t"), (Tokens{5, 0}));
  // Extra features are dropped; missing / string ones are errors.
  EXPECT_EQ(rows[0].size(), 3u);
  EXPECT_THROW(TrimAndPack({{{"x", Tokens{1}}}}, {{"t", 2}}), Error);
  EXPECT_THROW(TrimAndPack({{{"t", std::string("a")}}}, {{"t", 2}}), Error);
  EXPECT_THROW(TrimAndPack({}, {{"t", 0}}), Error);
  EXPECT_THROW(MakeAutoregressiveInputs({1, 2}, Tokens{1}, 0), Error);
}

TEST(Preprocessors, Rekey) {
  Example ex = {{"text", std::string("hello")}, {"other", Tokens{1}}};
  Example out = RekeyExample(ex, {{"inputs", ""}, {"targets", "text"}});
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(GetString(out, "inputs"), "");
  EXPECT_EQ(GetString(out, "targets"), "hello");
  EXPECT_THROW(RekeyExample(ex, {{"targets", "missing"}}), Error);
  auto ds = RekeyPreprocessor({{"targets", "text"}})(FromVector({ex}), {});
  EXPECT_EQ(GetString(*ds->Next(), "targets"), "hello");
}

TEST(Preprocessors, Tokenize) {
  Example ex = {{"inputs", std::string("ab")},
                {"targets", std::string("c")},
                {"idx", std::string("keep")},
                {"already", Tokens{9}}};
  OutputFeatures of = Features();
  of["already"] = {std::make_shared<FakeVocab>(), true, true};
  // 'a' = 97 -> 3 + 0 = 3; 'b' = 98 -> 4; 'c' = 99 -> 5.
  Example out = TokenizeExample(ex, of);
  EXPECT_EQ(GetTokens(out, "inputs"), (Tokens{3, 4}));
  EXPECT_EQ(GetTokens(out, "targets"), (Tokens{5}));
  EXPECT_EQ(GetString(out, "inputs_pretokenized"), "ab");
  EXPECT_EQ(GetString(out, "targets_pretokenized"), "c");
  EXPECT_EQ(GetString(out, "idx"), "keep");          // not an output feature
  EXPECT_EQ(GetTokens(out, "already"), (Tokens{9}));  // already tokens
  EXPECT_FALSE(out.count("already_pretokenized"));

  out = TokenizeExample(ex, Features(), /*copy_pretokenized=*/false, /*with_eos=*/true);
  EXPECT_FALSE(out.count("inputs_pretokenized"));
  EXPECT_EQ(GetTokens(out, "inputs"), (Tokens{3, 4}));    // add_eos=false
  EXPECT_EQ(GetTokens(out, "targets"), (Tokens{5, 1}));   // add_eos=true

  OutputFeatures no_vocab = {{"inputs", {nullptr, true, true}}};
  EXPECT_THROW(TokenizeExample(ex, no_vocab), Error);

  PreprocessContext ctx;
  ctx.output_features = Features();
  auto ds = TokenizePreprocessor()(FromVector({ex}), ctx);
  EXPECT_EQ(GetTokens(*ds->Next(), "targets"), (Tokens{5}));
}

TEST(Preprocessors, AppendEosAndAfterTrim) {
  EXPECT_EQ(AppendEosAfterTrim({4, 5, 6, 7}, 1, std::nullopt), (Tokens{4, 5, 6, 7, 1}));
  EXPECT_EQ(AppendEosAfterTrim({4, 5}, 1, 5), (Tokens{4, 5, 1}));
  EXPECT_EQ(AppendEosAfterTrim({4, 5, 6}, 1, 1), (Tokens{1}));
  EXPECT_THROW(AppendEosAfterTrim({4}, 1, 0), Error);

  Example ex = {{"inputs", Tokens{4, 5, 6, 7}}, {"targets", Tokens{4, 5, 6, 7}},
                {"other", Tokens{4, 5, 6, 7}}};
  PreprocessContext ctx;
  ctx.output_features = Features(/*inputs_eos=*/false);
  ctx.sequence_length = {{"inputs", 3}, {"targets", 3}};
  auto out = Collect(*AppendEosAfterTrimPreprocessor()(FromVector({ex}), ctx));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(GetTokens(out[0], "inputs"), (Tokens{4, 5, 6, 7}));  // add_eos=false
  EXPECT_EQ(GetTokens(out[0], "targets"), (Tokens{4, 5, 1}));
  EXPECT_EQ(GetTokens(out[0], "other"), (Tokens{4, 5, 6, 7}));
  // No length known for targets: only append.
  ctx.sequence_length = {};
  out = Collect(*AppendEosAfterTrimPreprocessor()(FromVector({ex}), ctx));
  EXPECT_EQ(GetTokens(out[0], "targets"), (Tokens{4, 5, 6, 7, 1}));
  out = Collect(*AppendEosPreprocessor()(FromVector({ex}), ctx));
  EXPECT_EQ(GetTokens(out[0], "targets"), (Tokens{4, 5, 6, 7, 1}));
  EXPECT_EQ(GetTokens(out[0], "inputs"), (Tokens{4, 5, 6, 7}));
}

TEST(Preprocessors, MakePreprocessorIgnoresContext) {
  auto p = MakePreprocessor([](DatasetPtr ds) {
    return Filter(std::move(ds), [](const Example&) { return false; });
  });
  EXPECT_TRUE(Collect(*p(FromVector({{{"x", Tokens{1}}}}), {})).empty());
}

}  // namespace
}  // namespace t5xx::seqio
