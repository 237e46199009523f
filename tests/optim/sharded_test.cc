// The optimizers never assume a whole tensor is local: two threads, each a
// shard of partitioning::SimulatedShardsPartitioner holding one half of
// every parameter (and its gradient and slots), whose Reducer sums partial
// statistics across them, must give the same
// parameters as one process holding everything. The unsharded runs are the
// ones checked against t5x's numbers in adafactor_test.cc / adamw_test.cc;
// here the reference is that unsharded run.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>

#include "optim_test_util.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/optax_optimizers.h"
#include "t5xx/partitioning/simulated_partitioner.h"

namespace t5xx::optim {
namespace {

using testing::Vals;

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<std::string> axes;
  int64_t split_dim;
  int64_t seed;
};

// Runs `steps` updates unsharded and on two shards; expects equal results.
template <typename MakeOpt>
void ExpectShardedEqualsWhole(const std::vector<Spec>& specs, int steps, MakeOpt make_opt) {
  auto full_grad = [](const Spec& s, int t) { return Vals(s.shape, s.seed + 100 + t, 0.05); };
  models::ParamStore whole;
  for (const Spec& s : specs) whole.Add(s.name, Vals(s.shape, s.seed, 0.1), s.axes);
  std::unique_ptr<Optimizer> opt = make_opt();
  opt->Init(whole);
  for (int t = 0; t < steps; ++t) {
    for (size_t i = 0; i < specs.size(); ++i) {
      whole.params()[i].value.mutable_grad() = full_grad(specs[i], t);
    }
    opt->Apply(whole, 0.01);
  }

  auto collective = std::make_shared<partitioning::SimulatedCollective>(2);
  std::map<std::string, int64_t> split;
  for (const Spec& s : specs) split[s.name] = s.split_dim;
  models::ParamStore shards[2];
  auto run = [&](int rank) {
    const partitioning::SimulatedShardsPartitioner partitioner(collective, rank, split);
    models::ParamStore& store = shards[rank];
    for (const Spec& s : specs) {
      store.Add(s.name, partitioner.Shard(s.name, Vals(s.shape, s.seed, 0.1)), s.axes);
    }
    std::unique_ptr<Optimizer> o = make_opt();
    o->set_reducer(partitioner.reducer());
    o->Init(store);
    for (int t = 0; t < steps; ++t) {
      for (size_t i = 0; i < specs.size(); ++i) {
        store.params()[i].value.mutable_grad() =
            partitioner.Shard(specs[i].name, full_grad(specs[i], t));
      }
      o->Apply(store, 0.01);
    }
  };
  std::thread other(run, 1);
  run(0);
  other.join();

  for (size_t i = 0; i < specs.size(); ++i) {
    const Spec& s = specs[i];
    at::Tensor joined = at::cat({shards[0].Get(s.name), shards[1].Get(s.name)}, s.split_dim);
    at::Tensor want = whole.Get(s.name);
    EXPECT_TRUE(at::allclose(joined, want, 1e-5, 1e-7))
        << s.name << ": max diff " << (joined - want).abs().max().item<double>();
    // And the update was not trivial.
    EXPECT_GT((want - Vals(s.shape, s.seed, 0.1)).abs().max().item<double>(), 1e-4) << s.name;
  }
}

const std::vector<Spec> kSpecs = {
    // Split along the COLUMN dim: v_row's mean crosses the shards.
    {"k", {4, 6}, {"embed", "mlp"}, 1, 1},
    // Split along the ROW dim: v_col's mean and row_col_mean cross them.
    {"k2", {6, 4}, {"mlp", "embed"}, 0, 2},
    {"b", {6}, {"embed"}, 0, 3},
    // Rule-factored rank 3 (ROW, COLUMN, COLUMN), split along ROW.
    {"q", {8, 2, 4}, {"embed", "heads", "kv"}, 0, 4},
    // Scanned: (BATCH, ROW, COLUMN), split along the COLUMN dim.
    {"s", {2, 4, 6}, {"layers", "embed", "mlp"}, 2, 5},
};

TEST(ShardedTest, AdafactorEveryStatisticGoesThroughTheReducer) {
  ExpectShardedEqualsWhole(kSpecs, 3, [] {
    AdafactorConfig c;
    c.min_dim_size_to_factor = 2;  // factored from the *global* shape
    c.logical_factor_rules = StandardLogicalFactorRules();
    c.beta1 = 0.9;
    c.global_norm_clip_threshold = 0.05;
    c.clipping_threshold = 0.5;
    return std::make_unique<Adafactor>(c);
  });
}

TEST(ShardedTest, AdamWWithGlobalNormClipping) {
  ExpectShardedEqualsWhole(kSpecs, 3, [] {
    OptaxConfig o;
    o.chained = true;
    OptaxTransform clip;
    clip.kind = OptaxTransform::Kind::kClipByGlobalNorm;
    clip.max_norm = 0.05;
    clip.gin_name = "optax.clip_by_global_norm";
    OptaxTransform adamw;
    adamw.learning_rate.value = 0.01;
    adamw.gin_name = "optax.adamw";
    o.transforms = {clip, adamw};
    return std::make_unique<OptaxOptimizer>(o);
  });
}

// lamb's trust ratio takes each parameter's whole norm through the Reducer.
TEST(ShardedTest, LambTrustRatioUsesWholeParameterNorms) {
  ExpectShardedEqualsWhole(kSpecs, 3, [] {
    OptaxTransform lamb = OptaxTransform::Defaults(OptaxTransform::Kind::kLamb);
    lamb.learning_rate.value = 0.01;
    lamb.weight_decay = 0.1;
    return std::make_unique<OptaxOptimizer>(OptaxConfig{false, {lamb}});
  });
}

TEST(ShardedTest, FactoringUsesTheGlobalShape) {
  // A (4, 6) kernel split along dim 1 is (4, 3) locally; t5x's heuristic on
  // the full shape makes dim 0 the ROW dim, on the shard it would be dim 1.
  const partitioning::SimulatedShardsPartitioner partitioner(
      std::make_shared<partitioning::SimulatedCollective>(2), 0,
      std::map<std::string, int64_t>{{"k", 1}});
  models::ParamStore store;
  store.Add("k", at::zeros({4, 3}), {"embed", "mlp"});
  AdafactorConfig c;
  c.min_dim_size_to_factor = 2;
  Adafactor opt(c);
  opt.set_reducer(partitioner.reducer());
  opt.Init(store);
  EXPECT_EQ(opt.state().at("k").row_dims, std::vector<int64_t>({0}));
  EXPECT_EQ(opt.state().at("k").v_row.sizes().vec(), std::vector<int64_t>({4}));
  EXPECT_EQ(opt.state().at("k").v_col.sizes().vec(), std::vector<int64_t>({3}));  // local half
}

}  // namespace
}  // namespace t5xx::optim
