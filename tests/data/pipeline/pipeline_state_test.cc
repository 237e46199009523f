// Save/restore of dataset positions: a restored pipeline (in a new process)
// continues with exactly the examples of an uninterrupted run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/pipeline/batching.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/sources/json_lines_source.h"
#include "t5xx/data/sources/record_file_dataset.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

fs::path MakeCorpus() {
  const fs::path dir = fs::temp_directory_path() /
                       ("t5xx_state_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const char* words[] = {"alpha", "beta",  "gamma", "delta", "epsilon",
                         "zeta",  "eta",   "theta", "iota",  "kappa"};
  int n = 0;
  for (int f = 0; f < 2; ++f) {
    std::ofstream out(dir / ("train-" + std::to_string(f) + ".jsonl"));
    for (int i = 0; i < 17; ++i, ++n) {
      std::string text;
      for (int w = 0; w < 3 + (n * 7) % 11; ++w)
        text += std::string(w ? " " : "") + words[(n + w * 3) % 10];
      out << json{{"text", text}, {"id", std::to_string(n)}}.dump() << "\n";
      if (i % 5 == 4) out << "\n";  // blank lines are skipped
    }
  }
  return dir;
}

BatchIterator BuildDemo(const fs::path& dir, TaskRegistry& registry) {
  auto vocab = std::make_shared<::t5xx::testing::FakeVocabulary>(40, 10);
  auto source = std::make_shared<JsonLinesDataSource>(
      std::map<std::string, std::string>{
          {"train", (dir / "train-*.jsonl").string()}},
      std::vector<std::string>{"text"});
  OutputFeatures features{{"inputs", Feature{vocab, true, true}},
                          {"targets", Feature{vocab, true, true}}};
  std::vector<Preprocessor> pps = {
      RekeyPreprocessor({{"inputs", ""}, {"targets", "text"}}),
      TokenizePreprocessor(),
      SpanCorruptionPreprocessor(3.0, 0.15),
      AppendEosAfterTrimPreprocessor(),
  };
  if (!registry.Has("state_demo"))
    registry.Add(std::make_shared<Task>("state_demo", source, std::move(pps),
                                        features, /*shuffle_buffer_size=*/7));
  EncDecFeatureConverter conv(/*pack=*/true);
  return GetDataset("state_demo", {{"inputs", 24}, {"targets", 12}}, conv,
                    "train", /*shuffle=*/true, /*num_epochs=*/-1, ShardInfo{},
                    /*seed=*/1234, /*batch_size=*/3, registry);
}

json BatchToJson(const Batch& b) {
  return {{"batch_size", b.batch_size}, {"features", b.features},
          {"lengths", b.lengths}};
}

json ReadBatches(BatchIterator& it, int m) {
  json out = json::array();
  for (int i = 0; i < m; ++i) out.push_back(BatchToJson(it.NextBatch()));
  return out;
}

// Rebuilds the pipeline in a forked child, restores `state`, reads m batches
// and returns them (as the child wrote them to a pipe).
json ReadInChild(const fs::path& dir, const std::string& state, int m) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      TaskRegistry registry;
      BatchIterator it = BuildDemo(dir, registry);
      it.RestoreState(json::parse(state));
      out = ReadBatches(it, m).dump();
    } catch (const std::exception& e) {
      out = json{{"child_error", e.what()}}.dump();
    }
    size_t off = 0;
    while (off < out.size()) {
      const ssize_t w = ::write(fds[1], out.data() + off, out.size() - off);
      if (w <= 0) _exit(2);
      off += static_cast<size_t>(w);
    }
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  std::string got;
  char buf[65536];
  ssize_t r;
  while ((r = ::read(fds[0], buf, sizeof(buf))) > 0) got.append(buf, r);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return json::parse(got);
}

TEST(PipelineStateTest, RestoredInNewProcessContinuesIdentically) {
  const fs::path dir = MakeCorpus();
  // 34 examples -> ~a dozen packed rows per epoch -> ~4 batches per epoch, so
  // these points include several epoch boundaries.
  for (int k : {0, 1, 3, 4, 5, 9, 13}) {
    SCOPED_TRACE("K=" + std::to_string(k));
    TaskRegistry registry;
    BatchIterator it = BuildDemo(dir, registry);
    ReadBatches(it, k);
    if (k == 5) {
      ASSERT_TRUE(it.HasNext());  // a read-ahead batch is saved too
    }
    const std::string state = it.SaveState().dump();
    EXPECT_LT(state.size(), 200000u);
    const int m = 8;
    const json child = ReadInChild(dir, state, m);
    ASSERT_FALSE(child.contains("child_error")) << child.dump();
    const json parent = ReadBatches(it, m);
    EXPECT_EQ(child, parent);
  }
  fs::remove_all(dir);
}

std::vector<Example> Numbers(int n) {
  std::vector<Example> v;
  for (int i = 0; i < n; ++i)
    v.push_back({{"x", Tokens{i, i * 2}}, {"s", std::to_string(i)}});
  return v;
}

// Reads k, saves, restores a fresh copy from make(), and compares the rest.
template <typename Make>
void RoundTrip(Make make, int k) {
  SCOPED_TRACE("k=" + std::to_string(k));
  DatasetPtr a = make();
  Collect(*a, k);
  const std::string state = SavePipelineState(*a).dump();
  DatasetPtr b = make();
  RestorePipelineState(*b, json::parse(state));
  const auto rest_a = Collect(*a, 200);
  const auto rest_b = Collect(*b, 200);
  EXPECT_EQ(rest_a, rest_b);
}

TEST(PipelineStateTest, FromVectorRoundTrip) {
  for (int k : {0, 1, 5, 10, 11}) RoundTrip([] { return FromVector(Numbers(10)); }, k);
}

// A position saved with other feature lengths (a resumed run whose
// TASK_FEATURE_LENGTHS changed) is refused, naming both, instead of
// producing batches of the old lengths.
TEST(PipelineStateTest, APositionOfOtherLengthsIsRefused) {
  BatchIterator a(FromVector(Numbers(10)), 2, {{"x", 2}});
  ASSERT_TRUE(a.HasNext());
  const json saved = a.SaveState();
  BatchIterator b(FromVector(Numbers(10)), 2, {{"x", 3}});
  try {
    b.RestoreState(saved);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the saved position is for feature lengths {x=2}, this pipeline has {x=3}"),
              std::string::npos)
        << e.what();
  }
}

TEST(PipelineStateTest, ShuffleRoundTrip) {
  for (int k : {0, 1, 4, 17, 29, 30})
    RoundTrip([] { return Shuffle(FromVector(Numbers(30)), 8, 99); }, k);
}

TEST(PipelineStateTest, FlatMapRoundTrip) {
  auto make = [] {
    return FlatMap(FromVector(Numbers(10)), [](Example ex) {
      std::vector<Example> out;
      const int n = GetTokens(ex, "x")[0] % 4;
      for (int i = 0; i < n; ++i) out.push_back(ex);
      return out;
    });
  };
  for (int k : {0, 1, 2, 5, 7, 14}) RoundTrip(make, k);
}

TEST(PipelineStateTest, RepeatRoundTrip) {
  // Indexed factory: each epoch shuffled differently.
  auto make = [] {
    return RepeatIndexed(
        [](int64_t e) {
          return Shuffle(FromVector(Numbers(5)), 3, static_cast<uint64_t>(e));
        },
        4);
  };
  for (int k : {0, 3, 5, 6, 12, 20}) RoundTrip(make, k);
  // Stateful factory (counts epochs itself): calls are replayed on restore.
  auto make_stateful = [] {
    auto epoch = std::make_shared<int>(0);
    return Repeat(
        [epoch] {
          return Shuffle(FromVector(Numbers(5)), 3,
                         static_cast<uint64_t>((*epoch)++));
        },
        -1);
  };
  for (int k : {0, 3, 5, 6, 12}) RoundTrip(make_stateful, k);
}

TEST(PipelineStateTest, LineReaderRoundTrip) {
  const fs::path dir = MakeCorpus();
  FileReadPlan plan;
  plan.files = {(dir / "train-1.jsonl").string(), (dir / "train-0.jsonl").string()};
  plan.example_stride = 2;
  plan.example_offset = 1;
  auto make = [&] {
    return ReadLinesDataset(
        plan, [](const std::string& path, int64_t line_number,
                 const std::string& line) -> std::optional<Example> {
          if (line.empty()) return std::nullopt;
          return ParseJsonLine(path, line_number, line, {"text", "id"});
        });
  };
  for (int k : {0, 1, 5, 8, 9, 16, 17}) RoundTrip(make, k);
  fs::remove_all(dir);
}

TEST(PipelineStateTest, TFRecordReaderRoundTrip) {
  const fs::path dir = fs::temp_directory_path() /
                       ("t5xx_state_tfr_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int f = 0; f < 3; ++f) {
    std::vector<std::string> recs;
    for (int i = 0; i < 4 + f; ++i)
      recs.push_back(SerializeTFExample(
          {{"t", Tokens{f, i}}, {"s", std::string("r") + std::to_string(i)}}));
    WriteTFRecordFile((dir / ("d.tfrecord-" + std::to_string(f))).string(), recs,
                      /*gzip=*/f == 1);
  }
  TFExampleDataSource source({{"train", (dir / "d.tfrecord-*").string()}});
  auto make = [&] { return source.GetDataset("train", true, 5, ShardInfo{}); };
  for (int k : {0, 1, 4, 6, 10, 15}) RoundTrip(make, k);
  fs::remove_all(dir);
}

// Tokenized source for the mixture test: example i = {"targets": [id, i+3]}.
class TokenSource : public DataSource {
 public:
  TokenSource(int32_t id, int n) : id_(id), n_(n) {}
  std::vector<std::string> splits() const override { return {"train"}; }
  DatasetPtr GetDataset(const std::string&, bool, uint64_t,
                        const ShardInfo&) const override {
    std::vector<Example> v;
    for (int i = 0; i < n_; ++i) v.push_back({{"targets", Tokens{id_, i + 3}}});
    return FromVector(std::move(v));
  }

 private:
  int32_t id_;
  int n_;
};

TEST(PipelineStateTest, MixtureRoundTrip) {
  auto vocab = std::make_shared<::t5xx::testing::FakeVocabulary>(100, 0);
  OutputFeatures of = {{"targets", {vocab, true, true}}};
  TaskRegistry tasks;
  MixtureRegistry mixtures;
  tasks.Add(std::make_shared<Task>("short", std::make_shared<TokenSource>(10, 3),
                                   std::vector<Preprocessor>{}, of, 4));
  tasks.Add(std::make_shared<Task>("long", std::make_shared<TokenSource>(11, 9),
                                   std::vector<Preprocessor>{}, of, 4));
  Mixture mix("mix", {{"short", 1.0}, {"long", 1.0}}, std::nullopt, tasks,
              mixtures);
  // Finite epochs and stop_on_empty=false: a run-dry task is dropped, which
  // the state must remember.
  auto make = [&] {
    return mix.GetDataset({{"targets", 8}}, "train", true, 7, ShardInfo{},
                          /*num_epochs=*/2, /*stop_on_empty_dataset=*/false);
  };
  for (int k : {0, 1, 5, 9, 15, 23, 24}) RoundTrip(make, k);
}

TEST(PipelineStateTest, TrimAndPackRoundTrip) {
  for (int k : {0, 1, 2, 3})
    RoundTrip([] { return TrimAndPackDataset(FromVector(Numbers(10)), {{"x", 5}}); }, k);
}

TEST(PipelineStateTest, NewerVersionIsRefused) {
  DatasetPtr ds = FromVector(Numbers(3));
  json root = SavePipelineState(*ds);
  EXPECT_EQ(root["version"], 2);
  root["version"] = 3;
  const std::string err = ::t5xx::testing::ErrorOf(
      [&] { RestorePipelineState(*FromVector(Numbers(3)), root); });
  EXPECT_NE(err.find("version 3, newer than"), std::string::npos) << err;
  // Version 1 positions held buffered examples and the old shuffle's draws:
  // refused, naming the setting that starts the data afresh.
  root["version"] = 1;
  EXPECT_EQ(::t5xx::testing::ErrorOf(
                [&] { RestorePipelineState(*FromVector(Numbers(3)), root); }),
            "pipeline state has version 1, written by a t5xx before compact positions "
            "(version 2), whose positions held the buffered examples and a shuffle this build "
            "no longer has: it cannot be continued exactly; set "
            "utils.RestoreCheckpointConfig.restore_dataset = False to start the data from its "
            "beginning");
  json no_version = {{"state", root["state"]}};
  EXPECT_NE(::t5xx::testing::ErrorOf([&] {
              RestorePipelineState(*FromVector(Numbers(3)), no_version);
            }).find("version"),
            std::string::npos);
}

// Issue 17: text that is not UTF-8 (sources pass bytes through) in a
// shuffle window; since version 2 a position holds no examples, so the
// saved text is plain JSON without those bytes, and the restored window
// (read again) continues byte for byte.
TEST(PipelineStateTest, ShuffleWindowOfNonUtf8TextRoundTripsThroughText) {
  auto make = [] {
    std::vector<Example> v;
    for (int i = 0; i < 20; ++i) {
      v.push_back({{"s", std::string("t\xff") + std::to_string(i) + "\xc3"}});
    }
    return Shuffle(FromVector(std::move(v)), 6, 7);
  };
  DatasetPtr a = make();
  Collect(*a, 4);
  const std::string text = DumpJsonKeepingBytes(SavePipelineState(*a));
  EXPECT_EQ(text, R"({"state":{"input":{"pos":0},"skip":4,"window":0},"version":2})");
  json parsed;
  std::string error;
  ASSERT_TRUE(ParseJsonKeepingBytes(text, &parsed, &error)) << error;
  DatasetPtr b = make();
  RestorePipelineState(*b, parsed);
  const auto rest_a = Collect(*a, 200);
  const auto rest_b = Collect(*b, 200);
  ASSERT_EQ(rest_a.size(), 16u);
  EXPECT_EQ(rest_a, rest_b);
}

// Issue 17: pipeline states hold integers only; a float anywhere (which the
// restore code would cast to an integer with undefined behaviour when out of
// range) is refused up front, naming where it is.
TEST(PipelineStateTest, ANonIntegerNumberIsRefusedNamingItsPath) {
  DatasetPtr ds = Shuffle(FromVector(Numbers(10)), 4, 3);
  Collect(*ds, 2);
  json root = SavePipelineState(*ds);
  ASSERT_TRUE(root["state"].contains("window")) << root.dump();
  root["state"]["window"] = 1e300;
  EXPECT_EQ(::t5xx::testing::ErrorOf(
                [&] { RestorePipelineState(*Shuffle(FromVector(Numbers(10)), 4, 3), root); }),
            "pipeline state: a non-integer number, 1e+300, at /window; t5xx writes only "
            "integers there, so the state is damaged");
  root["state"]["window"] = 1;
  root["version"] = json::parse("18446744073709551615");
  EXPECT_EQ(::t5xx::testing::ErrorOf(
                [&] { RestorePipelineState(*Shuffle(FromVector(Numbers(10)), 4, 3), root); }),
            "pipeline state: \"version\" 18446744073709551615 is out of range");
}

// The stored form: chains through "input" become lists of stages (a few
// levels deep for any number of preprocessors), branches keep their own
// chains, an "input" that is not an object ends a chain; the inverse gives
// the nested state back and leaves a nested state as it is.
TEST(PipelineStateTest, FlattenStateListsEachChain) {
  const json nested = json::parse(R"({"version": 2, "state": {"a": 1, "input": {"input": {
      "draws": 3, "inputs": [{"b": 2, "input": {"pos": 4}}, null],
      "input": {"epoch": 0, "input": null}}}}})");
  const json flat = FlattenState(nested);
  EXPECT_EQ(flat, json::parse(R"({"version": 2, "state": {"stages": [{"a": 1}, {},
      {"draws": 3, "inputs": [{"stages": [{"b": 2}, {"pos": 4}]}, null]},
      {"epoch": 0, "input": null}]}})"));
  EXPECT_EQ(UnflattenState(flat), nested);
  EXPECT_EQ(UnflattenState(nested), nested);
  // 200 nested stages: 4 levels deep stored.
  json deep = {{"pos", 1}};
  for (int i = 0; i < 200; ++i) deep = json{{"index", i}, {"input", deep}};
  const json stored = FlattenState(json{{"version", 2}, {"state", deep}});
  EXPECT_EQ(stored["state"]["stages"].size(), 201u);
  EXPECT_EQ(UnflattenState(stored)["state"], deep);
  EXPECT_EQ(::t5xx::testing::ErrorOf([] { UnflattenState(json::parse(R"({"stages": [1]})")); }),
            "pipeline state: stage 0 of \"stages\" is 1, not an object");
  EXPECT_EQ(::t5xx::testing::ErrorOf([] { UnflattenState(json::parse(R"({"stages": []})")); }),
            "pipeline state: \"stages\" must be a non-empty array of stage objects");
}

TEST(PipelineStateTest, StageWithoutStateSaysSo) {
  struct Opaque : Dataset {
    std::optional<Example> Next() override { return std::nullopt; }
  };
  Opaque o;
  EXPECT_NE(::t5xx::testing::ErrorOf([&] { (void)o.SaveState(); })
                .find("cannot save its position"),
            std::string::npos);
}

}  // namespace
}  // namespace t5xx::seqio
