// BatchStream's producer thread (run/datasets.h): the stream is the same
// with and without it, the saved position is the consumer's (a restored
// stream continues with exactly the batch the original would have read
// next, also when the queue was full), pipeline errors reach the consumer
// with their message, and destroying a stream whose producer waits on a
// full queue returns.
//
// Expected values: hand-built rows (batch b of feature "x" holds the
// integers 2b, 2b + 1) and the same stream read without the thread.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/sources/function_source.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/run/datasets.h"
#include "test_util.h"

namespace t5xx::run {
namespace {

using json = nlohmann::json;
using seqio::Example;

// Rows {"x": [i, -i], "decoder_loss_weights": [1, 0]} for i in [0, n)
// (n < 0: forever); counts Next() calls; throws t5xx::Error at throw_at.
class Rows : public seqio::Dataset {
 public:
  Rows(int64_t n, std::atomic<int64_t>* reads = nullptr, int64_t throw_at = -1)
      : n_(n), reads_(reads), throw_at_(throw_at) {}
  std::optional<Example> Next() override {
    if (reads_) ++*reads_;
    if (n_ >= 0 && pos_ >= n_) return std::nullopt;
    if (pos_ == throw_at_) throw Error("row " + std::to_string(pos_) + " is bad");
    const int32_t i = static_cast<int32_t>(pos_++);
    return Example{{"x", seqio::Tokens{i, -i}}, {"decoder_loss_weights", seqio::Tokens{1, 0}}};
  }
  json SaveState() const override { return {{"pos", pos_}}; }
  void RestoreState(const json& s) override { pos_ = s.at("pos").get<int64_t>(); }

 private:
  int64_t n_;
  std::atomic<int64_t>* reads_;
  int64_t throw_at_;
  int64_t pos_ = 0;
};

std::shared_ptr<BatchStream> Stream(int64_t n, size_t read_ahead,
                                    std::atomic<int64_t>* reads = nullptr,
                                    int64_t throw_at = -1) {
  auto it = std::make_shared<seqio::BatchIterator>(std::make_unique<Rows>(n, reads, throw_at), 2);
  return std::make_shared<BatchStream>(it, "the test rows", nullptr, read_ahead);
}

// Batch b's first column of "x": 2b, 2b + 1.
std::vector<int64_t> FirstColumn(const models::FeatureBatch& b) {
  const at::Tensor x = b.at("x").select(1, 0).contiguous();
  return std::vector<int64_t>(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + x.numel());
}

std::vector<std::vector<int64_t>> Drain(BatchStream& s) {
  std::vector<std::vector<int64_t>> out;
  while (auto b = s.Next()) out.push_back(FirstColumn(*b));
  return out;
}

std::vector<std::vector<int64_t>> Pairs(int64_t from_batch, int64_t to_batch) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = from_batch; b < to_batch; ++b) out.push_back({2 * b, 2 * b + 1});
  return out;
}

TEST(BatchStreamTest, SameBatchesWithAndWithoutTheProducer) {
  for (size_t read_ahead : {0, 1, 2, 5}) {
    auto s = Stream(21, read_ahead);  // 10 batches of 2; row 20 is dropped
    ASSERT_TRUE(s->HasNext());
    auto first = s->Next();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->at("x").scalar_type(), at::kLong);
    EXPECT_EQ(first->at("decoder_loss_weights").scalar_type(), at::kFloat);
    EXPECT_EQ(first->at("x")[1][1].item<int64_t>(), -1);
    auto rest = Drain(*s);
    rest.insert(rest.begin(), FirstColumn(*first));
    EXPECT_EQ(rest, Pairs(0, 10)) << "read_ahead " << read_ahead;
    EXPECT_FALSE(s->HasNext());
    EXPECT_FALSE(s->Next().has_value());
  }
}

TEST(BatchStreamTest, SaveWithAFullQueueRestoresTheConsumersPosition) {
  for (int64_t k : {0, 1, 3, 9}) {
    std::atomic<int64_t> reads{0};
    auto s = Stream(41, /*read_ahead=*/2, &reads);
    for (int64_t i = 0; i < k; ++i) ASSERT_TRUE(s->Next().has_value());
    // The producer fills its queue: two batches (4 rows) past the consumer.
    if (k > 0) ::t5xx::testing::WaitForAtLeast(reads, 2 * k + 4);
    const std::string saved = s->SaveState();
    const json j = json::parse(saved);
    // The consumer's position whatever the producer read, stored flat
    // (seqio::FlattenState): the iterator's counters, then its input's
    // state before batch k (2 rows a batch); no batches.
    ASSERT_TRUE(j["state"]["stages"].is_array()) << saved;
    EXPECT_EQ(j["state"]["stages"].size(), 2u) << saved;
    EXPECT_EQ(j["state"]["stages"][0]["examples_read"], 2 * k) << saved;
    EXPECT_EQ(j["state"]["stages"][1], (json{{"pos", 2 * k}})) << saved;
    const auto rest = Drain(*s);
    EXPECT_EQ(rest, Pairs(k, 20)) << "k=" << k;
    for (size_t read_ahead : {0, 2, 3}) {
      auto fresh = Stream(41, read_ahead);
      fresh->RestoreState(saved, "test.json");
      EXPECT_EQ(Drain(*fresh), rest) << "k=" << k << " restored with read_ahead " << read_ahead;
    }
  }
  // The saved bytes depend only on the position: a stream restored at batch
  // 2 and read to batch 5 saves what one read to 5 in one go does.
  auto a = Stream(41, 2);
  for (int i = 0; i < 5; ++i) a->Next();
  auto b1 = Stream(41, 2);
  for (int i = 0; i < 2; ++i) b1->Next();
  auto b2 = Stream(41, 2);
  b2->RestoreState(b1->SaveState(), "b1.json");
  for (int i = 0; i < 3; ++i) b2->Next();
  EXPECT_EQ(b2->SaveState(), a->SaveState());
  auto used = Stream(10, 2);
  used->Next();
  EXPECT_ERROR_CONTAINS(used->RestoreState(used->SaveState(), "x.json"),
                        "cannot restore the position of the test rows from x.json: the stream "
                        "has been read already");
  // A position from before compact positions: refused, naming the file and
  // the two ways to start the data afresh (not "a newer t5xx").
  EXPECT_EQ(testing::ErrorOf([] {
              Stream(10, 2)->RestoreState(R"({"version": 1, "state": {}})", "old.json");
            }),
            "cannot restore the position of the test rows from old.json: it holds a version 1 "
            "position, written by a t5xx before compact positions (version 2): its shuffle "
            "buffer and queued examples cannot be continued by this build; delete it to start "
            "the data from its beginning (restoring from utils.RestoreCheckpointConfig.path, "
            "restore_dataset = False does the same)");
}

TEST(BatchStreamTest, PipelineErrorsReachTheConsumerWithTheirMessage) {
  for (size_t read_ahead : {0, 2}) {
    auto s = Stream(100, read_ahead, nullptr, /*throw_at=*/13);
    // Batches 0..5 (rows 0..11) are whole; row 13 fails the 7th batch.
    EXPECT_EQ(Drain(*Stream(12, read_ahead)), Pairs(0, 6));
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(s->Next().has_value());
    const std::string message = testing::ErrorOf([&] { s->Next(); });
    EXPECT_EQ(message, "while reading the test rows: row 13 is bad") << read_ahead;
  }
}

TEST(BatchStreamTest, DestroyingAStreamWithABlockedProducerReturns) {
  auto done = std::async(std::launch::async, [] {
    std::atomic<int64_t> reads{0};
    auto s = Stream(-1, 2, &reads);
    s->Next();
    ::t5xx::testing::WaitForAtLeast(reads, 6);  // the queue is full: the producer waits
    s.reset();
    return true;
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(done.get());
}

// The whole path of a train run: a task (tokenize, span corruption,
// append_eos_after_trim) through the model's packing converter, batched and
// converted, with and without the producer.
TEST(BatchStreamTest, GetBatchStreamOfASpanCorruptionTask) {
  const std::string name = "batch_stream_test_span_corruption";
  auto vocab = std::make_shared<seqio::ByteVocabulary>(100);
  const seqio::OutputFeatures features{{"inputs", {vocab, true, true}},
                                       {"targets", {vocab, true, true}}};
  auto source = std::make_shared<seqio::FunctionDataSource>(
      [](const std::string&, bool, uint64_t) {
        std::vector<Example> docs;
        for (int i = 0; i < 400; ++i) {
          docs.push_back(Example{{"text", "document " + std::to_string(i) + " says " +
                                              std::string(static_cast<size_t>(i % 50), 'a' + i % 26)}});
        }
        return seqio::FromVector(std::move(docs));
      });
  seqio::TaskRegistry::Global().Remove(name);
  seqio::TaskRegistry::Global().Add(std::make_shared<seqio::Task>(
      name, source,
      std::vector<seqio::Preprocessor>{seqio::RekeyPreprocessor({{"inputs", ""}, {"targets", "text"}}),
                                       seqio::TokenizePreprocessor(),
                                       seqio::SpanCorruptionPreprocessor(),
                                       seqio::AppendEosAfterTrimPreprocessor()},
      features));
  models::T5Config c;
  c.vocab_size = 384;
  c.emb_dim = 8;
  c.num_heads = 1;
  c.head_dim = 8;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 1;
  c.mlp_dim = 8;
  models::EncoderDecoderModel model(models::Transformer(c), 0.0, 0.0, {});
  DatasetConfig d;
  d.mixture_or_task_name = name;
  d.task_feature_lengths = {{"inputs", 32}, {"targets", 12}};
  d.split = "train";
  d.batch_size = 4;
  d.pack = true;
  auto read = [&](size_t read_ahead, int64_t skip, const std::string& restore,
                  std::string* saved) {
    auto s = GetBatchStream(d, "train", model, /*num_epochs=*/1, /*seed=*/3, {}, read_ahead);
    if (!restore.empty()) s->RestoreState(restore, "state.json");
    std::vector<at::Tensor> out;
    for (int64_t i = 0; i < skip; ++i) s->Next();
    if (saved) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the queue fill
      *saved = s->SaveState();
    }
    while (auto b = s->Next()) {
      out.push_back(at::cat({b->at("encoder_input_tokens"), b->at("decoder_target_tokens"),
                             b->at("encoder_segment_ids"), b->at("decoder_positions")},
                            1));
    }
    return out;
  };
  const auto want = read(0, 0, "", nullptr);
  ASSERT_GT(want.size(), 5u);
  const auto threaded = read(kDefaultReadAhead, 0, "", nullptr);
  ASSERT_EQ(threaded.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(at::equal(threaded[i], want[i])) << i;
  std::string saved;
  const auto after = read(2, 3, "", &saved);
  ASSERT_EQ(after.size(), want.size() - 3);
  const auto restored = read(2, 0, saved, nullptr);
  ASSERT_EQ(restored.size(), after.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_TRUE(at::equal(restored[i], want[i + 3])) << i;
  }
  seqio::TaskRegistry::Global().Remove(name);
}

}  // namespace
}  // namespace t5xx::run
