// The fused float32 CPU Adafactor update (optim/adafactor_fused.h) against
// the general path of whole-tensor ATen ops in adafactor.cc -- the path
// adafactor_test.cc checks against t5x's own numbers -- on the same inputs:
// equal to float32 rounding (the sums run in another order), bit for bit the
// same on 1, 2 or 3 threads, the same Reducer calls, and the rule for which
// parameters it takes.
//
// Inputs are a fixed integer hash of the element index (testing::Noise), so
// that no two rows or columns are alike.
#include "t5xx/optim/adafactor_fused.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sstream>
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

// Runs `steps` Adafactor steps (fused path on or off) from the same start.
struct Trained {
  models::ParamStore store;
  std::unique_ptr<Adafactor> opt;
};

Trained RunSteps(const AdafactorConfig& config, const std::vector<Spec>& specs, int steps,
                 bool fused, std::shared_ptr<const Reducer> reducer = nullptr) {
  Trained run;
  for (size_t i = 0; i < specs.size(); ++i) {
    run.store.Add(specs[i].name, Noise(specs[i].shape, 1000 + i, 0.5), specs[i].axes);
  }
  run.opt = std::make_unique<Adafactor>(config);
  run.opt->set_use_fused_cpu_update(fused);
  if (reducer) run.opt->set_reducer(reducer);
  run.opt->Init(run.store);
  for (int t = 0; t < steps; ++t) {
    for (size_t i = 0; i < specs.size(); ++i) {
      run.store.params()[i].value.mutable_grad() =
          Noise(specs[i].shape, 7 * (t + 1) + 100 * i, 0.01 * (1 + t % 3));
    }
    run.opt->Apply(run.store, 0.01);
  }
  return run;
}

// Expects |a - b| <= atol + rtol * |b| everywhere; reports the worst element.
void ExpectNear(const at::Tensor& a, const at::Tensor& b, double rtol, double atol,
                const std::string& what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  const at::Tensor x = a.to(at::kDouble).reshape({-1}), y = b.to(at::kDouble).reshape({-1});
  const at::Tensor excess = (x - y).abs() - (y.abs() * rtol + atol);
  const int64_t worst = excess.argmax().item<int64_t>();
  EXPECT_LE(excess[worst].item<double>(), 0.0)
      << what << "[" << worst << "]: fused " << x[worst].item<double>() << ", general "
      << y[worst].item<double>();
}

// Both paths, `steps` steps; parameters and every state array compared
// within rtol (m: m_rtol) relative. Parameters near zero also within
// kParamAtol: 1e-6 of what the steps move them (lr 0.01 x parameter RMS 0.29
// x 4 steps ~ 0.01).
constexpr double kParamAtol = 1e-8;

void ExpectPathsAgree(const AdafactorConfig& config, const std::vector<Spec>& specs, int steps,
                      double rtol, double m_rtol = 1e-6) {
  const double atol = 1e-12;  // the slots are compared relative to their values
  {
    models::ParamStore probe;
    for (const Spec& s : specs) probe.Add(s.name, at::zeros(s.shape), s.axes);
    Adafactor a(config);
    a.Init(probe);
    for (const auto& p : probe.params()) {
      ASSERT_TRUE(FusedAdafactorCovers(config, a.state().at(p.name), p.value, p.value))
          << p.name << " would take the general path";
    }
  }
  const Trained fused = RunSteps(config, specs, steps, true);
  const Trained general = RunSteps(config, specs, steps, false);
  for (size_t i = 0; i < specs.size(); ++i) {
    const at::Tensor f = fused.store.params()[i].value, g = general.store.params()[i].value;
    ExpectNear(f, g, rtol, kParamAtol, specs[i].name);
    // The steps moved the parameter (by ~lr * scale per step).
    EXPECT_GT((g - Noise(specs[i].shape, 1000 + i, 0.5)).abs().max().item<double>(), 1e-4)
        << specs[i].name;
  }
  const std::vector<StateArray> fs = fused.opt->StateArrays(), gs = general.opt->StateArrays();
  ASSERT_EQ(fs.size(), gs.size());
  for (size_t i = 0; i < fs.size(); ++i) {
    const bool momentum = fs[i].path.size() > 2 && fs[i].path.substr(fs[i].path.size() - 2) == ".m";
    // m sums updates of both signs: elements near zero within 1e-6 of the
    // largest.
    const double m_atol = 1e-6 * gs[i].value.abs().max().item<double>();
    ExpectNear(fs[i].value, gs[i].value, momentum ? m_rtol : rtol, momentum ? m_atol : atol,
               fs[i].path);
  }
}

// Heuristic factoring (rank <= 2): ROW innermost, COLUMN innermost, several
// tiles with whole rows, rows wider than one run (65536), unfactored.
std::vector<Spec> HeuristicSpecs() {
  return {{"wide", {300, 700}, {"embed", "mlp"}},     // ROW dim 0: runs along COLUMN
          {"tall", {700, 300}, {"mlp", "embed"}},     // ROW dim 1: runs along ROW
          {"long_rows", {20, 70000}, {"embed", "vocab"}},  // 2 runs per row
          {"square", {130, 130}, {"embed", "mlp"}},
          {"small", {6, 32}, {"heads", "relpos_buckets"}},  // unfactored (6 < 16)
          {"vector", {70000}, {"embed"}}};
}

// t5x's standard rules: ROW, COLUMN and BATCH blocks in several orders.
std::vector<Spec> RuleSpecs() {
  return {{"q", {40, 6, 32}, {"embed", "heads", "kv"}},        // ROW, COLUMN, COLUMN
          {"out", {6, 32, 40}, {"heads", "kv", "embed"}},      // COLUMN, COLUMN, ROW
          {"scanned", {3, 40, 50}, {"layers", "embed", "mlp"}},  // BATCH, ROW, COLUMN
          {"scanned_mid", {40, 3, 50}, {"embed", "layers", "mlp"}},  // ROW, BATCH, COLUMN
          {"scanned_wo", {50, 3, 40}, {"mlp", "layers", "embed"}},   // COLUMN, BATCH, ROW
          {"batch_inner", {40, 50, 3}, {"embed", "mlp", "layers"}},  // runs of one element
          {"ln", {3, 40}, {"layers", "embed"}},                // unfactored, one scale per layer
          {"rel", {6, 32}, {"heads", "relpos_buckets"}},       // heuristic: unfactored
          {"one", {40, 1, 50}, {"embed", "layers", "mlp"}}};   // a size-1 BATCH dim
}

TEST(AdafactorFusedTest, MatchesGeneralPathDefaultOptions) {
  AdafactorConfig c;
  c.min_dim_size_to_factor = 16;
  ExpectPathsAgree(c, HeuristicSpecs(), 4, 1e-6);
}

TEST(AdafactorFusedTest, MatchesGeneralPathStandardRules) {
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  ExpectPathsAgree(c, RuleSpecs(), 4, 1e-6);
}

TEST(AdafactorFusedTest, MatchesGeneralPathMomentumWeightDecayAndGlobalNorm) {
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  c.beta1 = 0.9;
  c.weight_decay_rate = 0.1;
  c.weight_decay_rate_lr_exponent = 0.5;
  c.global_norm_clip_threshold = 0.05;  // below the gradients' norm: it scales them
  c.max_parameter_scale = 0.3;          // below the parameters' RMS: it binds
  c.clipping_threshold = 0.5;
  ExpectPathsAgree(c, RuleSpecs(), 4, 1e-6);
  c.logical_factor_rules.reset();
  c.min_dim_size_to_factor = 16;
  ExpectPathsAgree(c, HeuristicSpecs(), 4, 1e-6);
}

TEST(AdafactorFusedTest, MatchesGeneralPathBFloat16MomentumWithoutClippingOrScale) {
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  c.beta1 = 0.8;
  c.dtype_momentum = at::kBFloat16;
  c.clipping_threshold = std::nullopt;
  c.multiply_by_parameter_scale = false;
  c.decay_rate = 0.5;
  c.epsilon1 = 1e-3;
  // m is rounded to bfloat16 (8 bits): where the two paths' float32 m differ
  // in the last bit at a rounding boundary, bfloat16 m differs by one of its
  // units (2^-8 relative), and the parameter by that times lr.
  ExpectPathsAgree(c, RuleSpecs(), 4, 1e-6, 1.0 / 128);
}

TEST(AdafactorFusedTest, SameBitsOnAnyNumberOfThreads) {
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  c.beta1 = 0.9;
  std::vector<Spec> specs = RuleSpecs();
  for (const Spec& s : HeuristicSpecs()) {
    if (s.shape.size() == 2 && s.shape[0] >= 16 && s.shape[1] >= 16) specs.push_back(s);
  }
  specs.push_back({"emb", {1000, 64}, {"vocab", "embed"}});
  const int saved = at::get_num_threads();
  std::vector<Trained> runs;
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    runs.push_back(RunSteps(c, specs, 3, true));
  }
  at::set_num_threads(saved);
  for (size_t r = 1; r < runs.size(); ++r) {
    for (size_t i = 0; i < specs.size(); ++i) {
      EXPECT_TRUE(at::equal(runs[r].store.params()[i].value, runs[0].store.params()[i].value))
          << specs[i].name << " on " << r + 1 << " threads";
    }
    const std::vector<StateArray> a = runs[r].opt->StateArrays(), b = runs[0].opt->StateArrays();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(at::equal(a[i].value, b[i].value)) << a[i].path << " on " << r + 1 << " threads";
    }
  }
}

// Logs every AllReduceSum (parameter, dims, tensor shape, dtype); sums
// nothing, like LocalReducer.
class RecordingReducer final : public Reducer {
 public:
  void AllReduceSum(at::Tensor& partial, const ReduceContext& ctx) const override {
    std::ostringstream os;
    os << ctx.param << " dims (";
    for (int64_t d : ctx.dims) os << d << ",";
    os << ") " << partial.scalar_type() << " " << partial.sizes();
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(os.str());
  }
  std::vector<int64_t> GlobalShape(const std::string&,
                                   at::IntArrayRef local_shape) const override {
    return local_shape.vec();
  }
  std::vector<std::string> SortedCalls() const {
    std::vector<std::string> c = calls_;
    std::sort(c.begin(), c.end());
    return c;
  }

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::string> calls_;
};

TEST(AdafactorFusedTest, MakesTheGeneralPathsReducerCalls) {
  // The same statistics reach the Reducer (same parameter, dims, shape and
  // dtype, each sum with its count in one call); only their order differs (the fused
  // path takes every parameter's pass-1 statistics before any update RMS).
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  c.global_norm_clip_threshold = 1.0;
  auto fused = std::make_shared<RecordingReducer>();
  auto general = std::make_shared<RecordingReducer>();
  RunSteps(c, RuleSpecs(), 2, true, fused);
  RunSteps(c, RuleSpecs(), 2, false, general);
  const std::vector<std::string> f = fused->SortedCalls(), g = general->SortedCalls();
  EXPECT_EQ(f, g);
  // Per step and factored parameter: the global norm, the parameter scale,
  // v_row, v_col, the row mean of v_row, the update RMS, each sum with its
  // count in one call: 1 + 5 calls; unfactored: 1 + 2.
  EXPECT_EQ(g.size(), 2u * (7 * 6 + 2 * 3));
}

TEST(AdafactorFusedTest, WhichParametersItTakes) {
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  models::ParamStore store;
  store.Add("k", at::zeros({4, 6}), {"embed", "mlp"});
  store.Add("scanned", at::zeros({2, 4, 6}), {"layers", "embed", "mlp"});
  // COLUMN dims on both sides of the BATCH dim: two runs of one role.
  store.Add("split", at::zeros({4, 6, 2, 3}), {"embed", "mlp", "layers", "heads"});
  // Only BATCH dims: no averaging dim (ShardedMean's identity).
  store.Add("per_layer", at::zeros({2}), {"layers"});
  store.Add("half", at::zeros({4, 6}, at::kBFloat16), {"embed", "mlp"});
  Adafactor opt(c);
  opt.Init(store);
  auto covers = [&](const AdafactorConfig& config, const std::string& name) {
    const at::Tensor& v = store.Get(name);
    return FusedAdafactorCovers(config, opt.state().at(name), v, v);
  };
  EXPECT_TRUE(covers(c, "k"));
  EXPECT_TRUE(covers(c, "scanned"));
  EXPECT_FALSE(covers(c, "split"));
  EXPECT_FALSE(covers(c, "per_layer"));
  EXPECT_FALSE(covers(c, "half"));
  const at::Tensor k = store.Get("k");
  EXPECT_FALSE(FusedAdafactorCovers(c, opt.state().at("k"), k, k.to(at::kBFloat16)));  // grad
  AdafactorConfig skip = c;
  skip.skip_nan_updates = true;
  EXPECT_FALSE(covers(skip, "k"));
}

TEST(AdafactorFusedTest, ParametersItDoesNotTakeStillUpdateLikeTheGeneralPath) {
  // "split" and "per_layer" go through the general path beside fused ones,
  // in the same Apply.
  AdafactorConfig c;
  c.logical_factor_rules = StandardLogicalFactorRules();
  const std::vector<Spec> specs = {{"k", {40, 50}, {"embed", "mlp"}},
                                   {"split", {4, 6, 2, 3}, {"embed", "mlp", "layers", "heads"}},
                                   {"per_layer", {3}, {"layers"}}};
  const Trained mixed = RunSteps(c, specs, 3, true);
  const Trained general = RunSteps(c, specs, 3, false);
  ExpectNear(mixed.store.Get("k"), general.store.Get("k"), 1e-6, kParamAtol, "k");
  EXPECT_TRUE(at::equal(mixed.store.Get("split"), general.store.Get("split")));
  EXPECT_TRUE(at::equal(mixed.store.Get("per_layer"), general.store.Get("per_layer")));
}

TEST(AdafactorFusedTest, WritesInPlaceAndMovesTheVersionCounter) {
  // As the general path's param.copy_(...): the same tensor, updated, with
  // a new version (autograd refuses graphs that saved the old values).
  models::ParamStore store;
  store.Add("k", Noise({40, 50}, 1, 0.5), {"embed", "mlp"});
  AdafactorConfig c;
  c.min_dim_size_to_factor = 16;
  Adafactor opt(c);
  opt.Init(store);
  at::Tensor k = store.Get("k");
  const at::Tensor before = k.clone();
  const float* data = k.data_ptr<float>();
  const auto version = k._version();
  k.mutable_grad() = Noise({40, 50}, 2, 0.01);
  opt.Apply(store, 0.01);
  EXPECT_EQ(store.Get("k").data_ptr<float>(), data);
  EXPECT_GT(k._version(), version);
  EXPECT_FALSE(at::equal(k, before));
}

}  // namespace
}  // namespace t5xx::optim
