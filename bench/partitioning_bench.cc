// Communication and step time of each partitioning layout, on processes of
// this machine joined over Gloo (as `t5xx launch` starts them).
//
//   build/bin/t5xx_partitioning_bench [STEPS]
//
// For each layout (data x model; ZeRO-3 = t5x's parameter_partitioning_dims
// = 2) it starts data*model copies of itself (torchrun's variables,
// OMP_NUM_THREADS = cores / processes, at least 1), each training a small
// T5.1.1 (emb 256, 4 heads x 64, mlp 1024 gated GELU, 2 + 2 layers, vocab
// 4096; float32, Adafactor; global batch 8 x (64 inputs + 32 targets), random
// tokens) for 2 warm-up and STEPS (default 5) timed steps, and reports from
// rank 0:
//   step_s        median wall time of a train step
//   vs_1x1        step_s / the 1x1 layout's step_s
//   sent_MB       megabytes (1e6) rank 0 sent per step in collectives, counted
//                 as the ring algorithms send (partitioning/collectives/communicator.h
//                 CommunicationStats)
//   min_MB        the layout's theoretical minimum per process per step
//                 (partitioning/communication_plan.h): gradients
//                 2(D-1)/D x P_m, plus Megatron's activation all-reduces
//                 2(M-1)/M x 4 bytes x A / D
//   ratio         sent_MB / min_MB
//   calls         collectives rank 0 took part in per step (all its groups)
//   act_MB        bytes (1e6) the forward pass of one step leaves alive on
//                 rank 0 for the backward pass (device/cpu_caching_allocator.h's
//                 bytes in use -- blocks of 64 KiB and more -- after the loss
//                 less before it): the activations; not for ZeRO-3 layouts,
//                 whose forward pass also holds gathered weights
// Layouts "act-2" use t5x's activation_partitioning_dims = 2 (the residual
// stream split over 'model', partitioning/split_activations.h).
// Environment: T5XX_BENCH_LAYOUTS (';'-separated layout names) runs only
// those; T5XX_BENCH_RESHARD_AFTER_FORWARD=0 keeps ZeRO-3's gathered kernels
// from forward to backward (FSDP's reshard_after_forward=False).
// On a machine with fewer cores than processes, step_s measures sharing,
// not scaling: read the communication columns there.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_cpu.h"
#include "bench_schedule.h"
#include "t5xx/device/cpu_caching_allocator.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/communication_plan.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "t5xx/util/system/free_port.h"

extern char** environ;

namespace {

constexpr int64_t kBatch = 8, kInputs = 64, kTargets = 32;

t5xx::models::T5Config BenchConfig() {
  t5xx::models::T5Config c;
  c.vocab_size = 4096;
  c.emb_dim = 256;
  c.num_heads = 4;
  c.head_dim = 64;
  c.num_encoder_layers = 2;
  c.num_decoder_layers = 2;
  c.mlp_dim = 1024;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  return c;
}

t5xx::models::FeatureBatch RandomBatch(int64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
  at::Tensor in = at::randint(3, 4096, {kBatch, kInputs}, g, at::kLong);
  at::Tensor tg = at::randint(3, 4096, {kBatch, kTargets}, g, at::kLong);
  at::Tensor dec = at::cat({at::zeros({kBatch, 1}, at::kLong), tg.narrow(1, 0, kTargets - 1)}, 1);
  return {{"encoder_input_tokens", in}, {"decoder_target_tokens", tg},
          {"decoder_input_tokens", dec}, {"decoder_loss_weights", at::ones({kBatch, kTargets})}};
}

double HeapInUse() {
  return static_cast<double>(t5xx::device::GetCpuCacheStats().in_use_bytes);
}

// What the forward pass of a train step leaves alive for its backward pass
// (act_MB): a forward pass whose graph is then dropped.
double ForwardKeptBytes(const t5xx::models::BaseTransformerModel& model,
                        const t5xx::trainer::Trainer& t,
                        const t5xx::partitioning::PjitPartitioner& partitioner) {
  const t5xx::models::FeatureBatch batch = partitioner.ShardBatch(RandomBatch(99));
  at::Generator rng = at::detail::createCPUGenerator(1);
  const double before = HeapInUse();
  double kept = 0;
  {
    const t5xx::models::LossOutput out = model.Loss(t.params(), batch, true, &rng, {});
    kept = HeapInUse() - before;
  }
  return kept;
}

int Worker(int64_t num_partitions, int param_dims, int act_dims, int steps) {
  // As `t5xx train` runs (and so that act_MB can count the bytes in use).
  t5xx::device::InstallCpuCachingAllocator(t5xx::device::DefaultCpuCacheLimitBytes(4));
  const std::shared_ptr<const t5xx::partitioning::Communicator> comm =
      t5xx::bench::JoinBenchProcesses();
  t5xx::models::EncoderDecoderModel model{t5xx::models::Transformer(BenchConfig()), 1e-4, 0.0, {}};
  t5xx::partitioning::PjitPartitioner partitioner(
      num_partitions, t5xx::partitioning::StandardLogicalAxisRules(act_dims, param_dims), comm);
  const char* reshard = std::getenv("T5XX_BENCH_RESHARD_AFTER_FORWARD");
  partitioner.set_reshard_after_forward(!reshard || std::string(reshard) != "0");
  t5xx::trainer::Trainer t(model, t5xx::partitioning::InitPlacedParams(partitioner, model, 0),
                           t5xx::optim::Adafactor({}), t5xx::bench::ConstantSchedule(0.01),
                           partitioner);
  for (int i = 0; i < 2; ++i) t.TrainStep(RandomBatch(i));
  const double act = param_dims == 1 ? ForwardKeptBytes(model, t, partitioner) : -1;
  const double sent0 = comm->stats().sent_bytes;
  const int64_t calls0 = comm->stats().collectives;
  std::vector<double> times;
  for (int i = 0; i < steps; ++i) {
    comm->Barrier();
    const auto t0 = std::chrono::steady_clock::now();
    t.TrainStep(RandomBatch(100 + i));
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  // The barriers' own bytes are nil (Gloo's barrier carries no tensor).
  const double sent = (comm->stats().sent_bytes - sent0) / steps;
  // Less the barrier before each step.
  const double calls = static_cast<double>(comm->stats().collectives - calls0) / steps - 1;
  std::sort(times.begin(), times.end());
  // The layout's least communication (partitioning/communication_plan.h).
  const double minimum =
      t5xx::partitioning::MinimumCommunicationPerStep(
          partitioner.mesh(),
          t5xx::partitioning::ParameterBytesPerModelShard(t.DescribeVariables()),
          t5xx::partitioning::TensorParallelActivationElements(BenchConfig(), kBatch, kInputs,
                                                               kTargets))
          .total();
  if (comm->rank() == 0) {
    std::printf("RESULT %.6f %.1f %.1f %.1f %.1f\n", times[times.size() / 2], sent, minimum, calls,
                act);
  }
  return 0;
}

struct Result {
  double step_s = 0, sent = 0, minimum = 0, calls = 0, act = -1;
};

Result Launch(const std::string& self, int world, int64_t model, int param_dims, int act_dims,
              int steps) {
  const int port = t5xx::FreeLocalPort();
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / world);
  const std::string out = "/tmp/t5xx_partitioning_bench_" + std::to_string(getpid());
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    std::vector<std::string> env = {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(world),
                                    "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                                    "OMP_NUM_THREADS=" + std::to_string(threads)};
    for (char** e = environ; *e; ++e) {
      if (std::string(*e).rfind("T5XX_BENCH_", 0) == 0) env.push_back(*e);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = {self, "--worker", std::to_string(model),
                                     std::to_string(param_dims), std::to_string(act_dims),
                                     std::to_string(steps)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const std::string file = out + "." + std::to_string(r);
    posix_spawn_file_actions_addopen(&fa, 1, file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), envp.data()) != 0) {
      std::perror("posix_spawn");
      std::exit(1);
    }
    posix_spawn_file_actions_destroy(&fa);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << "a worker failed" << std::endl;
      std::exit(1);
    }
  }
  Result res;
  FILE* f = std::fopen((out + ".0").c_str(), "r");
  if (!f || std::fscanf(f, "RESULT %lf %lf %lf %lf %lf", &res.step_s, &res.sent, &res.minimum,
                        &res.calls, &res.act) != 5) {
    std::cerr << "no result from rank 0" << std::endl;
    std::exit(1);
  }
  std::fclose(f);
  for (int r = 0; r < world; ++r) std::remove((out + "." + std::to_string(r)).c_str());
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 6 && std::string(argv[1]) == "--worker") {
    try {
      return Worker(std::atoll(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]),
                    std::atoi(argv[5]));
    } catch (const std::exception& e) {
      std::cerr << e.what() << std::endl;
      return 1;
    }
  }
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  struct Layout {
    const char* name;
    int data, model, param_dims, act_dims;
  };
  const std::vector<Layout> layouts = {
      {"1x1", 1, 1, 1, 1},         {"2x1", 2, 1, 1, 1},         {"4x1", 4, 1, 1, 1},
      {"1x2", 1, 2, 1, 1},         {"1x4", 1, 4, 1, 1},         {"2x2", 2, 2, 1, 1},
      {"1x2 act-2", 1, 2, 1, 2},   {"1x4 act-2", 1, 4, 1, 2},   {"2x2 act-2", 2, 2, 1, 2},
      {"2x1 ZeRO-3", 2, 1, 2, 1},  {"4x1 ZeRO-3", 4, 1, 2, 1},  {"2x2 ZeRO-3", 2, 2, 2, 1}};
  std::printf("cores %u; T5.1.1 emb 256, 2+2 layers, vocab 4096; batch %lld x (%lld + %lld); "
              "%d timed steps\n",
              std::thread::hardware_concurrency(), static_cast<long long>(kBatch),
              static_cast<long long>(kInputs), static_cast<long long>(kTargets), steps);
  std::printf("%-12s %8s %7s %9s %9s %6s %6s %7s\n", "layout", "step_s", "vs_1x1", "sent_MB",
              "min_MB", "ratio", "calls", "act_MB");
  double base = 0;
  // T5XX_BENCH_LAYOUTS="1x1;2x1;2x1 ZeRO-3" runs only those (1x1 first
  // when listed, so vs_1x1 means what it says).
  const char* only = std::getenv("T5XX_BENCH_LAYOUTS");
  for (const Layout& l : layouts) {
    if (only && (";" + std::string(only) + ";").find(";" + std::string(l.name) + ";") ==
                    std::string::npos) {
      continue;
    }
    const Result r = Launch(self, l.data * l.model, l.model, l.param_dims, l.act_dims, steps);
    if (base == 0) base = r.step_s;
    std::printf("%-12s %8.3f %7.2f %9.2f %9.2f %6s %6.0f %7s\n", l.name, r.step_s,
                r.step_s / base, r.sent / 1e6, r.minimum / 1e6,
                r.minimum > 0 ? std::to_string(r.sent / r.minimum).substr(0, 5).c_str() : "-",
                r.calls, r.act >= 0 ? std::to_string(r.act / 1e6).substr(0, 6).c_str() : "-");
    std::fflush(stdout);
  }
  return 0;
}
