// t5x parity of decoding: EncoderDecoderModel and DecoderOnlyModel's
// PredictBatchWithAux and ScoreBatch reproduce what t5x's own
// EncoderDecoderModel / DecoderOnlyModel predict_batch_with_aux and
// score_batch return on the committed tiny parity models
// (tests/testdata/decoding_parity/, made by
// tests/models/parity/make_decoding_goldens.py with t5x in JAX): the tokens
// exactly and the scores within 2e-5 relative + 2e-5 absolute (float32
// sums of up to 14 log-probabilities of magnitude ~20; the largest
// difference seen is 3.8e-6), with and without the key/value cache.
//
// Device: parameters and batches go to T5XX_TEST_DEVICE (tests/test_device.h;
// the CPU unless set) and results come back to the CPU. On a GPU the tokens
// must still match exactly (a different token is a finding to look into,
// not noise to tolerate) and the score bounds become
// test_device::Float32Tol's 1e-4 (float32 sums in another order, there).
#include <gtest/gtest.h>

#include "t5xx/models/decoder_only_model.h"
#include "t5xx/models/encoder_decoder_model.h"
#include "parity_goldens.h"
#include "test_device.h"

namespace t5xx::models {
namespace {

using goldens::json;

constexpr double kCpuScoreTol = 2e-5;  // relative and absolute, on the CPU
// ScoreBatch's sequence and token scores, on the CPU.
constexpr double kCpuScoreBatchTol = 1e-5;
double ScoreTol() { return test_device::Float32Tol(kCpuScoreTol); }
double ScoreBatchTol() { return test_device::Float32Tol(kCpuScoreBatchTol); }

// A ScoreBatch output (on any device) against a golden's "score_batch" entry:
// sequence scores and per-token scores within ScoreBatchTol.
void ExpectScoreBatch(const ScoreBatchOutput& s, const json& sb) {
  const at::Tensor sequence_scores = test_device::ToHost(s.sequence_scores);
  EXPECT_TRUE(at::allclose(sequence_scores, goldens::FloatTensor(sb.at("sequence_scores")),
                           ScoreBatchTol(), ScoreBatchTol()))
      << sequence_scores;
  EXPECT_TRUE(at::allclose(test_device::ToHost(s.intermediates.at("decoder.token_scores")),
                           goldens::FloatTensor(sb.at("token_scores")), ScoreBatchTol(),
                           ScoreBatchTol()));
}

// The parity params named by a decoding golden, checked against its sum.
void LoadCheckedParams(const json& golden, ParamStore& params, json* config) {
  const std::string from = golden.at("params_from");
  const json parity = goldens::Load(from.substr(0, from.find('/')), from.substr(from.find('/') + 1));
  *config = parity.at("config");
  goldens::LoadParams(parity.at("params"), params);
  double sum = 0;
  for (const auto& p : params.params()) sum += p.value.to(at::kDouble).sum().item<double>();
  ASSERT_NEAR(sum, golden.at("params_sum").get<double>(), 1e-6 * std::abs(sum))
      << "the parity params changed since the decoding goldens were made";
  params.SetRequiresGrad(false);
  goldens::ParamsTo(params, test_device::TestDevice(), /*requires_grad=*/false);
}

decoding::DecodeFnConfig DecodeFn(const json& c) {
  decoding::DecodeFnConfig f;
  const json& kw = c.at("decode_fn_kwargs");
  if (c.at("decode_fn") == "beam_search") {
    f.kind = decoding::DecodeFnConfig::Kind::kBeamSearch;
    f.beam_search.alpha = kw.value("alpha", 0.6);
  } else {
    EXPECT_EQ(c.at("decode_fn"), "temperature_sample");
    f.kind = decoding::DecodeFnConfig::Kind::kTemperatureSample;
    f.temperature_sample.topk = kw.value("topk", 1);
    f.temperature_sample.rescale_log_probs = kw.value("rescale_log_probs", true);
  }
  return f;
}

void ExpectCase(BaseTransformerModel& model, const ParamStore& params, const FeatureBatch& batch,
                const json& c) {
  const json& pk = c.at("predict_kwargs");
  model.set_decode_fn(DecodeFn(c));
  const at::Tensor want = goldens::IntTensor(c.at("predictions"));
  const at::Tensor want_scores = goldens::FloatTensor(c.at("scores"));
  for (bool use_cache : {true, false}) {
    SCOPED_TRACE(c.at("name").get<std::string>() + (use_cache ? " (cache)" : " (no cache)"));
    model.set_use_decode_cache(use_cache);
    const PredictionsWithAux out = model.PredictBatchWithAux(
        params, batch, nullptr, pk.value("return_all_decodes", false),
        pk.value("num_decodes", 1), pk.value("prompt_with_targets", false));
    const at::Tensor predictions = test_device::ToHost(out.predictions);
    EXPECT_TRUE(at::equal(predictions, want)) << predictions << "\nt5x:\n" << want;
    const at::Tensor scores = test_device::ToHost(out.aux.at("scores"));
    EXPECT_TRUE(at::allclose(scores, want_scores, ScoreTol(), ScoreTol()))
        << scores << "\nt5x:\n" << want_scores << "\nmax diff "
        << (scores - want_scores).abs().max().item<double>();
  }
}

TEST(DecodingParityTest, EncoderDecoderModelMatchesT5x) {
  const json golden = goldens::Load("decoding_parity", "encoder_decoder.json");
  json config;
  ParamStore params;
  {
    const json parity = goldens::Load("parity", "encoder_decoder.json");
    params = Transformer(goldens::EncDecConfig(parity.at("config"))).InitParams(0);
  }
  LoadCheckedParams(golden, params, &config);
  EncoderDecoderModel model(Transformer(goldens::EncDecConfig(config)), 0, 0, {});
  model.set_eos_id(golden.at("eos_id"));
  ASSERT_EQ(golden.at("cases").size(), 5u);
  for (const json& c : golden.at("cases")) {
    ExpectCase(model, params, goldens::Batch(c.at("batch"), test_device::TestDevice()), c);
  }
  const json& sb = golden.at("score_batch");
  const ScoreBatchOutput s =
      model.ScoreBatch(params, goldens::Batch(sb.at("batch"), test_device::TestDevice()), true);
  ExpectScoreBatch(s, sb);
}

TEST(DecodingParityTest, DecoderOnlyModelMatchesT5x) {
  const json golden = goldens::Load("decoding_parity", "decoder_only.json");
  json config;
  ParamStore params;
  {
    const json parity = goldens::Load("parity", "decoder_only.json");
    params = DecoderOnlyTransformer(goldens::DecoderOnlyConfigOf(parity.at("config"))).InitParams(0);
  }
  LoadCheckedParams(golden, params, &config);
  const FeatureBatch batch = goldens::Batch(golden.at("batch"), test_device::TestDevice());
  ASSERT_EQ(golden.at("cases").size(), 6u);
  for (bool bidirectional : {true, false}) {
    DecoderOnlyModel model(DecoderOnlyTransformer(goldens::DecoderOnlyConfigOf(config)),
                           bidirectional, 0, 0, {});
    model.set_eos_id(golden.at("eos_id"));
    for (const json& c : golden.at("cases")) {
      if (c.at("inputs_bidirectional_attention") != bidirectional) continue;
      ExpectCase(model, params, batch, c);
    }
    const json& sb = golden.at("score_batch").at(bidirectional ? "prefix_lm" : "causal");
    ExpectScoreBatch(model.ScoreBatch(params, batch, true), sb);
  }
}

}  // namespace
}  // namespace t5xx::models
