// Throughput of the pretraining data path on 1 and 2 data threads
// (seqio::SetDataThreads, data_threads.h; the Arg is the thread count).
//
//   build/bin/t5xx_data_bench
//
// BM_SpanCorruptionAndPacking/threads:N: 2,000 already-tokenized documents
// of 500 tokens (1M tokens), repeated, through what t5's
// c4_v220_span_corruption does after tokenization: span corruption
// (select_random_chunk, reduce_concat_tokens, split_tokens, noise masks,
// sentinels), append_eos_after_trim and EncDecFeatureConverter packing into
// {inputs: 512, targets: 114} rows, batched by 128.
// BM_TokenizeSpanCorruptionAndPacking/threads:N: the same from text:
// seqio.preprocessors.tokenize with a SentencePiece model first. The text
// and the model are the demo corpus's (<data_dir>/c4_demo, `t5xx
// build_corpus`; data_dir as t5xx: $T5XX_DATA_DIR, else ~/.cache/t5xx):
// its first 4,000 training documents; without the corpus, 4,000 synthetic
// documents and a model trained on them at start-up (vocabulary 2,000).
// The pipeline is built once and read as a training run reads it (its
// threads and buffers are warm); an iteration takes one pass's worth of
// packed rows. input_tokens_per_s: the source documents' tokens those rows
// hold (one pass's tokens per row), per second of wall clock.
// Targets (issue 4: >= 1M tokens/s per core; issue 15: a gain on 2 threads).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/vocabularies/sentencepiece_module.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/demo_tasks.h"

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

// The pipeline over `docs` ("targets": tokens, or text when `tokenize`)
// repeated forever: span corruption, EOS, packing, batches of 128 rows.
BatchIterator Pipeline(const std::vector<Example>& docs,
                                      const OutputFeatures& features, bool tokenize) {
  const FeatureLengths lengths{{"inputs", 512}, {"targets", 114}};
  EncDecFeatureConverter converter(/*pack=*/true);
  DatasetPtr ds = RepeatIndexed([&docs](int64_t) { return FromVector(docs); }, -1);
  if (tokenize) ds = Tokenize(std::move(ds), features, /*copy_pretokenized=*/false);
  // num_threads 0: the process-wide DataThreads() the benchmark sets.
  ds = SpanCorruption(std::move(ds), lengths, features, /*seed=*/0,
                      /*mean_noise_span_length=*/3.0, /*noise_density=*/0.15);
  ds = AppendEosAfterTrim(std::move(ds), features, lengths);
  return BatchIterator(converter(std::move(ds), lengths, "bench"), 128,
                       converter.GetModelFeatureLengths(lengths));
}

// Packed rows one pass over `docs` makes (the pipeline on one thread).
int64_t RowsPerEpoch(const std::vector<Example>& docs, const OutputFeatures& features,
                     bool tokenize) {
  SetDataThreads(1);
  const FeatureLengths lengths{{"inputs", 512}, {"targets", 114}};
  EncDecFeatureConverter converter(/*pack=*/true);
  DatasetPtr ds = FromVector(docs);
  if (tokenize) ds = Tokenize(std::move(ds), features, false);
  ds = SpanCorruption(std::move(ds), lengths, features, 0, 3.0, 0.15);
  ds = converter(AppendEosAfterTrim(std::move(ds), features, lengths), lengths, "bench");
  int64_t rows = 0;
  while (ds->Next()) ++rows;
  SetDataThreads(0);
  return rows;
}

// Times batches of a long-lived pipeline (as a training run reads it): each
// iteration takes one epoch's worth of packed rows, and input tokens/s is
// that epoch's source tokens over the time.
void RunBench(benchmark::State& state, const std::vector<Example>& docs,
              const OutputFeatures& features, bool tokenize, int64_t epoch_tokens) {
  const int64_t rows_per_epoch = RowsPerEpoch(docs, features, tokenize);
  const int64_t batches = std::max<int64_t>(1, rows_per_epoch / 128);
  SetDataThreads(static_cast<int>(state.range(0)));
  {
    BatchIterator it = Pipeline(docs, features, tokenize);
    for (int64_t i = 0; i < batches; ++i) it.Next();  // warm-up: threads, buffers
    for (auto _ : state) {
      for (int64_t i = 0; i < batches; ++i) benchmark::DoNotOptimize(it.Next());
    }
  }
  SetDataThreads(0);
  // The tokens of the rows read, at the epoch's tokens per row.
  const double tokens = static_cast<double>(epoch_tokens) * static_cast<double>(batches * 128) /
                        static_cast<double>(rows_per_epoch);
  state.counters["input_tokens_per_s"] =
      benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rows_per_iteration"] = static_cast<double>(batches * 128);
}

void BM_SpanCorruptionAndPacking(benchmark::State& state) {
  const int num_docs = 2000, doc_len = 500;
  static const std::vector<Example> docs = Documents(num_docs, doc_len);
  auto vocab = std::make_shared<BenchVocabulary>();
  const OutputFeatures features{{"inputs", {vocab, true, true}}, {"targets", {vocab, true, true}}};
  RunBench(state, docs, features, /*tokenize=*/false, int64_t{num_docs} * doc_len);
}
BENCHMARK(BM_SpanCorruptionAndPacking)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The text documents and SentencePiece vocabulary of the tokenizing bench.
struct TextCorpus {
  std::vector<Example> docs;  // {"targets": text}
  VocabularyPtr vocab;
  int64_t tokens = 0;  // of all docs
  std::string origin;
};

const TextCorpus& Corpus() {
  static const TextCorpus corpus = [] {
    const int kDocs = 4000;
    TextCorpus c;
    TaskRegistry registry;
    const std::string data_dir = DefaultDataDir();
    if (!RegisterDemoTasks(data_dir, registry)) {
      TaskPtr task = registry.Get(kDemoTaskName);
      DatasetPtr src = task->source()->GetDataset("train", false, 0, ShardInfo{});
      for (const Example& ex : Collect(*src, kDocs)) {
        c.docs.push_back(Example{{"targets", std::get<std::string>(ex.at("text"))}});
      }
      c.vocab = task->output_features().at("targets").vocabulary;
      c.origin = "demo corpus " + DemoCorpusDir(data_dir);
    } else {
      // Synthetic text: words of 2-9 letters drawn Zipf-like from a list.
      std::mt19937 rng(1);
      std::vector<std::string> words;
      for (int w = 0; w < 5000; ++w) {
        std::string s;
        const int len = 2 + static_cast<int>(rng() % 8);
        for (int i = 0; i < len; ++i) s += static_cast<char>('a' + rng() % 26);
        words.push_back(s);
      }
      std::vector<std::string> sentences;
      for (int d = 0; d < kDocs; ++d) {
        std::string text;
        const int n = 100 + static_cast<int>(rng() % 400);
        for (int i = 0; i < n; ++i) {
          const double u = std::uniform_real_distribution<double>(0, 1)(rng);
          text += words[static_cast<size_t>(std::pow(u, 3) * words.size())];
          text += (i % 12 == 11) ? ". " : " ";
        }
        sentences.push_back(text);
        c.docs.push_back(Example{{"targets", text}});
      }
      const std::string model = spm::Train(
          {{"vocab_size", "2000"}, {"model_type", "unigram"}, {"pad_id", "0"}, {"eos_id", "1"},
           {"unk_id", "2"}, {"bos_id", "-1"}},
          sentences, /*seed=*/0, /*quiet=*/true);
      const std::string file =
          (std::filesystem::temp_directory_path() / "t5xx_data_bench.model").string();
      std::ofstream(file, std::ios::binary) << model;
      c.vocab = std::make_shared<SentencePieceVocabulary>(file, 100);
      std::remove(file.c_str());
      c.origin = "synthetic text, SentencePiece model trained at start-up";
    }
    for (const Example& d : c.docs) {
      c.tokens += static_cast<int64_t>(c.vocab->Encode(std::get<std::string>(d.at("targets"))).size());
    }
    return c;
  }();
  return corpus;
}

void BM_TokenizeSpanCorruptionAndPacking(benchmark::State& state) {
  const TextCorpus& corpus = Corpus();
  const OutputFeatures features{{"inputs", {corpus.vocab, true, true}},
                                {"targets", {corpus.vocab, true, true}}};
  RunBench(state, corpus.docs, features, /*tokenize=*/true, corpus.tokens);
  state.SetLabel(corpus.origin + ", " + std::to_string(corpus.docs.size()) + " docs, " +
                 std::to_string(corpus.tokens) + " tokens");
}
BENCHMARK(BM_TokenizeSpanCorruptionAndPacking)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
