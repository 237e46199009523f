// The decoding configurables -- t5x.decoding.temperature_sample and
// beam_search (t5x/decoding.py) with t5x's defaults, and
// t5x.models.DecoderParams -- and how a model's decode_fn and
// default_decoder_params are read from them.
#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

using gin::Value;

constexpr char kTemperatureSample[] = "t5x.decoding.temperature_sample";
constexpr char kBeamSearch[] = "t5x.decoding.beam_search";
constexpr char kDecoderParams[] = "t5x.models.DecoderParams";
constexpr char kEncoderDecoderPredict[] = "t5x.models.EncoderDecoderModel.predict_batch_with_aux";
constexpr char kDecoderOnlyPredict[] = "t5x.models.DecoderOnlyModel.predict_batch_with_aux";

}  // namespace

const char kDefaultEncoderDecoderDecodeFn[] = "t5x.decoding.beam_search";
const char kDefaultDecoderOnlyDecodeFn[] = "t5x.decoding.temperature_sample";

void RegisterDecodingConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kTemperatureSample,
              {Optional("temperature", T::kFloat, F(1.0),
                        "Sampling temperature; below 1e-4 the most likely token is taken."),
               Optional("topk", T::kInt, I(1),
                        "Sample among the k most likely tokens (1: greedy; 0: no cut)."),
               Optional("topp", T::kFloat, F(0.0),
                        "Nucleus sampling: the fewest tokens whose probabilities sum to topp "
                        "(0: off; not with topk)."),
               Optional("max_decode_steps", T::kOptionalInt, None(),
                        "Decode at most this many tokens after the prompt."),
               Optional("rescale_log_probs", T::kBool, B(true),
                        "Return log-probabilities after temperature/topk/topp.")},
              "Temperature sampling (t5x/decoding.py temperature_sample)."});
  r.Register({kBeamSearch,
              {Optional("alpha", T::kFloat, F(0.6),
                        "Brevity penalty exponent: scores are divided by ((5 + len) / 6)^alpha."),
               Optional("max_decode_len", T::kOptionalInt, None(),
                        "The decode length; None: the targets' length."),
               Optional("max_decode_step", T::kInt, I(-1),
                        "Stop after this many steps (-1: no limit)."),
               Optional("min_log_prob", T::kFloat, F(-1.0e7),
                        "Beams below this log-probability are not kept.")},
              "Beam search (t5x/decoding.py beam_search)."});
  r.Register({kDecoderParams,
              {Optional("return_all_decodes", T::kBool, B(false)),
               Optional("num_decodes", T::kInt, I(1),
                        "Beams of beam_search, or samples of temperature_sample.")},
              "predict_batch_with_aux's defaults (t5x.models.DecoderParams)."});
  // The models' predict_batch_with_aux, as gin registers a configurable
  // method (t5x's example gins bind its num_decodes).
  r.Register({kEncoderDecoderPredict,
              {Optional("decoder_params", T::kOptionalDict, None()),
               Optional("return_all_decodes", T::kOptionalBool, None(),
                        "None: default_decoder_params'."),
               Optional("num_decodes", T::kOptionalInt, None(),
                        "Beams of beam_search, or samples of temperature_sample; None: "
                        "default_decoder_params'."),
               Optional("prompt_with_targets", T::kBool, B(false))},
              "t5x.models.EncoderDecoderModel.predict_batch_with_aux."});
  r.Register({kDecoderOnlyPredict,
              {Optional("return_all_decodes", T::kBool, B(false)),
               Optional("num_decodes", T::kInt, I(1)),
               Optional("decoder_params", T::kOptionalDict, None())},
              "t5x.models.DecoderOnlyModel.predict_batch_with_aux."});
}

void ReadDecodeFn(gin::Config& c, const std::string& model_name, const std::string& model_scope,
                  ModelConfig& m) {
  const Value fn = c.Query(model_name, "decode_fn", model_scope);
  const std::string& kind =
      gin::ExpectOneOf(fn, {kTemperatureSample, kBeamSearch}, "a decode_fn");
  T5XX_CHECK(!fn.reference_evaluated(),
             gin::Where(fn) + ": decode_fn takes the function itself, @decoding." +
                 kind.substr(kind.rfind('.') + 1) + " (without the parentheses)");
  const std::string s = gin::CallScope(model_scope, fn);
  if (kind == kTemperatureSample) {
    m.decode_fn.kind = decoding::DecodeFnConfig::Kind::kTemperatureSample;
    decoding::TemperatureSampleOptions& o = m.decode_fn.temperature_sample;
    const Value temperature = c.Query(kind, "temperature", s);
    o.temperature = temperature.AsFloat();
    T5XX_CHECK(o.temperature >= 0, gin::Where(temperature) + " = " +
                                       temperature.ToGinString() + " must be >= 0");
    const Value topk = c.Query(kind, "topk", s), topp = c.Query(kind, "topp", s);
    o.topk = gin::AtLeast(topk, 0);
    o.topp = topp.AsFloat();
    T5XX_CHECK(o.topp >= 0 && o.topp <= 1,
               gin::Where(topp) + " = " + topp.ToGinString() + " must be in [0, 1]");
    // t5x raises ValueError for both.
    T5XX_CHECK(o.topp == 0 || o.topk == 0,
               gin::Where(topp) + " = " + topp.ToGinString() + " and " + gin::Where(topk) +
                   " = " + topk.ToGinString() +
                   ": topk and topp cannot both be set; set topk = 0 to sample with topp");
    o.max_decode_steps = gin::NoneOrAtLeast(c.Query(kind, "max_decode_steps", s), 1);
    o.rescale_log_probs = c.Query(kind, "rescale_log_probs", s).AsBool();
  } else {
    m.decode_fn.kind = decoding::DecodeFnConfig::Kind::kBeamSearch;
    decoding::BeamSearchOptions& o = m.decode_fn.beam_search;
    const Value alpha = c.Query(kind, "alpha", s);
    o.alpha = alpha.AsFloat();
    T5XX_CHECK(o.alpha >= 0,
               gin::Where(alpha) + " = " + alpha.ToGinString() + " must be >= 0");
    o.max_decode_len = gin::NoneOrAtLeast(c.Query(kind, "max_decode_len", s), 1).value_or(0);
    const Value step = c.Query(kind, "max_decode_step", s);
    o.max_decode_step = step.AsInt();
    T5XX_CHECK(o.max_decode_step == -1 || o.max_decode_step >= 1,
               gin::Where(step) + " = " + step.ToGinString() + " must be -1 (no limit) or >= 1");
    o.min_log_prob = c.Query(kind, "min_log_prob", s).AsFloat();
  }
  const Value params = c.Query(model_name, "default_decoder_params", model_scope);
  if (!params.is_none()) {
    const std::string ps = gin::ExpectReference(params, kDecoderParams, true, model_scope);
    m.num_decodes = gin::AtLeast(c.Query(kDecoderParams, "num_decodes", ps), 1);
    m.return_all_decodes = c.Query(kDecoderParams, "return_all_decodes", ps).AsBool();
  }
  // Bindings of the model's predict_batch_with_aux win (t5x passes them to
  // the decode_fn over default_decoder_params').
  const std::string predict = model_name + ".predict_batch_with_aux";
  if (predict == kEncoderDecoderPredict || predict == kDecoderOnlyPredict) {
    const Value extra = c.Query(predict, "decoder_params", model_scope);
    gin::Refuse(!extra.is_none(), extra,
                "predict_batch_with_aux.decoder_params is not supported by t5xx yet; bind the "
                "decode_fn's own parameters (decoding.beam_search.alpha, ...) instead");
    if (c.IsBound(predict, "num_decodes", model_scope)) {
      const Value n = c.Query(predict, "num_decodes", model_scope);
      if (!n.is_none()) m.num_decodes = gin::AtLeast(n, 1);
    }
    if (c.IsBound(predict, "return_all_decodes", model_scope)) {
      const Value all = c.Query(predict, "return_all_decodes", model_scope);
      if (!all.is_none()) m.return_all_decodes = all.AsBool();
    }
  }
}

}  // namespace t5xx::run
