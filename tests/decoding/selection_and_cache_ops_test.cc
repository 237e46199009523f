// selection.h and cache_ops.h: lax.top_k's tie order, t5x's topk/topp masks, and the
// cache's expansion and reordering.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "t5xx/decoding/cache_ops.h"
#include "t5xx/decoding/selection.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::decoding {
namespace {

TEST(StableTopK, TiesComeByAscendingIndexOnBothPaths) {
  // Rows long enough for the at::topk path (> 256 entries), with many equal
  // values inside and across the boundary, against a full stable sort.
  at::Generator gen = compat::MakeCpuGenerator(3);
  at::Tensor x = at::randint(0, 6, {5, 1000}, gen, at::kLong).to(at::kFloat);
  x[2] = at::arange(1000, at::kFloat).remainder(7);  // 142+ copies of each value
  for (int64_t k : {1, 3, 8, 40}) {
    auto [values, indices] = StableTopK(x, k);
    auto [sorted_values, sorted_indices] = x.sort(true, 1, true);
    EXPECT_TRUE(values.equal(sorted_values.narrow(1, 0, k)));
    EXPECT_TRUE(indices.equal(sorted_indices.narrow(1, 0, k))) << k;
  }
  // Distinct values (the at::topk path without a boundary tie), equal ones
  // within the selection: still ordered by index.
  at::Tensor y = at::arange(600, at::kFloat).neg();
  y[10] = 5;
  y[20] = 5;
  y[30] = 7;
  auto [values, indices] = StableTopK(y.unsqueeze(0), 4);
  EXPECT_TRUE(indices.equal(at::tensor({30, 10, 20, 0}, at::kLong).unsqueeze(0))) << indices;
}

TEST(Masks, TopKKeepsTiesWithTheKth) {
  at::Tensor x = at::tensor({1.0f, 3.0f, 2.0f, 3.0f, 2.0f}).unsqueeze(0);
  at::Tensor m = TopKMask(x, 2, -1e7);
  EXPECT_TRUE(m.equal(at::tensor({-1e7f, 3.0f, -1e7f, 3.0f, -1e7f}).unsqueeze(0)));
  // k = 3: the 3rd largest is 2, tied twice -> four kept (as t5x).
  m = TopKMask(x, 3, -1e7);
  EXPECT_TRUE(m.equal(at::tensor({-1e7f, 3.0f, 2.0f, 3.0f, 2.0f}).unsqueeze(0)));
  EXPECT_TRUE(TopKMask(x, 9, -1e7).equal(x));
}

TEST(Masks, TopPKeepsTheSmallestPrefixReachingP) {
  // probs .1 .4 .3 .15 .05: cumulative (sorted) .4 .7 .85 .95 1.
  at::Tensor logits = at::log(at::tensor({0.1f, 0.4f, 0.3f, 0.15f, 0.05f})).unsqueeze(0);
  // Which of the five are kept, as 0/1.
  auto kept = [&](double p) {
    return TopPMask(logits, p, -1e7).gt(-1e6).squeeze(0).to(at::kLong);
  };
  auto ones = [](std::vector<int64_t> v) { return at::tensor(v, at::kLong); };
  EXPECT_TRUE(kept(0.3).equal(ones({0, 1, 0, 0, 0})));
  EXPECT_TRUE(kept(0.41).equal(ones({0, 1, 1, 0, 0})));
  EXPECT_TRUE(kept(0.8).equal(ones({0, 1, 1, 1, 0})));
  EXPECT_TRUE(kept(0.99).equal(ones({1, 1, 1, 1, 1})));
  EXPECT_TRUE(kept(1.5).equal(ones({1, 1, 1, 1, 1})));  // never reached: keep all
  // Kept logits are unchanged.
  EXPECT_TRUE(TopPMask(logits, 0.8, -1e7)[0][2].equal(logits[0][2]));
}

TEST(CacheOps, ExpandAndGatherRows) {
  Cache cache{{"k", at::arange(6, at::kFloat).view({2, 3})},
              {"index", at::scalar_tensor(4, at::kLong)}};
  ExpandCache(cache, 2, 2);
  EXPECT_TRUE(cache["k"].equal(at::tensor({0.f, 1.f, 2.f, 0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 3.f, 4.f, 5.f}).view({4, 3})));
  EXPECT_EQ(cache["index"].dim(), 0);
  GatherCache(cache, at::tensor({3, 3, 0, 1}, at::kLong));
  EXPECT_TRUE(cache["k"].equal(at::tensor({3.f, 4.f, 5.f, 3.f, 4.f, 5.f, 0.f, 1.f, 2.f, 0.f, 1.f, 2.f}).view({4, 3})));
  Cache bad{{"k", at::zeros({3, 2})}};
  EXPECT_THROW(ExpandCache(bad, 2, 2), std::invalid_argument);
}

// An entry named with kPerExampleSuffix keeps one row per example: neither
// expanded nor reordered (the rows reordering picks are an example's own
// beams).
TEST(CacheOps, PerExampleEntriesAreNeitherExpandedNorGathered) {
  const std::string per_example = std::string("cross") + kPerExampleSuffix;
  EXPECT_TRUE(IsPerExampleEntry(per_example));
  EXPECT_FALSE(IsPerExampleEntry("cross"));
  EXPECT_FALSE(IsPerExampleEntry(kPerExampleSuffix + std::string("x")));
  Cache cache{{"k", at::tensor({0.f, 1.f})}, {per_example, at::tensor({5.f, 7.f})}};
  ExpandCache(cache, 2, 2);
  EXPECT_TRUE(cache["k"].equal(at::tensor({0.f, 0.f, 1.f, 1.f})));
  EXPECT_TRUE(cache[per_example].equal(at::tensor({5.f, 7.f})));
  GatherCache(cache, at::tensor({1, 0, 3, 3}, at::kLong));
  EXPECT_TRUE(cache["k"].equal(at::tensor({0.f, 0.f, 1.f, 1.f})));
  EXPECT_TRUE(cache[per_example].equal(at::tensor({5.f, 7.f})));
  Cache bad{{per_example, at::zeros({3})}};
  EXPECT_THROW(ExpandCache(bad, 2, 2), std::invalid_argument);  // still one row per example
}

}  // namespace
}  // namespace t5xx::decoding
