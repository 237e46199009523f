// Tests for data/cache_tasks/cache_seeds.h against seqio's formula run in Python. The
// golden numbers were printed by (Python 3.11):
//
//   import hashlib
//   def task_seed(name, base):   # cache_tasks_main.run_pipeline
//     if base and base != -1:
//       return int.from_bytes(hashlib.md5(name.encode()).digest(), "little") + base
//   def shard_seed(name, i, ts): # beam_utils.PreprocessTask._emit_examples
//     d = hashlib.md5((name + f"shard{i}").encode()).digest()
//     s = int.from_bytes(d, "little") + (ts or 0)
//     if s > 2**63 - 1:
//       s = int.from_bytes(d[:7], "little") + (ts or 0)
//     return s
//   print(s, s % 2**64)
#include "t5xx/data/cache_tasks/cache_seeds.h"

#include <gtest/gtest.h>

namespace t5xx::seqio {
namespace {

TEST(CacheSeedsTest, NoBaseSeedMeansNoTaskSeed) {
  // seqio tests `FLAGS.base_seed and FLAGS.base_seed != -1`: None, 0 and -1
  // give no task seed.
  EXPECT_FALSE(CacheTaskSeed("my_task", std::nullopt).has_value());
  EXPECT_FALSE(CacheTaskSeed("my_task", 0).has_value());
  EXPECT_FALSE(CacheTaskSeed("my_task", -1).has_value());
}

TEST(CacheSeedsTest, ShardSeedsWithoutBaseSeed) {
  // shard_seed("my_task", i, None) for i = 0, 1, 17: the 7-byte fallback.
  EXPECT_EQ(CacheShardSeed("my_task", 0, std::nullopt).ToString(), "46207714936722378");
  EXPECT_EQ(CacheShardSeed("my_task", 1, std::nullopt).Reduced(), 67382896491644527ULL);
  EXPECT_EQ(CacheShardSeed("my_task", 17, std::nullopt).Reduced(), 50759210262616837ULL);
  EXPECT_EQ(CacheShardSeed("glue:cola_v2", 0, std::nullopt).Reduced(), 33107181469192362ULL);
  EXPECT_EQ(CacheShardSeed("glue:cola_v2", 17, std::nullopt).Reduced(), 68012888724214915ULL);
}

TEST(CacheSeedsTest, TaskAndShardSeedsWithBaseSeed) {
  // task_seed("my_task", 7) and shard_seed("my_task", i, that).
  const auto ts = CacheTaskSeed("my_task", 7);
  ASSERT_TRUE(ts.has_value());
  EXPECT_EQ(ts->ToString(), "168940286017129140347245401655206451055");
  EXPECT_EQ(ts->Reduced(), 11787261560343992175ULL);
  const CacheSeed s0 = CacheShardSeed("my_task", 0, ts);
  EXPECT_EQ(s0.ToString(), "168940286017129140347291609370143173433");
  EXPECT_EQ(s0.Reduced(), 11833469275280714553ULL);
  EXPECT_EQ(CacheShardSeed("my_task", 1, ts).ToString(),
            "168940286017129140347312784551698095582");
  EXPECT_EQ(CacheShardSeed("my_task", 17, ts).Reduced(), 11838020770606609012ULL);
  // A negative base seed: task_seed("my_task", -12345).
  const auto neg = CacheTaskSeed("my_task", -12345);
  EXPECT_EQ(neg->ToString(), "168940286017129140347245401655206438703");
  EXPECT_EQ(CacheShardSeed("my_task", 0, neg).Reduced(), 11833469275280702201ULL);
  // The largest base seed: task_seed("glue:cola_v2", 2**63 - 1).
  const auto big = CacheTaskSeed("glue:cola_v2", INT64_MAX);
  EXPECT_EQ(big->ToString(), "303839251852255647690791166094557070299");
  EXPECT_EQ(big->Reduced(), 4980482525413524443ULL);
  EXPECT_EQ(CacheShardSeed("glue:cola_v2", 17, big).ToString(),
            "303839251852255647690859178983281285214");
  EXPECT_EQ(CacheShardSeed("glue:cola_v2", 17, big).Reduced(), 5048495414137739358ULL);
}

TEST(CacheSeedsTest, ExactValuesPastTwoTo128AndNegative) {
  // str(2**128 + 5) and str(2 * 2**128); str(-5) and (-5) % 2**64.
  using u128 = unsigned __int128;
  EXPECT_EQ((CacheSeed{1, 5}).ToString(), "340282366920938463463374607431768211461");
  EXPECT_EQ((CacheSeed{2, 0}).ToString(), "680564733841876926926749214863536422912");
  const CacheSeed minus5{-1, ~static_cast<u128>(0) - 4};
  EXPECT_EQ(minus5.ToString(), "-5");
  EXPECT_EQ(minus5.Reduced(), 18446744073709551611ULL);
  EXPECT_EQ((CacheSeed{0, 0}).ToString(), "0");
}

}  // namespace
}  // namespace t5xx::seqio
