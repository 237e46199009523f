// One process of sharded_restore_test, started N times as torchrun would
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); joins the others over Gloo
// and, on the layout MODEL NUM_PARTITIONS PARAM_DIMS (tiny_training.h) with
// TinyAdafactorConfig(MIN_DIM_TO_FACTOR) (sharded_restore.h),
//   save MODEL_DIR MODEL NUM_PARTITIONS PARAM_DIMS MIN_DIM_TO_FACTOR STEPS
//       trains STEPS steps, saves checkpoint_<STEPS> into MODEL_DIR (its
//       part; rank 0 commits) and trains one step more;
//   restore CHECKPOINT_DIR MODEL NUM_PARTITIONS PARAM_DIMS MIN_DIM_TO_FACTOR
//       restores its boxes of the checkpoint and trains one step more;
// then prints sharded_restore.h's TinyEvals: "step <checkpoint's step>
// <trainer's step>", "eval <loss>" and "next <loss>", numbers "%.17g". Exit 0, or 3 with the error on stderr.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "partitioning/sharded_restore.h"
#include "t5xx/partitioning/collectives/c10d_communicator.h"

int main(int argc, char** argv) {
  try {
    const auto env = t5xx::partitioning::DetectProcessEnvironment();
    const std::string mode = argc > 1 ? argv[1] : "";
    if (!env || !((mode == "save" && argc == 8) || (mode == "restore" && argc == 7))) {
      std::cerr << "usage (under a launcher): save MODEL_DIR MODEL NUM_PARTITIONS PARAM_DIMS "
                   "MIN_DIM_TO_FACTOR STEPS | restore CHECKPOINT_DIR MODEL NUM_PARTITIONS "
                   "PARAM_DIMS MIN_DIM_TO_FACTOR"
                << std::endl;
      return 2;
    }
    t5xx::testing::TinyLayout layout;
    layout.model = argv[3];
    layout.num_partitions = std::atoi(argv[4]);
    layout.parameter_partitioning_dims = std::atoi(argv[5]);
    const t5xx::optim::AdafactorConfig adafactor =
        t5xx::testing::TinyAdafactorConfig(std::atoll(argv[6]));
    std::shared_ptr<const t5xx::partitioning::Communicator> comm =
        t5xx::partitioning::C10dCommunicator::Connect(*env);
    const t5xx::testing::TinyEvals r =
        mode == "save"
            ? t5xx::testing::TrainAndSave(comm, layout, adafactor, std::atoi(argv[7]), argv[2])
            : t5xx::testing::RestoreAndEval(comm, layout, adafactor, argv[2]);
    std::printf("step %lld %lld\n", static_cast<long long>(r.checkpoint_step),
                static_cast<long long>(r.trainer_step));
    std::printf("eval %.17g\nnext %.17g\n", r.eval_loss, r.next_eval_loss);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
}
