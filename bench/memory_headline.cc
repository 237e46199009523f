// The memory headline of issue 34, one process of it: a decoder-only model
// of 1.30B parameters (t5x's decoder_only/xl.gin dims with mlp_dim 5632 and
// t5's 32128-token vocabulary; float32, Adafactor) trained for a few steps
// on random global batches of 4 x 32 tokens, under a launcher (torchrun's
// variables, as `t5xx launch` sets them) or alone.
//
//   build/bin/t5xx_memory_headline STEPS PARAMETER_PARTITIONING_DIMS
//
// Prints "loss %.17g" per step (the global batch's), "plan_peak_bytes N"
// (run/memory.h's plan for this process's layout, without checkpoints) and
// "peak_rss_kib N" (getrusage). Every process draws the same global batches
// and the partitioner gives each its rows, so the losses of any layout
// equal one process's up to float32 summation order. scripts/
// memory_headline.sh runs it capped and uncapped and compares.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "bench_cpu.h"
#include "bench_schedule.h"
#include "t5xx/device/cpu_caching_allocator.h"
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/run/memory.h"
#include "t5xx/trainer/trainer.h"

namespace {

constexpr int64_t kBatch = 4, kLength = 32;

t5xx::models::DecoderOnlyConfig HeadlineConfig() {
  t5xx::models::DecoderOnlyConfig c;
  c.vocab_size = 32128;
  c.emb_dim = 2048;
  c.num_heads = 32;
  c.head_dim = 64;
  c.num_layers = 24;
  c.mlp_dim = 5632;
  c.mlp_activations = {"gelu", "linear"};
  c.logits_via_embedding = true;
  c.dropout_rate = 0.0;
  return c;
}

t5xx::models::FeatureBatch RandomBatch(int64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
  at::Tensor tg = at::randint(3, 32000, {kBatch, kLength}, g, at::kLong);
  at::Tensor in = at::cat({at::zeros({kBatch, 1}, at::kLong), tg.narrow(1, 0, kLength - 1)}, 1);
  return {{"decoder_input_tokens", in},
          {"decoder_target_tokens", tg},
          {"decoder_loss_weights", at::ones({kBatch, kLength})}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: t5xx_memory_headline STEPS PARAMETER_PARTITIONING_DIMS" << std::endl;
    return 2;
  }
  try {
    const int steps = std::atoi(argv[1]);
    const int param_dims = std::atoi(argv[2]);
    const std::shared_ptr<const t5xx::partitioning::Communicator> comm =
        t5xx::bench::JoinBenchProcesses();
    const t5xx::models::DecoderOnlyModel model{
        t5xx::models::DecoderOnlyTransformer(HeadlineConfig()), false, 0.0, 0.0, {}};
    const auto rules = t5xx::partitioning::StandardLogicalAxisRules(1, param_dims);
    t5xx::partitioning::PjitPartitioner partitioner(1, rules, comm);

    t5xx::run::TrainSetup s;
    s.model.kind = t5xx::run::ModelKind::kDecoderOnly;
    s.model.decoder_only_config = HeadlineConfig();
    s.train_dataset.batch_size = kBatch;
    s.train_dataset.task_feature_lengths = {{"targets", kLength}};
    s.save_checkpoints = false;
    const t5xx::models::MemoryPlan plan =
        t5xx::run::PlanMemory(s, model, model.ParamSpecs(), partitioner.mesh(), rules);
    if (comm->rank() == 0) std::cerr << "plan: " << plan.ToString() << std::endl;

    t5xx::trainer::Trainer t(model, t5xx::partitioning::InitPlacedParams(partitioner, model, 0),
                             t5xx::optim::Adafactor({}), t5xx::bench::ConstantSchedule(0.01),
                             partitioner);
    t5xx::device::EmptyCpuCache();  // as `t5xx train` ends its start-up
    for (int i = 0; i < steps; ++i) {
      const t5xx::trainer::StepMetrics m = t.TrainStep(RandomBatch(100 + i));
      std::printf("loss %.17g\n", m.loss);
      std::fflush(stdout);
    }
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("plan_peak_bytes %lld\npeak_rss_kib %ld\n",
                static_cast<long long>(plan.peak()), ru.ru_maxrss);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
}
