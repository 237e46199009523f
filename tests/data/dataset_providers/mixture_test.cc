// Tests for Mixture, MixtureRegistry and GetMixtureOrTaskDataset
// (t5xx/data/dataset_providers/mixture.h).
#include <gtest/gtest.h>

#include <map>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;

// Already tokenized source: example i is {"inputs": [id, 1], "targets":
// [i + 3, 1], "note": "x"}; `id` identifies the task in mixture output.
class TokenSource : public DataSource {
 public:
  TokenSource(int32_t id, int n, std::vector<std::string> splits = {"train", "validation"})
      : id_(id), n_(n), splits_(std::move(splits)) {}
  std::vector<std::string> splits() const override { return splits_; }
  DatasetPtr GetDataset(const std::string&, bool, uint64_t,
                        const ShardInfo& shard) const override {
    std::vector<Example> v;
    for (int i = shard.index; i < n_; i += shard.num_shards)
      v.push_back({{"inputs", Tokens{id_, 1}},
                   {"targets", Tokens{static_cast<int32_t>(i % 50) + 3, 1}},
                   {"note", std::string("x")}});
    return FromVector(std::move(v));
  }

 private:
  int32_t id_;
  int n_;
  std::vector<std::string> splits_;
};

OutputFeatures Features(bool with_inputs = true) {
  auto v = std::make_shared<::t5xx::testing::FakeVocabulary>(100, 0);
  OutputFeatures of = {{"targets", {v, true, true}}};
  if (with_inputs) of["inputs"] = {v, true, true};
  return of;
}

TaskPtr MakeTask(const std::string& name, int32_t id, int n = 1000,
                 std::vector<std::string> splits = {"train", "validation"},
                 bool with_inputs = true) {
  return std::make_shared<Task>(name, std::make_shared<TokenSource>(id, n, splits),
                                std::vector<Preprocessor>{}, Features(with_inputs), 16);
}

class MixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tasks.Add(MakeTask("a", 10));
    tasks.Add(MakeTask("b", 11));
    tasks.Add(MakeTask("c", 12));
    tasks.Add(MakeTask("d", 13));
  }
  MixturePtr Add(std::string name, std::vector<MixtureEntry> entries,
                 std::optional<double> default_rate = std::nullopt) {
    auto m = std::make_shared<Mixture>(std::move(name), std::move(entries), default_rate,
                                       tasks, mixtures);
    mixtures.Add(m);
    return m;
  }
  // The "top" mixture of EffectiveRatesNested.
  MixturePtr Top() {
    Add("sub1", {{"a", 1.0}, {"b", 3}});
    Add("sub2", {"b", "c"}, /*default_rate=*/2.0);
    return Add("top", {{"sub1", 2.0},
                       {"sub2", 1.0},
                       {"b", 1.0},
                       {"d", [](const Task& t) { return t.name() == "d" ? 0.5 : 99.0; }}});
  }
  std::map<int32_t, int> CountIds(Dataset& ds, size_t n) {
    std::map<int32_t, int> counts;
    for (const auto& ex : Collect(ds, n)) ++counts[GetTokens(ex, "inputs")[0]];
    return counts;
  }
  TaskRegistry tasks;
  MixtureRegistry mixtures;
};

TEST_F(MixtureTest, EffectiveRatesNested) {
  auto top = Top();
  const Task& a = *tasks.Get("a"); const Task& b = *tasks.Get("b");
  const Task& c = *tasks.Get("c"); const Task& d = *tasks.Get("d");
  // sub1 = {a:1, b:3}: total 4.  sub2 = {b:2, c:2} (default rate): total 4.
  EXPECT_DOUBLE_EQ(mixtures.Get("sub1")->TotalRate(), 4.0);
  EXPECT_DOUBLE_EQ(mixtures.Get("sub2")->total_rate(), 4.0);
  // top = {sub1:2, sub2:1, b:1, d:fn -> 0.5}: total = 2 + 1 + 1 + 0.5 = 4.5.
  EXPECT_DOUBLE_EQ(top->TotalRate(), 4.5);
  // a: only via sub1: 2 * 1/4 = 0.5.
  EXPECT_DOUBLE_EQ(top->GetRate(a), 0.5);
  // b: own 1 + via sub1 2 * 3/4 = 1.5 + via sub2 1 * 2/4 = 0.5 -> 3.
  EXPECT_DOUBLE_EQ(top->get_rate(b), 3.0);
  // c: via sub2 1 * 2/4 = 0.5.
  EXPECT_DOUBLE_EQ(top->GetRate(c), 0.5);
  // d: the function rate, 0.5.
  EXPECT_DOUBLE_EQ(top->GetRate(d), 0.5);
  // Sum of effective rates 0.5 + 3 + 0.5 + 0.5 = 4.5 = total_rate.
  // Three levels: outer = {top:9, c:1}: total 10;
  //   a = 9 * 0.5/4.5 = 1, b = 9 * 3/4.5 = 6, c = 9 * 0.5/4.5 + 1 = 2, d = 1.
  auto outer = Add("outer", {{"top", 9.0}, {"c", 1.0}});
  EXPECT_DOUBLE_EQ(outer->TotalRate(), 10.0);
  EXPECT_DOUBLE_EQ(outer->GetRate(a), 1.0);
  EXPECT_DOUBLE_EQ(outer->GetRate(b), 6.0);
  EXPECT_DOUBLE_EQ(outer->GetRate(c), 2.0);
  EXPECT_DOUBLE_EQ(outer->GetRate(d), 1.0);
  // Leaf tasks sorted by name, deduplicated.
  std::vector<std::string> names;
  for (const auto& t : outer->tasks()) names.push_back(t->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(outer->sub_mixture_names(), (std::vector<std::string>{"top"}));
  // A task outside the mixture has rate 0.
  EXPECT_DOUBLE_EQ(mixtures.Get("sub1")->GetRate(d), 0.0);
}

TEST_F(MixtureTest, SamplingProportions) {
  auto top = Top();
  auto ds = top->GetDataset({}, "train", /*shuffle=*/true, /*seed=*/3);
  const int n = 30000;
  auto counts = CountIds(*ds, n);
  // Expected 0.5/4.5, 3/4.5, 0.5/4.5, 0.5/4.5.
  const std::map<int32_t, double> expected = {
      {10, 0.5 / 4.5}, {11, 3.0 / 4.5}, {12, 0.5 / 4.5}, {13, 0.5 / 4.5}};
  for (const auto& [id, p] : expected)
    EXPECT_NEAR(counts[id] / static_cast<double>(n), p, 0.01) << "task id " << id;
  // Only output features are kept ("note" dropped).
  auto first = Collect(*top->GetDataset({}, "train", false), 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].size(), 2u);
  EXPECT_FALSE(first[0].count("note"));
}

TEST_F(MixtureTest, DeterministicPerSeed) {
  auto top = Top();
  auto ids = [&](bool shuffle, std::optional<uint64_t> seed) {
    std::vector<int32_t> out;
    for (const auto& ex : Collect(*top->GetDataset({}, "train", shuffle, seed), 300))
      out.push_back(GetTokens(ex, "inputs")[0]);
    return out;
  };
  EXPECT_EQ(ids(true, 7), ids(true, 7));
  EXPECT_NE(ids(true, 7), ids(true, 8));
  // Not shuffling and no seed: seqio's sampling seed 42.
  EXPECT_EQ(ids(false, std::nullopt), ids(false, 42));
}

TEST_F(MixtureTest, StopOnEmptyDataset) {
  tasks.Add(MakeTask("small", 20, /*n=*/3));
  tasks.Add(MakeTask("big", 21, /*n=*/500));
  auto m = Add("sb", {"small", "big"}, 1.0);
  // seqio default: the mixture ends when the drawn task has run dry.
  auto stop = CountIds(*m->GetDataset({}, "train", true, 1, {}, /*num_epochs=*/1), 10000);
  EXPECT_EQ(stop[20], 3);
  EXPECT_LT(stop[21], 100);  // small runs dry after ~6 draws
  // stop_on_empty_dataset=false: keep sampling big alone.
  auto all = CountIds(*m->GetDataset({}, "train", true, 1, {}, 1,
                                     /*stop_on_empty_dataset=*/false),
                      10000);
  EXPECT_EQ(all[20], 3);
  EXPECT_EQ(all[21], 500);
  // The mixture's own setting (seqio's sample_fn, bindable in gin as
  // seqio.Mixture.sample_fn) is the default of GetDataset.
  auto keep_going = std::make_shared<Mixture>("sb_keep", std::vector<MixtureEntry>{"small", "big"},
                                              1.0, tasks, mixtures,
                                              /*stop_on_empty_dataset=*/false);
  EXPECT_FALSE(keep_going->stop_on_empty_dataset());
  EXPECT_EQ(CountIds(*keep_going->GetDataset({}, "train", true, 1, {}, 1), 10000), all);
  // Default num_epochs (-1) repeats: far more than 503 examples.
  EXPECT_EQ(Collect(*m->GetDataset({}, "train", true, 1), 5000).size(), 5000u);
}

TEST_F(MixtureTest, SplitsSkippedOrMissing) {
  tasks.Add(MakeTask("val_only", 30, 10, {"validation"}));
  auto m = Add("mixed", {"a", "val_only"}, 1.0);
  auto counts = CountIds(*m->GetDataset({}, "train", true, 0), 200);
  EXPECT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[10], 200);
  EXPECT_ERROR_CONTAINS(m->GetDataset({}, "test"), "no task has a 'test' split");
}

TEST_F(MixtureTest, MismatchedOutputFeatures) {
  tasks.Add(MakeTask("targets_only", 40, 10, {"train"}, /*with_inputs=*/false));
  const std::string msg =
      ErrorOf([&] { Mixture("bad", {"a", "targets_only"}, 1.0, tasks, mixtures); });
  EXPECT_NE(msg.find("same output features"), std::string::npos) << msg;
  EXPECT_NE(msg.find("task 'a' has [inputs, targets]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("task 'targets_only' has [targets]"), std::string::npos) << msg;
}

TEST_F(MixtureTest, ConstructionErrors) {
  EXPECT_ERROR_CONTAINS(Mixture("m", {"a"}, std::nullopt, tasks, mixtures),
                        "has no rate and the mixture has no default_rate");
  EXPECT_ERROR_CONTAINS(Mixture("m", {}, 1.0, tasks, mixtures), "has no tasks");
  EXPECT_ERROR_CONTAINS(Mixture("bad name", {"a"}, 1.0, tasks, mixtures), "invalid");
  EXPECT_ERROR_CONTAINS(Mixture("m", {{"a", -1.0}}, 1.0, tasks, mixtures), ">= 0");
  EXPECT_ERROR_CONTAINS(Mixture("m", {"a", "a"}, 1.0, tasks, mixtures), "listed twice");
  Add("sub", {"a"}, 1.0);
  EXPECT_ERROR_CONTAINS(
      Mixture("m", {{"sub", [](const Task&) { return 1.0; }}}, 1.0, tasks, mixtures),
      "only task entries");
  // Unknown entry: did you mean, over tasks and mixtures.
  const std::string msg = ErrorOf([&] { Mixture("m", {"sbu"}, 1.0, tasks, mixtures); });
  EXPECT_NE(msg.find("did you mean"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sub"), std::string::npos) << msg;
  // A rate function returning a bad value is reported on use.
  auto neg = Add("neg", {{"a", [](const Task&) { return -2.0; }}});
  EXPECT_ERROR_CONTAINS(neg->TotalRate(), "rate function for task 'a'");
  // All rates zero.
  auto zero = Add("zero", {"a"}, 0.0);
  EXPECT_ERROR_CONTAINS(zero->GetDataset({}), "mixing rate 0");
}

TEST_F(MixtureTest, Registry) {
  Add("glue_mix", {"a", "b"}, 1.0);
  EXPECT_EQ(mixtures.Get("glue_mix")->name(), "glue_mix");
  EXPECT_ERROR_CONTAINS(mixtures.Add(std::make_shared<Mixture>("glue_mix",
                                                               std::vector<MixtureEntry>{"a"},
                                                               1.0, tasks, mixtures)),
                        "already registered");
  const std::string msg = ErrorOf([&] { mixtures.Get("glue_mxi"); });
  EXPECT_NE(msg.find("did you mean [glue_mix]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("registered mixtures: [glue_mix]"), std::string::npos) << msg;
  EXPECT_EQ(mixtures.Names(), (std::vector<std::string>{"glue_mix"}));
  EXPECT_TRUE(mixtures.Remove("glue_mix"));
  EXPECT_FALSE(mixtures.Has("glue_mix"));
  EXPECT_THROW(mixtures.Add(nullptr), Error);
  EXPECT_EQ(&MixtureRegistry::Global(), &MixtureRegistry::Global());
}

TEST_F(MixtureTest, GetMixtureOrTaskDatasetPrefersMixture) {
  tasks.Add(MakeTask("both", 50));
  Add("both", {"a", "c"}, 1.0);
  EncDecFeatureConverter conv(/*pack=*/false);
  const FeatureLengths lengths = {{"inputs", 4}, {"targets", 4}};
  std::map<int32_t, int> ids;
  auto it = GetMixtureOrTaskDataset("both", lengths, conv, "train", false, 1, {}, 0, 4,
                                    tasks, mixtures);
  for (int i = 0; i < 50; ++i) {
    auto batch = it.Next();
    ASSERT_TRUE(batch.has_value());
    const auto& enc = batch->features.at("encoder_input_tokens");
    for (int r = 0; r < 4; ++r) ++ids[enc[r * 4]];
  }
  EXPECT_EQ(ids.count(50), 0u);  // never the task named "both"
  EXPECT_GT(ids[10], 0);
  EXPECT_GT(ids[12], 0);
  // A task-only name goes to the task.
  auto task_it = GetMixtureOrTaskDataset("d", lengths, conv, "train", false, 1, {}, 0, 2,
                                         tasks, mixtures);
  EXPECT_EQ(task_it.NextBatch().features.at("encoder_input_tokens")[0], 13);
  // Unknown names list both registries.
  const std::string msg = ErrorOf([&] {
    GetMixtureOrTaskDataset("bothh", lengths, conv, "train", false, 1, {}, 0, 2, tasks,
                            mixtures);
  });
  EXPECT_NE(msg.find("did you mean [both]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("registered mixtures: [both]"), std::string::npos) << msg;
  EXPECT_THROW(GetMixtureOrTaskDataset("both", lengths, conv, "train", false, 1, {}, 0, 0,
                                       tasks, mixtures),
               Error);
}

}  // namespace
}  // namespace t5xx::seqio
