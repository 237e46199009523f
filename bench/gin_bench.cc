// Parsing and validating a 2,000-binding gin config (target: < 50 ms).
//
//   build/bin/t5xx_gin_bench
//
// The config mixes the shapes t5x configs use: imports, macros, the block
// form, scoped bindings, references and dict/tuple literals. It has 2,000
// bindings on t5xx's registered t5x configurables (run::RegisterConfigurables):
// 1,000 blocks of two scoped DatasetConfig bindings. Each iteration parses
// the text and runs Config::Finalize (alias and macro resolution, registry
// and type checks) — what every t5xx command does before any work.
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>

#include "t5xx/config/config.h"
#include "t5xx/run/train_setup.h"

namespace {

std::string MakeConfig(int num_bindings) {
  std::ostringstream g;
  g << "from __gin__ import dynamic_registration\n"
       "from t5x import utils\n"
       "BATCH = 128\n"
       "LENGTHS = {'inputs': 512, 'targets': 114}\n";
  for (int i = 0; i < num_bindings / 2; ++i) {
    g << "scope_" << i << "/utils.DatasetConfig:\n"
      << "  task_feature_lengths = %LENGTHS\n"
      << "  batch_size = " << (i % 7 == 0 ? "%BATCH" : std::to_string(i + 1)) << "\n";
  }
  return g.str();
}

void BM_ParseAndValidate(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string text = MakeConfig(n);
  t5xx::gin::Registry registry;
  t5xx::run::RegisterConfigurables(registry);
  for (auto _ : state) {
    t5xx::gin::Config config(&registry);
    config.ParseString(text, "bench.gin");
    config.Finalize();
    benchmark::DoNotOptimize(&config);
  }
  state.counters["bindings"] = n;
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseAndValidate)->Arg(2000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
