// The grouped general path (optim/adafactor_grouped.h) against the
// per-parameter general path of adafactor.cc -- the path adafactor_test.cc
// checks against t5x's own numbers -- on the same inputs, both with the
// fused CPU path off (as on a GPU): parameters and every state array equal
// to float32 rounding after several steps, for every option the general
// path has (factored by heuristic and by rules with BATCH dims, momentum in
// float32 and bfloat16, weight decay with its learning-rate exponent,
// global-norm clipping, skip_nan_updates with NaN gradients); which
// parameters it groups; checkpoints through the slots' views; and the
// number of ATen ops an update records (RecordFunction: what becomes kernel
// launches on a GPU).
#include "t5xx/optim/adafactor_grouped.h"

#include <ATen/record_function.h>
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "optim_test_util.h"
#include "t5xx/optim/adafactor.h"

namespace t5xx::optim {
namespace {

using testing::Noise;

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<std::string> axes;
};

struct Trained {
  models::ParamStore store;
  std::unique_ptr<Adafactor> opt;
};

// `steps` steps from the same start, grouped or per parameter (fused off).
// With nan_step >= 0, that step's first gradient has a NaN.
Trained RunSteps(const AdafactorConfig& config, const std::vector<Spec>& specs, int steps,
                 bool grouped, std::shared_ptr<const Reducer> reducer = nullptr,
                 int nan_step = -1) {
  Trained run;
  for (size_t i = 0; i < specs.size(); ++i) {
    run.store.Add(specs[i].name, Noise(specs[i].shape, 1000 + i, 0.5), specs[i].axes);
  }
  run.opt = std::make_unique<Adafactor>(config);
  run.opt->set_use_fused_cpu_update(false);
  run.opt->set_use_grouped_update(grouped);
  if (reducer) run.opt->set_reducer(reducer);
  run.opt->Init(run.store);
  for (int t = 0; t < steps; ++t) {
    for (size_t i = 0; i < specs.size(); ++i) {
      at::Tensor g = Noise(specs[i].shape, 7 * (t + 1) + 100 * i, 0.01 * (1 + t % 3));
      if (t == nan_step && i == 0) g.view({-1})[0] = std::numeric_limits<float>::quiet_NaN();
      run.store.params()[i].value.mutable_grad() = g;
    }
    run.opt->Apply(run.store, 0.01 * (1 + t));
  }
  return run;
}

// The largest |a - b| / (|b| + tiny) over the elements (NaNs must agree).
double MaxRelDiff(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.to(at::kDouble), y = b.to(at::kDouble);
  EXPECT_TRUE(at::equal(x.isnan(), y.isnan()));
  const at::Tensor ok = ~y.isnan();
  if (!ok.any().item<bool>()) return 0;
  return ((x - y).abs() / (y.abs() + 1e-30)).masked_select(ok).max().item<double>();
}

// Both paths, `steps` steps: parameters and state arrays within rtol
// relative (elements near zero: within atol of them).
void ExpectPathsAgree(const AdafactorConfig& config, const std::vector<Spec>& specs, int steps,
                      double rtol, int nan_step = -1) {
  const Trained grouped = RunSteps(config, specs, steps, true, nullptr, nan_step);
  const Trained alone = RunSteps(config, specs, steps, false, nullptr, nan_step);
  for (size_t i = 0; i < specs.size(); ++i) {
    const at::Tensor g = grouped.store.params()[i].value, a = alone.store.params()[i].value;
    EXPECT_LE(MaxRelDiff(g, a), rtol) << specs[i].name;
    EXPECT_GT((a - Noise(specs[i].shape, 1000 + i, 0.5)).abs().max().item<double>(), 1e-4)
        << specs[i].name << " did not move";
  }
  const std::vector<StateArray> gs = grouped.opt->StateArrays(), as = alone.opt->StateArrays();
  ASSERT_EQ(gs.size(), as.size());
  for (size_t i = 0; i < gs.size(); ++i) {
    ASSERT_EQ(gs[i].path, as[i].path);
    ASSERT_EQ(gs[i].value.sizes(), as[i].value.sizes()) << gs[i].path;
    ASSERT_EQ(gs[i].value.scalar_type(), as[i].value.scalar_type()) << gs[i].path;
    const double tol = as[i].value.scalar_type() == at::kBFloat16 ? 8e-3 : rtol;
    EXPECT_LE(MaxRelDiff(gs[i].value, as[i].value), tol) << gs[i].path;
  }
}

// Several parameters per shape, factored (heuristic, min_dim_size_to_factor
// 4) and not, vectors, and one of a shape of its own.
std::vector<Spec> HeuristicSpecs() {
  std::vector<Spec> specs;
  for (int i = 0; i < 3; ++i) specs.push_back({"q" + std::to_string(i), {12, 20}, {"embed", "joined_kv"}});
  for (int i = 0; i < 2; ++i) specs.push_back({"o" + std::to_string(i), {20, 12}, {"joined_kv", "embed"}});
  for (int i = 0; i < 4; ++i) specs.push_back({"scale" + std::to_string(i), {20}, {"embed"}});
  specs.push_back({"small", {3, 2}, {"embed", "mlp"}});  // below min_dim: unfactored
  specs.push_back({"odd", {7, 9}, {"embed", "mlp"}});
  return specs;
}

AdafactorConfig SmallFactoring() {
  AdafactorConfig c;
  c.min_dim_size_to_factor = 4;
  return c;
}

// The worst relative difference the paths may show: the sums over a
// stacked array's member dims may be added in another order (float32
// rounding of sums of ~200 terms, carried through 4 steps).
constexpr double kRtol = 2e-6;

TEST(AdafactorGroupedTest, MatchesPerParameterPathDefaultOptions) {
  ExpectPathsAgree(SmallFactoring(), HeuristicSpecs(), 4, kRtol);
}

TEST(AdafactorGroupedTest, MatchesPerParameterPathWithRulesAndBatchDims) {
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  std::vector<Spec> specs;
  for (int i = 0; i < 3; ++i) specs.push_back({"att" + std::to_string(i), {8, 3, 5}, {"embed", "heads", "kv"}});
  for (int i = 0; i < 2; ++i) specs.push_back({"stack" + std::to_string(i), {4, 8, 6}, {"layers", "embed", "mlp"}});
  specs.push_back({"rel", {32, 3}, {"relpos_buckets", "heads"}});
  ExpectPathsAgree(c, specs, 4, kRtol);
}

TEST(AdafactorGroupedTest, MatchesPerParameterPathMomentumWeightDecayAndGlobalNorm) {
  AdafactorConfig c = SmallFactoring();
  c.beta1 = 0.9;
  c.weight_decay_rate = 0.01;
  c.weight_decay_rate_lr_exponent = 0.5;
  c.global_norm_clip_threshold = 0.05;
  c.max_parameter_scale = 0.4;
  ExpectPathsAgree(c, HeuristicSpecs(), 4, kRtol);
}

TEST(AdafactorGroupedTest, MatchesPerParameterPathBFloat16MomentumWithoutScaleOrClipping) {
  AdafactorConfig c = SmallFactoring();
  c.beta1 = 0.5;
  c.dtype_momentum = at::kBFloat16;
  c.multiply_by_parameter_scale = false;
  c.clipping_threshold = std::nullopt;
  c.factored = false;
  ExpectPathsAgree(c, HeuristicSpecs(), 4, kRtol);
}

TEST(AdafactorGroupedTest, SkipNanUpdatesKeepsTheSameElementsAsPerParameterPath) {
  AdafactorConfig c = SmallFactoring();
  c.skip_nan_updates = true;
  c.beta1 = 0.9;
  // Step 1's NaN gradient element makes q0's statistics NaN: both paths
  // keep the old value of every element that became NaN.
  ExpectPathsAgree(c, HeuristicSpecs(), 3, kRtol, /*nan_step=*/1);
}

TEST(AdafactorGroupedTest, GroupsEqualShapesAndPlansWithinTheCap) {
  AdafactorConfig c = SmallFactoring();
  models::ParamStore store;
  for (const Spec& s : HeuristicSpecs()) store.Add(s.name, at::zeros(s.shape), s.axes);
  Adafactor a(c);
  a.Init(store);
  std::vector<size_t> all(store.params().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto members = [](const std::vector<AdafactorGroup>& groups) {
    std::vector<std::vector<size_t>> out;
    for (const AdafactorGroup& g : groups) out.push_back(g.members);
    return out;
  };
  // q0..q2 | o0, o1 | scale0..3 | small | odd
  EXPECT_EQ(members(MakeAdafactorGroups(all, store, a.state())),
            (std::vector<std::vector<size_t>>{{0, 1, 2}, {3, 4}, {5, 6, 7, 8}, {9}, {10}}));
  // A cap of 2 x 240 elements splits q's three and leaves o's two whole.
  EXPECT_EQ(members(MakeAdafactorGroups(all, store, a.state(), 480)),
            (std::vector<std::vector<size_t>>{{0, 1}, {2}, {3, 4}, {5, 6, 7, 8}, {9}, {10}}));
  // Only the candidates given.
  EXPECT_EQ(members(MakeAdafactorGroups({1, 3, 5}, store, a.state())),
            (std::vector<std::vector<size_t>>{{1}, {3}, {5}}));
}

// "Shards" the parameters whose name starts with 'q' along every dim: their
// statistics are not local, so they keep the per-parameter path; counts the
// AllReduceSum calls per parameter (none needed: it sums nothing).
class ShardingQReducer final : public Reducer {
 public:
  void AllReduceSum(at::Tensor&, const ReduceContext& ctx) const override {
    ++calls_[ctx.param];
  }
  bool SumIsLocal(const ReduceContext& ctx) const override { return ctx.param[0] != 'q'; }
  std::vector<int64_t> GlobalShape(const std::string&, at::IntArrayRef s) const override {
    return s.vec();
  }
  mutable std::map<std::string, int> calls_;
};

TEST(AdafactorGroupedTest, ParametersWithShardedStatisticsKeepThePerParameterPath) {
  const AdafactorConfig c = SmallFactoring();
  auto reducer = std::make_shared<ShardingQReducer>();
  const Trained grouped = RunSteps(c, HeuristicSpecs(), 2, true, reducer);
  EXPECT_GT(reducer->calls_["q0"], 0);
  EXPECT_EQ(reducer->calls_.count("o0"), 0u);  // grouped: no reducer calls
  const Trained alone = RunSteps(c, HeuristicSpecs(), 2, false);
  for (size_t i = 0; i < alone.store.params().size(); ++i) {
    EXPECT_LE(MaxRelDiff(grouped.store.params()[i].value, alone.store.params()[i].value), kRtol)
        << alone.store.params()[i].name;
  }
}

TEST(AdafactorGroupedTest, CheckpointsThroughTheSlotViewsResumeBitForBit) {
  AdafactorConfig c = SmallFactoring();
  c.beta1 = 0.9;
  const std::vector<Spec> specs = HeuristicSpecs();
  const Trained straight = RunSteps(c, specs, 4, true);
  // Two steps, state saved (copies, as a checkpoint holds), a new optimizer
  // restored from it, two more steps with the same gradients.
  Trained first = RunSteps(c, specs, 2, true);
  std::map<std::string, at::Tensor> saved;
  for (const StateArray& s : first.opt->StateArrays()) saved[s.path] = s.value.clone();
  Adafactor resumed(c);
  resumed.set_use_fused_cpu_update(false);
  resumed.Init(first.store);
  resumed.RestoreState(saved, 2);
  for (int t = 2; t < 4; ++t) {
    for (size_t i = 0; i < specs.size(); ++i) {
      first.store.params()[i].value.mutable_grad() =
          Noise(specs[i].shape, 7 * (t + 1) + 100 * i, 0.01 * (1 + t % 3));
    }
    resumed.Apply(first.store, 0.01 * (1 + t));
    // Restoring again after the groups exist writes through the views.
    if (t == 2) {
      std::map<std::string, at::Tensor> now;
      for (const StateArray& s : resumed.StateArrays()) now[s.path] = s.value.clone();
      resumed.RestoreState(now, 3);
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_TRUE(at::equal(first.store.params()[i].value, straight.store.params()[i].value))
        << specs[i].name;
  }
  const std::vector<StateArray> a = resumed.StateArrays(), b = straight.opt->StateArrays();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i].value, b[i].value)) << a[i].path;
}

// Counts the ATen ops recorded on this thread while alive.
class OpCounter {
 public:
  OpCounter() {
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback([](const at::RecordFunction&)
                                       -> std::unique_ptr<at::ObserverContext> {
          ++count_;
          return nullptr;
        }).scopes({at::RecordScope::FUNCTION}));
  }
  ~OpCounter() { at::removeCallback(handle_); }
  static int64_t count() { return count_; }
  static void reset() { count_ = 0; }

 private:
  at::CallbackHandle handle_;
  static inline std::atomic<int64_t> count_{0};
};

// Ops recorded by the second Apply (the first makes the groups) of `n`
// parameters of one shape.
int64_t OpsPerStep(int n, bool grouped) {
  models::ParamStore store;
  for (int i = 0; i < n; ++i) store.Add("w" + std::to_string(i), Noise({16, 24}, i, 0.5), {"embed", "mlp"});
  Adafactor a(SmallFactoring());
  a.set_use_fused_cpu_update(false);
  a.set_use_grouped_update(grouped);
  a.Init(store);
  int64_t ops = 0;
  for (int t = 0; t < 2; ++t) {
    for (auto& p : store.params()) p.value.mutable_grad() = Noise({16, 24}, 9 + t, 0.01);
    OpCounter counter;
    OpCounter::reset();
    a.Apply(store, 0.01);
    ops = OpCounter::count();
  }
  return ops;
}

TEST(AdafactorGroupedTest, RecordsFewOpsPerStepWhateverTheParameterCount) {
  const int64_t alone8 = OpsPerStep(8, false), alone32 = OpsPerStep(32, false);
  const int64_t grouped8 = OpsPerStep(8, true), grouped32 = OpsPerStep(32, true);
  // Per parameter: a constant number of ops per parameter.
  EXPECT_EQ(alone32, 4 * alone8) << "alone: " << alone8 << " / " << alone32;
  // Grouped: the ops of one group plus the gradients' conversion and the
  // copy back, a few per parameter (one multi-tensor op on libtorch >= 2.2).
  const int64_t per_param = (grouped32 - grouped8) / 24;
  EXPECT_LE(per_param, 8) << "grouped: " << grouped8 << " / " << grouped32;
  EXPECT_LT(grouped32 * 4, alone32) << "grouped " << grouped32 << " vs alone " << alone32;
  std::cout << "[ops per Adafactor step, 8 / 32 parameters of [16, 24]] per parameter: "
            << alone8 << " / " << alone32 << "; grouped: " << grouped8 << " / " << grouped32
            << "\n";
}

}  // namespace
}  // namespace t5xx::optim
