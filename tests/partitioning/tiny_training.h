// A few training steps of the tiny T5 (tests/trainer/tiny_t5.h: float32, no
// dropout, Adafactor, global batches of 8 rows) through a PjitPartitioner
// over a given communicator: what the data-parallel test runs in each
// process and, over a LocalCommunicator, as its one-process reference.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "trainer/tiny_t5.h"

namespace t5xx::testing {

struct TinyTrainingResult {
  std::vector<double> losses;           // per step, the global step's loss
  std::vector<double> param_checksums;  // per parameter, sum of squares after the last step
};

inline TinyTrainingResult TrainTiny(std::shared_ptr<const partitioning::Communicator> comm,
                                    int steps) {
  models::EncoderDecoderModel model{models::Transformer(TinyT5Config()), 1e-4, 0.0, {}};
  partitioning::PjitPartitioner partitioner(1, partitioning::StandardLogicalAxisRules(),
                                            std::move(comm));
  optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant";
  lr.base_learning_rate = 0.05;
  trainer::Trainer t(model, model.module().InitParams(0), optim::Adafactor({}),
                     optim::LearningRateSchedule(lr), partitioner);
  TinyTrainingResult r;
  for (int i = 0; i < steps; ++i) r.losses.push_back(t.TrainStep(ReverseBatch(i)).loss);
  for (const auto& p : t.params().params()) {
    r.param_checksums.push_back(p.value.to(at::kDouble).pow(2).sum().item<double>());
  }
  return r;
}

}  // namespace t5xx::testing
