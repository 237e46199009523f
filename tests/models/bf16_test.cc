// bfloat16 mixed precision as t5x's dtype='bfloat16' (T5Config.dtype,
// decoder-only TransformerConfig.dtype): float32 parameters, bfloat16
// activations, float32 logits, float32 gradients.
//
// References:
//  * the float32 t5x goldens (tests/testdata/parity/*.json, t5x's own JAX
//    networks; see parity_test.cc), with bfloat16 tolerances;
//  * t5x's own networks run with dtype=bfloat16 on the same params and
//    batches (tests/testdata/parity_bf16/*.json, made by
//    tests/models/parity/make_bf16_goldens.py; README there);
//  * hand-computed values for the layer-level casting rules.
//
// Tolerances. bfloat16 keeps 8 significant bits: one rounding is off by at
// most 2^-9 = 0.2% relative. A forward pass through the tiny goldens' networks
// rounds ~15-20 times in sequence (per layer: norm, q/k/v, logits, softmax,
// probs.v, out projection, residual, norm, wi, gelu, product, wo, residual),
// and the errors add up roughly as a random walk: ~sqrt(20) * 0.2% ~ 1%
// relative to an activation's scale, a few times that for the worst of a
// few hundred logits. Measured on these goldens (all cases), relative to the
// float32 t5x values:
//                        max|logits| loss  max|encoded| grads L2 min cosine
//   t5x bfloat16 (JAX)   2.0%        0.12% 1.5%         2.7%     0.9976
//   t5xx bfloat16        2.9%        0.12% 1.5%         2.2%     0.9989
// (first row: make_bf16_goldens.py's output vs the float32 goldens; second:
// printed by this test). The bounds below leave 1.5-4x headroom over both --
// far above float32 rounding (parity holds to 1e-5), far below what a lost
// mask or a missed layer gives. The comparison with t5x's own bfloat16
// numbers uses the same bounds: two bfloat16 implementations round
// differently (accumulation order, fused vs per-op rounding of softmax and
// gelu) and drift apart about as far as each is from float32; the exact
// casting rules are checked layer by layer below.
//
// Device: the whole-network tests and the bfloat16 matmul tests run on
// T5XX_TEST_DEVICE (tests/test_device.h; the CPU unless set), results come
// back to the CPU for the comparison, with the same bounds on a GPU
// (test_device::Bfloat16Tol says why). The other layer-level tests pin t5x's
// rounding points with hand-computed values on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/models/losses.h"
#include "t5xx/models/networks/network.h"
#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"
#include "parity_goldens.h"
#include "test_device.h"

namespace t5xx::models {
namespace {

using json = nlohmann::json;

// Against t5x float32 (see the header comment).
// The same bounds hold on a GPU (test_device::Bfloat16Tol).
const double kLogitsTol = test_device::Bfloat16Tol(5e-2);   // max|diff| / max|ref|
const double kEncodedTol = test_device::Bfloat16Tol(3e-2);  // max|diff| / max|ref|
const double kLossTol = test_device::Bfloat16Tol(5e-3);     // relative
const double kGradNormTol = test_device::Bfloat16Tol(4e-2); // ||diff||_2 / ||ref||_2 over all params
constexpr double kGradMinCosine = 0.995;                 // per parameter

using goldens::Batch;
using goldens::FloatTensor;
using goldens::IntTensor;
using goldens::Load;
using goldens::LoadParams;

double RelMax(const at::Tensor& actual, const at::Tensor& expected) {
  return (actual.detach().to(at::kFloat) - expected).abs().max().item<double>() /
         expected.abs().max().item<double>();
}

// What one forward + backward gives, on the CPU.
struct Result {
  at::Tensor logits;
  double loss = 0;
  std::map<std::string, at::Tensor> grads;
};

// Runs on the parameters' device (the batch goes there).
template <typename Net>
Result RunNet(const Net& net, ParamStore& params, const json& golden_case) {
  FeatureBatch batch = Batch(golden_case.at("batch"), params.params().front().value.device());
  params.ZeroGrad();
  Result r;
  const at::Tensor logits = net(params, batch, /*train=*/false);
  r.logits = test_device::ToHost(logits);
  const json& lnf = golden_case.at("loss_normalizing_factor");
  LossOutput out = ComputeWeightedCrossEntropy(
      logits, batch.at("decoder_target_tokens"), batch.at("decoder_loss_weights"),
      golden_case.at("label_smoothing").get<double>(), golden_case.at("z_loss").get<double>(),
      LossNormalizingFactor::Parse(lnf.is_null() ? "None" : lnf.get<std::string>(), "test"));
  r.loss = out.loss.item<double>();
  out.loss.backward();
  for (const auto& p : params.params()) {
    r.grads[p.name] = p.value.grad().defined() ? test_device::ToHost(p.value.grad()).clone() : at::Tensor();
  }
  return r;
}

// Tolerances of one comparison; see the header comment.
struct Tol {
  double logits, loss, grad_norm, grad_min_cosine;
};

// Compares logits, loss and every gradient with a reference case (a float32
// golden, or a t5x bfloat16 golden), returning the worst logits error.
double Compare(const Result& r, const json& ref, const Tol& tol, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.logits.scalar_type(), at::kFloat);  // logits_dense / attend are float32
  // ... computed in float32, not bfloat16 values cast up: hardly any logit
  // is a bfloat16 value (1 in 2^16 by chance).
  const at::Tensor l = r.logits.detach();
  EXPECT_LT((l.to(at::kBFloat16).to(at::kFloat) == l).to(at::kFloat).mean().item<double>(), 0.01);
  const double logits_err = RelMax(r.logits, FloatTensor(ref.at("logits")));
  EXPECT_LE(logits_err, tol.logits) << "logits";
  const double ref_loss = ref.at("loss").get<double>();
  EXPECT_LE(std::abs(r.loss - ref_loss), tol.loss * std::abs(ref_loss))
      << "loss: t5xx " << r.loss << " vs " << ref_loss;
  double diff2 = 0, ref2 = 0, min_cos = 1;
  std::string worst;
  EXPECT_EQ(r.grads.size(), ref.at("grads").size());
  for (const auto& [name, g] : r.grads) {
    if (!g.defined()) {
      ADD_FAILURE() << name << " has no gradient";
      continue;
    }
    EXPECT_EQ(g.scalar_type(), at::kFloat) << name;  // float32 params get float32 grads
    const at::Tensor e = FloatTensor(ref.at("grads").at(name)).to(at::kDouble);
    const at::Tensor a = g.to(at::kDouble);
    const double en = e.norm().item<double>(), an = a.norm().item<double>();
    diff2 += (a - e).pow(2).sum().item<double>();
    ref2 += en * en;
    if (en == 0) {  // e.g. embedding rows of tokens not in the batch
      EXPECT_EQ(an, 0) << name;
      continue;
    }
    const double cos = (a * e).sum().item<double>() / (an * en);
    if (cos < min_cos) {
      min_cos = cos;
      worst = name;
    }
  }
  EXPECT_GE(min_cos, tol.grad_min_cosine) << "gradient cosine of " << worst;
  EXPECT_LE(std::sqrt(diff2 / ref2), tol.grad_norm) << "gradients, relative L2";
  std::cout << "[ bf16     ] " << what << ": logits " << logits_err << ", loss "
            << std::abs(r.loss - ref_loss) / std::abs(ref_loss) << ", grads L2 "
            << std::sqrt(diff2 / ref2) << ", min cosine " << min_cos << " (" << worst << ")\n";
  return logits_err;
}

const Tol kTol{kLogitsTol, kLossTol, kGradNormTol, kGradMinCosine};

T5Config EncDecConfig(const json& cfg, const std::string& dtype, bool f32_logits) {
  T5Config c = goldens::EncDecConfig(cfg);
  c.dtype = dtype;
  c.float32_attention_logits = f32_logits;
  return c;
}

DecoderOnlyConfig DecoderOnlyConfigOf(const json& cfg, const std::string& dtype) {
  DecoderOnlyConfig c = goldens::DecoderOnlyConfigOf(cfg);
  c.dtype = dtype;
  return c;
}

const json& CaseNamed(const json& golden, const std::string& name) {
  for (const auto& c : golden.at("cases")) {
    if (c.at("name") == name) return c;
  }
  throw std::runtime_error("no case " + name);
}

// ---------------------------------------------------------------------------
// Whole networks on the parity goldens.

class EncDecBf16Test : public ::testing::TestWithParam<bool> {};  // float32_attention_logits

TEST_P(EncDecBf16Test, CloseToT5xFloat32AndToT5xBfloat16) {
  const bool f32_logits = GetParam();
  const json g = Load("parity", "encoder_decoder.json");
  const json gb = Load("parity_bf16", "encoder_decoder.json");
  Transformer net(EncDecConfig(g.at("config"), "bfloat16", f32_logits));
  Transformer net32(EncDecConfig(g.at("config"), "float32", false));
  ParamStore params = net.InitParams(0);
  LoadParams(g.at("params"), params);
  goldens::ParamsTo(params, test_device::TestDevice());
  for (const auto& cs : g.at("cases")) {
    const std::string name = cs.at("name");
    Result r = RunNet(net, params, cs);
    const double err = Compare(r, cs, kTol, name + " vs t5x float32");

    // A real bfloat16 computation: further from float32 t5x than float32
    // rounding (parity holds to 1e-5) could explain.
    Result r32 = RunNet(net32, params, cs);
    EXPECT_GT(err, 1e-3) << name;
    EXPECT_GT(RelMax(r.logits, r32.logits), 1e-3) << name;

    // Recomputing each layer in the backward pass (remat_policy 'full')
    // computes the same values; only the order in which the decoder layers'
    // bfloat16 gradients w.r.t. the encoder output are summed differs, so
    // the encoder's gradients move within bfloat16 rounding. (On a GPU the
    // backward kernels may also sum in no fixed order -- atomic adds -- so
    // there every gradient gets the bfloat16 bound.)
    if (name == "packed_b") {
      T5Config rc = net.config();
      rc.remat_policy = "full";
      Result rr = RunNet(Transformer(rc), params, cs);
      EXPECT_TRUE(at::equal(rr.logits, r.logits));
      for (const auto& [pname, grad] : r.grads) {
        if (pname.rfind("decoder.", 0) == 0 && !test_device::OnGpu()) {
          EXPECT_TRUE(at::equal(rr.grads.at(pname), grad)) << pname;
        } else {
          EXPECT_LE(RelMax(rr.grads.at(pname), grad), 3e-2) << pname;
        }
      }
    }

    // The encoder output is t5x's encoder_norm output in dtype: bfloat16.
    FeatureBatch b = Batch(cs.at("batch"), test_device::TestDevice());
    auto seg = b.find("encoder_segment_ids");
    at::Tensor encoded = test_device::ToHost(net.Encode(
        params, b.at("encoder_input_tokens"), seg == b.end() ? at::Tensor() : seg->second, false));
    EXPECT_EQ(encoded.scalar_type(), at::kBFloat16) << name;
    const double encoded_err = RelMax(encoded, FloatTensor(cs.at("encoded")));
    EXPECT_LE(encoded_err, kEncodedTol) << name;
    std::cout << "[ bf16     ] " << name << " encoded vs t5x float32: " << encoded_err << "\n";

    if (name.back() != 'b') continue;  // t5x bf16 goldens: loss setting b only
    for (const auto& ref : gb.at("cases")) {
      if (ref.at("name") != name || ref.at("float32_attention_logits") != f32_logits) continue;
      Compare(r, ref, kTol, name + " vs t5x bfloat16");
      EXPECT_LE(RelMax(encoded, FloatTensor(ref.at("encoded"))), kEncodedTol) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Float32AttentionLogits, EncDecBf16Test, ::testing::Bool());

void CheckDecoderOnly(const std::string& file) {
  SCOPED_TRACE(file);
  const json g = Load("parity", file);
  const json gb = Load("parity_bf16", file);
  DecoderOnlyTransformer net(DecoderOnlyConfigOf(g.at("config"), "bfloat16"));
  DecoderOnlyTransformer net32(DecoderOnlyConfigOf(g.at("config"), "float32"));
  ParamStore params = net.InitParams(0);
  LoadParams(g.at("params"), params);
  goldens::ParamsTo(params, test_device::TestDevice());
  for (const auto& cs : g.at("cases")) {
    const std::string name = cs.at("name");
    Result r = RunNet(net, params, cs);
    const double err = Compare(r, cs, kTol, name + " vs t5x float32");
    EXPECT_GT(err, 1e-3) << name;
    EXPECT_GT(RelMax(r.logits, RunNet(net32, params, cs).logits), 1e-3) << name;
    if (name.back() == 'b') {
      Compare(r, CaseNamed(gb, name), kTol, name + " vs t5x bfloat16");
    }
  }
}

TEST(DecoderOnlyBf16Test, CloseToT5xFloat32AndToT5xBfloat16) {
  CheckDecoderOnly("decoder_only.json");
}

TEST(DecoderOnlyBf16Test, TiedLogitsCloseToT5xFloat32AndToT5xBfloat16) {
  CheckDecoderOnly("decoder_only_tied.json");
}

// ---------------------------------------------------------------------------
// Configuration.

TEST(Bf16ConfigTest, OnlyFloat32AndBfloat16AreAccepted) {
  for (const std::string bad : {"float16", "int8"}) {
    T5Config c;
    c.dtype = bad;
    try {
      c.Validate();
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("network.T5Config.dtype = '" + bad + "'"), std::string::npos) << m;
      EXPECT_NE(m.find("'float32'"), std::string::npos) << m;
      EXPECT_NE(m.find("'bfloat16'"), std::string::npos) << m;
    }
    DecoderOnlyConfig d;
    d.dtype = bad;
    try {
      d.Validate();
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("network.TransformerConfig.dtype = '" + bad + "'"), std::string::npos)
          << m;
      EXPECT_NE(m.find("'float32'"), std::string::npos) << m;
      EXPECT_NE(m.find("'bfloat16'"), std::string::npos) << m;
    }
  }
  T5Config c;
  c.dtype = "bfloat16";
  EXPECT_NO_THROW(c.Validate());
  DecoderOnlyConfig d;
  d.dtype = "bfloat16";
  EXPECT_NO_THROW(d.Validate());
  EXPECT_FALSE(T5Config().float32_attention_logits);  // t5x's default
}

// float32_attention_logits changes nothing in float32 (t5x's casts are
// no-ops there): bit-identical logits and gradients.
TEST(Bf16ConfigTest, Float32AttentionLogitsIsANoOpInFloat32) {
  const json g = Load("parity", "encoder_decoder.json");
  Transformer a(EncDecConfig(g.at("config"), "float32", false));
  Transformer b(EncDecConfig(g.at("config"), "float32", true));
  ParamStore params = a.InitParams(0);
  LoadParams(g.at("params"), params);
  const json& cs = CaseNamed(g, "packed_b");
  Result ra = RunNet(a, params, cs), rb = RunNet(b, params, cs);
  EXPECT_TRUE(at::equal(ra.logits, rb.logits));
  for (const auto& [name, grad] : ra.grads) EXPECT_TRUE(at::equal(grad, rb.grads.at(name))) << name;
}

// ---------------------------------------------------------------------------
// Layer-level casting rules, against values worked out by hand.

TEST(Bf16LayersTest, ActivationDtypeNames) {
  EXPECT_EQ(ActivationDtype("float32"), at::kFloat);
  EXPECT_EQ(ActivationDtype("bfloat16"), at::kBFloat16);
  EXPECT_THROW(ActivationDtype("float16"), std::invalid_argument);
}

TEST(Bf16LayersTest, MaskBiasIsMinus1e10RoundedToBfloat16) {
  // -1e10 = -1.16415322 * 2^33; 8 significant bits keep 1.1640625 * 2^33 =
  // 9999220736.
  at::Tensor mask = at::tensor({1, 0}).to(at::kBool).reshape({1, 1, 1, 2});
  at::Tensor bias = MaskToBias(mask, at::kBFloat16);
  EXPECT_EQ(bias.scalar_type(), at::kBFloat16);
  EXPECT_EQ(bias[0][0][0][0].item<double>(), 0.0);
  EXPECT_EQ(bias[0][0][0][1].item<double>(), -9999220736.0);
  // Adding a relative position bias in bfloat16 leaves it there (t5x's
  // combine_biases), and softmax of a fully masked row is uniform.
  at::Tensor sum = bias + at::full({1, 1, 1, 2}, 3.0, at::kBFloat16);
  EXPECT_EQ(sum[0][0][0][1].item<double>(), -9999220736.0);
  at::Tensor all_masked = at::full({4}, -9999220736.0, at::kBFloat16);
  EXPECT_TRUE(at::equal(at::softmax(all_masked, -1), at::full({4}, 0.25, at::kBFloat16)));
}

// The expected values below were worked out with bfloat16 round-to-nearest-
// even (8 significant bits; a tie goes to the even last bit) and checked
// with numpy + ml_dtypes' bfloat16: round(v) at each of t5x's rounding points.
// Each case is chosen so that rounding at different points (or not at all)
// would give a different bfloat16 value.

// XLA's bfloat16 dots accumulate in float32 (on the CPU it computes them in
// float32; TPUs accumulate in float32): 256 + 16 * 1 = 272, exact in
// bfloat16. Accumulating in bfloat16, as libtorch 1.13's CPU bfloat16 matmul
// does, gives 256 (256 + 1 rounds back to 256).
TEST(Bf16LayersTest, MatmulAccumulatesInFloat32) {
  const at::Device dev = test_device::TestDevice();  // cuBLAS's bf16 GEMM on a GPU
  at::Tensor a = at::ones({1, 17});
  a[0][0] = 256;
  a = a.to(dev);
  const at::Tensor b = at::ones({17, 1}, at::TensorOptions(dev));
  at::Tensor c = MatmulIn(a, b, at::kBFloat16);
  ASSERT_EQ(c.scalar_type(), at::kBFloat16);
  EXPECT_EQ(c.item<double>(), 272.0);
  // Batched (attention's [B, H, L, D] x [B, H, D, L]).
  at::Tensor c4 = MatmulIn(a.view({1, 1, 1, 17}), b.view({1, 1, 17, 1}), at::kBFloat16);
  EXPECT_EQ(c4.item<double>(), 272.0);
  // Operands are rounded to bfloat16 first: 1.001 -> 1, 256.9 -> 256.
  EXPECT_EQ(MatmulIn(a * 1.001, b, at::kBFloat16).item<double>(), 272.0);
  // The gradient of a float32 operand is float32 and rounded to bfloat16,
  // as t5x's (the cast's gradient): d(sum(a @ b))/db = a^T; 256 and 1 are
  // exact.
  at::Tensor bw = at::ones({17, 1}, at::TensorOptions(dev)).set_requires_grad(true);
  MatmulIn(a, bw, at::kBFloat16).to(at::kFloat).sum().backward();
  ASSERT_EQ(bw.grad().scalar_type(), at::kFloat);
  const at::Tensor gw = test_device::ToHost(bw.grad());
  EXPECT_EQ(gw[0][0].item<double>(), 256.0);
  EXPECT_EQ(gw[1][0].item<double>(), 1.0);
}

// Dropout below float32 divides the kept values by keep_prob, rounding once
// (flax's `inputs / keep_prob`): 1.9921875 / 0.9 = 2.2135417 -> 2.21875
// (142/64). Multiplying by bfloat16(1 / 0.9) = 1.109375 would give 2.2100830
// -> 2.203125.
TEST(Bf16LayersTest, DropoutDividesByKeepProbInBfloat16) {
  at::Generator g = compat::MakeCpuGenerator(3);
  at::Tensor x = at::full({1000}, 1.9921875, at::kBFloat16);
  at::Tensor y = Dropout(x, 0.1, /*train=*/true, &g);
  ASSERT_EQ(y.scalar_type(), at::kBFloat16);
  const int64_t kept = (y != 0).sum().item<int64_t>();
  EXPECT_GT(kept, 850);
  EXPECT_LT(kept, 950);
  EXPECT_EQ((y == 2.21875).sum().item<int64_t>(), kept);
}

// Values and gradients of bfloat16 matmuls against float64: each is the
// float64 result rounded once to bfloat16, up to a flip of the last bit when
// float32 accumulation lands next to a rounding boundary (allowed: 2^-8
// relative). Shapes as the networks use them: activations @ kernel ([B, L,
// K] @ [K, N], the kernel's gradient summed over B and L) and batched
// attention products ([B, H, M, K] @ [B, H, K, N]).
TEST(Bf16LayersTest, MatmulValuesAndGradientsMatchFloat64RoundedOnce) {
  at::Generator gen = compat::MakeCpuGenerator(4);
  auto bf16_valued = [&](at::IntArrayRef shape) {  // float32 holding bfloat16 values
    return at::randn(shape, gen, at::kFloat).to(at::kBFloat16).to(at::kFloat);
  };
  auto rounded = [](const at::Tensor& t) { return t.to(at::kBFloat16).to(at::kDouble); };
  auto expect_close = [&](const at::Tensor& actual_on, const at::Tensor& expected_f64,
                          const std::string& what) {
    // Exactly bfloat16 values, within one bfloat16 step of float64 rounded.
    const at::Tensor actual = test_device::ToHost(actual_on);
    at::Tensor a = actual.to(at::kDouble);
    EXPECT_TRUE(at::equal(actual.to(at::kBFloat16).to(at::kDouble), a)) << what;
    at::Tensor err = (a - rounded(expected_f64)).abs();
    at::Tensor bound = expected_f64.abs() * std::ldexp(1.0, -8) + 1e-30;
    EXPECT_TRUE((err <= bound).all().item<bool>()) << what << ": max error "
                                                   << err.max().item<double>();
    EXPECT_LT((err > 0).to(at::kDouble).mean().item<double>(), 0.05) << what;
  };
  struct Case {
    std::vector<int64_t> a, b;
  };
  for (const Case& c : {Case{{3, 5, 24}, {24, 16}}, Case{{2, 3, 5, 24}, {2, 3, 24, 6}}}) {
    // Drawn on the CPU (same values on every device), computed on the
    // test device (cuBLAS's bf16 GEMM with float32 accumulation on a GPU).
    const at::Device dev = test_device::TestDevice();
    at::Tensor a = bf16_valued(c.a).to(dev).set_requires_grad(true);
    at::Tensor b = bf16_valued(c.b).to(dev).set_requires_grad(true);
    at::Tensor out = MatmulIn(a, b, at::kBFloat16);
    ASSERT_EQ(out.scalar_type(), at::kBFloat16);
    at::Tensor w = bf16_valued(out.sizes());  // upstream gradient, bfloat16 values
    (out.to(at::kFloat) * w.to(dev)).sum().backward();
    const at::Tensor ad = test_device::ToHost(a).to(at::kDouble), bd = test_device::ToHost(b).to(at::kDouble);
    const at::Tensor wd = w.to(at::kDouble);
    const std::string what = c.b.size() == 2 ? "kernel case" : "batched case";
    expect_close(out, at::matmul(ad, bd), what + " value");
    expect_close(a.grad(), at::matmul(wd, bd.transpose(-2, -1)), what + " grad a");
    at::Tensor gb = at::matmul(ad.transpose(-2, -1), wd);
    if (c.b.size() == 2) gb = gb.sum(0);
    expect_close(b.grad(), gb, what + " grad b");
    EXPECT_EQ(a.grad().scalar_type(), at::kFloat);
  }
}

// The relative position bias is the table rounded to bfloat16, and its
// gradient sums over all (query, key) pairs of a bucket in float32: with
// L = 20, bucket 0 (key == query) gets 20 contributions; upstream gradients
// of 256 at (0, 0) and 1 elsewhere sum to 275 (in bfloat16 256 + 1 stays 256).
TEST(Bf16LayersTest, RelativePositionBiasRoundsTableAndSumsGradientInFloat32) {
  at::Tensor table = at::full({1, 32}, 1.001f).set_requires_grad(true);
  at::Tensor bias = RelativePositionBias(table, 20, 20, /*bidirectional=*/true, 32, 128,
                                         at::kBFloat16);
  ASSERT_EQ(bias.scalar_type(), at::kBFloat16);
  EXPECT_EQ(bias[0][0][3][3].item<double>(), 1.0);  // 1.001 rounded
  at::Tensor upstream = at::ones({1, 1, 20, 20}, at::kBFloat16);
  upstream[0][0][0][0] = 256;
  bias.backward(upstream);
  ASSERT_EQ(table.grad().scalar_type(), at::kFloat);
  EXPECT_EQ(table.grad()[0][0].item<double>(), 275.0);
}

TEST(Bf16LayersTest, RmsNormNormalisesInFloat32ThenScalesInBfloat16) {
  // x = (3, 4) (exact in bfloat16), scale 1.015625 = 1 + 2^-6 (exact).
  // float32: mean(x^2) = 12.5, x * rsqrt(12.5 + 1e-6) = (0.8485281,
  // 1.1313708); rounded to bfloat16: 0.84765625 (217/256), 1.1328125
  // (145/128). Times the scale: 0.86090088 -> 0.859375 (220/256) and
  // 1.1505127 -> 1.1484375 (147/128). Rounding only once, after the scale,
  // would give 0.8617864 -> 0.86328125 (221/256) for the first.
  at::Tensor x = at::tensor({3.0f, 4.0f}).reshape({1, 2}).to(at::kBFloat16);
  at::Tensor scale = at::full({2}, 1.015625f);
  at::Tensor y = RmsNorm(x, scale, 1e-6, at::kBFloat16);
  ASSERT_EQ(y.scalar_type(), at::kBFloat16);
  EXPECT_EQ(y[0][0].item<double>(), 0.859375);
  EXPECT_EQ(y[0][1].item<double>(), 1.1484375);
  // dtype float32 gives float32, from a bfloat16 input too.
  at::Tensor y32 = RmsNorm(x, scale);
  ASSERT_EQ(y32.scalar_type(), at::kFloat);
  EXPECT_NEAR(y32[0][0].item<double>(), 3 / std::sqrt(12.5 + 1e-6) * 1.015625, 1e-6);
}

TEST(Bf16LayersTest, MlpCastsKernelsAndComputesInBfloat16) {
  // ('relu', 'linear'), x = 3, wi_0 = 1.01 -> bfloat16 1.0078125, wi_1 = 1,
  // wo = 1. a0 = relu(3 * 1.0078125 = 3.0234375) -> 3.03125 (a tie between
  // 3.015625 and 3.03125; the latter has the even last bit); a1 = 3;
  // a0 * a1 = 9.09375 -> 9.125 (tie, even); @ wo -> 9.125. In float32 the
  // block gives 3.03 * 3 = 9.09, which would round to 9.0625.
  at::Tensor x = at::full({1, 1, 1}, 3.0f);
  const std::vector<at::Tensor> wi = {at::full({1, 1}, 1.01f), at::ones({1, 1})};
  at::Tensor y = MlpBlock(x, wi, at::ones({1, 1}), {"relu", "linear"}, 0.0, false, nullptr,
                          at::kBFloat16);
  ASSERT_EQ(y.scalar_type(), at::kBFloat16);
  EXPECT_EQ(y.item<double>(), 9.125);
  at::Tensor y32 = MlpBlock(x, wi, at::ones({1, 1}), {"relu", "linear"}, 0.0, false);
  ASSERT_EQ(y32.scalar_type(), at::kFloat);
  EXPECT_NEAR(y32.item<double>(), 9.09, 1e-5);
}

// One head, D = 1, two keys, E = 2. Logits are q*k_j; with float32_logits
// they stay float32 until the probabilities are cast to bfloat16, otherwise
// the logits (and the softmax) are bfloat16.
TEST(Bf16LayersTest, AttentionLogitsInFloat32OnlyWhenAsked) {
  // inputs_q = (1, 0); inputs_kv rows (1, 1) and (2, 0). Query kernel
  // (3, 0)^T -> q = 3; key kernel (1.0078125, 0)^T -> k = (1.0078125,
  // 2.015625); value kernel (0, 1)^T -> v = (1, 0); out kernel (1, 0) -> the
  // output's first feature is p0, the probability of key 0, in bfloat16.
  // All of these are exact in bfloat16.
  // Logits q*k = (3.0234375, 6.046875); both are bfloat16 ties and round to
  // the even neighbour, 3.03125 and 6.0625. p0 = 1/(1 + exp(l1 - l0)):
  //   float32 logits:  l1 - l0 = 3.0234375, p0 = 0.0463782 -> 190/4096
  //   bfloat16 logits: l1 - l0 = 3.03125,   p0 = 0.0460339 -> 189/4096
  // (the bfloat16 softmax rounds once at its end here: libtorch computes it
  // in float32 inside, as XLA does under jit with its default excess
  // precision; these inputs do not depend on that.)
  at::Tensor q_in = at::tensor({1.0f, 0.0f}).reshape({1, 1, 2});
  at::Tensor kv_in = at::tensor({1.0f, 1.0f, 2.0f, 0.0f}).reshape({1, 2, 2});
  at::Tensor wq = at::tensor({3.0f, 0.0f}).reshape({2, 1});
  at::Tensor wk = at::tensor({1.0078125f, 0.0f}).reshape({2, 1});
  at::Tensor wv = at::tensor({0.0f, 1.0f}).reshape({2, 1});
  at::Tensor wo = at::tensor({1.0f, 0.0f}).reshape({1, 2});
  auto run = [&](at::ScalarType dtype, bool f32_logits, const at::Tensor& bias) {
    return MultiHeadDotProductAttention(q_in, kv_in, wq, wk, wv, wo, 1, bias, 0.0, false, nullptr,
                                        dtype, f32_logits);
  };
  at::Tensor bf16_logits = run(at::kBFloat16, false, at::Tensor());
  at::Tensor f32_logits = run(at::kBFloat16, true, at::Tensor());
  ASSERT_EQ(bf16_logits.scalar_type(), at::kBFloat16);
  ASSERT_EQ(f32_logits.scalar_type(), at::kBFloat16);
  EXPECT_EQ(f32_logits[0][0][0].item<double>(), 190.0 / 4096);
  EXPECT_EQ(bf16_logits[0][0][0].item<double>(), 189.0 / 4096);
  // float32 throughout: p0 itself; float32_logits changes nothing.
  at::Tensor f32 = run(at::kFloat, false, at::Tensor());
  ASSERT_EQ(f32.scalar_type(), at::kFloat);
  EXPECT_NEAR(f32[0][0][0].item<double>(), 1.0 / (1.0 + std::exp(3.0234375)), 1e-7);
  EXPECT_TRUE(at::equal(f32, run(at::kFloat, true, at::Tensor())));
  // A bfloat16 bias (as the networks build it) of 0.015625 on key 0 is added
  // in the logits' dtype:
  //   float32:  l1 - l0 = 6.046875 - 3.0390625 = 3.0078125, p0 = 0.0470742
  //             -> 193/4096
  //   bfloat16: 3.03125 + 0.015625 = 3.046875 (exact), l1 - l0 = 3.015625,
  //             p0 = 0.0467250 -> 191/4096
  at::Tensor bias = at::tensor({0.015625f, 0.0f}).reshape({1, 1, 1, 2}).to(at::kBFloat16);
  EXPECT_EQ(run(at::kBFloat16, true, bias)[0][0][0].item<double>(), 193.0 / 4096);
  EXPECT_EQ(run(at::kBFloat16, false, bias)[0][0][0].item<double>(), 191.0 / 4096);
}

}  // namespace
}  // namespace t5xx::models
