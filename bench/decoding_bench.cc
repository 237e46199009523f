// Decoding throughput of t5x's EncoderDecoderModel.predict_batch_with_aux
// (models/encoder_decoder_model.h) on T5.1.1 small (random weights, float32,
// vocabulary 32128), with and without the key/value cache.
//
//   build/bin/t5xx_decoding_bench
//
// BM_Decode/<fn>/<batch>/<cache>: one PredictBatchWithAux call per
// iteration on `batch` random inputs of 64 tokens, decoding 32 positions
// (decoder_input_tokens [batch, 32]) with
//   fn 0: decoding.temperature_sample, topk=1 (greedy), 1 decode;
//   fn 1: decoding.beam_search, 4 beams, alpha 0.6
// and cache 1 (models/decode_cache.h: one position per step) or 0 (the
// decoder rerun over the whole prefix every step). Random weights rarely
// produce EOS, so every row decodes all 32 positions. Reports
//   tokens_per_second  batch * 32 decoded positions per second (beam
//                      search: of the output sequences; each step scores 4
//                      beams per example)
//   cache_bytes        the decoding cache of batch * num_decodes rows: with
//                      the cache, the self-attention keys/values
//                      [rows, 32, 384] and the encoder output's cross-
//                      attention keys/values [rows, 64, 384] of 8 layers
//                      (float32), plus the index and the padding mask;
//                      without it, the token history, the encoder output
//                      [rows, 64, 512] and its tokens
// Rates are over wall-clock time (UseRealTime); each case runs once (a
// decode of 32 steps is already many matmuls).
#include <ATen/core/grad_mode.h>
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "t5xx/models/decode_cache.h"
#include "t5xx/models/encoder_decoder_decoding.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "torch_bench_main.h"

namespace {

constexpr int64_t kInputLength = 64;
constexpr int64_t kDecodeLength = 32;

t5xx::models::EncoderDecoderModel& Model() {
  static t5xx::models::EncoderDecoderModel* model = [] {
    t5xx::models::T5Config cfg = t5xx::models::T5_1_1Config("small");
    cfg.vocab_size = 32128;
    cfg.dropout_rate = 0.0;
    return new t5xx::models::EncoderDecoderModel(t5xx::models::Transformer(cfg), 0.0, 0.0,
                                                 t5xx::models::LossNormalizingFactor{});
  }();
  return *model;
}

const t5xx::models::ParamStore& Params() {
  static const t5xx::models::ParamStore params = [] {
    t5xx::models::ParamStore p = Model().InitParams(0);
    p.SetRequiresGrad(false);
    return p;
  }();
  return params;
}

// Args: fn (0 greedy, 1 beam search with 4 beams), batch, cache (0/1).
void BM_Decode(benchmark::State& state) {
  const bool beam = state.range(0) == 1;
  const int64_t batch = state.range(1);
  const bool use_cache = state.range(2) == 1;
  t5xx::models::EncoderDecoderModel& model = Model();
  const t5xx::models::ParamStore& params = Params();
  t5xx::decoding::DecodeFnConfig fn;
  fn.kind = beam ? t5xx::decoding::DecodeFnConfig::Kind::kBeamSearch
                 : t5xx::decoding::DecodeFnConfig::Kind::kTemperatureSample;
  model.set_decode_fn(fn);
  model.set_use_decode_cache(use_cache);
  const int64_t num_decodes = beam ? 4 : 1;
  at::manual_seed(0);
  t5xx::models::FeatureBatch b;
  b["encoder_input_tokens"] = at::randint(3, 32000, {batch, kInputLength}, at::kLong);
  b["decoder_input_tokens"] = at::zeros({batch, kDecodeLength}, at::kLong);
  for (auto _ : state) {
    auto out = model.PredictBatchWithAux(params, b, nullptr, false, num_decodes);
    benchmark::DoNotOptimize(out.predictions.data_ptr());
  }
  // The cache of batch rows, times num_decodes (every entry's dim 0 is a row).
  int64_t cache_bytes = 0;
  {
    const at::NoGradGuard no_grad;
    const at::Tensor encoded = model.module().Encode(params, b["encoder_input_tokens"],
                                                     at::Tensor(), false);
    cache_bytes = t5xx::models::CacheBytes(t5xx::models::InitEncoderDecoderCache(
                      model.module(), params, encoded, b["encoder_input_tokens"], kDecodeLength,
                      use_cache)) *
                  num_decodes;
  }
  using C = benchmark::Counter;
  state.counters["tokens_per_second"] = C(batch * kDecodeLength, C::kIsIterationInvariantRate);
  state.counters["cache_bytes"] = static_cast<double>(cache_bytes);
  state.counters["threads"] = at::get_num_threads();
  state.SetLabel(std::string(beam ? "beam_search 4" : "greedy") + " batch " +
                 std::to_string(batch) + (use_cache ? " cache" : " no cache"));
}
BENCHMARK(BM_Decode)
    ->Args({0, 1, 1})
    ->Args({0, 1, 0})
    ->Args({0, 32, 1})
    ->Args({0, 32, 0})
    ->Args({1, 1, 1})
    ->Args({1, 1, 0})
    ->Args({1, 32, 1})
    ->Args({1, 32, 0})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return t5xx::bench::RunTorchBenchmarks(argc, argv); }
