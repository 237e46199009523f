// Throughput of `t5xx cache_tasks` (data/cache_tasks/cache_tasks.h): map (read a source
// shard, encode, bucket), reduce (sort and write each output shard) and
// finalize, on 1 and 2 threads.
//
//   build/bin/t5xx_cache_tasks_bench
//
// Input: a synthetic tokenized corpus written once to a temp dir: 8 TFRecord
// source shards of 2,000 tf.Examples {"targets": 256 token ids} (4.1M
// tokens), read by a task whose CacheDatasetPlaceholder follows
// append_eos; min_shards 16. Each iteration caches the task into a fresh
// directory. Reports examples/s and tokens/s (tokens of the source examples
// cached per second; EOS not counted).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <string>

#include "t5xx/data/cache_tasks/cache_tasks.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/data/vocabularies/passthrough_vocabulary.h"

namespace {

using namespace t5xx::seqio;
namespace fs = std::filesystem;

constexpr int kShards = 8, kExamplesPerShard = 2000, kTokens = 256;

// The corpus directory, written on first use (removed at exit).
const std::string& Corpus() {
  static const std::string dir = [] {
    const std::string d = (fs::temp_directory_path() / "t5xx_cache_tasks_bench_src").string();
    fs::remove_all(d);
    fs::create_directories(d);
    std::mt19937 rng(0);
    std::uniform_int_distribution<int32_t> tok(3, 31999);
    for (int s = 0; s < kShards; ++s) {
      std::vector<std::string> records;
      for (int e = 0; e < kExamplesPerShard; ++e) {
        Tokens t(kTokens);
        for (auto& x : t) x = tok(rng);
        records.push_back(SerializeTFExample({{"targets", t}}));
      }
      WriteTFRecordFile(d + "/train.tfrecord-" + std::to_string(s), records);
    }
    std::atexit([] { fs::remove_all(fs::temp_directory_path() / "t5xx_cache_tasks_bench_src"); });
    return d;
  }();
  return dir;
}

void BM_CacheTasks(benchmark::State& state) {
  TaskRegistry registry;
  auto vocab = std::make_shared<PassThroughVocabulary>(32000, /*eos_id=*/1);
  registry.Add(std::make_shared<Task>(
      "bench_cache",
      std::make_shared<TFExampleDataSource>(
          std::map<std::string, std::string>{{"train", Corpus() + "/train.tfrecord-*"}}),
      std::vector<Preprocessor>{AppendEosPreprocessor()},
      OutputFeatures{{"targets", {vocab, true, true}}}, 1000, nullptr, std::vector<MetricFn>{},
      std::vector<std::string>{}, CacheStep{1, false}));
  const std::string out = (fs::temp_directory_path() / "t5xx_cache_tasks_bench_out").string();
  CacheTasksOptions options;
  options.output_cache_dir = out;
  options.min_shards = 16;
  options.num_threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    fs::remove_all(out);
    const CacheTasksReport report = CacheTasks(options, registry);
    if (report.splits.empty() || report.splits[0].total_examples != kShards * kExamplesPerShard) {
      state.SkipWithError("cache_tasks did not cache every example");
      break;
    }
  }
  fs::remove_all(out);
  state.counters["examples_per_s"] = benchmark::Counter(
      static_cast<double>(kShards) * kExamplesPerShard, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(kShards) * kExamplesPerShard * kTokens,
      benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CacheTasks)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
