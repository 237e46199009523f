// Checkpoint save and restore throughput of T5.1.1 small with its Adafactor
// state (t5x's layout: msgpack index + gzip-1 zarr chunks, fsync'ed,
// atomic), and how long training blocks per save when saves run in the
// background (AsyncCheckpointer) versus synchronously.
//
//   build/bin/t5xx_checkpoint_bench [--benchmark_filter=...]
//
// Counters (MB = 10^6 bytes of uncompressed array data, i.e. what t5x's
// float32 train state holds; rates over wall-clock time):
//   BM_DiskWritePeak   sequential write + fsync of 256 MB of random bytes
//                      to the same directory: the file system's rate, the
//                      ceiling of any checkpointer here (MB/s).
//   BM_GzipPeak        gzip level 1 (what t5x's TensorStore spec asks for)
//                      of 64 MB of the model's float32 parameters on one
//                      thread (MB/s).
//   BM_SaveSync        SaveTrainState: copy + compress + write + commit
//                      (MB/s; blocking_s = all of it).
//   BM_SaveAsync       the blocking part of an asynchronous save
//                      (SnapshotTrainState + handing over), blocking_s per
//                      save, and the background write (write_s) measured
//                      until the commit.
//   BM_Restore         RestoreTrainState of that checkpoint into a fresh
//                      model and optimizer (MB/s).
// The directory is $T5XX_BENCH_DIR, else /tmp (the disk the numbers are
// for). The peer, t5x's own Checkpointer on the same state shapes, is
// measured by bench/t5x_checkpoint_bench.py.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include "t5xx/checkpoints/async_checkpointer.h"
#include "t5xx/checkpoints/compression.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/trainer/checkpoint_restore.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

fs::path BenchDir(const std::string& name) {
  const char* env = std::getenv("T5XX_BENCH_DIR");
  fs::path d = fs::path(env ? env : "/tmp") / ("t5xx_checkpoint_bench_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// T5.1.1 small (77M parameters) with an initialised Adafactor, built once.
struct SmallState {
  std::unique_ptr<t5xx::models::EncoderDecoderModel> model;
  t5xx::models::ParamStore params;
  std::unique_ptr<t5xx::optim::Adafactor> optimizer;
  double bytes = 0;  // uncompressed array bytes of a checkpoint
  SmallState() {
    model = std::make_unique<t5xx::models::EncoderDecoderModel>(
        t5xx::models::Transformer(t5xx::models::T5_1_1Config("small")), 1e-4, 0.0,
        t5xx::models::LossNormalizingFactor{});
    params = model->InitParams(0);
    optimizer = std::make_unique<t5xx::optim::Adafactor>(t5xx::optim::AdafactorConfig{});
    optimizer->Init(params);
    for (const auto& a : t5xx::trainer::SnapshotTrainState(params, *optimizer).arrays) {
      bytes += static_cast<double>(a.bytes.size());
    }
  }
};

SmallState& State() {
  static SmallState s;
  return s;
}

void BM_DiskWritePeak(benchmark::State& state) {
  const fs::path dir = BenchDir("disk");
  std::vector<char> buf(256 << 20);
  std::mt19937 rng(0);
  for (auto& c : buf) c = static_cast<char>(rng());
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const int fd = ::open((dir / "blob").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    size_t off = 0;
    while (off < buf.size()) {
      const ssize_t n = ::write(fd, buf.data() + off, buf.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::fsync(fd);
    ::close(fd);
    state.SetIterationTime(Since(t0));
  }
  state.counters["MB_per_s"] = benchmark::Counter(
      static_cast<double>(buf.size()) / 1e6 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  fs::remove_all(dir);
}

void BM_GzipPeak(benchmark::State& state) {
  // The first 64 MB of the model's parameters, as saved.
  std::vector<uint8_t> data;
  for (const auto& a : t5xx::trainer::SnapshotTrainState(State().params, *State().optimizer).arrays) {
    data.insert(data.end(), a.bytes.begin(), a.bytes.end());
    if (data.size() >= (64u << 20)) break;
  }
  data.resize(64u << 20);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(t5xx::checkpoints::GzipCompress(data.data(), data.size(), 1));
    state.SetIterationTime(Since(t0));
  }
  state.counters["MB_per_s"] = benchmark::Counter(
      static_cast<double>(data.size()) / 1e6 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void BM_SaveSync(benchmark::State& state) {
  SmallState& s = State();
  const fs::path dir = BenchDir("sync");
  int64_t step = 0;
  double blocking = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const auto c = t5xx::trainer::SnapshotTrainState(s.params, *s.optimizer);
    t5xx::checkpoints::SaveCheckpoint(dir.string(), step++, t5xx::checkpoints::ArrayRefs(c.arrays));
    const double t = Since(t0);
    blocking += t;
    state.SetIterationTime(t);
    state.PauseTiming();
    fs::remove_all(dir / ("checkpoint_" + std::to_string(step - 1)));
    state.ResumeTiming();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["MB_per_s"] = benchmark::Counter(s.bytes / 1e6 * n, benchmark::Counter::kIsRate);
  state.counters["blocking_s"] = blocking / n;
  state.counters["MB"] = s.bytes / 1e6;
  fs::remove_all(dir);
}

void BM_SaveAsync(benchmark::State& state) {
  SmallState& s = State();
  const fs::path dir = BenchDir("async");
  t5xx::checkpoints::AsyncCheckpointer c(dir.string(), {}, {});
  int64_t step = 0;
  double blocking = 0, write = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    c.Save(t5xx::trainer::SnapshotTrainState(s.params, *s.optimizer, t5xx::trainer::SaveDType::kFloat32));
    const double t = Since(t0);
    blocking += t;
    state.SetIterationTime(t);
    state.PauseTiming();
    for (const auto& r : c.Wait()) {
      write += r.seconds;
      fs::remove_all(r.dir);
    }
    ++step;
    state.ResumeTiming();
  }
  (void)step;
  const double n = static_cast<double>(state.iterations());
  state.counters["blocking_s"] = blocking / n;
  state.counters["write_s"] = write / n;
  state.counters["MB"] = s.bytes / 1e6;
  fs::remove_all(dir);
}

void BM_Restore(benchmark::State& state) {
  SmallState& s = State();
  const fs::path dir = BenchDir("restore");
  const std::string ck = t5xx::trainer::SaveTrainState(dir.string(), s.params, *s.optimizer);
  t5xx::models::ParamStore params = s.model->InitParams(1);
  t5xx::optim::Adafactor opt{t5xx::optim::AdafactorConfig{}};
  opt.Init(params);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(t5xx::trainer::RestoreTrainState(ck, params, &opt, {}));
    state.SetIterationTime(Since(t0));
  }
  state.counters["MB_per_s"] = benchmark::Counter(
      s.bytes / 1e6 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  fs::remove_all(dir);
}

BENCHMARK(BM_DiskWritePeak)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_GzipPeak)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SaveSync)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SaveAsync)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Restore)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
