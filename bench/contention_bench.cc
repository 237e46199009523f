// Training throughput when the machine is shared: T5.1.1 tiny and small
// train steps (float32, as t5xx_train_bench) alone, beside a competing
// process of two busy threads at nice 10, and beside the same at nice 0.
//
//   build/bin/t5xx_contention_bench [--steps=N] [--rounds=R] [--configs=tiny,small]
//                                   [--intra_op_threads=N]
//
// --configs names bench_models.h's configs (tiny, small, base), each timed
// at its BenchConfigs shape.
//
// The competitor is a child process (fork) whose two threads spin on an
// integer increment, its nice value set with setpriority before they start;
// it is killed after each timed span. Each round times `steps` steps alone,
// then beside nice 10, then beside nice 0 (one warm-up step before each), and
// the report gives, per configuration and condition, tokens/s over all rounds
// (input + target positions per second of wall time) and the ratio to alone.
//
// What a fair share is here, on C cores with our T = C threads at nice 0:
// beside two threads at nice 10 (weight 110 against 1024, the kernel's
// sched_prio_to_weight), the process is entitled to about 90% of the cores;
// beside two at nice 0, to C / (C + 2) (50% on 2 cores). Issue 16 asks for
// >= 70% and >= 40% of the alone throughput.
//
// Nothing else should run on the machine meanwhile (check `top`).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_cpu.h"
#include "bench_flags.h"
#include "bench_models.h"
#include "bench_schedule.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"

namespace {

void* Spin(void*) {
  volatile uint64_t x = 0;
  for (;;) x = x + 1;
  return nullptr;
}

// Starts a process of `threads` busy threads at `nice`; returns its pid.
pid_t StartCompetitor(int threads, int nice) {
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    // Only async-signal-safe-ish work before the threads: no libtorch here.
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the benchmark
    if (getppid() == 1) _exit(0);
    setpriority(PRIO_PROCESS, 0, nice);  // before the threads, which inherit it
    // Any core, whatever the benchmark's own thread was pinned to: a
    // competitor's threads are placed by the kernel.
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof(all), &all);
    std::vector<pthread_t> t(static_cast<size_t>(threads));
    for (auto& th : t) pthread_create(&th, nullptr, Spin, nullptr);
    pause();
    _exit(0);
  }
  usleep(200 * 1000);  // let its threads start and settle
  return pid;
}

void StopCompetitor(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

double TimeSteps(t5xx::trainer::Trainer& trainer, const t5xx::models::FeatureBatch& b, int steps) {
  trainer.TrainStep(b);  // warm-up under the new condition
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) trainer.TrainStep(b);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args = t5xx::bench::SetUpBenchCpu(argc, argv);
  int steps = 5, rounds = 2;
  std::string configs = "tiny,small";
  for (const std::string& a : args) {
    if (a.rfind("--steps=", 0) == 0) {
      steps = t5xx::bench::IntFlag(a, "--steps", steps);
    } else if (a.rfind("--rounds=", 0) == 0) {
      rounds = t5xx::bench::IntFlag(a, "--rounds", rounds);
    } else if (a.rfind("--configs=", 0) == 0) {
      configs = a.substr(10);
    } else {
      std::cerr << "unknown argument '" << a
                << "' (flags: --steps=N --rounds=R --configs=tiny,small --intra_op_threads=N)"
                << std::endl;
      return 2;
    }
  }
  std::vector<t5xx::bench::BenchConfig> chosen;
  std::stringstream names(configs);
  for (std::string n; std::getline(names, n, ',');) {
    const t5xx::bench::BenchConfig* c = t5xx::bench::FindBenchConfig(n);
    if (!c) {
      std::cerr << "--configs: unknown configuration '" << n
                << "' (known: " << t5xx::bench::BenchConfigNames() << ")" << std::endl;
      return 2;
    }
    chosen.push_back(*c);
  }
  std::printf("%-40s %-22s %12s %9s\n", "configuration", "condition", "tokens/s", "of alone");
  for (const t5xx::bench::BenchConfig& c : chosen) {
    t5xx::bench::BenchModel bm = t5xx::bench::MakeBenchModel(c.which, "float32");
    t5xx::partitioning::PjitPartitioner partitioner(
        1, t5xx::partitioning::StandardLogicalAxisRules());
    t5xx::trainer::Trainer trainer(*bm.model, bm.model->InitParams(0), t5xx::optim::Adafactor({}),
                                   t5xx::bench::PretrainSchedule(), partitioner);
    const t5xx::models::FeatureBatch b = t5xx::bench::RandomBenchBatch(c.batch, c.in_len, c.tg_len);
    const double tokens = static_cast<double>(c.batch * (c.in_len + c.tg_len) * steps);
    double alone = 0, nice10 = 0, nice0 = 0;
    for (int r = 0; r < rounds; ++r) {
      alone += TimeSteps(trainer, b, steps);
      pid_t p = StartCompetitor(2, 10);
      nice10 += TimeSteps(trainer, b, steps);
      StopCompetitor(p);
      p = StartCompetitor(2, 0);
      nice0 += TimeSteps(trainer, b, steps);
      StopCompetitor(p);
    }
    const std::string label = bm.name + " f32 " + std::to_string(c.batch) + "x(" +
                              std::to_string(c.in_len) + "+" + std::to_string(c.tg_len) + ")";
    const double a = tokens * rounds / alone;
    std::printf("%-40s %-22s %12.1f %9s\n", label.c_str(), "alone", a, "1.00");
    std::printf("%-40s %-22s %12.1f %9.2f\n", label.c_str(), "2 busy threads nice 10",
                tokens * rounds / nice10, alone / nice10);
    std::printf("%-40s %-22s %12.1f %9.2f\n", label.c_str(), "2 busy threads nice 0",
                tokens * rounds / nice0, alone / nice0);
    std::fflush(stdout);
  }
  return 0;
}
