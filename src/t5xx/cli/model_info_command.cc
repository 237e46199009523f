// `t5xx model_info`: the table t5x logs at start-up -- every parameter and
// optimizer state array of a train configuration with its shape, logical
// axes and mesh axes under the partitioner's logical axis rules. Takes
// train's flags; builds the parameters and the optimizer state (refusing a
// model whose memory plan does not fit) but reads no data and writes
// nothing.
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/run/memory.h"
#include "t5xx/run/model.h"
#include "t5xx/run/train.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

int ModelInfoCommand(const std::vector<std::string>& args) {
  const run::LoadedTrainConfig loaded = LoadTrainConfigFromFlags(args, "model_info");
  const run::TrainSetup& s = loaded.setup;
  const auto model = run::CreateModel(s.model);
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
            << partitioning::FormatVariableTable(trainer.DescribeVariables());
  return 0;
}

}  // namespace t5xx::cli
