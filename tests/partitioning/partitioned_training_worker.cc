// One process of the multi-process partitioning tests: joins the run
// (torchrun's variables) and trains a tiny model on the layout its
// arguments give (tiny_training.h: MODEL NUM_PARTITIONS PARAM_DIMS ACT_DIMS
// MICROBATCHES STEPS [PARAMS_FILE]); prints each step's loss and the bytes of parameters
// and optimizer state it holds ("%.17g", one per line) on stdout; rank 0
// writes every whole parameter after the last step to PARAMS_FILE as raw
// float32, in ParamStore order.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "partitioning/tiny_training.h"
#include "t5xx/partitioning/collectives/c10d_communicator.h"
#include "t5xx/util/error.h"

int main(int argc, char** argv) {
  try {
    const auto env = t5xx::partitioning::DetectProcessEnvironment();
    if (!env || argc < 7) {
      std::cerr << "usage (under a launcher): MODEL NUM_PARTITIONS PARAM_DIMS ACT_DIMS "
                   "MICROBATCHES STEPS [PARAMS_FILE]"
                << std::endl;
      return 2;
    }
    t5xx::testing::TinyLayout layout;
    layout.model = argv[1];
    layout.num_partitions = std::atoi(argv[2]);
    layout.parameter_partitioning_dims = std::atoi(argv[3]);
    layout.activation_partitioning_dims = std::atoi(argv[4]);
    layout.num_microbatches = std::atoi(argv[5]);
    std::shared_ptr<const t5xx::partitioning::Communicator> comm =
        t5xx::partitioning::C10dCommunicator::Connect(*env);
    const t5xx::testing::TinyTrainingResult r =
        t5xx::testing::TrainTiny(comm, std::atoi(argv[6]), layout);
    for (double l : r.losses) std::printf("loss %.17g\n", l);
    std::printf("bytes %lld\n", static_cast<long long>(r.bytes_per_process));
    if (argc > 7 && env->rank == 0) {
      std::ofstream out(argv[7], std::ios::binary);
      for (const at::Tensor& p : r.params) {
        const at::Tensor c = p.contiguous();
        out.write(static_cast<const char*>(c.data_ptr()), c.numel() * 4);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
}
