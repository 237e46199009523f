// Tests for Task, TaskRegistry and get_dataset (t5xx/data/dataset_providers/task.h).
#include <gtest/gtest.h>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/util/edit_distance.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using ::t5xx::testing::ErrorOf;

// pad 0, eos 1, unk 2; byte c -> 3 + c mod 97; 20 extra ids.
class FakeVocab : public ::t5xx::testing::FakeVocabulary {
 public:
  FakeVocab() : FakeVocabulary(100, 20) {}
};

// In-memory source: {"text": "<split>-<i>..."} lines; shards take every
// num_shards-th example; shuffling reverses the order when the seed is odd.
class FakeSource : public DataSource {
 public:
  explicit FakeSource(int n, int repeat_chars = 1) : n_(n), rep_(repeat_chars) {}
  std::vector<std::string> splits() const override { return {"train", "validation"}; }
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard) const override {
    std::vector<Example> v;
    for (int i = shard.index; i < n_; i += shard.num_shards) {
      std::string text;
      for (int r = 0; r < rep_; ++r) text += split + "-" + std::to_string(i) + " ";
      v.push_back({{"text", text}, {"id", std::to_string(i)}});
    }
    if (shuffle && seed % 2 == 1) std::reverse(v.begin(), v.end());
    return FromVector(std::move(v));
  }

 private:
  int n_, rep_;
};

OutputFeatures Features(bool inputs_required = true) {
  auto v = std::make_shared<FakeVocab>();
  return {{"inputs", {v, true, inputs_required}}, {"targets", {v, true, true}}};
}

std::vector<Preprocessor> TextToTextChain() {
  return {RekeyPreprocessor({{"inputs", "id"}, {"targets", "text"}}),
          TokenizePreprocessor(), AppendEosAfterTrimPreprocessor()};
}


TEST(Task, ConstructionChecks) {
  auto src = std::make_shared<FakeSource>(3);
  EXPECT_NO_THROW(Task("ok.name:v1#x_2", src, {}, Features()));
  EXPECT_THROW(Task("bad name", src, {}, Features()), Error);
  EXPECT_THROW(Task("x", nullptr, {}, Features()), Error);
  EXPECT_THROW(Task("x", src, {Preprocessor()}, Features()), Error);
}

TEST(Task, PipelineProducesTokenizedFeatures) {
  Task task("t", std::make_shared<FakeSource>(4), TextToTextChain(), Features());
  auto ds = task.GetDataset({{"inputs", 8}, {"targets", 4}}, "train", /*shuffle=*/false);
  const auto out = Collect(*ds);
  ASSERT_EQ(out.size(), 4u);
  // "train-0 " -> 8 chars; trimmed to 3 then EOS.
  EXPECT_EQ(GetTokens(out[0], "targets").size(), 4u);
  EXPECT_EQ(GetTokens(out[0], "targets").back(), 1);
  EXPECT_EQ(GetString(out[0], "targets_pretokenized"), "train-0 ");
  // "0" = 48 -> 3 + 48 = 51, then EOS.
  EXPECT_EQ(GetTokens(out[0], "inputs"), (Tokens{51, 1}));
}

TEST(Task, SplitsEpochsShards) {
  Task task("t", std::make_shared<FakeSource>(5), TextToTextChain(), Features());
  const std::string msg = ErrorOf([&] { task.GetDataset({}, "test", false); });
  EXPECT_NE(msg.find("'test'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("validation"), std::string::npos) << msg;
  EXPECT_EQ(Collect(*task.GetDataset({}, "train", false, 0, {}, 2)).size(), 10u);
  EXPECT_EQ(Collect(*task.GetDataset({}, "train", false, 0, {}, -1), 23).size(), 23u);
  EXPECT_EQ(Collect(*task.GetDataset({}, "train", false, 0, {1, 2}, 1)).size(), 2u);
  EXPECT_THROW(task.GetDataset({}, "train", false, 0, {2, 2}, 1), Error);
  EXPECT_THROW(task.GetDataset({}, "train", false, 0, {}, -3), Error);
}

TEST(Task, OutputFeatureChecks) {
  // No tokenize: targets stays a string.
  Task untokenized("raw", std::make_shared<FakeSource>(2),
                   {RekeyPreprocessor({{"inputs", ""}, {"targets", "text"}})}, Features());
  std::string msg = ErrorOf([&] { Collect(*untokenized.GetDataset({}, "train", false)); });
  EXPECT_NE(msg.find("raw"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is a string"), std::string::npos) << msg;
  // Missing required inputs.
  Task missing("m", std::make_shared<FakeSource>(2),
               {RekeyPreprocessor({{"targets", "text"}}), TokenizePreprocessor()},
               Features());
  msg = ErrorOf([&] { Collect(*missing.GetDataset({}, "train", false)); });
  EXPECT_NE(msg.find("'inputs'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("example 0"), std::string::npos) << msg;
  // Not required: fine.
  Task optional("o", std::make_shared<FakeSource>(2),
                {RekeyPreprocessor({{"targets", "text"}}), TokenizePreprocessor()},
                Features(/*inputs_required=*/false));
  EXPECT_EQ(Collect(*optional.GetDataset({}, "train", false)).size(), 2u);
  // A token id outside the vocabulary (FakeVocab: 100 + 20 ids) is an error
  // naming task, feature, example and id, not an out-of-range embedding
  // lookup later.
  Preprocessor big_id = [](DatasetPtr ds, const PreprocessContext&) {
    return Map(std::move(ds), [](Example ex) {
      std::get<Tokens>(ex["targets"]).push_back(120);
      return ex;
    });
  };
  Task out_of_range("big", std::make_shared<FakeSource>(2),
                    {RekeyPreprocessor({{"targets", "text"}}), TokenizePreprocessor(), big_id},
                    Features(/*inputs_required=*/false));
  msg = ErrorOf([&] { Collect(*out_of_range.GetDataset({}, "train", false)); });
  EXPECT_NE(msg.find("task 'big', output features check, example 0: output feature 'targets' "
                     "holds token id 120, outside its vocabulary's ids [0, 120)"),
            std::string::npos)
      << msg;
}

TEST(Task, ShuffleIsDeterministicPerSeed) {
  Task task("t", std::make_shared<FakeSource>(30), TextToTextChain(), Features(), 8);
  auto ids = [&](uint64_t seed) {
    std::vector<std::string> out;
    for (const auto& e : Collect(*task.GetDataset({}, "train", true, seed)))
      out.push_back(GetString(e, "inputs_pretokenized"));
    return out;
  };
  EXPECT_EQ(ids(3), ids(3));
  EXPECT_NE(ids(3), ids(4));
  EXPECT_EQ(ids(3).size(), 30u);
  Task no_shuffle("n", std::make_shared<FakeSource>(3), TextToTextChain(), Features(), 0);
  EXPECT_THROW(no_shuffle.GetDataset({}, "train", true), Error);
  EXPECT_NO_THROW(no_shuffle.GetDataset({}, "train", false));
}

TEST(Task, ContextCarriesLengthsAndPerStepSeeds) {
  std::vector<uint64_t> seeds;
  FeatureLengths seen;
  auto spy = [&](DatasetPtr ds, const PreprocessContext& ctx) {
    seeds.push_back(ctx.seed);
    seen = ctx.sequence_length;
    EXPECT_EQ(ctx.output_features.size(), 2u);
    return ds;
  };
  Task task("t", std::make_shared<FakeSource>(1), {spy, spy}, Features(false));
  (void)task.GetDataset({{"targets", 9}}, "train", false, 5);
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_NE(seeds[0], seeds[1]);
  EXPECT_EQ(seen, (FeatureLengths{{"targets", 9}}));
}

TEST(TaskRegistry, AddGetDuplicateDidYouMean) {
  TaskRegistry reg;
  auto src = std::make_shared<FakeSource>(1);
  reg.Add(std::make_shared<Task>("c4_span_corruption", src, TextToTextChain(), Features()));
  reg.Add(std::make_shared<Task>("glue_cola", src, TextToTextChain(), Features()));
  EXPECT_EQ(reg.Get("glue_cola")->name(), "glue_cola");
  EXPECT_THROW(
      reg.Add(std::make_shared<Task>("glue_cola", src, TextToTextChain(), Features())),
      Error);
  const std::string msg = ErrorOf([&] { reg.Get("c4_span_corruptoin"); });
  EXPECT_NE(msg.find("did you mean [c4_span_corruption]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("registered tasks: [c4_span_corruption, glue_cola]"),
            std::string::npos)
      << msg;
  EXPECT_EQ(reg.Names(), (std::vector<std::string>{"c4_span_corruption", "glue_cola"}));
  EXPECT_TRUE(reg.Remove("glue_cola"));
  EXPECT_FALSE(reg.Has("glue_cola"));
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(GetDataset, TaskConverterBatch) {
  TaskRegistry reg;
  reg.Add(std::make_shared<Task>("tt", std::make_shared<FakeSource>(5), TextToTextChain(),
                                 Features()));
  EncDecFeatureConverter conv(/*pack=*/false);
  FeatureLengths lengths = {{"inputs", 4}, {"targets", 6}};
  auto it = GetDataset("tt", lengths, conv, "train", false, 1, {}, 0, 2, reg);
  int batches = 0;
  while (auto b = it.Next()) {
    ++batches;
    EXPECT_EQ(b->batch_size, 2);
    EXPECT_EQ(b->features.at("encoder_input_tokens").size(), 2u * 4);
    EXPECT_EQ(b->features.at("decoder_target_tokens").size(), 2u * 6);
    EXPECT_EQ(b->lengths.at("decoder_loss_weights"), 6);
  }
  EXPECT_EQ(batches, 2);  // 5 examples, drop_remainder
  // Bad lengths are caught before iterating; unknown tasks name candidates.
  EXPECT_THROW(GetDataset("tt", {{"targets", 6}}, conv, "train", false, 1, {}, 0, 2, reg),
               Error);
  EXPECT_THROW(GetDataset("tx", lengths, conv, "train", false, 1, {}, 0, 2, reg), Error);
}

TEST(GetDataset, OverLengthNamesTheTask) {
  TaskRegistry reg;
  // No trimming preprocessor and trim_output_features = false: "train-0 "
  // is 8 tokens > 6.
  reg.Add(std::make_shared<Task>(
      "untrimmed", std::make_shared<FakeSource>(2),
      std::vector<Preprocessor>{RekeyPreprocessor({{"inputs", "id"}, {"targets", "text"}}),
                                TokenizePreprocessor()},
      Features()));
  EncDecFeatureConverter conv(false);
  auto it = GetDataset("untrimmed", {{"inputs", 4}, {"targets", 6}}, conv, "train", false,
                       1, {}, 0, 1, reg, /*trim_output_features=*/false);
  const std::string msg = ErrorOf([&] { it.Next(); });
  // seqio's default trims instead: both examples convert.
  auto trimmed = GetDataset("untrimmed", {{"inputs", 4}, {"targets", 6}}, conv, "train", false,
                            1, {}, 0, 1, reg);
  EXPECT_TRUE(trimmed.Next().has_value());
  EXPECT_TRUE(trimmed.Next().has_value());
  EXPECT_NE(msg.find("untrimmed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("targets longer than its task feature length (8 > 6)"),
            std::string::npos)
      << msg;
}

TEST(GetDataset, SpanCorruptionTaskPacked) {
  // t5's c4_v220_span_corruption chain on a fake corpus.
  TaskRegistry reg;
  const auto [t, targets_len] = RandomSpansHelper(32, 0.15, 3.0);
  (void)t;
  reg.Add(std::make_shared<Task>(
      "sc", std::make_shared<FakeSource>(40, 6),
      std::vector<Preprocessor>{RekeyPreprocessor({{"inputs", ""}, {"targets", "text"}}),
                                TokenizePreprocessor(), SpanCorruptionPreprocessor(),
                                AppendEosAfterTrimPreprocessor()},
      Features()));
  EncDecFeatureConverter conv(/*pack=*/true);
  FeatureLengths lengths = {{"inputs", 32}, {"targets", targets_len}};
  auto run = [&](uint64_t seed, int epochs) {
    std::vector<Batch> out;
    auto it = GetDataset("sc", lengths, conv, "train", true, epochs, {}, seed, 4, reg);
    while (auto b = it.Next()) out.push_back(std::move(*b));
    return out;
  };
  const auto a = run(1, 1);
  ASSERT_FALSE(a.empty());
  for (const auto& b : a) {
    EXPECT_EQ(b.features.at("encoder_input_tokens").size(), 4u * 32);
    EXPECT_EQ(b.features.at("decoder_target_tokens").size(),
              4u * static_cast<size_t>(targets_len));
  }
  const auto b = run(1, 1);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].features, b[i].features);
  // Two epochs: the second one's masks are drawn afresh.
  const auto two = run(1, 2);
  EXPECT_GE(two.size(), 2 * a.size() - 1);
  bool differs = false;
  for (size_t i = 0; i < a.size() && a.size() + i < two.size(); ++i)
    differs |= two[a.size() + i].features != a[i].features;
  EXPECT_TRUE(differs);
}

// seqio's Task._trim_output_features (seqio/dataset_providers.py): after
// preprocessing, each output feature named by sequence_length becomes
// v[:sequence_length[k]]. Expected values worked by hand: the source text
// "train-0 " repeated 5 times is 40 bytes; FakeVocab maps byte c to
// 3 + c % 97, so the targets are those 40 ids, plus EOS (1) from append_eos.
TEST(Task, TrimsOutputFeaturesAsSeqio) {
  auto src = std::make_shared<FakeSource>(1, /*repeat_chars=*/5);
  FakeVocab vocab;
  const std::vector<int32_t> all = vocab.Encode("train-0 train-0 train-0 train-0 train-0 ");
  ASSERT_EQ(all.size(), 40u);
  // append_eos, then the trim cuts the EOS off (as seqio does).
  Task eos("eos", src,
           {RekeyPreprocessor({{"inputs", "id"}, {"targets", "text"}}), TokenizePreprocessor(),
            AppendEosPreprocessor()},
           Features());
  auto out = Collect(*eos.GetDataset({{"inputs", 8}, {"targets", 16}}, "train", false));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(GetTokens(out[0], "targets"), std::vector<int32_t>(all.begin(), all.begin() + 16));
  // "0" -> 3 + 48 % 97 = 51, then EOS: shorter than 8, untouched.
  EXPECT_EQ(GetTokens(out[0], "inputs"), (std::vector<int32_t>{51, 1}));
  // append_eos_after_trim keeps its EOS: 15 ids + 1.
  Task after("after", src, TextToTextChain(), Features());
  out = Collect(*after.GetDataset({{"inputs", 8}, {"targets", 16}}, "train", false));
  std::vector<int32_t> want(all.begin(), all.begin() + 15);
  want.push_back(1);
  EXPECT_EQ(GetTokens(out[0], "targets"), want);
  // trim_output_features = false: the feature keeps all 41 ids.
  out = Collect(*eos.GetDataset({{"inputs", 8}, {"targets", 16}}, "train", false, 0, {}, 1,
                                /*trim_output_features=*/false));
  EXPECT_EQ(GetTokens(out[0], "targets").size(), 41u);
}

// Issue 9: an error inside a step names the task, the step (its name and
// where it was bound) and the example; earlier steps' errors pass through
// later steps unchanged.
TEST(Task, ErrorsNameTaskStepAndExample) {
  auto src = std::make_shared<FakeSource>(5);
  Preprocessor fail_on_3 = [](DatasetPtr ds, const PreprocessContext&) {
    return Map(std::move(ds), [](Example ex) {
      if (std::get<std::string>(ex.at("id")) == "3") throw Error("bad example");
      return ex;
    });
  };
  Task t("named", src, {fail_on_3, RekeyPreprocessor({{"targets", "text"}}), TokenizePreprocessor()},
         Features(/*inputs_required=*/false), 1000, nullptr, {},
         {"my.fail_on_3, bound at t.gin:4:7", "seqio.preprocessors.rekey",
          "seqio.preprocessors.tokenize"});
  auto ds = t.GetDataset({}, "train", false);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ds->Next().has_value());
  EXPECT_EQ(ErrorOf([&] { ds->Next(); }),
            "task 'named', preprocessor 0 (my.fail_on_3, bound at t.gin:4:7), example 3: "
            "bad example");
  // A step reading a feature of the wrong kind: span corruption before
  // tokenization (the reported fault).
  Task sc("sc", src,
          {RekeyPreprocessor({{"targets", "text"}}), SpanCorruptionPreprocessor(3.0, 0.15),
           TokenizePreprocessor()},
          Features(/*inputs_required=*/false), 1000, nullptr, {},
          {"seqio.preprocessors.rekey, bound at x.gin:1:1",
           "t5.data.preprocessors.span_corruption, bound at x.gin:2:1",
           "seqio.preprocessors.tokenize, bound at x.gin:3:1"});
  const std::string msg = ErrorOf([&] {
    Collect(*sc.GetDataset({{"inputs", 16}, {"targets", 8}}, "train", false));
  });
  EXPECT_EQ(msg.rfind("task 'sc', preprocessor 1 (t5.data.preprocessors.span_corruption, "
                      "bound at x.gin:2:1), example 0: feature 'targets' is a string",
                      0),
            0u)
      << msg;
  // Unnamed steps are numbered; the output check is a step of its own.
  Task untokenized("raw", src, {RekeyPreprocessor({{"targets", "text"}})},
                   Features(/*inputs_required=*/false));
  EXPECT_EQ(ErrorOf([&] { Collect(*untokenized.GetDataset({}, "train", false)); }),
            "task 'raw', output features check, example 0: output feature 'targets' is a "
            "string, expected int32 tokens; add a tokenize preprocessor");
  EXPECT_ERROR_CONTAINS(Task("n", src, {fail_on_3}, Features(), 1000, nullptr, {}, {"a", "b"}),
                        "Task 'n': 2 preprocessor names for 1 preprocessors");
}

}  // namespace
}  // namespace t5xx::seqio
