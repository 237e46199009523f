// Training throughput and model FLOPs utilisation (MFU) of T5.1.1 on this
// machine's CPU, against the measured float32 matmul peak.
//
//   build/bin/t5xx_train_bench
//
// BM_MatmulPeak measures the peak: the best of several at::matmul calls on
// 2048x2048 float32 matrices (2*n^3 FLOPs each), on all intra-op threads.
// BM_TrainStep runs full training steps (forward, backward, Adafactor) of
// the tiny and small configs on random token batches, and reports
//   tokens_per_second   encoder + decoder positions per second
//   model_flops_per_s   EncoderDecoderTrainFlops (models/flops.h: matmul
//                       FLOPs, 3x forward) per second
//   mfu                 model_flops_per_s / measured matmul peak (a ratio;
//                       Google Benchmark prints rate counters with '/s')
// Rates are over wall-clock time (UseRealTime).
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/flops.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/lr_schedule.h"
#include "t5xx/partitioning/partitioner.h"
#include "t5xx/trainer/trainer.h"

namespace {

double MeasureMatmulPeak() {
  static const double peak = [] {
    const int64_t n = 2048;
    at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
    at::Tensor c = at::matmul(a, b);  // warm-up
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      c = at::matmul(a, b);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return 2.0 * n * n * n / best;
  }();
  return peak;
}

void BM_MatmulPeak(benchmark::State& state) {
  const int64_t n = state.range(0);
  at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
  for (auto _ : state) {
    at::Tensor c = at::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.counters["flops_per_s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = at::get_num_threads();
}
BENCHMARK(BM_MatmulPeak)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// Args: size (0 = tiny, 1 = small), batch, inputs length, targets length.
void BM_TrainStep(benchmark::State& state) {
  const char* size = state.range(0) == 0 ? "tiny" : "small";
  const int64_t batch = state.range(1), in_len = state.range(2), tg_len = state.range(3);
  t5xx::models::T5Config cfg = t5xx::models::T5_1_1Config(size);
  cfg.vocab_size = 32128;
  t5xx::models::EncoderDecoderModel model(t5xx::models::Transformer(cfg), 1e-4, 0.0, {});
  t5xx::partitioning::PjitPartitioner partitioner(1, t5xx::partitioning::StandardLogicalAxisRules());
  t5xx::optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant * rsqrt_decay";
  lr.base_learning_rate = 1.0;
  lr.warmup_steps = 10000;
  t5xx::trainer::Trainer trainer(model, model.module().InitParams(0), t5xx::optim::Adafactor({}),
                                 t5xx::optim::LearningRateSchedule(lr), partitioner);
  at::manual_seed(0);
  t5xx::models::FeatureBatch b;
  b["encoder_input_tokens"] = at::randint(3, 32000, {batch, in_len}, at::kLong);
  b["decoder_target_tokens"] = at::randint(3, 32000, {batch, tg_len}, at::kLong);
  b["decoder_input_tokens"] = at::randint(3, 32000, {batch, tg_len}, at::kLong);
  b["decoder_loss_weights"] = at::ones({batch, tg_len});
  trainer.TrainStep(b);  // warm-up
  for (auto _ : state) {
    auto m = trainer.TrainStep(b);
    benchmark::DoNotOptimize(m.loss);
  }
  const double flops = t5xx::models::EncoderDecoderTrainFlops(cfg, batch, in_len, tg_len);
  const double peak = MeasureMatmulPeak();
  using C = benchmark::Counter;
  state.counters["tokens_per_second"] = C(batch * (in_len + tg_len), C::kIsIterationInvariantRate);
  state.counters["target_tokens_per_s"] = C(batch * tg_len, C::kIsIterationInvariantRate);
  state.counters["model_flops_per_s"] = C(flops, C::kIsIterationInvariantRate);
  state.counters["mfu"] = C(flops / peak, C::kIsIterationInvariantRate);
  state.counters["peak_flops_per_s"] = peak;
  state.SetLabel(std::string(size) + " batch " + std::to_string(batch) + " inputs " +
                 std::to_string(in_len) + " targets " + std::to_string(tg_len));
}
BENCHMARK(BM_TrainStep)
    ->Args({0, 32, 128, 32})
    ->Args({0, 8, 512, 114})
    ->Args({1, 8, 128, 32})
    ->Args({1, 2, 512, 114})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(5.0);

}  // namespace

int main(int argc, char** argv) {
  // Same threading as the t5xx binary (src/t5xx/cli/main.cc).
  if (!std::getenv("OMP_NUM_THREADS")) {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
