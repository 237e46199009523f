// `t5xx model_info`: the table t5x logs at start-up -- every parameter and
// optimizer state array of a train configuration with its shape, logical
// axes and mesh axes under the partitioner's logical axis rules -- and the
// memory plan (run/memory.h) of one process. Takes train's flags; reads no
// data and writes nothing.
//
// --num_devices=N plans N processes (one per device) on paper instead:
// the configured layout (num_partitions, the rules) and every other layout
// of t5x's standard rules on N, each with its peak per process, whether it
// fits --device_memory_gib (default: this machine's available memory), and
// the least communication per step (partitioning/communication_plan.h).
// Nothing is allocated, so any size can be planned. Without it the table is
// printed for one process; a model whose plan does not fit is refused with
// the layouts that would.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
#include "t5xx/partitioning/communication_plan.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/partitioning/sharding.h"
#include "t5xx/run/memory.h"
#include "t5xx/run/model.h"
#include "t5xx/run/train.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {
namespace {

// P_m of partitioning/communication_plan.h: the float32 bytes of the
// parameters with their 'model'-split dims at one piece, the rest whole.
double ParameterBytesPerModelShard(const std::vector<models::ParamSpec>& specs,
                                   const partitioning::LogicalAxisRules& rules,
                                   int64_t model_axis) {
  double bytes = 0;
  for (const models::ParamSpec& p : specs) {
    const partitioning::ShardBox box = partitioning::LocalShardBox(
        p.shape, partitioning::LogicalToMeshAxes(p.axes, rules), {1, model_axis}, {}, p.name);
    double n = 4;
    for (int64_t d : box.shape) n *= static_cast<double>(d);
    bytes += n;
  }
  return bytes;
}

double ActivationElements(const run::TrainSetup& s, const models::BaseTransformerModel& model) {
  const std::map<std::string, int64_t> lens =
      model.ModelFeatureLengths(s.train_dataset.task_feature_lengths);
  if (s.model.kind == run::ModelKind::kEncoderDecoder) {
    return partitioning::TensorParallelActivationElements(
        s.model.t5_config, s.train_dataset.batch_size, lens.at("encoder_input_tokens"),
        lens.at("decoder_target_tokens"));
  }
  return partitioning::TensorParallelActivationElements(
      s.model.decoder_only_config, s.train_dataset.batch_size, lens.at("decoder_target_tokens"));
}

// "12.3 GiB", or "45.6 MiB" below 1 GiB.
std::string Gib(double bytes) {
  char buf[32];
  if (bytes < 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  }
  return buf;
}

// The on-paper plan of `devices` processes.
int PlanOnPaper(const run::TrainSetup& s, const models::BaseTransformerModel& model,
                int64_t devices, int64_t capacity) {
  const std::vector<models::ParamSpec> specs = model.ParamSpecs();
  double n = 0;
  for (const auto& p : specs) {
    double e = 1;
    for (int64_t d : p.shape) e *= static_cast<double>(d);
    n += e;
  }
  std::cout << model.name() << ", " << n << " parameters; " << devices << " devices of "
            << Gib(static_cast<double>(capacity)) << "; global batch "
            << s.train_dataset.batch_size << "; remat_policy '"
            << (s.model.kind == run::ModelKind::kEncoderDecoder
                    ? s.model.t5_config.remat_policy
                    : s.model.decoder_only_config.remat_policy)
            << "'\n";
  const double activations = ActivationElements(s, model);
  std::vector<run::LayoutPlan> layouts = run::PlanLayouts(s, model, specs, devices);
  std::cout << "layout (data x model)        peak/device    fits  communication/step/device\n";
  for (const run::LayoutPlan& l : layouts) {
    const partitioning::CommunicationPlan comm = partitioning::MinimumCommunicationPerStep(
        l.mesh,
        ParameterBytesPerModelShard(specs, partitioning::StandardLogicalAxisRules(1, l.zero3 ? 2 : 1),
                                    l.mesh.model),
        activations);
    std::ostringstream name;
    name << (l.zero3 ? "ZeRO-3 " : "") << l.mesh.data << "x" << l.mesh.model;
    std::printf("%-28s %13s  %-4s  %s (gradients %s, activations %s)\n", name.str().c_str(),
                Gib(static_cast<double>(l.plan.peak())).c_str(),
                l.plan.peak() <= capacity ? "yes" : "no", Gib(comm.total()).c_str(),
                Gib(comm.gradient_bytes).c_str(), Gib(comm.activation_bytes).c_str());
  }
  if (layouts.empty()) {
    std::cout << "(no layout of t5x's standard rules splits these parameters on " << devices
              << " devices)\n";
  } else {
    std::cout << "smallest: " << layouts.front().Describe() << " -- "
              << layouts.front().plan.ToString() << "\n";
  }
  return 0;
}

}  // namespace

int ModelInfoCommand(const std::vector<std::string>& args_in) {
  std::vector<std::string> args;
  int64_t devices = 0;
  double capacity_gib = -1;
  for (const std::string& a : args_in) {
    if (a.rfind("--num_devices=", 0) == 0) {
      devices = ParseIntFlag("t5xx model_info", "num_devices", a.substr(14), 1);
    } else if (a.rfind("--device_memory_gib=", 0) == 0) {
      capacity_gib = static_cast<double>(
          ParseIntFlag("t5xx model_info", "device_memory_gib", a.substr(20), 1));
    } else {
      args.push_back(a);
    }
  }
  const run::LoadedTrainConfig loaded = LoadTrainConfigFromFlags(args, "model_info");
  const run::TrainSetup& s = loaded.setup;
  const auto model = run::CreateModel(s.model);
  if (devices > 0) {
    const int64_t capacity = capacity_gib > 0
                                 ? models::SaturatingBytes(capacity_gib * 1024 * 1024 * 1024)
                                 : models::AvailableHostMemoryBytes();
    return PlanOnPaper(s, *model, devices, capacity);
  }
  T5XX_CHECK(capacity_gib < 0, "t5xx model_info: --device_memory_gib needs --num_devices");
  if (auto problem = run::MemoryProblemBeforeAllocation(s, *model)) throw Error(*problem);
  const partitioning::PjitPartitioner partitioner(s.num_partitions, s.logical_axis_rules);
  const trainer::Trainer trainer(*model, run::InitParams(*model, 0),
                                 optim::MakeOptimizer(s.optimizer),
                                 optim::LearningRateSchedule(s.lr), partitioner,
                                 s.num_microbatches, 0);
  const partitioning::Mesh& mesh = partitioner.mesh();
  std::cout << model->name() << ", " << trainer.params().NumElements()
            << " parameters; optimizer " << trainer.optimizer().gin_name() << "; mesh (data="
            << mesh.data << ", model=" << mesh.model << ")\n"
            << partitioning::FormatVariableTable(trainer.DescribeVariables())
            << "memory plan per process: "
            << run::PlanMemory(s, *model, model->ParamSpecs(), mesh, s.logical_axis_rules)
                   .ToString()
            << "\n";
  return 0;
}

}  // namespace t5xx::cli
