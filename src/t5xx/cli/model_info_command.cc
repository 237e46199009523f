// `t5xx model_info`: the table t5x logs at start-up -- every parameter and
// optimizer state array of a train configuration with its shape, logical
// axes and mesh axes under the partitioner's logical axis rules -- and the
// memory plan (run/memory.h) of one process. Takes train's flags; reads no
// data and writes nothing.
//
// --num_devices=N plans N processes (one per device) on paper instead:
// every layout of t5x's standard rules on N (the configured one marked),
// each with its peak per process, whether it fits --device_memory_gib
// (default: this machine's available memory), and the least communication
// per step (partitioning/communication_plan.h); the layouts left out, with
// why. Nothing is allocated, so any size can be planned. Without it the
// table is printed for one process; a model whose plan does not fit is
// refused with the layouts that would.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
#include "t5xx/partitioning/communication_plan.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/run/memory.h"
#include "t5xx/run/model.h"
#include "t5xx/run/train.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {
namespace {

// Whether `l` is the layout the configuration asks for: its num_partitions
// and t5x's standard rules with ZeRO-3 or without.
bool IsConfigured(const run::LayoutPlan& l, const run::TrainSetup& s) {
  return l.mesh.model == s.num_partitions && s.logical_axis_rules == l.Rules();
}

// The on-paper plan of `devices` processes.
int PlanOnPaper(const run::TrainSetup& s, const models::BaseTransformerModel& model,
                int64_t devices, int64_t capacity, bool capacity_given) {
  T5XX_CHECK(run::TotalLayers(s) <= run::kMaxListedLayers,
             "t5xx model_info: " + std::to_string(run::TotalLayers(s)) +
                 " layers are more than --num_devices plans (at most " +
                 std::to_string(run::kMaxListedLayers) + "); lower the network's num_layers");
  const std::vector<models::ParamSpec> specs = model.ParamSpecs();
  int64_t n = 0;
  for (const auto& p : specs) {
    int64_t e = 1;
    for (int64_t d : p.shape) e *= d;
    n += e;
  }
  std::cout << model.name() << ", " << n << " parameters; " << devices
            << (devices == 1 ? " device of " : " devices of ")
            << models::FormatBytes(static_cast<double>(capacity))
            << (capacity_given ? "" : " (this host's available memory; --device_memory_gib sets it)")
            << "; global batch " << s.train_dataset.batch_size << "; remat_policy '"
            << (s.model.kind == run::ModelKind::kEncoderDecoder
                    ? s.model.t5_config.remat_policy
                    : s.model.decoder_only_config.remat_policy)
            << "'\n";
  const double activations = run::TensorParallelActivationElements(s, model);
  std::vector<std::string> left_out;
  std::vector<run::LayoutPlan> layouts = run::PlanLayouts(s, model, specs, devices, &left_out);
  std::cout << "layout (data x model)        peak/device    fits  communication/step/device\n";
  for (const run::LayoutPlan& l : layouts) {
    const partitioning::CommunicationPlan comm = partitioning::MinimumCommunicationPerStep(
        l.mesh, partitioning::ParameterBytesPerModelShard(specs, l.Rules(), l.mesh.model),
        activations);
    const std::string name = l.Name() + (IsConfigured(l, s) ? " (configured)" : "");
    std::printf("%-28s %13s  %-4s  %s (gradients %s, activations %s)\n", name.c_str(),
                models::FormatBytes(static_cast<double>(l.plan.peak())).c_str(),
                l.plan.peak() <= capacity ? "yes" : "no", models::FormatBytes(comm.total()).c_str(),
                models::FormatBytes(comm.gradient_bytes).c_str(),
                models::FormatBytes(comm.activation_bytes).c_str());
  }
  for (const std::string& why : left_out) std::cout << "left out: " << why << "\n";
  if (devices % s.num_partitions != 0) {
    std::cout << "(the configured partitioning.PjitPartitioner.num_partitions = "
              << s.num_partitions << " does not divide " << devices << " devices)\n";
  }
  if (!layouts.empty()) {
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
    T5XX_CHECK(a != "--num_devices" && a != "--device_memory_gib",
               "t5xx model_info: " + a + " takes its value after '=' (e.g. " + a + "=8)");
    if (a.rfind("--num_devices=", 0) == 0) {
      devices = ParseIntFlag("t5xx model_info", "num_devices", a.substr(14), 1);
      T5XX_CHECK(devices <= (int64_t{1} << 24),
                 "t5xx model_info: --num_devices must be at most 16777216, got " + a.substr(14));
    } else if (a.rfind("--device_memory_gib=", 0) == 0) {
      const std::string v = a.substr(20);
      char* end = nullptr;
      capacity_gib = v.empty() ? -1 : std::strtod(v.c_str(), &end);
      T5XX_CHECK(!v.empty() && end && *end == '\0' && capacity_gib > 0 && capacity_gib <= 1e9,
                 "t5xx model_info: --device_memory_gib must be a number of GiB in (0, 1e9], got '" +
                     v + "'");
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
    return PlanOnPaper(s, *model, devices, capacity, capacity_gib > 0);
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
