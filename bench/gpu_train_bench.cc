// Training throughput, model FLOPs utilisation (MFU) and peak device memory
// on one device -- a GPU when there is one -- for the configurations of
// issue 14's table (the peers' figures were measured that way on one H200):
// bfloat16 activations, float32 parameters, Adafactor, random tokens, no
// packing.
//
//   build/bin/t5xx_gpu_train_bench [--device=auto|cpu|cuda|cuda:N] [--smoke]
//                                  [--steps=N] [switches] [Google Benchmark flags]
//
//   --device   (env T5XX_BENCH_DEVICE; default auto: the GPU of LOCAL_RANK
//              when there is one, else the CPU; device::ResolveDevice)
//   --smoke    (env T5XX_BENCH_SMOKE=1) every configuration shrunk to a few
//              thousand parameters and a few dozen tokens, so that the bench
//              runs in seconds on a CPU (to check it works, not to measure)
//   --steps    (env T5XX_BENCH_STEPS) timed steps per configuration
//              (default 10; 2 with --smoke), after 2 untimed warm-up steps
// Switches (issue 49's A/B runs; defaults are what `t5xx train` does):
//   --allow_tf32=true|false      float32 matmuls on TF32 tensor cores (JAX's
//                                default on the same GPU) or in full float32
//   --bf16_reduction=false|true  cuBLAS's bfloat16 split-K reductions
//                                (device::SetCudaMatmulPrecision)
//   --attention=auto|fused|unfused   models::AttentionKernel
//   --sdpa_backends=all|LIST     the SDPA kernels libtorch may pick, a comma
//                                list of flash, efficient, cudnn, math
//                                (libtorch >= 2.4; compat::SetSdpaBackends)
//   --adafactor=grouped|per_param    the general Adafactor path's grouped
//                                update (optim/adafactor_grouped.h) or one
//                                parameter at a time; --adafactor_fused_cpu=
//                                true|false: the fused CPU update (CPU only)
//   --phases           per-phase device time of the timed steps (forward,
//                      backward, optimizer; CUDA events on a GPU) and the
//                      host's time in each (bench/step_phases.h), counters
//                      <phase>_ms and host_<phase>_ms per step
//   --count_ops        kernel-running ATen ops of one more step, per phase
//                      (bench/step_phases.h's LaunchCounter), counters
//                      ops_<phase> and ops_other
//   --batch=B --inputs=L --targets=L   every configuration's batch and
//                      lengths instead of the table's (e.g. to count a real
//                      model's launches on a CPU with a tiny batch)
//   --trace_dir=DIR    one more step under libtorch's profiler (Kineto),
//                      saved as DIR/<config>.trace.json (scripts/
//                      gpu_trace_top.py tables it); a profiler that cannot
//                      run is reported on stderr, not an error
// On a GPU with libtorch >= 2.5 the bench also prints, per configuration,
// which SDPA kernel each attention of a step gets (compat::
// FusedAttentionBackend on the q, k, v and mask the fused path passes).
//
// Configurations (BM_GpuTrain/<name>):
//   t5_1_1_small        T5.1.1 small (models::T5_1_1Config), 256 x (512 + 114)
//   t5_1_1_base         T5.1.1 base, 128 x (512 + 114)
//   decoder_only_base   t5x/examples/decoder_only/models/base.gin's network
//                       (emb 768, 12 heads x 64, 12 layers, mlp 2048
//                       gated-gelu, tied logits), 32 x 1024
//   decoder_only_1b     emb 2048, 16 layers, 16 heads x 128, mlp 5632
//                       gated-gelu, vocab 32128, untied logits: per layer
//                       4 * 2048^2 (attention) + 3 * 2048 * 5632 (mlp) +
//                       2 * 2048 (norms) = 51,384,320; x 16 = 822,149,120;
//                       plus the embedding and the logits kernel,
//                       2 * 32128 * 2048 = 131,596,288, the relative position
//                       bias shared by the layers, 32 * 16 = 512, and the
//                       final norm, 2048: 953,747,968 parameters (a
//                       Llama-style 0.95B, as the PyTorch peer),
//                       8 x 2048
// The vocabulary is 32128 everywhere (t5x's default), dropout 0, the loss
// every target token, the learning rate t5x's rsqrt schedule; each step is
// the Trainer's (trainer/trainer.h) on a host batch that it copies to the
// device itself (pinned, asynchronous).
//
// Counters:
//   tokens_per_second   batch * (inputs + targets) per second
//   model_flops_per_s   BaseTransformerModel::TrainFlops (models/flops.h:
//                       matmul FLOPs of a train step, 3x forward) per second
//   mfu                 model_flops_per_s / peak_flops_per_s (a ratio;
//                       Google Benchmark prints rate counters with '/s')
//   peak_flops_per_s    the GPU's dense bf16 peak from its data sheet
//                       (device::DenseBf16PeakFlops of its name, e.g.
//                       989.4e12 for an H200), or, when the name is not
//                       known, the best of five bf16 8192^3 matmuls measured
//                       on it; on the CPU the best of five bf16 matmuls as
//                       models::MatmulIn computes them (1024^3), as
//                       t5xx_train_bench does. The label says which.
//   peak_gpu_mib        the caching allocator's peak of allocated bytes
//                       during the timed steps (device::DeviceMemory after
//                       device::ResetPeakMemory): parameters, gradients,
//                       optimizer state and activations; 0 on the CPU
//   num_params          the model's parameter count
// On a GPU the steps are queued without the host waiting for any of them:
// the clock stops after device::Synchronize in the last step, and the
// steps' metrics (StepMetrics::pending) are resolved only after the timed
// loop (a non-finite loss is reported as an error).
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <sstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "t5xx/device/device.h"
#include "bench_schedule.h"
#include "kineto_trace.h"
#include "step_phases.h"
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

namespace {

using t5xx::models::DecoderOnlyConfig;
using t5xx::models::T5Config;

struct Options {
  at::Device device = at::kCPU;
  bool smoke = false;
  int64_t steps = 10;
  bool allow_tf32 = true;
  bool bf16_reduction = false;
  std::string attention = "auto";
  std::string sdpa_backends = "all";
  bool adafactor_grouped = true;
  bool adafactor_fused_cpu = true;
  bool phases = false;
  bool count_ops = false;
  std::string trace_dir;
  int64_t batch = 0, inputs = 0, targets = 0;  // > 0: overrides
};
Options g_options;

// One row of the table.
struct BenchConfig {
  std::string name;
  bool encoder_decoder = true;
  T5Config t5;
  DecoderOnlyConfig decoder_only;
  int64_t batch = 0, inputs = 0, targets = 0;
  int64_t num_microbatches = 1;
};

DecoderOnlyConfig DecoderOnly(int64_t emb, int64_t heads, int64_t head_dim, int64_t layers,
                              int64_t mlp, bool tied) {
  DecoderOnlyConfig c;
  c.vocab_size = 32128;
  c.dtype = "bfloat16";
  c.emb_dim = emb;
  c.num_heads = heads;
  c.head_dim = head_dim;
  c.num_layers = layers;
  c.mlp_dim = mlp;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  c.logits_via_embedding = tied;
  return c;
}

T5Config T5(const std::string& size) {
  T5Config c = t5xx::models::T5_1_1Config(size);
  c.vocab_size = 32128;
  c.dtype = "bfloat16";
  c.dropout_rate = 0.0;
  return c;
}

// The table (see the top); with smoke, the same kinds of network at toy
// sizes (emb 64, 4 heads x 16, 2 layers, mlp 128, vocab 512, 4 x (32 + 16)).
std::vector<BenchConfig> Configs(bool smoke) {
  std::vector<BenchConfig> out;
  auto encdec = [&](const std::string& name, const std::string& size, int64_t batch) {
    BenchConfig b;
    b.name = name;
    b.t5 = T5(size);
    b.batch = batch;
    b.inputs = 512;
    b.targets = 114;
    out.push_back(b);
  };
  auto dec = [&](const std::string& name, DecoderOnlyConfig c, int64_t batch, int64_t length) {
    BenchConfig b;
    b.name = name;
    b.encoder_decoder = false;
    b.decoder_only = c;
    b.batch = batch;
    b.targets = length;
    out.push_back(b);
  };
  encdec("t5_1_1_small", "small", 256);
  encdec("t5_1_1_base", "base", 128);
  dec("decoder_only_base", DecoderOnly(768, 12, 64, 12, 2048, /*tied=*/true), 32, 1024);
  dec("decoder_only_1b", DecoderOnly(2048, 16, 128, 16, 5632, /*tied=*/false), 8, 2048);
  if (smoke) {
    for (BenchConfig& b : out) {
      if (b.encoder_decoder) {
        b.t5.emb_dim = 64;
        b.t5.num_heads = 4;
        b.t5.head_dim = 16;
        b.t5.num_encoder_layers = b.t5.num_decoder_layers = 2;
        b.t5.mlp_dim = 128;
        b.t5.vocab_size = 512;
        b.inputs = 32;
      } else {
        b.decoder_only.emb_dim = 64;
        b.decoder_only.num_heads = 4;
        b.decoder_only.head_dim = 16;
        b.decoder_only.num_layers = 2;
        b.decoder_only.mlp_dim = 128;
        b.decoder_only.vocab_size = 512;
        b.inputs = 0;
      }
      b.batch = 4;
      b.targets = b.encoder_decoder ? 16 : 32;
    }
  }
  return out;
}

// Best of five n^3 bf16 matmuls on `device` (MatmulIn: float32 accumulation),
// FLOP/s.
double MeasureBf16MatmulPeak(at::Device device, int64_t n) {
  const auto opts = at::TensorOptions(device).dtype(at::kBFloat16);
  at::Tensor a = at::randn({n, n}, opts), b = at::randn({n, n}, opts);
  at::Tensor c = t5xx::models::MatmulIn(a, b, at::kBFloat16);  // warm-up
  t5xx::device::Synchronize(device);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    c = t5xx::models::MatmulIn(a, b, at::kBFloat16);
    t5xx::device::Synchronize(device);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * n * n * n / best;
}

// The bf16 peak MFU is reported against (see the top), and where it came from.
struct Peak {
  double flops = 0;
  std::string source;
};
const Peak& DevicePeak() {
  static const Peak peak = [] {
    const at::Device dev = g_options.device;
    Peak p;
    if (dev.is_cuda()) {
      const std::string name = t5xx::device::DeviceName(dev);
      p.flops = t5xx::device::DenseBf16PeakFlops(name);
      if (p.flops > 0) {
        p.source = "data-sheet peak of " + name;
        return p;
      }
      p.flops = MeasureBf16MatmulPeak(dev, 8192);
      p.source = "measured bf16 8192^3 matmul peak (" + name + " not in the data-sheet list)";
      return p;
    }
    p.flops = MeasureBf16MatmulPeak(dev, 1024);
    p.source = "measured bf16 1024^3 matmul peak (cpu)";
    return p;
  }();
  return peak;
}

// The attentions of a step as the fused path passes them to libtorch, with
// the SDPA kernel libtorch picks for each (see the top).
std::mutex g_attention_mutex;
std::set<std::string> g_attention_calls;

void ObserveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                      const at::Tensor& mask) {
  std::ostringstream line;
  line << "q [B " << q.size(0) << ", H " << q.size(1) << ", Lq " << q.size(2) << ", D "
       << q.size(3) << "] Lk " << k.size(2) << " " << q.scalar_type();
  if (mask.defined()) {
    line << ", mask " << mask.sizes() << (mask.requires_grad() ? " requiring grad" : "");
  } else {
    line << ", no mask";
  }
  line << " -> " << t5xx::compat::FusedAttentionBackend(q, k, v, mask, 1.0);
  std::lock_guard<std::mutex> lock(g_attention_mutex);
  g_attention_calls.insert(line.str());
}

void BM_GpuTrain(benchmark::State& state, const BenchConfig& cfg) {
  const at::Device dev = g_options.device;
  std::unique_ptr<t5xx::models::BaseTransformerModel> model;
  int64_t vocab = 0;
  if (cfg.encoder_decoder) {
    vocab = cfg.t5.vocab_size;
    model = std::make_unique<t5xx::models::EncoderDecoderModel>(
        t5xx::models::Transformer(cfg.t5), 1e-4, 0.0, t5xx::models::LossNormalizingFactor{});
  } else {
    vocab = cfg.decoder_only.vocab_size;
    model = std::make_unique<t5xx::models::DecoderOnlyModel>(
        t5xx::models::DecoderOnlyTransformer(cfg.decoder_only), false, 1e-4, 0.0,
        t5xx::models::LossNormalizingFactor{});
  }
  t5xx::partitioning::PjitPartitioner partitioner(1, t5xx::partitioning::StandardLogicalAxisRules());
  t5xx::models::ParamStore params = model->InitParams(0);
  const int64_t num_params = params.NumElements();
  params.To(dev);  // before the Trainer: its optimizer state goes beside them
  t5xx::optim::Adafactor adafactor({});
  adafactor.set_use_grouped_update(g_options.adafactor_grouped);
  adafactor.set_use_fused_cpu_update(g_options.adafactor_fused_cpu);
  t5xx::trainer::Trainer trainer(*model, std::move(params), std::move(adafactor),
                                 t5xx::bench::PretrainSchedule(), partitioner,
                                 cfg.num_microbatches);
  // Random tokens on the host, as a data pipeline gives them; no packing.
  at::manual_seed(0);
  const int64_t b = cfg.batch, in = cfg.inputs, tg = cfg.targets;
  t5xx::models::FeatureBatch batch;
  if (in > 0) batch["encoder_input_tokens"] = at::randint(3, vocab, {b, in}, at::kLong);
  batch["decoder_target_tokens"] = at::randint(3, vocab, {b, tg}, at::kLong);
  batch["decoder_input_tokens"] = at::randint(3, vocab, {b, tg}, at::kLong);
  batch["decoder_loss_weights"] = at::ones({b, tg});
  {
    g_attention_calls.clear();
    t5xx::models::SetFusedAttentionObserver(&ObserveAttention);
    trainer.TrainStep(batch).Resolve();  // warm-up (allocator, kernels)
    t5xx::models::SetFusedAttentionObserver(nullptr);
    std::cerr << "[gpu_train_bench] " << cfg.name << " attention:";
    if (g_attention_calls.empty()) std::cerr << " unfused (t5xx's own matmul/softmax path)";
    for (const std::string& call : g_attention_calls) std::cerr << "\n    " << call;
    std::cerr << "\n";
  }
  trainer.TrainStep(batch).Resolve();
  t5xx::device::Synchronize(dev);
  t5xx::device::ResetPeakMemory(dev);

  std::vector<t5xx::trainer::StepMetrics> steps;
  steps.reserve(static_cast<size_t>(state.max_iterations));
  std::optional<t5xx::bench::PhaseTimer> phases;
  if (g_options.phases) phases.emplace(dev);
  int64_t done = 0;
  for (auto _ : state) {
    steps.push_back(trainer.TrainStep(batch));
    // The clock stops when the queued work is done, not when it is queued.
    if (++done == state.max_iterations) t5xx::device::Synchronize(dev);
  }
  using C = benchmark::Counter;
  if (phases) {
    const auto totals = phases->Sum();
    phases.reset();
    for (int p = 0; p < t5xx::bench::kNumPhases; ++p) {
      const std::string name = t5xx::bench::kPhaseNames[p];
      state.counters[name + "_ms"] = totals.device_ms[p] / static_cast<double>(done);
      state.counters["host_" + name + "_ms"] = totals.host_ms[p] / static_cast<double>(done);
    }
  }
  if (g_options.count_ops) {
    t5xx::bench::LaunchCounter counter;
    trainer.TrainStep(batch).Resolve();
    t5xx::device::Synchronize(dev);
    const auto ops = counter.per_phase();
    for (int p = 0; p < t5xx::bench::kNumPhases; ++p) {
      state.counters[std::string("ops_") + t5xx::bench::kPhaseNames[p]] = static_cast<double>(ops[p]);
    }
    state.counters["ops_other"] = static_cast<double>(counter.other());
  }
  if (!g_options.trace_dir.empty()) {
    const std::string path = g_options.trace_dir + "/" + cfg.name + ".trace.json";
    const std::string why =
        t5xx::bench::TraceToFile(path, dev, [&] { trainer.TrainStep(batch).Resolve(); });
    std::cerr << "[gpu_train_bench] " << cfg.name << " trace: "
              << (why.empty() ? path : "not written: " + why) << "\n";
  }
  double peak_mib = 0;
  if (const auto mem = t5xx::device::DeviceMemory(dev)) {
    peak_mib = static_cast<double>(mem->peak_allocated) / (1024.0 * 1024.0);
  }
  double last_loss = 0;
  for (auto& m : steps) {
    if (!m.resolved()) m.Resolve();
    last_loss = m.loss;
    if (!std::isfinite(m.loss)) {
      state.SkipWithError(("non-finite loss in " + cfg.name).c_str());
      return;
    }
  }

  std::map<std::string, int64_t> lens = {{"decoder_target_tokens", tg}};
  if (in > 0) lens["encoder_input_tokens"] = in;
  const double flops = model->TrainFlops(b, lens);
  const Peak& peak = DevicePeak();
  state.counters["tokens_per_second"] = C(static_cast<double>(b * (in + tg)), C::kIsIterationInvariantRate);
  state.counters["model_flops_per_s"] = C(flops, C::kIsIterationInvariantRate);
  state.counters["mfu"] = C(flops / peak.flops, C::kIsIterationInvariantRate);
  state.counters["peak_flops_per_s"] = peak.flops;
  state.counters["peak_gpu_mib"] = peak_mib;
  state.counters["num_params"] = static_cast<double>(num_params);
  state.counters["loss"] = last_loss;
  const std::string switches =
      std::string(" [tf32 ") + (g_options.allow_tf32 ? "on" : "off") + ", bf16 reduction " +
      (g_options.bf16_reduction ? "on" : "off") + ", attention " + g_options.attention +
      ", sdpa " + g_options.sdpa_backends + ", adafactor " +
      (g_options.adafactor_grouped ? "grouped" : "per_param") + "]";
  state.SetLabel(cfg.name + switches + " bfloat16 on " + t5xx::device::Describe(dev) + ", batch " +
                 std::to_string(b) + (in > 0 ? " inputs " + std::to_string(in) : std::string()) +
                 " targets " + std::to_string(tg) +
                 (cfg.num_microbatches > 1 ? " microbatches " + std::to_string(cfg.num_microbatches)
                                           : std::string()) +
                 (g_options.smoke ? " (smoke sizes)" : std::string()) + "; MFU vs " + peak.source);
}

int64_t PositiveFlag(const std::string& name, const std::string& value) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  T5XX_CHECK(used == value.size() && !value.empty() && v >= 1,
             name + "='" + value + "': give a whole number >= 1");
  return v;
}

bool BoolFlag(const std::string& name, const std::string& value) {
  T5XX_CHECK(value == "true" || value == "false",
             name + "='" + value + "': use true or false");
  return value == "true";
}

// Applies the process-wide switches: matmul precision, attention kernel,
// SDPA kernels. Throws t5xx::Error for an SDPA list on a libtorch that
// cannot restrict its kernels, or an unknown name in it.
void ApplySwitches(const Options& o) {
  t5xx::device::SetCudaMatmulPrecision(o.allow_tf32, o.bf16_reduction);
  using t5xx::models::AttentionKernel;
  t5xx::models::SetAttentionKernel(o.attention == "fused"     ? AttentionKernel::kFused
                                   : o.attention == "unfused" ? AttentionKernel::kUnfused
                                                              : AttentionKernel::kAuto);
  if (o.sdpa_backends == "all") return;
  std::map<std::string, bool> use = {{"flash", false}, {"efficient", false},
                                     {"cudnn", false}, {"math", false}};
  std::stringstream list(o.sdpa_backends);
  for (std::string name; std::getline(list, name, ',');) {
    T5XX_CHECK(use.count(name), "--sdpa_backends: unknown kernel '" + name +
                                    "'; use all, or a comma list of flash, efficient, cudnn, math");
    use[name] = true;
  }
  T5XX_CHECK(t5xx::compat::SetSdpaBackends(use["flash"], use["efficient"], use["cudnn"], use["math"]),
             "--sdpa_backends=" + o.sdpa_backends + " needs libtorch >= 2.4 (this is " +
                 std::to_string(t5xx::compat::kTorchMajor) + "." +
                 std::to_string(t5xx::compat::kTorchMinor) + ")");
}

// Takes the options above out of argv (the rest is Google
// Benchmark's); env T5XX_BENCH_DEVICE, T5XX_BENCH_SMOKE, T5XX_BENCH_STEPS.
Options ParseOptions(int* argc, char** argv) {
  std::string device = std::getenv("T5XX_BENCH_DEVICE") ? std::getenv("T5XX_BENCH_DEVICE") : "auto";
  const char* smoke_env = std::getenv("T5XX_BENCH_SMOKE");
  Options o;
  o.smoke = smoke_env && std::string(smoke_env) == "1";
  std::string steps = std::getenv("T5XX_BENCH_STEPS") ? std::getenv("T5XX_BENCH_STEPS") : "";
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--device=", 0) == 0) {
      device = a.substr(9);
    } else if (a == "--smoke" || a == "--smoke=true") {
      o.smoke = true;
    } else if (a.rfind("--steps=", 0) == 0) {
      steps = a.substr(8);
    } else if (a.rfind("--allow_tf32=", 0) == 0) {
      o.allow_tf32 = BoolFlag("--allow_tf32", a.substr(13));
    } else if (a.rfind("--bf16_reduction=", 0) == 0) {
      o.bf16_reduction = BoolFlag("--bf16_reduction", a.substr(17));
    } else if (a.rfind("--attention=", 0) == 0) {
      o.attention = a.substr(12);
      T5XX_CHECK(o.attention == "auto" || o.attention == "fused" || o.attention == "unfused",
                 "--attention='" + o.attention + "': use auto, fused or unfused");
    } else if (a.rfind("--sdpa_backends=", 0) == 0) {
      o.sdpa_backends = a.substr(16);
    } else if (a.rfind("--adafactor=", 0) == 0) {
      const std::string v = a.substr(12);
      T5XX_CHECK(v == "grouped" || v == "per_param",
                 "--adafactor='" + v + "': use grouped or per_param");
      o.adafactor_grouped = v == "grouped";
    } else if (a.rfind("--adafactor_fused_cpu=", 0) == 0) {
      o.adafactor_fused_cpu = BoolFlag("--adafactor_fused_cpu", a.substr(22));
    } else if (a == "--phases" || a == "--phases=true") {
      o.phases = true;
    } else if (a == "--count_ops" || a == "--count_ops=true") {
      o.count_ops = true;
    } else if (a.rfind("--trace_dir=", 0) == 0) {
      o.trace_dir = a.substr(12);
    } else if (a.rfind("--batch=", 0) == 0) {
      o.batch = PositiveFlag("--batch", a.substr(8));
    } else if (a.rfind("--inputs=", 0) == 0) {
      o.inputs = PositiveFlag("--inputs", a.substr(9));
    } else if (a.rfind("--targets=", 0) == 0) {
      o.targets = PositiveFlag("--targets", a.substr(10));
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  o.device = t5xx::device::ResolveDevice(device, 0, "--device (T5XX_BENCH_DEVICE)");
  o.steps = o.smoke ? 2 : 10;
  if (!steps.empty()) {
    try {
      size_t used = 0;
      o.steps = std::stoll(steps, &used);
      if (used != steps.size() || o.steps < 1) throw std::invalid_argument(steps);
    } catch (const std::exception&) {
      throw t5xx::Error("--steps (T5XX_BENCH_STEPS) = '" + steps +
                        "': give a whole number of timed steps >= 1, e.g. --steps=10");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  // Same threading as the t5xx binary (src/t5xx/cli/main.cc).
  if (!std::getenv("OMP_NUM_THREADS")) {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  try {
    g_options = ParseOptions(&argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "t5xx_gpu_train_bench: error: " << e.what() << "\n";
    return 2;
  }
  t5xx::device::SetCurrentDevice(g_options.device);
  try {
    ApplySwitches(g_options);
  } catch (const std::exception& e) {
    std::cerr << "t5xx_gpu_train_bench: error: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "[gpu_train_bench] device: " << t5xx::device::Describe(g_options.device)
            << (g_options.smoke ? " (smoke sizes)" : "") << ", " << g_options.steps
            << " timed steps per configuration\n";
  for (BenchConfig cfg : Configs(g_options.smoke)) {
    if (g_options.batch > 0) cfg.batch = g_options.batch;
    if (g_options.inputs > 0 && cfg.encoder_decoder) cfg.inputs = g_options.inputs;
    if (g_options.targets > 0) cfg.targets = g_options.targets;
    benchmark::RegisterBenchmark(("BM_GpuTrain/" + cfg.name).c_str(), BM_GpuTrain, cfg)
        ->Iterations(g_options.steps)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
