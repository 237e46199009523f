// A few training steps of a tiny T5 or decoder-only model (float32, no
// dropout, Adafactor, global batches of 8 rows) through a PjitPartitioner
// on a given layout over a given communicator: what the multi-process
// partitioning tests run in each process and, over a LocalCommunicator, as
// their one-process reference.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/collectives/differentiable_collectives.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "trainer/tiny_t5.h"

namespace t5xx::testing {

// A mesh layout: num_partitions (the 'model' axis; 'data' takes the rest of
// the processes) and t5x's standard_logical_axis_rules dims.
struct TinyLayout {
  std::string model = "t5";  // "t5" or "decoder_only"
  int64_t num_partitions = 1;
  int parameter_partitioning_dims = 1;
  int activation_partitioning_dims = 1;
  int64_t num_microbatches = 1;  // trainer.Trainer.num_microbatches
};

struct TinyTrainingResult {
  std::vector<double> losses;  // per step, the global step's loss
  // Every parameter whole after the last step, in ParamStore order
  // (gathered from the processes' pieces).
  std::vector<at::Tensor> params;
  int64_t bytes_per_process = 0;  // parameters + optimizer state held here
  std::vector<partitioning::VariableInfo> variables;  // the variable table
};

// 4 heads of 8 (so that 4 model-axis processes hold one each), emb 32, mlp
// 64, vocab 64: every sharded dimension divides by 4.
inline std::unique_ptr<models::BaseTransformerModel> TinyLayoutModel(const std::string& kind) {
  if (kind == "t5") {
    models::T5Config c = TinyT5Config();
    c.num_heads = 4;
    c.head_dim = 8;
    // z-loss and label smoothing exercise every term of the
    // vocabulary-parallel loss.
    return std::make_unique<models::EncoderDecoderModel>(models::Transformer(c), 1e-4, 0.1,
                                                         models::LossNormalizingFactor{});
  }
  models::DecoderOnlyConfig c;
  c.vocab_size = 64;
  c.emb_dim = 32;
  c.num_heads = 4;
  c.head_dim = 8;
  c.num_layers = 2;
  c.mlp_dim = 64;
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  c.logits_via_embedding = true;  // the vocabulary-parallel attend
  return std::make_unique<models::DecoderOnlyModel>(models::DecoderOnlyTransformer(c), false,
                                                    1e-4, 0.0, models::LossNormalizingFactor{});
}

// The decoder-only model's batch: a language model over the reversed rows.
inline models::FeatureBatch TinyLayoutBatch(const std::string& kind, int64_t seed) {
  models::FeatureBatch b = ReverseBatch(seed);
  if (kind == "t5") return b;
  return {{"decoder_target_tokens", b["decoder_target_tokens"]},
          {"decoder_input_tokens", b["decoder_input_tokens"]},
          {"decoder_loss_weights", b["decoder_loss_weights"]}};
}

inline TinyTrainingResult TrainTiny(std::shared_ptr<const partitioning::Communicator> comm,
                                    int steps, const TinyLayout& layout = {}) {
  const std::unique_ptr<models::BaseTransformerModel> model = TinyLayoutModel(layout.model);
  partitioning::PjitPartitioner partitioner(
      layout.num_partitions,
      partitioning::StandardLogicalAxisRules(layout.activation_partitioning_dims,
                                             layout.parameter_partitioning_dims),
      std::move(comm));
  optim::LearningRateSchedulerConfig lr;
  lr.factors = "constant";
  lr.base_learning_rate = 0.05;
  trainer::Trainer t(*model, partitioning::InitPlacedParams(partitioner, *model, 0), optim::Adafactor({}),
                     optim::LearningRateSchedule(lr), partitioner, layout.num_microbatches);
  TinyTrainingResult r;
  for (int i = 0; i < steps; ++i) {
    r.losses.push_back(t.TrainStep(TinyLayoutBatch(layout.model, i)).loss);
  }
  r.variables = t.DescribeVariables();
  for (const auto& v : r.variables) r.bytes_per_process += v.BytesPerProcess();
  for (const auto& p : t.params().params()) {
    at::Tensor whole = p.value.detach();
    const partitioning::PartitionSpec& spec = partitioner.specs().at(p.name);
    for (size_t d = 0; d < spec.size(); ++d) {
      if (!spec[d]) continue;
      whole = partitioning::AllGatherAlong(
          whole, static_cast<int64_t>(d),
          *spec[d] == "data" ? partitioner.data_group() : partitioner.model_group());
    }
    r.params.push_back(whole.clone());
  }
  return r;
}

}  // namespace t5xx::testing
