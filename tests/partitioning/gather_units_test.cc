// GatherUnits (partitioning/gather_units.h) over a stand-in for a data
// group of two processes whose other member holds known pieces: one
// all-gather per unit, whole tensors concatenated along the split dimension,
// gradients reduce-scattered once per unit, kernels released when the
// forward pass leaves their unit and gathered again (a unit at a time, the
// next one prefetched) for the backward pass, and the next step's forward
// gathers started ahead in the order of the last one.
//
// Expected values by hand: the other process's pieces are ours x 10 + 1,
// and its gradients 3 x ours, so a piece's gradient is 4 x the rows of the
// whole gradient that the piece holds.
#include "t5xx/partitioning/gather_units.h"

#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

namespace t5xx::partitioning {
namespace {

// Rank 0 of two: the other rank's flat buffer is ours x 10 + 1, and its
// contribution to a reduce-scatter 3 x ours.
class TwoProcessStandIn final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void AllReduceSum(at::Tensor&) const override { FAIL() << "not used by GatherUnits"; }
  at::Tensor AllGather(const at::Tensor& t) const override {
    ++gathers;
    return at::cat({t, t * 10 + 1});
  }
  std::function<at::Tensor()> StartAllGather(const at::Tensor& t) const override {
    ++started;
    at::Tensor g = at::cat({t, t * 10 + 1});
    return [g] { return g; };
  }
  at::Tensor ReduceScatterSum(const at::Tensor& t) const override {
    ++reduce_scatters;
    return t.narrow(0, 0, t.size(0) / 2) * 4;
  }
  mutable int gathers = 0, started = 0, reduce_scatters = 0;
};

struct Fixture {
  std::shared_ptr<TwoProcessStandIn> group = std::make_shared<TwoProcessStandIn>();
  models::ParamStore store;
  std::map<std::string, PartitionSpec> specs;

  Fixture() {
    // Pieces [3, 4] / [2, 4] / [5, 2] of kernels [6, 4] / [4, 4] / [5, 4];
    // a norm scale [3] of [6] in layers_0's unit.
    Add("encoder.layers_0.mlp.wi.kernel", at::arange(12, at::kFloat).reshape({3, 4}).div(8),
        {"data", std::nullopt});
    Add("encoder.layers_0.pre_mlp_layer_norm.scale", at::arange(3, at::kFloat).add(1),
        {"data"});
    Add("encoder.layers_1.mlp.wo.kernel", at::arange(8, at::kFloat).reshape({2, 4}).sub(3),
        {"data", std::nullopt});
    Add("decoder.logits_dense.kernel", at::arange(10, at::kFloat).reshape({5, 2}).cos(),
        {std::nullopt, "data"});
    store.Add("decoder.relpos_bias.rel_embedding", at::ones({2, 2}), {"heads", "relpos_buckets"});
    specs["decoder.relpos_bias.rel_embedding"] = {std::nullopt, std::nullopt};
  }
  void Add(const std::string& name, at::Tensor piece, PartitionSpec spec) {
    store.Add(name, piece.requires_grad_(true), std::vector<std::string>(spec.size(), "x"));
    specs[name] = std::move(spec);
  }
  const models::Param& P(size_t i) const { return store.params()[i]; }
  static at::Tensor Whole(const at::Tensor& piece, int64_t dim) {
    return at::cat({piece.detach(), piece.detach() * 10 + 1}, dim);
  }
};

TEST(GatherUnitsTest, UnitsAreLayersAndRootModules) {
  EXPECT_EQ(GatherUnits::UnitOf("encoder.layers_11.attention.query.kernel"), "encoder.layers_11");
  // Outside the layers: the parent module (a root unit).
  EXPECT_EQ(GatherUnits::UnitOf("decoder.logits_dense.kernel"), "decoder.logits_dense");
  EXPECT_EQ(GatherUnits::UnitOf("token_embedder.embedding"), "token_embedder");
}

TEST(GatherUnitsTest, OneGatherAndOneReduceScatterPerUnit) {
  Fixture f;
  GatherUnits units(f.store, f.specs, f.group, /*reshard_after_forward=*/true);
  EXPECT_FALSE(units.Gathers(f.P(4)));  // not split over 'data'
  const at::Tensor kernel = units.Gathered(f.P(0));
  const at::Tensor scale = units.Gathered(f.P(1));
  EXPECT_EQ(f.group->gathers, 1);  // both from layers_0's one gather
  EXPECT_TRUE(at::equal(kernel, Fixture::Whole(f.P(0).value, 0)));
  EXPECT_TRUE(at::equal(scale, Fixture::Whole(f.P(1).value, 0)));
  const at::Tensor logits = units.Gathered(f.P(3));
  EXPECT_TRUE(at::equal(logits, Fixture::Whole(f.P(3).value, 1)));  // split along dim 1
  EXPECT_EQ(f.group->gathers, 2);

  const at::Tensor a = at::arange(24, at::kFloat).reshape({6, 4}).sin();
  const at::Tensor c = at::arange(20, at::kFloat).reshape({5, 4}).cos();
  units.EndForward();
  ((kernel * a).sum() + (scale * 2).sum() + (logits * c).sum()).backward();
  EXPECT_EQ(f.group->reduce_scatters, 2);
  // The reduce-scatters were started; the gradients arrive when finished.
  EXPECT_FALSE(f.P(0).value.grad().defined());
  units.FinishGradients();
  EXPECT_TRUE(at::allclose(f.P(0).value.grad(), a.narrow(0, 0, 3) * 4));
  EXPECT_TRUE(at::allclose(f.P(1).value.grad(), at::full({3}, 8.0f)));
  EXPECT_TRUE(at::allclose(f.P(3).value.grad(), c.narrow(1, 0, 2) * 4));
  EXPECT_FALSE(f.P(2).value.grad().defined());  // layers_1 was not used
}

// x [2, 6] -> layers_0's kernel [6, 4] -> layers_1's [4, 4] -> the logits
// kernel [4, 5]: each kept by its matmul for the backward pass.
struct Step {
  at::Tensor x = at::arange(12, at::kFloat).reshape({2, 6}).div(5).requires_grad_(true);
  at::Tensor weights = at::arange(10, at::kFloat).reshape({2, 5}).sin();
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> kernels;

  at::Tensor Forward(const GatherUnits& units, const Fixture& f) {
    at::Tensor h = x;
    for (size_t i : {0, 2}) {
      const at::Tensor w = units.Gathered(f.P(i));
      kernels.push_back(w.storage().getWeakStorageImpl());
      const at::Tensor y = at::matmul(h, w);
      units.ReshardAfterForward(f.P(i), w, y);
      h = y;
    }
    const at::Tensor w = units.Gathered(f.P(3)).t();  // [4, 5]; a view: kept whole
    return (at::matmul(h, w) * weights).sum();
  }
  // The gradients of x and of layers_0's whole kernel, computed plainly.
  static std::pair<at::Tensor, at::Tensor> Plain(const Fixture& f) {
    const at::Tensor x = Step().x;
    const at::Tensor w0 = Fixture::Whole(f.P(0).value, 0).requires_grad_(true);
    const at::Tensor h = at::matmul(at::matmul(x, w0), Fixture::Whole(f.P(2).value, 0));
    (at::matmul(h, Fixture::Whole(f.P(3).value, 1).t()) * Step().weights).sum().backward();
    return {x.grad(), w0.grad()};
  }
};

TEST(GatherUnitsTest, ReleasesKernelsBetweenForwardAndBackwardAndPrefetches) {
  Fixture f;
  GatherUnits units(f.store, f.specs, f.group, /*reshard_after_forward=*/true);
  const auto [plain, plain_w0] = Step::Plain(f);
  for (int step = 0; step < 2; ++step) {
    f.group->gathers = f.group->started = 0;
    Step s;
    const at::Tensor loss = s.Forward(units, f);
    // Left behind: layers_0's kernel is released; layers_1's, where the
    // backward pass starts, stays (the root unit's logits kernel too).
    EXPECT_EQ(s.kernels[0].lock()->nbytes(), 0u);
    EXPECT_EQ(s.kernels[1].lock()->nbytes(), 4u * 4 * 4);
    // Step 0 gathers each unit when used; step 1 starts layers_1's and the
    // root's gathers ahead, in step 0's order.
    EXPECT_EQ(f.group->gathers, step == 0 ? 3 : 1);
    EXPECT_EQ(f.group->started, step == 0 ? 0 : 2);
    f.group->gathers = f.group->started = 0;
    units.EndForward();  // starts layers_0's gather for the backward pass
    loss.backward();
    EXPECT_EQ(f.group->gathers, 0);
    EXPECT_EQ(f.group->started, 1);
    EXPECT_TRUE(at::equal(s.x.grad(), plain));  // bitwise: the same values
    EXPECT_EQ(f.group->reduce_scatters, 3 * (step + 1));
    units.FinishGradients();
    // This piece's rows of the whole gradient, x 4 (the stand-in's sum).
    EXPECT_TRUE(at::allclose(f.P(0).value.grad(), plain_w0.narrow(0, 0, 3) * 4));
    // Every whole kernel is gone once its backward has run.
    for (const auto& k : s.kernels) EXPECT_TRUE(k.expired());
    for (int i : {0, 2, 3}) f.store.params()[static_cast<size_t>(i)].value.mutable_grad() = at::Tensor();
  }
}

TEST(GatherUnitsTest, ARootUnitIsHeldUntilTheForwardPassEnds) {
  Fixture f;
  GatherUnits units(f.store, f.specs, f.group, /*reshard_after_forward=*/true);
  const at::Tensor logits = units.Gathered(f.P(3));
  units.Gathered(f.P(0));  // a layer between two uses (as the encoder
  units.Gathered(f.P(2));  // between the embedder's two lookups)
  EXPECT_TRUE(units.Gathered(f.P(3)).is_same(logits));
  EXPECT_EQ(f.group->gathers, 3);
  units.EndForward();  // then gathered anew
  EXPECT_FALSE(units.Gathered(f.P(3)).is_same(logits));
}

TEST(GatherUnitsTest, KeepsKernelsWithoutResharding) {
  Fixture f;
  GatherUnits units(f.store, f.specs, f.group, /*reshard_after_forward=*/false);
  Step s;
  const at::Tensor loss = s.Forward(units, f);
  EXPECT_EQ(s.kernels[0].lock()->nbytes(), 6u * 4 * 4);
  units.EndForward();
  f.group->gathers = 0;
  loss.backward();
  EXPECT_EQ(f.group->gathers, 0);
  EXPECT_TRUE(at::equal(s.x.grad(), Step::Plain(f).first));
}

TEST(GatherUnitsTest, InferenceGathersEachUnitOnceAndReleasesNothing) {
  Fixture f;
  GatherUnits units(f.store, f.specs, f.group, /*reshard_after_forward=*/true);
  at::NoGradGuard no_grad;
  const at::Tensor w = units.Gathered(f.P(0));
  units.ReshardAfterForward(f.P(0), w, at::matmul(at::ones({1, 6}), w));
  units.Gathered(f.P(1));
  units.Gathered(f.P(2));
  EXPECT_EQ(f.group->gathers, 2);
  EXPECT_TRUE(at::equal(w, Fixture::Whole(f.P(0).value, 0)));  // not released
}

TEST(GatherUnitsTest, AStoreOtherThanTheOneItWasMadeForIsNamed) {
  Fixture f;
  GatherUnits units(f.store, f.specs, f.group, true);
  // The same parameters in another order.
  models::ParamStore other;
  for (size_t i : {0, 2, 1, 3, 4}) other.Add(f.P(i).name, f.P(i).value.detach(), f.P(i).axes);
  try {
    units.Gathered(other.params()[0]);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.layers_0.pre_mlp_layer_norm.scale"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace t5xx::partitioning
