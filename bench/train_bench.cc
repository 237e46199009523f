// Training throughput, model FLOPs utilisation (MFU) and peak memory of
// t5x's networks on this machine, in float32 and bfloat16.
//
//   build/bin/t5xx_train_bench
//
// BM_MatmulPeak/<path>/<n> measures the matmul t5xx's layers use
// (models::MatmulIn), n x n times n x n, 2*n^3 FLOPs per call, on all
// intra-op threads, for each path: 0 float32 (at::matmul), 1 bfloat16
// emulated (operands widened to float32, a float32 matmul, rounded once),
// 2 bfloat16 native (libtorch's bfloat16 matmul; the label says whether it
// accumulates in float32 here and whether T5XX_BF16_MATMUL=auto uses it;
// kernels/bf16_matmul.h).
// BM_TrainStep runs full training steps (forward, backward, Adafactor) on
// random token batches of T5.1.1 tiny and small and decoder-only base, one
// step per iteration after one warm-up step: 20 steps per tiny config, 10
// per small and base config (T5XX_BENCH_STEPS=N times N instead, for short
// checks; --benchmark_min_time does not apply). It reports
//   step_ms_min, step_ms_median   the fastest and the median step (ms)
//   step_cv             the steps' standard deviation / mean (stability)
//   tokens_per_second   input + target positions per second
//   model_flops_per_s   BaseTransformerModel::TrainFlops (models/flops.h:
//                       matmul FLOPs, 3x forward) per second
//   mfu                 model_flops_per_s / peak_flops_per_s
//   peak_flops_per_s    the best matmul peak of the same dtype and path on
//                       this machine (trainer/matmul_peak_cache.h: measured
//                       before the first config of each dtype, the best of
//                       it and earlier runs' kept in the per-user cache;
//                       stderr says which was used)
//   peak_heap_mib       the most tensor memory in use during the timed
//                       steps above what was in use before the model was
//                       built: parameters, gradients, optimizer state and
//                       activations (MiB). With the caching CPU allocator
//                       (the default) its count of live blocks >= 64 KiB;
//                       with T5XX_CPU_CACHE_MIB=0 glibc's mallinfo2
//                       uordblks + hblkhd, sampled every millisecond
// and, for bfloat16 configs, the label names the matmul path the steps used.
// Rates are over wall-clock time (UseRealTime).
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_models.h"
#include "bench_schedule.h"
#include "t5xx/device/cpu_caching_allocator.h"
#include "t5xx/kernels/bf16_matmul.h"
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/flops.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/matmul_peak_cache.h"
#include "t5xx/trainer/trainer.h"
#include "torch_bench_main.h"

namespace {

at::ScalarType Dtype(int64_t i) { return i == 0 ? at::kFloat : at::kBFloat16; }
const char* DtypeName(int64_t i) { return i == 0 ? "float32" : "bfloat16"; }

// The peak mfu divides by for `dtype` (bfloat16: the path the train steps
// use), once per dtype; says which on stderr.
double Peak(at::ScalarType dtype) {
  static std::map<at::ScalarType, double> peaks;
  auto it = peaks.find(dtype);
  if (it != peaks.end()) return it->second;
  const t5xx::trainer::ResolvedMatmulPeak p = t5xx::trainer::MeasuredMatmulPeak(at::kCPU, dtype);
  for (const std::string& w : p.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::fprintf(stderr, "mfu of the %s configs divides by the %s\n",
               dtype == at::kFloat ? "float32" : "bfloat16", p.description.c_str());
  return peaks[dtype] = p.flops_per_s;
}

// Args: path (0 float32, 1 bfloat16 emulated, 2 bfloat16 native), n.
void BM_MatmulPeak(benchmark::State& state) {
  using t5xx::models::Bf16MatmulMode;
  const int64_t path = state.range(0), n = state.range(1);
  const at::ScalarType dtype = path == 0 ? at::kFloat : at::kBFloat16;
  if (path > 0) {
    t5xx::models::SetCpuBf16MatmulMode(path == 1 ? Bf16MatmulMode::kEmulated
                                                 : Bf16MatmulMode::kNative);
  }
  at::Tensor a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  for (auto _ : state) {
    at::Tensor c = t5xx::models::MatmulIn(a, b, dtype);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.counters["flops_per_s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = at::get_num_threads();
  // What the process uses (T5XX_BF16_MATMUL, default auto), for the label.
  t5xx::models::SetCpuBf16MatmulMode(t5xx::models::Bf16MatmulModeFromEnvironment());
  const t5xx::models::Bf16MatmulChoice used = t5xx::models::CpuBf16Matmul();
  std::string label = path == 0 ? "float32" : path == 1 ? "bfloat16 emulated" : "bfloat16 native";
  if (path == 2) {
    label += used.probe.accumulates_in_float32 ? " (accumulates in float32"
                                         : " (accumulates in bfloat16";
    label += used.native ? "; the train steps use it)" : "; not used)";
  } else if (path == 1) {
    label += used.native ? " (not used)" : " (the train steps use it)";
  }
  state.SetLabel(label);
}
BENCHMARK(BM_MatmulPeak)
    ->Args({0, 1024})
    ->Args({0, 2048})
    ->Args({1, 1024})
    ->Args({1, 2048})
    ->Args({2, 1024})
    ->Args({2, 2048})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The steps BM_TrainStep times per config: `steps`, or T5XX_BENCH_STEPS
// when set (read at start-up, for short checks).
int64_t TimedSteps(int64_t steps) {
  const char* v = std::getenv("T5XX_BENCH_STEPS");
  if (!v || !*v) return steps;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 1) {
    std::fprintf(stderr, "T5XX_BENCH_STEPS = '%s' is not a whole number >= 1\n", v);
    std::exit(2);
  }
  return n;
}

int64_t HeapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

// Samples HeapInUse every millisecond while alive; peak() is the maximum.
class HeapSampler {
 public:
  HeapSampler() : peak_(HeapInUse()), thread_([this] {
    while (!stop_) {
      int64_t now = HeapInUse();
      int64_t p = peak_.load();
      while (now > p && !peak_.compare_exchange_weak(p, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }) {}
  ~HeapSampler() {
    stop_ = true;
    thread_.join();
  }
  int64_t peak() const { return peak_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> peak_;
  std::thread thread_;
};

// Args: model (0 = T5.1.1 tiny, 1 = T5.1.1 small, 2 = decoder-only base),
// dtype (0 float32, 1 bfloat16), batch, inputs length (encoder; 0 for
// decoder-only), targets length.
void BM_TrainStep(benchmark::State& state) {
  const int64_t which = state.range(0);
  const at::ScalarType dtype = Dtype(state.range(1));
  const int64_t batch = state.range(2), in_len = state.range(3), tg_len = state.range(4);
  const int64_t heap_before = HeapInUse();
  // With the caching allocator (device/cpu_caching_allocator.h) its own
  // count of live tensor bytes gives the peak; sampling mallinfo2 every
  // millisecond (below) is a third busy thread on the step's cores, which
  // cost T5.1.1 small about 12% of its tokens/s on 2 cores.
  const bool cache_peak = t5xx::device::GetCpuCacheStats().installed;
  t5xx::device::ResetCpuCachePeak();
  const size_t cache_before = t5xx::device::GetCpuCacheStats().in_use_bytes;
  t5xx::bench::BenchModel bm = t5xx::bench::MakeBenchModel(which, DtypeName(state.range(1)));
  auto& model = bm.model;
  const std::string& name = bm.name;
  t5xx::partitioning::PjitPartitioner partitioner(1, t5xx::partitioning::StandardLogicalAxisRules());
  t5xx::trainer::Trainer trainer(*model, model->InitParams(0), t5xx::optim::Adafactor({}),
                                 t5xx::bench::PretrainSchedule(), partitioner);
  const t5xx::models::FeatureBatch b = t5xx::bench::RandomBenchBatch(batch, in_len, tg_len);
  trainer.TrainStep(b);  // warm-up
  const double p = Peak(dtype);  // before the timed steps
  std::vector<double> step_seconds;
  int64_t peak = 0;
  {
    std::optional<HeapSampler> sampler;
    if (!cache_peak) sampler.emplace();
    for (auto _ : state) {  // one step per iteration (Iterations below)
      const auto t0 = std::chrono::steady_clock::now();
      auto m = trainer.TrainStep(b);
      benchmark::DoNotOptimize(m.loss);
      step_seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    peak = cache_peak ? heap_before + static_cast<int64_t>(
                                          t5xx::device::GetCpuCacheStats().peak_in_use_bytes -
                                          cache_before)
                      : sampler->peak();
  }
  const double steps = static_cast<double>(step_seconds.size());
  double mean = 0, var = 0;
  for (double s : step_seconds) mean += s / steps;
  for (double s : step_seconds) var += (s - mean) * (s - mean) / steps;
  std::vector<double> sorted = step_seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  const double median = sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  const double flops = model->TrainFlops(batch, t5xx::bench::BenchLengths(in_len, tg_len));
  using C = benchmark::Counter;
  state.counters["tokens_per_second"] = C(batch * (in_len + tg_len), C::kIsIterationInvariantRate);
  state.counters["model_flops_per_s"] = C(flops, C::kIsIterationInvariantRate);
  state.counters["mfu"] = C(flops / p, C::kIsIterationInvariantRate);
  state.counters["peak_flops_per_s"] = p;
  state.counters["peak_heap_mib"] = static_cast<double>(peak - heap_before) / (1024.0 * 1024.0);
  state.counters["step_ms_min"] = sorted.front() * 1e3;
  state.counters["step_ms_median"] = median * 1e3;
  state.counters["step_cv"] = std::sqrt(var) / mean;
  std::string matmul;
  if (dtype == at::kBFloat16) {
    matmul = t5xx::models::NativeCpuBf16Matmul() ? "; bf16 matmul native"
                                                 : "; bf16 matmul emulated";
  }
  state.SetLabel(name + " " + DtypeName(state.range(1)) + " batch " + std::to_string(batch) +
                 (in_len > 0 ? " inputs " + std::to_string(in_len) : std::string()) +
                 " targets " + std::to_string(tg_len) + matmul);
}
// T5.1.1 tiny: 20 steps (about 1 s each on 2 cores).
BENCHMARK(BM_TrainStep)
    ->Args({0, 0, 32, 128, 32})
    ->Args({0, 1, 32, 128, 32})
    ->Args({0, 0, 8, 512, 114})
    ->Args({0, 1, 8, 512, 114})
    ->Iterations(TimedSteps(20))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// T5.1.1 small and decoder-only base: 10 steps (2-7 s each on 2 cores).
BENCHMARK(BM_TrainStep)
    ->Args({1, 0, 8, 128, 32})
    ->Args({1, 1, 8, 128, 32})
    ->Args({1, 0, 2, 512, 114})
    ->Args({1, 1, 2, 512, 114})
    ->Args({2, 0, 2, 0, 512})
    ->Args({2, 1, 2, 0, 512})
    ->Iterations(TimedSteps(10))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return t5xx::bench::RunTorchBenchmarks(argc, argv); }
