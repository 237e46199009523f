// Tests Int8Weights and Int8WeightsScope (int8_weights.h): which right
// operands of MatmulIn get an int8 copy (parameters of the store, as a
// kernel or transposed, not activations, not small tables, not while they
// require gradients), that the copy is made once per view and again after
// an in-place change, that MatmulIn
// inside a scope is exactly Int8Matmul and outside it float32 again, and
// that scopes nest.
#include "t5xx/models/networks/int8_weights.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "t5xx/kernels/int8_matmul.h"
#include "t5xx/models/networks/layers.h"

namespace t5xx::models {
namespace {

ParamStore Store() {
  at::manual_seed(54);
  ParamStore store;
  store.Add("decoder.layers_0.mlp.wi.kernel", at::randn({64, 96}), {"embed", "mlp"});
  store.Add("token_embedder.embedding", at::randn({80, 64}), {"vocab", "embed"});
  store.Add("relpos_bias.rel_embedding", at::randn({6, 32}), {"heads", "relpos_buckets"});
  return store;
}

TEST(Int8Weights, QuantizesParametersOnceAsTheyAreMultiplied) {
  const ParamStore store = Store();
  Int8Weights weights(store);
  const at::Tensor& kernel = store.Get("decoder.layers_0.mlp.wi.kernel");
  const at::Tensor& table = store.Get("token_embedder.embedding");
  const Int8Weight* k1 = weights.Find(kernel);
  ASSERT_NE(k1, nullptr);
  EXPECT_EQ(k1->k, 64);
  EXPECT_EQ(k1->n, 96);
  EXPECT_EQ(weights.Find(kernel), k1);  // kept, not quantized again
  const Int8Weight* logits = weights.Find(table.t());
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(logits->n, 80);  // one scale per vocabulary row
  EXPECT_EQ(weights.quantized(), 2);
  EXPECT_EQ(weights.quantized_bytes(), 64 * 96 + 8 * 96 + 64 * 80 + 8 * 80);
  // Not parameters, or too small, or a slice of one: none.
  EXPECT_EQ(weights.Find(kernel.clone()), nullptr);
  EXPECT_EQ(weights.Find(store.Get("relpos_bias.rel_embedding")), nullptr);
  EXPECT_EQ(weights.Find(kernel.narrow(0, 16, 32)), nullptr);
}

TEST(Int8Weights, AParameterChangedInPlaceIsQuantizedAgain) {
  ParamStore store = Store();
  Int8Weights weights(store);
  at::Tensor kernel = store.Get("decoder.layers_0.mlp.wi.kernel");
  const at::Tensor before = DequantizeInt8Weight(*weights.Find(kernel));
  kernel.mul_(2.0);
  const at::Tensor after = DequantizeInt8Weight(*weights.Find(kernel));
  EXPECT_TRUE(at::allclose(after, before * 2.0, 1e-6, 1e-6));
  EXPECT_EQ(weights.quantized(), 1);
}

TEST(Int8Weights, MatmulInUsesThemOnlyInsideAScope) {
  const ParamStore store = Store();
  const at::Tensor& kernel = store.Get("decoder.layers_0.mlp.wi.kernel");
  const at::Tensor x = at::randn({2, 5, 64});
  const at::Tensor want_int8 = Int8Matmul(x, QuantizeInt8Weight(kernel));
  const at::Tensor want_float = at::matmul(x, kernel);
  Int8Weights weights(store);
  {
    const Int8WeightsScope scope(&weights);
    EXPECT_EQ(ActiveInt8Weights(), &weights);
    EXPECT_TRUE(at::equal(MatmulIn(x, kernel, at::kFloat), want_int8));
    // Activations times activations stay float32.
    const at::Tensor y = at::randn({64, 96});
    EXPECT_TRUE(at::allclose(MatmulIn(x, y, at::kFloat), at::matmul(x, y), 1e-5, 1e-5));
    {
      const Int8WeightsScope none(nullptr);
      EXPECT_TRUE(at::allclose(MatmulIn(x, kernel, at::kFloat), want_float, 1e-5, 1e-5));
    }
    EXPECT_EQ(ActiveInt8Weights(), &weights);
    // A parameter being trained keeps float32 and its gradient.
    const at::Tensor trained = kernel.detach().requires_grad_(true);
    Int8Weights trained_weights(store);
    const Int8WeightsScope inner(&trained_weights);
    const at::Tensor out = MatmulIn(x, trained, at::kFloat);
    EXPECT_TRUE(out.requires_grad());
    EXPECT_TRUE(at::allclose(out, want_float, 1e-5, 1e-5));
  }
  EXPECT_EQ(ActiveInt8Weights(), nullptr);
  EXPECT_TRUE(at::allclose(MatmulIn(x, kernel, at::kFloat), want_float, 1e-5, 1e-5));
}

}  // namespace
}  // namespace t5xx::models
