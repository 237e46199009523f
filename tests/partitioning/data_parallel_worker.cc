// One process of data_parallel_test: joins the run (torchrun's variables)
// and trains the tiny T5 data-parallel (tiny_training.h); prints each
// step's loss, then each parameter's sum of squares, one number per line
// ("%.17g"), on stdout.
#include <cstdio>
#include <iostream>

#include "partitioning/tiny_training.h"
#include "t5xx/partitioning/gloo_communicator.h"
#include "t5xx/util/error.h"

int main() {
  try {
    const auto env = t5xx::partitioning::DetectProcessEnvironment();
    if (!env) {
      std::cerr << "no launcher environment" << std::endl;
      return 2;
    }
    std::shared_ptr<const t5xx::partitioning::Communicator> comm =
        t5xx::partitioning::GlooCommunicator::Connect(*env);
    const t5xx::testing::TinyTrainingResult r = t5xx::testing::TrainTiny(comm, 10);
    for (double l : r.losses) std::printf("loss %.17g\n", l);
    for (double c : r.param_checksums) std::printf("param %.17g\n", c);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
}
