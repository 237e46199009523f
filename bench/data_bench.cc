// Throughput of the pretraining data path: span corruption + EOS + packing.
//
//   build/bin/t5xx_data_bench
//
// Input: 2,000 already-tokenized documents of 500 tokens (1M tokens) per
// iteration, so the figure isolates span corruption (select_random_chunk,
// reduce_concat_tokens, split_tokens, noise masks, sentinels),
// append_eos_after_trim and EncDecFeatureConverter packing into
// {inputs: 512, targets: 114} rows, batched by 128 — what t5's
// c4_v220_span_corruption does after tokenization. Reports input tokens/s
// (tokens of the source documents consumed per second) with span
// corruption's per-example denoise step on state.range(0) threads (Arg 1, 2).
// Target (issue 4): >= 1M tokens/s per core.
#include <benchmark/benchmark.h>

#include <random>

#include "t5xx/data/feature_converters.h"
#include "t5xx/data/preprocessors.h"
#include "t5xx/data/span_corruption.h"

namespace {

using namespace t5xx::seqio;

class BenchVocabulary : public Vocabulary {
 public:
  int32_t eos_id() const override { return 1; }
  int32_t unk_id() const override { return 2; }
  int32_t vocab_size() const override { return 32100; }
  int32_t base_vocab_size() const override { return 32000; }
  int32_t extra_ids() const override { return 100; }
  std::vector<int32_t> Encode(const std::string&) const override { return {}; }
  std::string Decode(const std::vector<int32_t>&) const override { return ""; }
};

std::vector<Example> Documents(int num_docs, int doc_len) {
  std::mt19937 rng(0);
  std::uniform_int_distribution<int32_t> tok(3, 31999);
  std::vector<Example> docs(num_docs);
  for (auto& d : docs) {
    Tokens t(doc_len);
    for (auto& x : t) x = tok(rng);
    d["targets"] = std::move(t);
  }
  return docs;
}

void BM_SpanCorruptionAndPacking(benchmark::State& state) {
  const int num_docs = 2000, doc_len = 500;
  const std::vector<Example> docs = Documents(num_docs, doc_len);
  auto vocab = std::make_shared<BenchVocabulary>();
  const OutputFeatures features{{"inputs", {vocab, true, true}}, {"targets", {vocab, true, true}}};
  const FeatureLengths lengths{{"inputs", 512}, {"targets", 114}};
  EncDecFeatureConverter converter(/*pack=*/true);
  const int num_threads = static_cast<int>(state.range(0));
  int64_t rows = 0;
  for (auto _ : state) {
    DatasetPtr ds = SpanCorruption(FromVector(docs), lengths, features, /*seed=*/0,
                                  /*mean_noise_span_length=*/3.0,
                                  /*noise_density=*/0.15, num_threads);
    ds = AppendEosAfterTrim(std::move(ds), features, lengths);
    BatchIterator batches(converter(std::move(ds), lengths, "bench"), 128,
                          converter.GetModelFeatureLengths(lengths));
    while (auto b = batches.Next()) rows += b->batch_size;
  }
  state.counters["input_tokens_per_s"] = benchmark::Counter(
      static_cast<double>(num_docs) * doc_len, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["packed_rows"] = static_cast<double>(rows) / state.iterations();
}
BENCHMARK(BM_SpanCorruptionAndPacking)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
