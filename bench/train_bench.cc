// Training throughput, model FLOPs utilisation (MFU) and peak memory of
// t5x's networks on this machine, in float32 and bfloat16.
//
//   build/bin/t5xx_train_bench
//
// BM_MatmulPeak/<dtype>/<n> measures the peak of the matmul t5xx's layers use
// for that activation dtype (models::MatmulIn: float32 at::matmul, or
// bfloat16 operands accumulated in float32 as t5x/XLA do): n x n times n x n,
// 2*n^3 FLOPs per call, on all intra-op threads; the bench keeps the best of
// five 2048^3 calls as `peak`.
// BM_TrainStep runs full training steps (forward, backward, Adafactor) on
// random token batches of T5.1.1 tiny and small and decoder-only base, and
// reports
//   tokens_per_second   input + target positions per second
//   model_flops_per_s   BaseTransformerModel::TrainFlops (models/flops.h:
//                       matmul FLOPs, 3x forward) per second
//   mfu                 model_flops_per_s / the measured peak of the same
//                       dtype (a ratio; Google Benchmark prints rate
//                       counters with '/s')
//   peak_heap_mib       the most heap in use (glibc mallinfo2 uordblks +
//                       hblkhd, sampled every millisecond) during the timed
//                       steps, minus what was in use before the model was
//                       built: parameters, gradients, optimizer state and
//                       activations (MiB)
// Rates are over wall-clock time (UseRealTime).
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "bench_schedule.h"
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/flops.h"
#include "t5xx/models/layers.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "torch_bench_main.h"

namespace {

at::ScalarType Dtype(int64_t i) { return i == 0 ? at::kFloat : at::kBFloat16; }
const char* DtypeName(int64_t i) { return i == 0 ? "float32" : "bfloat16"; }

// Best of five 2048^3 matmuls of the given activation dtype (see top).
double MeasureMatmulPeak(at::ScalarType dtype) {
  const int64_t n = 2048;
  at::Tensor a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  at::Tensor c = t5xx::models::MatmulIn(a, b, dtype);  // warm-up
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    c = t5xx::models::MatmulIn(a, b, dtype);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * n * n * n / best;
}

double Peak(at::ScalarType dtype) {
  static const double f32 = MeasureMatmulPeak(at::kFloat);
  static const double bf16 = MeasureMatmulPeak(at::kBFloat16);
  return dtype == at::kFloat ? f32 : bf16;
}

// Args: dtype (0 float32, 1 bfloat16), n.
void BM_MatmulPeak(benchmark::State& state) {
  const at::ScalarType dtype = Dtype(state.range(0));
  const int64_t n = state.range(1);
  at::Tensor a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  for (auto _ : state) {
    at::Tensor c = t5xx::models::MatmulIn(a, b, dtype);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.counters["flops_per_s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = at::get_num_threads();
  state.SetLabel(DtypeName(state.range(0)));
}
BENCHMARK(BM_MatmulPeak)
    ->Args({0, 1024})
    ->Args({0, 2048})
    ->Args({1, 1024})
    ->Args({1, 2048})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

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
  std::unique_ptr<t5xx::models::BaseTransformerModel> model;
  std::string name;
  if (which < 2) {
    name = which == 0 ? "t5_1_1 tiny" : "t5_1_1 small";
    t5xx::models::T5Config cfg = t5xx::models::T5_1_1Config(which == 0 ? "tiny" : "small");
    cfg.vocab_size = 32128;
    cfg.dtype = DtypeName(state.range(1));
    model = std::make_unique<t5xx::models::EncoderDecoderModel>(t5xx::models::Transformer(cfg),
                                                                1e-4, 0.0,
                                                                t5xx::models::LossNormalizingFactor{});
  } else {
    // t5x/examples/decoder_only/models/base.gin's network (tied logits).
    name = "decoder_only base";
    t5xx::models::DecoderOnlyConfig cfg;
    cfg.vocab_size = 32128;
    cfg.dtype = DtypeName(state.range(1));
    cfg.emb_dim = 768;
    cfg.num_heads = 12;
    cfg.num_layers = 12;
    cfg.head_dim = 64;
    cfg.mlp_dim = 2048;
    cfg.mlp_activations = {"gelu", "linear"};
    cfg.dropout_rate = 0.0;
    cfg.logits_via_embedding = true;
    model = std::make_unique<t5xx::models::DecoderOnlyModel>(
        t5xx::models::DecoderOnlyTransformer(cfg), false, 1e-4, 0.0,
        t5xx::models::LossNormalizingFactor{});
  }
  t5xx::partitioning::PjitPartitioner partitioner(1, t5xx::partitioning::StandardLogicalAxisRules());
  t5xx::trainer::Trainer trainer(*model, model->InitParams(0), t5xx::optim::Adafactor({}),
                                 t5xx::bench::PretrainSchedule(), partitioner);
  at::manual_seed(0);
  t5xx::models::FeatureBatch b;
  if (in_len > 0) b["encoder_input_tokens"] = at::randint(3, 32000, {batch, in_len}, at::kLong);
  b["decoder_target_tokens"] = at::randint(3, 32000, {batch, tg_len}, at::kLong);
  b["decoder_input_tokens"] = at::randint(3, 32000, {batch, tg_len}, at::kLong);
  b["decoder_loss_weights"] = at::ones({batch, tg_len});
  trainer.TrainStep(b);  // warm-up
  int64_t peak = 0;
  {
    HeapSampler sampler;
    for (auto _ : state) {
      auto m = trainer.TrainStep(b);
      benchmark::DoNotOptimize(m.loss);
    }
    peak = sampler.peak();
  }
  std::map<std::string, int64_t> lens = {{"decoder_target_tokens", tg_len}};
  if (in_len > 0) lens["encoder_input_tokens"] = in_len;
  const double flops = model->TrainFlops(batch, lens);
  const double p = Peak(dtype);
  using C = benchmark::Counter;
  state.counters["tokens_per_second"] = C(batch * (in_len + tg_len), C::kIsIterationInvariantRate);
  state.counters["model_flops_per_s"] = C(flops, C::kIsIterationInvariantRate);
  state.counters["mfu"] = C(flops / p, C::kIsIterationInvariantRate);
  state.counters["peak_flops_per_s"] = p;
  state.counters["peak_heap_mib"] = static_cast<double>(peak - heap_before) / (1024.0 * 1024.0);
  state.SetLabel(name + " " + DtypeName(state.range(1)) + " batch " + std::to_string(batch) +
                 (in_len > 0 ? " inputs " + std::to_string(in_len) : std::string()) +
                 " targets " + std::to_string(tg_len));
}
BENCHMARK(BM_TrainStep)
    ->Args({0, 0, 32, 128, 32})
    ->Args({0, 1, 32, 128, 32})
    ->Args({0, 0, 8, 512, 114})
    ->Args({0, 1, 8, 512, 114})
    ->Args({1, 0, 8, 128, 32})
    ->Args({1, 1, 8, 128, 32})
    ->Args({1, 0, 2, 512, 114})
    ->Args({1, 1, 2, 512, 114})
    ->Args({2, 0, 2, 0, 512})
    ->Args({2, 1, 2, 0, 512})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(5.0);

}  // namespace

int main(int argc, char** argv) { return t5xx::bench::RunTorchBenchmarks(argc, argv); }
