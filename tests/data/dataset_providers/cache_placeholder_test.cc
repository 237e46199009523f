// Tests for a Task's seqio.CacheDatasetPlaceholder (t5xx/data/dataset_providers/task.h:
// CacheStep, supports_caching, requires_caching, PreprocessPrecache,
// PreprocessPostcache, GetDataset's use_cached). Expected seeds are seqio's
// rule written out by hand: a pre-cache step i gets HashSeed(seed, i); with
// the placeholder at index k, the step at position p of the list as written
// gets HashSeed(seed + 42 * k, p) (seqio's preprocess_postcache adds
// 42 * cache_step_idx to the seed).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;

// {"id": "<i>", "text": "<split>-<i>"} for i < n; shards take every
// num_shards-th example; shuffling reverses the order when the seed is odd.
class FakeSource : public DataSource {
 public:
  explicit FakeSource(int n, bool caching_permitted = true)
      : n_(n), caching_permitted_(caching_permitted) {}
  std::vector<std::string> splits() const override { return {"train", "validation"}; }
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard) const override {
    std::vector<Example> v;
    for (int i = shard.index; i < n_; i += shard.num_shards)
      v.push_back({{"id", std::to_string(i)}, {"text", split + "-" + std::to_string(i)}});
    if (shuffle && seed % 2 == 1) std::reverse(v.begin(), v.end());
    return FromVector(std::move(v));
  }
  bool caching_permitted() const override { return caching_permitted_; }

 private:
  int n_;
  bool caching_permitted_;
};

OutputFeatures Features() {
  auto v = std::make_shared<::t5xx::testing::FakeVocabulary>(1000, 0);
  return {{"targets", {v, true, true}}};
}

// A step that records the seed and sequence_length it was given and stamps
// each example's "targets" with one token: (seed + the example's index in
// this step's stream) mod 997 -- a stand-in for a stochastic preprocessor
// whose draws follow its seed and its per-example counter.
struct Recorder {
  std::vector<uint64_t> seeds;
  std::vector<FeatureLengths> lengths;
  Preprocessor Step() {
    return [this](DatasetPtr ds, const PreprocessContext& ctx) {
      seeds.push_back(ctx.seed);
      lengths.push_back(ctx.sequence_length);
      auto count = std::make_shared<int64_t>(0);
      const uint64_t seed = ctx.seed;
      return Map(std::move(ds), [seed, count](Example ex) {
        Tokens t;
        if (auto it = ex.find("targets"); it != ex.end() && std::holds_alternative<Tokens>(it->second))
          t = std::get<Tokens>(it->second);
        t.push_back(static_cast<int32_t>((seed + static_cast<uint64_t>((*count)++)) % 997));
        ex["targets"] = t;
        return ex;
      });
    };
  }
};

std::vector<Tokens> Targets(Dataset& ds) {
  std::vector<Tokens> out;
  for (const Example& ex : Collect(ds)) out.push_back(std::get<Tokens>(ex.at("targets")));
  return out;
}

TEST(CachePlaceholder, FlagsAndConstructionChecks) {
  auto src = std::make_shared<FakeSource>(2);
  Recorder r;
  Task plain("plain", src, {r.Step()}, Features());
  EXPECT_FALSE(plain.supports_caching());
  EXPECT_FALSE(plain.requires_caching());
  EXPECT_FALSE(plain.cache_step().has_value());
  Task cached("cached", src, {r.Step(), r.Step()}, Features(), 1000, nullptr, {}, {},
              CacheStep{1, false});
  EXPECT_TRUE(cached.supports_caching());
  EXPECT_FALSE(cached.requires_caching());
  EXPECT_EQ(cached.cache_step()->index, 1u);
  Task required("required", src, {r.Step()}, Features(), 1000, nullptr, {}, {},
                CacheStep{1, true});
  EXPECT_TRUE(required.requires_caching());
  // The placeholder may come last (index == size) but not past the steps.
  EXPECT_EQ(ErrorOf([&] {
              Task("past", src, {r.Step()}, Features(), 1000, nullptr, {}, {},
                   CacheStep{2, false});
            }),
            "Task 'past': the cache placeholder's index 2 is past its 1 preprocessors");
  // seqio refuses a placeholder over a source that forbids caching.
  EXPECT_ERROR_CONTAINS(Task("forbidden", std::make_shared<FakeSource>(2, false), {r.Step()},
                             Features(), 1000, nullptr, {}, {}, CacheStep{0, false}),
                        "Task 'forbidden' has a seqio.CacheDatasetPlaceholder but its data "
                        "source forbids caching (caching_permitted=False)");
  EXPECT_NO_THROW(Task("forbidden_plain", std::make_shared<FakeSource>(2, false), {r.Step()},
                       Features()));
}

TEST(CachePlaceholder, PostCacheSeedsFollowSeqio) {
  Recorder r;
  // steps as written: [a, placeholder, b, c]: a is pre-cache; b, c post-cache.
  Task t("t", std::make_shared<FakeSource>(3), {r.Step(), r.Step(), r.Step()}, Features(),
         1000, nullptr, {}, {}, CacheStep{1, false});
  const uint64_t seed = 7;
  DatasetPtr ds = t.GetDataset({{"targets", 9}}, "train", false, seed);
  // The post-cache steps are built by GetDataset; the pre-cache step when
  // the first epoch starts (inside the repeat).
  ASSERT_EQ(r.seeds.size(), 2u);
  EXPECT_EQ(r.seeds[0], HashSeed(seed + 42 * 1, 2));
  EXPECT_EQ(r.seeds[1], HashSeed(seed + 42 * 1, 3));
  (void)Collect(*ds);
  ASSERT_EQ(r.seeds.size(), 3u);
  EXPECT_EQ(r.seeds[2], HashSeed(seed, 0));
  // Pre-cache steps never see the sequence lengths; post-cache steps do.
  EXPECT_EQ(r.lengths[0], (FeatureLengths{{"targets", 9}}));
  EXPECT_TRUE(r.lengths[2].empty());

  // Placeholder first (index 0): the cache holds the source as it is.
  Recorder r0;
  Task first("first", std::make_shared<FakeSource>(1), {r0.Step(), r0.Step()}, Features(), 1000,
             nullptr, {}, {}, CacheStep{0, false});
  (void)Collect(*first.GetDataset({}, "train", false, seed));
  EXPECT_EQ(r0.seeds, (std::vector<uint64_t>{HashSeed(seed, 1), HashSeed(seed, 2)}));
}

TEST(CachePlaceholder, TaskWithoutPlaceholderKeepsItsSeeds) {
  Recorder r;
  Task t("t", std::make_shared<FakeSource>(3), {r.Step(), r.Step(), r.Step()}, Features());
  (void)t.GetDataset({}, "train", false, 11);
  EXPECT_EQ(r.seeds, (std::vector<uint64_t>{HashSeed(11, 0), HashSeed(11, 1), HashSeed(11, 2)}));
  // PreprocessPrecache is the identity; PreprocessPostcache runs every step.
  Recorder r2;
  Task u("u", std::make_shared<FakeSource>(3), {r2.Step(), r2.Step()}, Features());
  DatasetPtr src = std::make_shared<FakeSource>(3)->GetDataset("train", false, 0, {});
  DatasetPtr pre = u.PreprocessPrecache(std::move(src), 11);
  EXPECT_TRUE(r2.seeds.empty());
  DatasetPtr post = u.PreprocessPostcache(std::move(pre), {}, 11);
  EXPECT_EQ(r2.seeds, (std::vector<uint64_t>{HashSeed(11, 0), HashSeed(11, 1)}));
  // Each example of 0..2 carries (seed_i + index) % 997 per step.
  const auto got = Targets(*post);
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(got[i], (Tokens{static_cast<int32_t>((HashSeed(11, 0) + i) % 997),
                              static_cast<int32_t>((HashSeed(11, 1) + i) % 997)}));
}

TEST(CachePlaceholder, PrecacheThenPostcacheEqualsGetDataset) {
  Recorder r;
  Task t("t", std::make_shared<FakeSource>(6), {r.Step(), r.Step(), r.Step()}, Features(),
         1000, nullptr, {}, {}, CacheStep{2, false});
  const uint64_t seed = 3;
  DatasetPtr whole = t.GetDataset({{"targets", 5}}, "train", /*shuffle=*/false, seed);
  const auto expected = Targets(*whole);
  ASSERT_EQ(expected.size(), 6u);
  DatasetPtr src = t.source()->GetDataset("train", false, 0, {});
  DatasetPtr composed = t.PreprocessPostcache(t.PreprocessPrecache(std::move(src), seed),
                                              {{"targets", 5}}, seed);
  EXPECT_EQ(Targets(*composed), expected);
  // Hand check of example 4: steps 0, 1 pre-cache; step 2 at position 3.
  EXPECT_EQ(expected[4], (Tokens{static_cast<int32_t>((HashSeed(seed, 0) + 4) % 997),
                                 static_cast<int32_t>((HashSeed(seed, 1) + 4) % 997),
                                 static_cast<int32_t>((HashSeed(seed + 84, 3) + 4) % 997)}));
}

TEST(CachePlaceholder, RepeatComesAfterThePrecacheSteps) {
  Recorder r;
  Task t("t", std::make_shared<FakeSource>(2), {r.Step(), r.Step()}, Features(), 1000, nullptr,
         {}, {}, CacheStep{1, false});
  const auto got = Targets(*t.GetDataset({}, "train", false, 0, {}, /*num_epochs=*/2));
  ASSERT_EQ(got.size(), 4u);
  // The pre-cache step restarts each epoch (as a cache would hold it); the
  // post-cache step keeps counting across epochs (new draws every epoch).
  const auto a = HashSeed(0, 0), b = HashSeed(42, 2);
  EXPECT_EQ(got[0], (Tokens{static_cast<int32_t>(a % 997), static_cast<int32_t>(b % 997)}));
  EXPECT_EQ(got[2], (Tokens{static_cast<int32_t>(a % 997), static_cast<int32_t>((b + 2) % 997)}));
  EXPECT_EQ(got[3],
            (Tokens{static_cast<int32_t>((a + 1) % 997), static_cast<int32_t>((b + 3) % 997)}));
}

TEST(CachePlaceholder, UseCachedWithoutPlaceholderWarnsAndReadsOnTheFly) {
  Recorder r;
  Task t("plain", std::make_shared<FakeSource>(3), {r.Step()}, Features());
  const auto expected = Targets(*t.GetDataset({}, "train", false, 5));
  ::testing::internal::CaptureStderr();
  DatasetPtr ds = t.GetDataset({}, "train", false, 5, {}, 1, true, /*use_cached=*/true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("t5xx: warning: task 'plain' has no seqio.CacheDatasetPlaceholder"),
            std::string::npos)
      << err;
  EXPECT_EQ(Targets(*ds), expected);
}

TEST(CachePlaceholder, RequiredCacheReadOnTheFlyIsAnError) {
  Recorder r;
  Task t("needs_cache", std::make_shared<FakeSource>(3), {r.Step()}, Features(), 1000, nullptr,
         {}, {}, CacheStep{1, true});
  const std::string msg = ErrorOf([&] { t.GetDataset({}, "train", false); });
  EXPECT_NE(msg.find("task 'needs_cache' requires caching"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set use_cached=True (gin: USE_CACHED_TASKS = True)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("t5xx cache_tasks --tasks=needs_cache --output_cache_dir=<dir>"),
            std::string::npos)
      << msg;
  // Through a DatasetRequest too.
  DatasetRequest request;
  EXPECT_ERROR_CONTAINS(t.GetDataset({}, request), "requires caching");
}

TEST(CachePlaceholder, PrecacheErrorsNameTheStep) {
  Preprocessor fail = [](DatasetPtr ds, const PreprocessContext&) {
    return Map(std::move(ds), [](Example ex) -> Example {
      if (std::get<std::string>(ex.at("id")) == "1") throw Error("bad example");
      return ex;
    });
  };
  Recorder r;
  Task t("named", std::make_shared<FakeSource>(3), {fail, r.Step()}, Features(), 1000, nullptr,
         {}, {"my.fail, bound at t.gin:3:1", "my.stamp, bound at t.gin:5:1"},
         CacheStep{1, false});
  DatasetPtr ds = t.PreprocessPrecache(t.source()->GetDataset("train", false, 0, {}), 0);
  ASSERT_TRUE(ds->Next().has_value());
  EXPECT_EQ(ErrorOf([&] { ds->Next(); }),
            "task 'named', preprocessor 0 (my.fail, bound at t.gin:3:1), example 1: bad example");
  // Post-cache steps are numbered by their place in the list as written.
  Preprocessor fail_all = [](DatasetPtr ds, const PreprocessContext&) {
    return Map(std::move(ds), [](Example) -> Example { throw Error("no"); });
  };
  Task u("u", std::make_shared<FakeSource>(3), {r.Step(), fail_all}, Features(), 1000, nullptr,
         {}, {}, CacheStep{1, false});
  EXPECT_EQ(ErrorOf([&] { Collect(*u.GetDataset({}, "train", false)); }),
            "task 'u', preprocessor 2, example 0: no");
}

// A source whose files are gone: opening a split throws, as a file source
// whose pattern matches no file does.
class MissingFilesSource : public FakeSource {
 public:
  MissingFilesSource() : FakeSource(3) {}
  DatasetPtr GetDataset(const std::string&, bool, uint64_t, const ShardInfo&) const override {
    throw Error("file pattern /gone/* matches no file");
  }
};

TEST(CachePlaceholder, SourceErrorsOnTheFlyNameTheSource) {
  // With a placeholder the source is opened per epoch inside the pre-cache
  // chain; its error names the source, as it does for a task without one,
  // not the last post-cache step that pulled from it.
  Recorder r;
  Task with("w", std::make_shared<MissingFilesSource>(), {r.Step(), r.Step()}, Features(), 1000,
            nullptr, {}, {}, CacheStep{1, false});
  EXPECT_EQ(ErrorOf([&] { Collect(*with.GetDataset({}, "train", false)); }),
            "task 'w', source (split 'train'), epoch 0: file pattern /gone/* matches no file");
  Task without("n", std::make_shared<MissingFilesSource>(), {r.Step()}, Features());
  EXPECT_EQ(ErrorOf([&] { Collect(*without.GetDataset({}, "train", false)); }),
            "task 'n', source (split 'train'), example 0: file pattern /gone/* matches no file");
}

}  // namespace
}  // namespace t5xx::seqio
