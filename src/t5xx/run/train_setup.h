// Loading a train configuration, as t5x's train.py does before train():
// every configurable t5xx knows is registered (RegisterConfigurables), the
// gin files and bindings are parsed by the caller into a gin::Config, which
// LoadTrainConfig finalizes; it then reads the whole run (ReadTrainSetup),
// registers the tasks -- t5xx's demo tasks, then those defined in gin --
// and refuses bindings nothing read. Shared by `t5xx train` and `t5xx
// config` (and later infer and eval).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// Registers every configurable t5xx knows: t5x's model, optimizer, dataset
// and train configurables (gin_readers.h) and seqio's (seqio_gin.h).
// Throws t5xx::Error if one is already present.
void RegisterConfigurables(gin::Registry& registry);

// Reads everything `t5xx train` needs from a finalized gin Config, the way
// t5x's train() receives it (see gin_readers.h for each part). Throws
// t5xx::Error naming the binding for a reference to the wrong configurable,
// a value of the wrong type or range, or an option not implemented yet.
TrainSetup ReadTrainSetup(gin::Config& config);

// Options that come from the command line, not from gin.
struct RunOptions {
  std::string data_dir;           // the demo corpus; relative vocabularies
  bool skip_bad_records = false;  // file sources' default (--skip_bad_records)
  // --device: auto (a GPU when there is one, else the CPU), cpu, cuda
  // (LOCAL_RANK's GPU) or cuda:N (run/device_setup.h).
  std::string device = "auto";
  // --allow_tf32: float32 matmuls on CUDA may use TF32 (on, as JAX's
  // default precision on the same GPU; --allow_tf32=false: full float32,
  // device::SetCudaMatmulPrecision).
  bool allow_tf32 = true;
  // --peak_flops_per_s: the peak FLOP/s of one process's device that
  // timing/mfu divides by; 0 = a GPU's data-sheet peak, else the best
  // measured matmul peak (trainer/matmul_peak_cache.h).
  double peak_flops_per_s = 0;
  // --int8_weights (infer and eval): float32 kernels multiplied as int8
  // with per-output-column scales (models/networks/int8_weights.h).
  bool int8_weights = false;
  // seqio's --module_import (t5xx data, cache_tasks): modules whose tasks to
  // register; t5.data.mixtures / t5.data.tasks register t5's catalog
  // (catalog/t5_catalog.h), as importing them in a gin file or binding
  // MIXTURE_OR_TASK_MODULE does.
  std::vector<std::string> module_imports;
};

// A parsed, finalized and fully read train configuration.
struct LoadedTrainConfig {
  std::unique_ptr<gin::Registry> registry;
  std::unique_ptr<gin::Config> config;  // points into *registry
  // The entry point the config was read for: "train", "infer" or "eval"
  // (`t5xx config` reads the one its files configure).
  std::string command = "train";
  TrainSetup setup;    // command train, config, model_info
  InferSetup infer;    // command infer
  EvalSetup eval;      // command eval
  RunOptions options;
  // Why the demo task is not registered (its corpus is missing), else empty.
  std::optional<std::string> demo_problem;
};

// Registers the tasks, explicitly at start-up: t5xx's demo tasks first (so
// gin mixtures may name them), then the tasks and mixtures defined in
// `config` (finalized; may be null), into seqio's global registries.
// Returns why the demo tasks are not registered (their corpus is missing),
// else nullopt. Throws t5xx::Error naming the gin binding of a bad task.
std::optional<std::string> RegisterTasks(gin::Config* config, const RunOptions& options);

// A registry with RegisterConfigurables applied, and an empty config over it
// to parse gin files and bindings into.
LoadedTrainConfig NewTrainConfig();

// Finalizes `loaded.config` for the command's entry point (the roots
// __main__.train -- or __main__.infer for command "infer", __main__.evaluate
// for "eval" -- and t5xx.seqio.register), reads its setup (setup, infer or
// eval), registers the demo tasks and the
// gin-defined tasks into seqio's global registries, and refuses bindings
// nothing read (RequireAllBindingsRead; the note about ignored ones goes to
// `notes`). `command` names the t5xx command in messages. Throws
// t5xx::Error with every config error found (gin::Config::Finalize).
void LoadTrainConfig(LoadedTrainConfig& loaded, RunOptions options, const std::string& command,
                     std::ostream& notes);

}  // namespace t5xx::run
