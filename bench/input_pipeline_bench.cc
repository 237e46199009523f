// Does the input pipeline stall the train step? A small T5 trained on the
// demo span-corruption task, each step fed by
//   synthetic  batches of the same shapes already in memory (the pipeline's
//              first batches, read before timing and cycled),
//   pipeline   run::GetBatchStream with its producer thread (batch N+1 is
//              read, packed and converted while step N runs; the default
//              read-ahead of 2 batches),
//   no_read_ahead  the same stream read by the train loop itself
//              (read_ahead 0), for comparison.
//
//   build/bin/t5xx_input_pipeline_bench
//
// One benchmark iteration runs one step of each, the first kind rotating
// between iterations, so a change in the machine's load affects all three
// alike and none always follows the same one. Reported per step (wall
// clock, milliseconds): synthetic_step_ms, pipeline_step_ms,
// no_read_ahead_step_ms, and pipeline_over_synthetic =
// pipeline_step_ms / synthetic_step_ms (issue 15's target: <= 1.02), and
// data_alone_ms_per_batch: reading a batch of the same stream without
// training (read_ahead 0), what a step would wait without the producer.
// A step's time includes taking its batch (Next()) and Trainer::TrainStep.
//
// Data: the demo corpus's c4_demo_span_corruption (<data_dir>/c4_demo from
// `t5xx build_corpus`; data_dir as t5xx: $T5XX_DATA_DIR, else
// ~/.cache/t5xx), tokenized by its SentencePiece model. Without the corpus,
// a task of the same preprocessors over synthetic text with byte ids.
// Model: T5.1.1 tiny (emb 128, 4 + 4 layers, mlp 256, vocabulary 8,192) in
// float32, batch 8, packed {inputs: 128, targets: 32}: about half a second
// a step on 2 cores; data threads as seqio::DataThreads()
// (T5XX_DATA_THREADS).
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>

#include "bench_schedule.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/preprocessors/preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/sources/function_source.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/demo_tasks.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/run/datasets.h"
#include "t5xx/trainer/trainer.h"
#include "torch_bench_main.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kSyntheticTask[] = "input_pipeline_bench_synthetic_text";

// The task to read: the demo task when its corpus is there, else a task of
// the demo's preprocessors over synthetic text with byte ids.
std::string RegisterBenchTask(std::string* origin) {
  using namespace t5xx::seqio;
  const std::string data_dir = DefaultDataDir();
  if (!RegisterDemoTasks(data_dir)) {
    *origin = "c4_demo_span_corruption from " + DemoCorpusDir(data_dir);
    return kDemoTaskName;
  }
  if (!TaskRegistry::Global().Has(kSyntheticTask)) {
    auto vocab = std::make_shared<ByteVocabulary>(100);
    auto source = std::make_shared<FunctionDataSource>([](const std::string&, bool, uint64_t) {
      // Endless documents of 200-1200 lowercase words.
      struct Docs : Dataset {
        std::mt19937 rng{0};
        std::optional<Example> Next() override {
          std::string text;
          const int n = 200 + static_cast<int>(rng() % 1000);
          for (int i = 0; i < n; ++i) {
            const int len = 2 + static_cast<int>(rng() % 8);
            for (int c = 0; c < len; ++c) text += static_cast<char>('a' + rng() % 26);
            text += ' ';
          }
          return Example{{"text", text}};
        }
      };
      return DatasetPtr(std::make_unique<Docs>());
    });
    TaskRegistry::Global().Add(std::make_shared<Task>(
        kSyntheticTask, source,
        std::vector<Preprocessor>{RekeyPreprocessor({{"inputs", ""}, {"targets", "text"}}),
                                  TokenizePreprocessor(), SpanCorruptionPreprocessor(),
                                  AppendEosAfterTrimPreprocessor()},
        OutputFeatures{{"inputs", Feature{vocab, true, true}},
                       {"targets", Feature{vocab, true, true}}}));
  }
  *origin = "synthetic text with byte ids (no demo corpus under " + data_dir + ")";
  return kSyntheticTask;
}

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void BM_TrainStepInputPipeline(benchmark::State& state) {
  std::string origin;
  t5xx::run::DatasetConfig d;
  d.mixture_or_task_name = RegisterBenchTask(&origin);
  d.task_feature_lengths = {{"inputs", 128}, {"targets", 32}};
  d.split = "train";
  d.batch_size = 8;
  d.shuffle = true;
  d.pack = true;

  t5xx::models::T5Config cfg = t5xx::models::T5_1_1Config("tiny");
  cfg.vocab_size = 8192;  // the demo vocabulary: 8,000 + 100 extra ids
  t5xx::models::EncoderDecoderModel model(t5xx::models::Transformer(cfg), 1e-4, 0.0,
                                          t5xx::models::LossNormalizingFactor{});
  t5xx::partitioning::PjitPartitioner partitioner(
      1, t5xx::partitioning::StandardLogicalAxisRules());
  t5xx::trainer::Trainer trainer(model, model.InitParams(0), t5xx::optim::Adafactor({}),
                                 t5xx::bench::PretrainSchedule(), partitioner);

  // The synthetic batches: the stream's first 8, held in memory.
  std::vector<t5xx::models::FeatureBatch> synthetic;
  {
    auto first = t5xx::run::GetBatchStream(d, "train", model, -1, 0, {}, /*read_ahead=*/0);
    for (int i = 0; i < 8; ++i) synthetic.push_back(*first->Next());
  }
  // The data alone: batches of a stream read without training.
  double t_data = 0;
  {
    auto alone = t5xx::run::GetBatchStream(d, "train", model, -1, 3, {}, /*read_ahead=*/0);
    for (int i = 0; i < 5; ++i) alone->Next();
    const auto t0 = Clock::now();
    for (int i = 0; i < 50; ++i) alone->Next();
    t_data = Seconds(t0) / 50;
  }
  auto pipeline = t5xx::run::GetBatchStream(d, "train", model, -1, 1, {});
  auto no_read_ahead = t5xx::run::GetBatchStream(d, "train", model, -1, 2, {}, 0);
  // Warm-up: the streams' first batches and the first steps' allocations.
  for (int i = 0; i < 2; ++i) {
    trainer.TrainStep(synthetic[static_cast<size_t>(i)]);
    trainer.TrainStep(*pipeline->Next());
    trainer.TrainStep(*no_read_ahead->Next());
  }
  double t_synthetic = 0, t_pipeline = 0, t_sync = 0;
  size_t i = 0, iteration = 0;
  for (auto _ : state) {
    // One step of each kind; the kind that goes first rotates, so none
    // always follows the same one.
    double pipeline_step = 0;
    for (size_t k = 0; k < 3; ++k) {
      const size_t kind = (iteration + k) % 3;
      const auto t0 = Clock::now();
      if (kind == 0) {
        benchmark::DoNotOptimize(trainer.TrainStep(synthetic[i++ % synthetic.size()]).loss);
        t_synthetic += Seconds(t0);
      } else if (kind == 1) {
        benchmark::DoNotOptimize(trainer.TrainStep(*pipeline->Next()).loss);
        pipeline_step = Seconds(t0);
        t_pipeline += pipeline_step;
      } else {
        benchmark::DoNotOptimize(trainer.TrainStep(*no_read_ahead->Next()).loss);
        t_sync += Seconds(t0);
      }
    }
    ++iteration;
    state.SetIterationTime(pipeline_step);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["synthetic_step_ms"] = 1e3 * t_synthetic / n;
  state.counters["pipeline_step_ms"] = 1e3 * t_pipeline / n;
  state.counters["no_read_ahead_step_ms"] = 1e3 * t_sync / n;
  state.counters["pipeline_over_synthetic"] = t_pipeline / t_synthetic;
  state.counters["data_alone_ms_per_batch"] = 1e3 * t_data;
  state.counters["data_threads"] = t5xx::seqio::DataThreads();
  state.counters["torch_threads"] = at::get_num_threads();
  state.SetLabel(origin + "; T5.1.1 tiny float32, batch 8, packed inputs 128 targets 32");
}
BENCHMARK(BM_TrainStepInputPipeline)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(60);

}  // namespace

int main(int argc, char** argv) { return t5xx::bench::RunTorchBenchmarks(argc, argv); }
