// See train.h.
#include "t5xx/run/train.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/device/cpu_caching_allocator.h"
#include "t5xx/device/cpu_runtime.h"
#include "t5xx/device/device.h"
#include "t5xx/kernels/bf16_matmul.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/models/memory_plan.h"
#include "t5xx/partitioning/collectives/c10d_communicator.h"
#include "t5xx/partitioning/communication_plan.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/run/inference/evaluator.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/run/memory.h"
#include "t5xx/run/model.h"
#include "t5xx/run/model_dir.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/run/preflight.h"
#include "t5xx/trainer/matmul_peak_cache.h"
#include "t5xx/trainer/train_metrics.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

namespace {

// The seqio shard the train data is read as: this data replica's (seqio's
// per-shard order), or the whole data, of which each replica keeps its
// rows of every global batch (train.data_order = 'global').
seqio::ShardInfo TrainDataShard(const TrainSetup& s, const partitioning::BasePartitioner& p) {
  return s.global_data_order ? seqio::ShardInfo{0, 1} : p.data_shard_info();
}

// The dataset state files a checkpoint holds: with all_processes, every
// data shard's position (state of this process: `state`), gathered over
// the communicator from the processes at model coordinate 0; else this
// process's own only.
std::vector<checkpoints::ExtraFile> DataStateFiles(const std::string& state,
                                                   const seqio::ShardInfo& shard,
                                                   const partitioning::BasePartitioner& p,
                                                   bool all_processes) {
  const partitioning::Communicator& comm = p.communicator();
  // One whole stream (global order): every process holds the same state.
  if (!all_processes || comm.size() == 1 || shard.num_shards == 1) {
    return {{checkpoints::DatasetStateFileName(shard.index, shard.num_shards), state}};
  }
  const std::vector<std::string> all = partitioning::AllGatherStrings(comm, state);
  const int64_t model = p.mesh().model;
  std::vector<checkpoints::ExtraFile> files;
  for (int r = 0; r < comm.size(); ++r) {
    if (r % model != 0) continue;  // model coordinate 0 (model fastest)
    files.push_back({checkpoints::DatasetStateFileName(static_cast<int>(r / model),
                                                       static_cast<int>(p.mesh().data)),
                     all[static_cast<size_t>(r)]});
  }
  return files;
}

// A local batch's counts summed over the data axis: the global batch's
// (for the timing and data metrics).
trainer::BatchCounts GlobalBatchCounts(const models::FeatureBatch& batch,
                                       const partitioning::BasePartitioner& p) {
  trainer::BatchCounts c = trainer::CountBatch(batch);
  if (p.mesh().data == 1) return c;
  std::vector<double> v = {static_cast<double>(c.examples), static_cast<double>(c.target_tokens)};
  for (const auto& [name, f] : c.features) {
    v.insert(v.end(), {static_cast<double>(f.non_padding), static_cast<double>(f.size),
                       static_cast<double>(f.packed_examples)});
  }
  at::Tensor sums = at::tensor(v, at::kDouble);
  p.ReduceMetrics(sums);
  const double* x = sums.data_ptr<double>();
  c.examples = static_cast<int64_t>(x[0]);
  c.target_tokens = static_cast<int64_t>(x[1]);
  size_t i = 2;
  for (auto& [name, f] : c.features) {
    f.non_padding = static_cast<int64_t>(x[i]);
    f.size = static_cast<int64_t>(x[i + 1]);
    f.packed_examples = static_cast<int64_t>(x[i + 2]);
    i += 3;
  }
  return c;
}

// The peak FLOP/s of this process's device that timing/mfu divides by, and
// where it came from: --peak_flops_per_s; on a GPU its dense bfloat16
// tensor-core peak from the data sheet (device::DenseBf16PeakFlops); else
// (the CPU, or a GPU t5xx does not know) the best matmul peak measured on
// this machine in the activation dtype (bfloat16 on a GPU), kept between
// runs (trainer/matmul_peak_cache.h). The cache's warnings go to `log`.
std::pair<double, std::string> ProcessPeakFlops(const RunOptions& options, at::Device device,
                                                at::ScalarType activation_dtype,
                                                std::ostream& log) {
  if (options.peak_flops_per_s > 0) {
    return {options.peak_flops_per_s, "given by --peak_flops_per_s"};
  }
  if (device.is_cuda()) {
    const double sheet = device::DenseBf16PeakFlops(device::DeviceName(device));
    if (sheet > 0) {
      return {sheet, "dense bfloat16 peak of the " + device::DeviceName(device) + " (data sheet)"};
    }
    activation_dtype = at::kBFloat16;
  }
  const trainer::ResolvedMatmulPeak peak = trainer::MeasuredMatmulPeak(device, activation_dtype);
  for (const std::string& w : peak.warnings) log << "[setup] warning: " << w << std::endl;
  return {peak.flops_per_s, peak.description};
}

// The setup lines of the CPU runtime and the bfloat16 matmul choice.
void LogCpuSetup(const at::Device& device, at::ScalarType activation_dtype, std::ostream& log) {
  if (device.is_cpu() && !device::ConfiguredCpuRuntimeDescription().empty()) {
    log << "[setup] CPU: " << device::ConfiguredCpuRuntimeDescription() << " (device/cpu_runtime.h)"
        << std::endl;
  }
  if (device.is_cpu() && activation_dtype == at::kBFloat16) {
    const std::string bf16_matmul = models::CpuBf16Matmul().Describe();
    log << "[setup] bfloat16 matmul: " << bf16_matmul
        << " (kernels/bf16_matmul.h; T5XX_BF16_MATMUL)" << std::endl;
  }
}

// t5x's restore order (run/restore.h): MODEL_DIR's latest checkpoint, else
// utils.CheckpointConfig.restore; parameters and optimizer slots replace
// the fresh ones (which stay where the options allow keys to be missing).
std::optional<trainer::RestoreReport> RestoreIntoState(
    const ValidatedTrainRun& run, const partitioning::BasePartitioner& partitioner,
    const seqio::ShardInfo& data_shard, models::ParamStore& params, optim::Optimizer& optimizer,
    std::ostream& log) {
  std::optional<trainer::RestoreReport> restored;
  for (const std::string& note : run.restore_notes) log << "[restore] " << note << std::endl;
  if (run.restore) {
    const auto t0 = std::chrono::steady_clock::now();
    // Each process reads only the boxes it holds on this mesh, whatever mesh
    // wrote the checkpoint.
    trainer::RestoreOptions options = run.restore->options;
    options.scan = run.loop.scan_layout;
    if (partitioner.mesh().size() > 1) {
      options.owned_slice = trainer::OwnedSlices(
          partitioner.DescribeVariables(params, trainer::SlotShapes(optimizer)));
    }
    try {
      restored = trainer::RestoreTrainState(run.restore->checkpoint_dir, params, &optimizer,
                                            options, data_shard.index, data_shard.num_shards);
    } catch (const Error& e) {
      if (!run.restore->resuming ||
          std::string(e.what()).find("does not match the model") == std::string::npos) {
        throw;
      }
      // utils.RestoreCheckpointConfig (and its strict/assignment_map) does
      // not apply when resuming, as in t5x: say so, not only its hints.
      throw Error("resuming from MODEL_DIR's latest checkpoint: " + std::string(e.what()) +
                  "\nThis MODEL_DIR was written by a run with another model or optimizer "
                  "configuration; utils.RestoreCheckpointConfig does not apply when resuming "
                  "(as in t5x). Resume with the configuration that wrote it, or train into a "
                  "new MODEL_DIR (with utils.RestoreCheckpointConfig.path = '" +
                  run.restore->checkpoint_dir + "' to start from this checkpoint)");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log << "[restore] " << WithUrls(run.restore->description) << ": step " << restored->step << ", "
        << restored->bytes_read / (1024.0 * 1024.0) << " MiB read in " << seconds << " s"
        << std::endl;
    for (const std::string& note : restored->notes) log << "[restore]   " << note << std::endl;
  }
  return restored;
}

// The memory plan of this process's layout, printed, and checked against
// what is still to come (the parameters, their optimizer state and the
// runtime are allocated by now): refuses a run that cannot fit before
// anything is written.
void CheckMemoryPlanOfLayout(const TrainSetup& s, const PreparedTrainRun& out,
                             const at::Device& device, std::ostream& log) {
  const std::vector<models::ParamSpec> specs = out.model->ParamSpecs();
  const models::MemoryPlan plan =
      PlanMemory(s, *out.model, specs, out.partitioner->mesh(), out.partitioner->rules());
  const int64_t available = AvailableMemoryBytes(device);
  log << "[setup] memory plan per process: " << plan.ToString();
  if (available > 0) {
    log << "; available " << static_cast<double>(available) / (1024.0 * 1024 * 1024) << " GiB";
  }
  log << std::endl;
  const int64_t allocated = plan.runtime + plan.parameters + plan.optimizer_state;
  if (available >= 0 && plan.peak() - allocated > available) {
    CheckMemoryPlan(plan, available, allocated,
                    LayoutsThatFit(s, *out.model, specs, out.partitioner->mesh().size(), available,
                                   allocated));
  }
}

// What a checkpoint's data positions are, for a run that finds none for
// itself: the t5xx_train_ds-<i>-of-<n>.json files it holds, and what this
// run would set to continue them.
std::string SavedDataPositions(const std::string& checkpoint_dir, bool global_order) {
  std::set<int> shard_counts;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(checkpoint_dir, ec)) {
    if (auto n = checkpoints::DatasetStateFileCount(e.path().filename().string())) {
      shard_counts.insert(*n);
    }
  }
  if (shard_counts.empty()) return "the checkpoint holds no data position";
  std::string out;
  for (int n : shard_counts) {
    out += out.empty() ? "" : "; ";
    if (n == 1) {
      out += "it holds one position (t5xx_train_ds-000-of-001.json), saved with "
             "train.data_order = 'global' or by one data replica: set train.data_order = "
             "'global' to continue it on any data-axis size";
    } else {
      out += "it holds the positions of " + std::to_string(n) +
             " data shards, saved with train.data_order = 'per_shard' on a data axis of " +
             std::to_string(n) + ": continue them with that order and size";
    }
  }
  return out + (global_order ? " (this run: 'global')" : " (this run: 'per_shard')");
}

// The train data, restored to the checkpoint's position when it has one,
// with its first batch read (bad lengths, splits or files fail here, before
// anything is written).
std::shared_ptr<BatchStream> OpenTrainData(const TrainSetup& s, const ValidatedTrainRun& run,
                                           const PreparedTrainRun& out,
                                           const std::optional<trainer::RestoreReport>& restored,
                                           std::ostream& log) {
  const seqio::ShardInfo shard = TrainDataShard(s, *out.partitioner);
  const uint64_t seed = static_cast<uint64_t>(s.random_seed);
  std::shared_ptr<BatchStream> train_stream =
      GetBatchStream(s.train_dataset, "train", *out.model, /*num_epochs=*/-1, seed, shard);
  if (restored && run.restore->restore_dataset) {
    const std::string file = run.restore->checkpoint_dir + "/" +
                             checkpoints::DatasetStateFileName(shard.index, shard.num_shards);
    if (restored->dataset_state) {
      const auto t0 = std::chrono::steady_clock::now();
      train_stream->RestoreState(*restored->dataset_state, file);
      const double replay_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log << "[restore] the train data continues where step " << restored->step << " left it ("
          << WithUrls(file) << ", " << restored->dataset_state->size() << " bytes; " << replay_s
          << " s to restore and replay the pipeline's open units)" << std::endl;
    } else {
      T5XX_CHECK(!run.restore->require_dataset,
                 "utils.RestoreCheckpointConfig.restore_dataset = True, but " + file +
                     " does not exist (the checkpoint holds no data position); set "
                     "restore_dataset = False to start the data from its beginning");
      log << "[restore] WARNING: " << file << " does not exist: the train data starts from its "
          << "beginning (t5x does the same without a dataset checkpoint); "
          << SavedDataPositions(run.restore->checkpoint_dir, s.global_data_order) << std::endl;
    }
  }
  // Peek (the read-ahead batch is part of the saved position).
  T5XX_CHECK(train_stream->HasNext(), Describe(s.train_dataset, "train") +
                                          " yields no full batch of " +
                                          std::to_string(s.train_dataset.batch_size) + " examples");
  return train_stream;
}

// t5x's utils.get_training_eval_datasets. Each stream restarts for every
// evaluation and repeats its data for as long as the evaluation reads
// (t5x: .unbatch().repeat().batch().take(eval_steps)), so every evaluation
// reads the same eval_steps full batches, however small the split. (t5x
// repeats packed rows, t5xx the task's examples, so rows can differ where
// an epoch ends.) An empty split yields nothing.
void AddTrainEvalDatasets(const TrainSetup& s, const ValidatedTrainRun& run,
                          PreparedTrainRun& out) {
  const seqio::ShardInfo shard = out.partitioner->data_shard_info();
  const uint64_t seed = static_cast<uint64_t>(s.random_seed);
  for (const DatasetConfig& cfg : run.eval_datasets) {
    const models::BaseTransformerModel* model = out.model.get();
    auto make_eval = [cfg, model, seed, shard]() {
      return GetTrainingEvalBatches(cfg, *model, /*num_epochs=*/-1, seed, shard);
    };
    T5XX_CHECK(make_eval()().has_value(),
               Describe(cfg, "train_eval") + " yields no full batch of " +
                   std::to_string(cfg.batch_size) +
                   " examples; lower train_eval/utils.DatasetConfig.batch_size or set "
                   "train.train_eval_dataset_cfg = None");
    out.eval_datasets.emplace_back(cfg.mixture_or_task_name, make_eval);
  }
}

// t5x's inference evaluation: seqio's Evaluator over infer_eval_dataset_cfg,
// its examples read now (so a bad task or split fails before anything is
// written), decoded with the trainer's parameters after each train-eval;
// logs under MODEL_DIR/inference_eval/ (rank 0 writes them).
std::shared_ptr<InferenceEvaluator> MakeInferenceEvaluator(const TrainSetup& s,
                                                           PreparedTrainRun& out,
                                                           std::ostream& log) {
  std::shared_ptr<InferenceEvaluator> infer_evaluator;
  if (s.infer_eval_dataset) {
    out.model->set_eos_id(TargetsVocabulary(s.infer_eval_dataset->mixture_or_task_name)->eos_id());
    infer_evaluator = std::make_shared<InferenceEvaluator>(
        *s.infer_eval_dataset, "infer_eval", s.evaluator, s.model_dir + "/inference_eval",
        out.partitioner->communicator().rank() == 0);
    if (infer_evaluator->empty()) {
      // t5x's train() drops an Evaluator without eval_tasks, as here.
      log << "[setup] no inference evaluation: " << infer_evaluator->no_tasks_reason() << std::endl;
      infer_evaluator.reset();
    }
    for (const std::string& task :
         infer_evaluator ? infer_evaluator->task_names() : std::vector<std::string>{}) {
      log << "[setup] inference evaluation of " << task << ": "
          << infer_evaluator->num_examples(task) << " examples of split '"
          << s.infer_eval_dataset->split << "', decoded every eval_period" << std::endl;
    }
  }
  return infer_evaluator;
}

// The train loop's inputs: inference evaluation, data positions per shard,
// batch counts.
void ConfigureLoop(const TrainSetup& s, const ValidatedTrainRun& run,
                   std::shared_ptr<InferenceEvaluator> infer_evaluator,
                   std::shared_ptr<BatchStream> train_stream, PreparedTrainRun& out,
                   std::ostream& log) {
  const seqio::ShardInfo shard = TrainDataShard(s, *out.partitioner);
  out.loop = run.loop;
  if (infer_evaluator) {
    // The data replicas decode their shares, unless ZeRO-3 needs them in
    // lockstep (ReplicasOf).
    out.loop.infer_eval = [infer_evaluator, model = out.model.get(), trainer = out.trainer.get(),
                           model_config = s.model, console = &log,
                           replicas = ReplicasOf(*out.partitioner)](int64_t step) {
      return infer_evaluator->Evaluate(step, *model, trainer->params(), model_config, *console,
                                       replicas);
    };
  }
  // Monitored metrics that the run will never write are named now.
  std::map<std::string, std::vector<std::string>> infer_metrics;
  auto metric_names = [&](const std::string& task) -> const std::vector<std::string>& {
    auto it = infer_metrics.find(task);
    if (it == infer_metrics.end()) {
      it = infer_metrics.emplace(task, infer_evaluator->MetricNames(task)).first;
    }
    return it->second;
  };
  for (const trainer::ActionConfig& a : out.loop.infer_eval_actions) {
    trainer::ValidateAction(a, "INFER_EVAL",
                            infer_evaluator ? infer_evaluator->task_names()
                                            : std::vector<std::string>());
    if (a.kind == trainer::ActionConfig::Kind::kEarlyStopping) {
      trainer::ValidateInferEvalMetric(a, metric_names(a.task));
    }
  }
  if (out.loop.save_best) {
    // Metric names only for the task monitored (finding them scores it).
    std::map<std::string, std::vector<std::string>> by_task;
    const std::string& monitored = out.loop.save_best->metric_name_to_monitor;
    for (const std::string& t :
         infer_evaluator ? infer_evaluator->task_names() : std::vector<std::string>()) {
      by_task[t] = monitored.rfind("inference_eval/" + t + "/", 0) == 0 ? metric_names(t)
                                                                         : std::vector<std::string>();
    }
    std::vector<std::string> eval_tasks;
    for (const auto& [name, make] : out.eval_datasets) eval_tasks.push_back(name);
    trainer::ValidateMonitoredMetric(monitored, eval_tasks, by_task,
                                     out.loop.save_best->orbax
                                         ? "checkpoints.OrbaxCheckpointManagerInterface"
                                         : "checkpoints.SaveBestCheckpointer");
  }
  out.loop.num_devices = out.partitioner->mesh().size();
  // Each data shard's position is saved with every checkpoint as
  // DatasetStateFileName(shard index, shards), gathered to the chief, which
  // writes them; of processes sharing a shard (model axis > 1) the one at
  // model coordinate 0 provides it. Every process restores its shard's.
  // Under the global order there is one shard, the same on every process.
  out.loop.data_state_files = [train_stream, shard, p = out.partitioner.get()](bool all) {
    return DataStateFiles(train_stream->SaveState(), shard, *p, all);
  };
  out.loop.process_index = shard.index;
  out.loop.process_count = shard.num_shards;
  // Each process reads only its shard (global batch / data axis size rows)
  // and the trainer completes the global step from it.
  out.loop.local_batches = true;
  out.loop.count_batch = [p = out.partitioner.get()](const models::FeatureBatch& b) {
    return GlobalBatchCounts(b, *p);
  };
  const seqio::ShardInfo replica = out.partitioner->data_shard_info();
  const int64_t rows = s.train_dataset.batch_size / replica.num_shards;
  if (s.global_data_order) {
    log << "[setup] data: global order (train.data_order = 'global'): every data replica reads "
        << "the global batches of " << s.train_dataset.batch_size << " examples; replica "
        << replica.index << " of " << replica.num_shards << " keeps rows "
        << replica.index * rows << ".." << (replica.index + 1) * rows - 1 << std::endl;
  } else {
    log << "[setup] data: shard " << shard.index << " of " << shard.num_shards
        << " (seqio ShardInfo; one per data-axis index): " << rows
        << " examples per process of each global batch of " << s.train_dataset.batch_size
        << std::endl;
  }
}

// What this layout must communicate per step at least; the [train] lines
// report what was sent (timing/communication_bytes_per_step).
void LogCommunicationPlan(const TrainSetup& s, const PreparedTrainRun& out,
                          const std::vector<partitioning::VariableInfo>& variables,
                          std::ostream& log) {
  const partitioning::Mesh& mesh = out.partitioner->mesh();
  const partitioning::CommunicationPlan plan = partitioning::MinimumCommunicationPerStep(
      mesh, partitioning::ParameterBytesPerModelShard(variables),
      TensorParallelActivationElements(s, *out.model));
  log << "[setup] communication per step, at least: " << plan.total() / 1e6
      << " MB sent per process (gradients " << plan.gradient_bytes / 1e6
      << " MB over 'data', activations " << plan.activation_bytes / 1e6
      << " MB over 'model'; partitioning/communication_plan.h)" << std::endl;
}

// The run's summary lines: model size, mesh, task, the variable table (the
// chief's) and the communication plan.
void LogRunSummary(const TrainSetup& s, const PreparedTrainRun& out, bool chief,
                   std::ostream& log) {
  const partitioning::Mesh& mesh = out.partitioner->mesh();
  // Every variable's global shape and this process's box, once for the
  // lines below.
  const std::vector<partitioning::VariableInfo> variables = out.trainer->DescribeVariables();
  int64_t num_parameters = 0;  // the whole model's, whatever this process holds
  for (const partitioning::VariableInfo& v : variables) {
    if (v.name.rfind("target/", 0) != 0) continue;
    int64_t n = 1;
    for (int64_t d : v.shape) n *= d;
    num_parameters += n;
  }
  log << "[setup] " << out.model->name() << ", " << num_parameters
      << " parameters; mesh (data=" << mesh.data << ", model=" << mesh.model << "); task "
      << s.train_dataset.mixture_or_task_name << "; batch " << s.train_dataset.batch_size
      << "; lengths";
  for (const auto& [k, v] : s.train_dataset.task_feature_lengths) log << " " << k << "=" << v;
  log << "; model_dir " << s.model_dir << std::endl;
  // The table is rank 0's (t5x logs it once too); every process's bytes
  // follow its specs the same way.
  if (chief) {
    log << "[setup] variables (t5x's partitioning table; bytes of process 0):\n"
        << partitioning::FormatVariableTable(variables);
  }
  LogCommunicationPlan(s, out, variables, log);
  if (s.relative_steps) {
    log << "[setup] train.relative_steps = " << *s.relative_steps << ": training to step "
        << out.trainer->step() + *s.relative_steps << " (train.total_steps = " << s.total_steps
        << " is ignored, as in t5x)" << std::endl;
  }
}

// MFU's inputs: the model FLOPs per step and the peak (ProcessPeakFlops),
// times the processes (the model FLOPs are the global batch's).
void SetMfuInputs(const TrainSetup& s, double process_peak, const std::string& peak_source,
                  PreparedTrainRun& out, std::ostream& log) {
  const partitioning::Mesh& mesh = out.partitioner->mesh();
  out.loop.train_flops_per_step =
      out.model->TrainFlops(s.train_dataset.batch_size,
                            out.model->ModelFeatureLengths(s.train_dataset.task_feature_lengths));
  // The MFU denominator (ProcessPeakFlops, above), times the processes (the
  // model FLOPs are the global batch's).
  out.loop.peak_flops_per_second = process_peak * static_cast<double>(mesh.size());
  log << "[setup] model FLOPs per train step " << out.loop.train_flops_per_step
      << " (models/flops.h); peak " << process_peak / 1e9 << " GFLOP/s"
      << (mesh.size() > 1 ? " per process, x" + std::to_string(mesh.size()) : "")
      << " (timing/mfu = model FLOP/s / peak): " << peak_source << std::endl;
}

}  // namespace

PreparedTrainRun PrepareTrainRun(const LoadedTrainConfig& loaded, const ValidatedTrainRun& run,
                                 std::ostream& log) {
  const TrainSetup& s = loaded.setup;
  // The mesh, the batch splits and the first batches (PreflightTrainRun,
  // which `t5xx config` runs too) need only the process count, so every
  // process checks them before joining the others: a configuration error
  // then stops each with that error, never with one process's Gloo setup
  // broken by another's early exit.
  PreflightTrainRun(loaded, run);
  if (run.memory_problem) throw Error(*run.memory_problem);
  PreparedTrainRun out;
  const at::Device device = SetUpDevice(loaded.options, log);
  // The MFU denominator is measured first, before this run's own threads
  // (the data pipeline's) compete with the measurement (see the end).
  const at::ScalarType activation_dtype = models::ActivationDtype(
      s.model.kind == ModelKind::kEncoderDecoder ? s.model.t5_config.dtype
                                                 : s.model.decoder_only_config.dtype);
  LogCpuSetup(device, activation_dtype, log);
  const auto [process_peak, peak_source] =
      ProcessPeakFlops(loaded.options, device, activation_dtype, log);
  out.model = CreateModel(s.model);
  std::shared_ptr<const partitioning::Communicator> comm = JoinProcesses(device, log);
  auto partitioner =
      std::make_unique<partitioning::PjitPartitioner>(s.num_partitions, s.logical_axis_rules, comm);
  partitioner->set_reshard_after_forward(s.reshard_after_forward);
  out.partitioner = std::move(partitioner);
  // Every process makes the parameters from the seed one at a time and
  // keeps only its piece of each (t5x's jitted init with out_shardings:
  // no process holds the whole model); the optimizer's state follows them,
  // sized from the global shapes through the partitioner's reducer.
  // (Initialised on the host from the seed, so that every device gets the
  // same values; then moved to the run's device, where the optimizer's
  // state is created and a checkpoint is restored into.)
  models::ParamStore params =
      InitParams(*out.model, static_cast<uint64_t>(s.random_seed), out.partitioner.get());
  params.To(device);
  std::unique_ptr<optim::Optimizer> optimizer = optim::MakeOptimizer(s.optimizer);
  optimizer->set_reducer(out.partitioner->reducer());
  if (const auto scan = s.model.scan_layout()) {
    optimizer->set_scanned_layers(
        {scan->param_scan_axis, [](const std::string& n) { return checkpoints::ScannedNameOf(n); }});
  }
  optimizer->Init(params);
  const std::optional<trainer::RestoreReport> restored =
      RestoreIntoState(run, *out.partitioner, TrainDataShard(s, *out.partitioner), params,
                       *optimizer, log);
  out.trainer = std::make_unique<trainer::Trainer>(
      *out.model, std::move(params), std::move(optimizer), optim::LearningRateSchedule(s.lr),
      *out.partitioner, s.num_microbatches, static_cast<uint64_t>(s.random_seed));

  CheckMemoryPlanOfLayout(s, out, device, log);
  std::shared_ptr<BatchStream> train_stream = OpenTrainData(s, run, out, restored, log);
  {
    const int64_t rows = s.train_dataset.batch_size / out.partitioner->data_shard_info().num_shards;
    // (Under the per-shard order the stream's batches are these rows.)
    const int64_t first = out.partitioner->data_shard_info().index * rows;
    out.train_batches = LocalTrainBatches(train_stream, first, rows, restored ? restored->step : 0,
                                          out.partitioner->communicator().rank());
  }
  if (s.train_eval_dataset) AddTrainEvalDatasets(s, run, out);
  ConfigureLoop(s, run, MakeInferenceEvaluator(s, out, log), train_stream, out, log);

  // Only now: MODEL_DIR and the operative config.
  const std::string operative = loaded.config->OperativeConfigString();
  const bool chief = out.partitioner->communicator().rank() == 0;
  if (chief) {
    for (const std::string& removed : CreateModelDir(s.model_dir, operative)) {
      log << "[setup] removed " << removed
          << ": an unfinished checkpoint an interrupted save left (never restored)" << std::endl;
    }
  }
  out.partitioner->communicator().Barrier();  // MODEL_DIR exists for every process
  out.loop.chief = chief;
  out.loop.communicator = comm;  // several processes: each saves its part of a checkpoint
  LogRunSummary(s, out, chief, log);
  out.loop.operative_config = operative;
  if (const auto env = partitioning::DetectProcessEnvironment(); env && env->restart_count > 0) {
    // A launcher restarted the whole job (t5xx launch --max_restarts).
    const char* cause = std::getenv("T5XX_RESTART_CAUSE");
    out.loop.restart_count = env->restart_count;
    out.loop.restart_cause = cause && *cause ? cause : "(the launcher did not say)";
    log << "[setup] restart " << env->restart_count << " of the job, after: "
        << out.loop.restart_cause << std::endl;
  }
  SetMfuInputs(s, process_peak, peak_source, out, log);
  // Start-up's transient blocks (the matmul peak's operands, each whole
  // parameter made before its box was kept, restore's read buffers) go
  // back to the system instead of waiting in the tensor cache for requests
  // of their size (models/memory_plan.h counts them as a start-up phase).
  device::EmptyCpuCache();
  return out;
}

}  // namespace t5xx::run
