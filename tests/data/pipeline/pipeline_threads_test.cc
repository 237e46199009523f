// The thread count never changes a pipeline: tokenize
// (preprocessors.h), span corruption's denoise step (span_corruption.h) and
// ParallelMap (dataset.h) give the same examples and interchangeable saved
// positions for every count; and BatchIterator::SaveStateBefore
// (batching.h), the consumer's position of a stream read ahead.
//
// Expected values: the same pipeline on one thread (ByteVocabulary's UTF-8
// bytes + 3 are checked by hand for one example), and hand-written states.
#include <gtest/gtest.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "test_util.h"

#include "t5xx/data/pipeline/batching.h"
#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;

struct DataThreadsGuard {
  ~DataThreadsGuard() { SetDataThreads(0); }
};

// 700 short texts, "doc <i> " repeated 1 + i % 7 times.
std::vector<Example> Texts() {
  std::vector<Example> out;
  for (int i = 0; i < 700; ++i) {
    std::string t;
    for (int r = 0; r <= i % 7; ++r) t += "doc " + std::to_string(i) + " ";
    out.push_back(Example{{"targets", t}});
  }
  return out;
}

OutputFeatures ByteFeatures() {
  auto vocab = std::make_shared<ByteVocabulary>(/*extra_ids=*/100);
  return {{"inputs", Feature{vocab, true, true}}, {"targets", Feature{vocab, true, true}}};
}

// Collects k examples, saves, restores into make(threads_after), and
// returns head + restored rest.
std::vector<Example> SaveAndRestoreAcross(const std::function<DatasetPtr(int)>& make,
                                          int threads_before, int threads_after, size_t k) {
  auto ds = make(threads_before);
  auto out = Collect(*ds, k);
  const std::string saved = SavePipelineState(*ds).dump();
  auto fresh = make(threads_after);
  RestorePipelineState(*fresh, json::parse(saved));
  auto rest = Collect(*fresh);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

TEST(PipelineThreadsTest, TokenizeIsTheSameOnEveryThreadCount) {
  DataThreadsGuard guard;
  const OutputFeatures features = ByteFeatures();
  auto make = [&](int threads) { return Tokenize(FromVector(Texts()), features, true, false, threads); };
  auto one = make(1);
  const auto want = Collect(*one);
  ASSERT_EQ(want.size(), 700u);
  // By hand: "doc 0 " is bytes 100 111 99 32 48 32, each + 3.
  EXPECT_EQ(GetTokens(want[0], "targets"), (Tokens{103, 114, 102, 35, 51, 35}));
  EXPECT_EQ(std::get<std::string>(want[0].at("targets_pretokenized")), "doc 0 ");
  for (int threads : {2, 3, 8}) {
    auto ds = make(threads);
    EXPECT_EQ(Collect(*ds), want) << threads << " threads";
  }
  // 0 = the process-wide setting, read when the dataset is built.
  for (int setting : {1, 4}) {
    SetDataThreads(setting);
    auto ds = TokenizePreprocessor()(FromVector(Texts()), PreprocessContext{{}, features, 0});
    EXPECT_EQ(Collect(*ds), want) << "DataThreads " << setting;
  }
  // Positions saved on one count restore on another.
  for (auto [before, after] : {std::pair{1, 4}, std::pair{4, 1}, std::pair{3, 2}}) {
    for (size_t k : {0, 5, 64, 190, 700}) {
      EXPECT_EQ(SaveAndRestoreAcross(make, before, after, k), want)
          << before << " -> " << after << " threads, k=" << k;
    }
  }
}

TEST(PipelineThreadsTest, ParallelMapRestoresTheLayoutsOfMapAndMapIndexed) {
  auto square = [](Example ex) {
    const int32_t v = GetTokens(ex, "x")[0];
    ex["x"] = Tokens{v * v};
    return ex;
  };
  std::vector<Example> input;
  for (int32_t i = 0; i < 10; ++i) input.push_back(Example{{"x", Tokens{i}}});
  // Map's layout ({"input"}) as tokenize saved it before it was parallel.
  auto ds = ParallelMap(FromVector(input), square, 2);
  ds->RestoreState(json{{"input", {{"pos", 6}}}});
  auto rest = Collect(*ds);
  ASSERT_EQ(rest.size(), 4u);
  EXPECT_EQ(GetTokens(rest[0], "x"), Tokens{36});
  EXPECT_EQ(GetTokens(rest[3], "x"), Tokens{81});
  // MapIndexed's layout ({"index", "input"}): the index carries on.
  auto indexed = ParallelMapIndexed(
      FromVector(input),
      [](Example ex, uint64_t i) {
        ex["i"] = Tokens{static_cast<int32_t>(i)};
        return ex;
      },
      3);
  indexed->RestoreState(json{{"index", 8}, {"input", {{"pos", 8}}}});
  auto tail = Collect(*indexed);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(GetTokens(tail[0], "i"), Tokens{8});
  EXPECT_EQ(GetTokens(tail[1], "x"), Tokens{9});
}

// Yields {"x": [i]} for i in [0, n); throws t5xx::Error("input fails at
// <i>") once at i == throw_at (the next call yields i).
class FailingOnce : public Dataset {
 public:
  FailingOnce(int32_t n, int32_t throw_at) : n_(n), throw_at_(throw_at) {}
  std::optional<Example> Next() override {
    if (pos_ >= n_) return std::nullopt;
    if (pos_ == throw_at_ && !thrown_) {
      thrown_ = true;
      throw Error("input fails at " + std::to_string(pos_));
    }
    return Example{{"x", Tokens{pos_++}}};
  }

 private:
  int32_t n_, throw_at_, pos_ = 0;
  bool thrown_ = false;
};

// Reads ds to its end; an error is recorded as -1 and reading goes on.
std::vector<int32_t> ReadThroughErrors(Dataset& ds) {
  std::vector<int32_t> out;
  while (true) {
    try {
      auto ex = ds.Next();
      if (!ex) return out;
      out.push_back(GetTokens(*ex, "x")[0]);
    } catch (const Error&) {
      out.push_back(-1);
    }
  }
}

TEST(PipelineThreadsTest, ParallelMapRethrowsErrorsInTheirPlaceAsMap) {
  // fn fails on 57 and 130: both are rethrown in place, the examples around
  // them are kept (Map's behaviour); the input fails once before 200.
  auto fn = [](Example ex) {
    const int32_t v = GetTokens(ex, "x")[0];
    if (v == 57 || v == 130) throw Error("fn fails at " + std::to_string(v));
    return ex;
  };
  auto map = Map(std::make_unique<FailingOnce>(300, 200), fn);
  const std::vector<int32_t> want = ReadThroughErrors(*map);
  // 300 slots (2 are fn errors) and the input error: 301.
  ASSERT_EQ(want.size(), 301u);
  EXPECT_EQ(want[57], -1);
  EXPECT_EQ(want[58], 58);
  EXPECT_EQ(want[130], -1);
  EXPECT_EQ(want[200], -1);
  EXPECT_EQ(want[201], 200);
  for (int threads : {1, 2, 4}) {
    auto par = ParallelMap(std::make_unique<FailingOnce>(300, 200), fn, threads);
    EXPECT_EQ(ReadThroughErrors(*par), want) << threads << " threads";
  }
  // The first error's message, after exactly the 57 examples before it.
  auto par = ParallelMap(std::make_unique<FailingOnce>(300, 200), fn, 3);
  EXPECT_EQ(Collect(*par, 57).size(), 57u);
  EXPECT_ERROR_CONTAINS(par->Next(), "fn fails at 57");
}

TEST(PipelineThreadsTest, SpanCorruptionIsTheSameOnEveryThreadCount) {
  DataThreadsGuard guard;
  const OutputFeatures features = ByteFeatures();
  const FeatureLengths lengths{{"inputs", 64}, {"targets", 20}};
  auto make = [&](int threads) {
    DatasetPtr ds = Tokenize(FromVector(Texts()), features, false, false, threads);
    ds = SpanCorruption(std::move(ds), lengths, features, /*seed=*/7, 3.0, 0.15, threads);
    return AppendEosAfterTrim(std::move(ds), features, lengths);
  };
  auto one = make(1);
  const auto want = Collect(*one);
  ASSERT_GT(want.size(), 100u);
  for (int threads : {2, 5}) {
    auto ds = make(threads);
    EXPECT_EQ(Collect(*ds), want) << threads << " threads";
  }
  SetDataThreads(3);
  auto by_setting = make(0);
  EXPECT_EQ(Collect(*by_setting), want) << "num_threads 0 with DataThreads 3";
  for (auto [before, after] : {std::pair{1, 2}, std::pair{5, 1}}) {
    for (size_t k : {0, 1, 70, 200}) {
      EXPECT_EQ(SaveAndRestoreAcross(make, before, after, k), want)
          << before << " -> " << after << " threads, k=" << k;
    }
  }
}

TEST(PipelineThreadsTest, PackingIsTheSameOnEveryThreadCount) {
  // Lengths {a: 8, b: 5}: blocks of 8 examples; example i has 1 + i % 5
  // tokens of a and 1 + i % 3 of b.
  std::vector<Example> input;
  for (int32_t i = 0; i < 203; ++i) {
    input.push_back(Example{{"a", Tokens(static_cast<size_t>(1 + i % 5), i + 1)},
                            {"b", Tokens(static_cast<size_t>(1 + i % 3), -i - 1)}});
  }
  const FeatureLengths lengths{{"a", 8}, {"b", 5}};
  const std::vector<Example> want = TrimAndPack(input, lengths);
  // By hand, the first row: examples 0 (a 1 token, b 1) and 1 (a 2, b 2)
  // fit; example 2 (a 3, b 3) would make b 6 > 5.
  EXPECT_EQ(GetTokens(want[0], "a"), (Tokens{1, 2, 2, 0, 0, 0, 0, 0}));
  EXPECT_EQ(GetTokens(want[0], "b_segment_ids"), (Tokens{1, 2, 2, 0, 0}));
  EXPECT_EQ(GetTokens(want[0], "b_positions"), (Tokens{0, 0, 1, 0, 0}));
  auto make = [&](int threads) { return TrimAndPackDataset(FromVector(input), lengths, threads); };
  for (int threads : {1, 2, 3, 8}) {
    auto ds = make(threads);
    EXPECT_EQ(Collect(*ds), want) << threads << " threads";
  }
  for (auto [before, after] : {std::pair{1, 3}, std::pair{3, 2}, std::pair{2, 1}}) {
    for (size_t k : {size_t{0}, size_t{1}, size_t{10}, size_t{57}, want.size()}) {
      EXPECT_EQ(SaveAndRestoreAcross(make, before, after, k), want)
          << before << " -> " << after << " threads, k=" << k;
    }
  }
  // A string feature in block 3 (example 20): the rows of blocks 0..1 come
  // first, then the error, for every count.
  std::vector<Example> bad = input;
  bad[20]["a"] = std::string("text");
  const size_t rows_before = TrimAndPack(std::vector<Example>(input.begin(), input.begin() + 16),
                                         lengths).size();
  for (int threads : {1, 2, 4}) {
    auto ds = TrimAndPackDataset(FromVector(bad), lengths, threads);
    EXPECT_EQ(Collect(*ds, rows_before).size(), rows_before);
    EXPECT_ERROR_CONTAINS(ds->Next(), "trim_and_pack: feature 'a' is a string");
  }
}

std::vector<Example> Rows(int n) {
  std::vector<Example> out;
  for (int32_t i = 0; i < n; ++i) out.push_back(Example{{"a", Tokens{i, -i}}});
  return out;
}

TEST(BatchIteratorStateTest, SaveStateBeforePutsReturnedBatchesBack) {
  BatchIterator it(FromVector(Rows(20)), 3);
  std::vector<Batch> got;
  for (int i = 0; i < 4; ++i) got.push_back(*it.Next());
  // As if the last two batches (rows 6..11) had not been returned yet.
  const json saved = json::parse(it.SaveStateBefore({&got[2], &got[3]}).dump());
  // Version 2 holds no batches: the input's position before batch 2 (its
  // row 6, as FromVector counts them).
  EXPECT_EQ(saved, json::parse(R"({"version": 2, "state": {"examples_read": 6, "done": false,
                                  "lengths": {"a": 2}, "input": {"pos": 6}}})"));
  BatchIterator fresh(FromVector(Rows(20)), 3);
  fresh.RestoreState(saved);
  std::vector<std::vector<int32_t>> firsts;
  while (auto b = fresh.Next()) firsts.push_back(b->Row("a", 0));
  // Batches start at rows 6, 9, 12, 15; 18..19 is a dropped remainder.
  EXPECT_EQ(firsts, (std::vector<std::vector<int32_t>>{{6, -6}, {9, -9}, {12, -12}, {15, -15}}));
  // HasNext's read-ahead batch is kept behind the returned ones.
  BatchIterator peeked(FromVector(Rows(20)), 3);
  const Batch b0 = *peeked.Next();
  ASSERT_TRUE(peeked.HasNext());
  const json both = peeked.SaveStateBefore({&b0});
  BatchIterator again(FromVector(Rows(20)), 3);
  again.RestoreState(both);
  EXPECT_EQ(again.Next()->Row("a", 2), (std::vector<int32_t>{2, -2}));
  EXPECT_EQ(again.Next()->Row("a", 0), (std::vector<int32_t>{3, -3}));
  EXPECT_EQ(again.Next()->Row("a", 0), (std::vector<int32_t>{6, -6}));
}

TEST(BatchIteratorStateTest, RefusesWhatItCannotContinue) {
  BatchIterator it(FromVector(Rows(40)), 2);
  std::vector<Batch> got;
  for (int i = 0; i < 18; ++i) got.push_back(*it.Next());
  // It keeps the starts of the last 16 batches formed.
  std::vector<const Batch*> returned;
  for (int i = 1; i < 18; ++i) returned.push_back(&got[i]);
  EXPECT_ERROR_CONTAINS((void)it.SaveStateBefore(returned),
                        "BatchIterator: cannot save the position 17 batches back; it keeps the "
                        "starts of the last 16");
  returned.erase(returned.begin());
  const json saved = it.SaveStateBefore(returned);
  EXPECT_EQ(saved["state"]["input"], json::parse(R"({"pos": 4})"));
  BatchIterator wrong(FromVector(Rows(40)), 2, {{"a", 3}});
  EXPECT_ERROR_CONTAINS(wrong.RestoreState(saved),
                        "BatchIterator: the saved position is for feature lengths {a=2}, this "
                        "pipeline has {a=3}");
}

// A position read back from a file is untrusted: a "skip" larger than a
// stage's unit could hold is refused (over data repeated forever it would
// never end), and one past the data's end is named.
TEST(BatchIteratorStateTest, RefusesASkipNoUnitHolds) {
  auto make = [] { return Shuffle(FromVector(Rows(10)), 4, 1); };
  DatasetPtr a = make();
  Collect(*a, 2);
  json saved = SavePipelineState(*a);
  ASSERT_EQ(saved["state"]["skip"], 2);
  saved["state"]["skip"] = 5;
  EXPECT_ERROR_CONTAINS(RestorePipelineState(*make(), saved),
                        "Shuffle: saved position is example 5 of a window of buffer_size 4");
  saved["state"]["skip"] = 2;
  saved["state"]["window"] = -5;  // read as a huge unsigned number, it was taken
  EXPECT_ERROR_CONTAINS(RestorePipelineState(*make(), saved),
                        "Shuffle: saved field 'window' is -5, not a count (an integer in "
                        "[0, 2^63)); the state is damaged");
  auto pack = [] { return TrimAndPackDataset(FromVector(Rows(10)), {{"a", 2}}, 1); };
  DatasetPtr p = pack();
  Collect(*p, 2);  // block 0 (rows 0 and 1: a row, as row 0 is all padding), row 2
  json packed = SavePipelineState(*p);
  ASSERT_EQ(packed, json::parse(R"({"version": 2, "state": {"input": {"pos": 2}, "skip": 1}})"));
  packed["state"]["skip"] = 1000000;
  EXPECT_ERROR_CONTAINS(RestorePipelineState(*pack(), packed),
                        "trim_and_pack: the saved position skips 1000000 outputs, more than the "
                        "2 of one unit (the state is damaged)");
  packed["state"]["input"]["pos"] = 9;  // one example left: one row, not 2
  packed["state"]["skip"] = 2;
  EXPECT_ERROR_CONTAINS(RestorePipelineState(*pack(), packed),
                        "trim_and_pack: the saved position is 2 outputs past its start but the "
                        "data ends after 1 (did the data or the configuration change?)");
}

}  // namespace
}  // namespace t5xx::seqio
