// remat_policy 'full' and 'minimal' with dropout, in training: recomputing
// each layer (all of it, or all but its weight matmuls) in the backward pass
// must draw the same dropout masks and so give the same gradients as
// keeping the activations (remat_policy 'none').
//
// Reference: the same network with remat_policy 'none' on the same
// generator seed. The forward pass is identical op for op (same draws in the
// same order), so the logits must be bit-identical; the gradients may differ
// only by float32 summation order (the recomputed graph is traversed
// separately), far below 1e-5 of their scale. A layer recomputed with
// different masks (or without dropout) gives gradients off by O(1) of their
// scale: until this test, the layer closures captured the `train` flag and
// the generator pointer by reference to Encode/Decode's stack, which were
// gone by the time the backward pass recomputed the layer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/network.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

struct Out {
  at::Tensor logits;
  std::vector<at::Tensor> grads;
};

template <typename Net>
Out TrainStep(const Net& net, ParamStore& params, const FeatureBatch& batch) {
  params.ZeroGrad();
  at::Generator dropout = compat::MakeCpuGenerator(9);
  Out o;
  o.logits = net(params, batch, /*train=*/true, &dropout);
  at::Generator wg = compat::MakeCpuGenerator(10);
  (o.logits * at::randn(o.logits.sizes(), wg, at::kFloat)).sum().backward();
  for (const auto& p : params.params()) o.grads.push_back(p.value.grad().clone());
  return o;
}

FeatureBatch RandomBatch(bool encoder) {
  at::Generator g = compat::MakeCpuGenerator(5);
  FeatureBatch b;
  if (encoder) b["encoder_input_tokens"] = at::randint(1, 50, {2, 9}, g, at::kLong);
  b["decoder_input_tokens"] = at::randint(1, 50, {2, 7}, g, at::kLong);
  b["decoder_target_tokens"] = at::randint(1, 50, {2, 7}, g, at::kLong);
  return b;
}

template <typename Net, typename Config>
void ExpectRematMatches(Config c, bool encoder, const std::string& policy) {
  SCOPED_TRACE(c.dtype + " " + policy);
  c.dropout_rate = 0.3;
  c.remat_policy = "none";
  Net plain(c);
  c.remat_policy = policy;
  Net remat(c);
  ParamStore params = plain.InitParams(1);
  for (auto& p : params.params()) p.value.set_requires_grad(true);
  const FeatureBatch batch = RandomBatch(encoder);
  Out a = TrainStep(plain, params, batch);
  Out b = TrainStep(remat, params, batch);
  EXPECT_TRUE(at::equal(a.logits, b.logits));
  // Dropout was on: without it the logits differ.
  EXPECT_FALSE(at::allclose(a.logits, plain(params, batch, /*train=*/false).detach()));
  // float32: summation order only. bfloat16: the gradients flowing into a
  // recomputed layer's inputs are summed in another order, in bfloat16.
  const double tol = c.dtype == "float32" ? 1e-5 : 3e-2;
  for (size_t i = 0; i < a.grads.size(); ++i) {
    const std::string& name = params.params()[i].name;
    const double scale = a.grads[i].abs().max().item<double>();
    const double err = (a.grads[i] - b.grads[i]).abs().max().item<double>();
    EXPECT_LE(err, tol * scale) << name << ": " << err << " vs scale " << scale;
  }
}

TEST(RematDropoutTest, EncoderDecoderRecomputesWithTheSameMasks) {
  for (const std::string dtype : {"float32", "bfloat16"}) {
    T5Config c;
    c.vocab_size = 50;
    c.emb_dim = 16;
    c.num_heads = 2;
    c.head_dim = 8;
    c.num_encoder_layers = 2;
    c.num_decoder_layers = 2;
    c.mlp_dim = 32;
    c.mlp_activations = {"gelu", "linear"};
    c.dtype = dtype;
    for (const char* policy : {"full", "minimal"}) {
      ExpectRematMatches<Transformer>(c, /*encoder=*/true, policy);
    }
  }
}

TEST(RematDropoutTest, DecoderOnlyRecomputesWithTheSameMasks) {
  for (const std::string dtype : {"float32", "bfloat16"}) {
    DecoderOnlyConfig c;
    c.vocab_size = 50;
    c.emb_dim = 16;
    c.num_heads = 2;
    c.head_dim = 8;
    c.num_layers = 2;
    c.mlp_dim = 32;
    c.dtype = dtype;
    for (const char* policy : {"full", "minimal"}) {
      ExpectRematMatches<DecoderOnlyTransformer>(c, /*encoder=*/false, policy);
    }
  }
}

}  // namespace
}  // namespace t5xx::models
