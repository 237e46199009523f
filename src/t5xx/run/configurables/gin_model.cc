// The model configurables -- t5x.models.EncoderDecoderModel and
// DecoderOnlyModel, t5x.examples.t5.network.{Transformer, T5Config} and
// t5x.examples.decoder_only.network.{DecoderWrapper, TransformerConfig} --
// with t5x's defaults, and how MODEL is read from them.
#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_prompt.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

using gin::Value;

constexpr char kEncoderDecoderModel[] = "t5x.models.EncoderDecoderModel";
constexpr char kTransformer[] = "t5x.examples.t5.network.Transformer";
constexpr char kT5Config[] = "t5x.examples.t5.network.T5Config";
// t5x's scalable_t5 network (umT5's): per-layer relative position tables,
// and scan_layers / param_scan_axis for its checkpoint layout.
constexpr char kScalableTransformer[] = "t5x.examples.scalable_t5.network.Transformer";
constexpr char kScalableT5Config[] = "t5x.examples.scalable_t5.network.T5Config";
constexpr char kDecoderOnlyModel[] = "t5x.models.DecoderOnlyModel";
constexpr char kDecoderWrapper[] = "t5x.examples.decoder_only.network.DecoderWrapper";
constexpr char kDecoderOnlyConfig[] = "t5x.examples.decoder_only.network.TransformerConfig";
constexpr char kVocab[] = "seqio.SentencePieceVocabulary";
constexpr char kByteVocab[] = "seqio.ByteVocabulary";

// One of the model's vocabularies, bound as @seqio.SentencePieceVocabulary()
// or @seqio.ByteVocabulary() (t5x's byt5/base.gin).
VocabularyConfig ReadModelVocabulary(gin::Config& c, const Value& v,
                                     const std::string& model_scope) {
  VocabularyConfig out;
  const bool byte = v.kind() == Value::Kind::kReference && v.reference_name() == kByteVocab;
  const std::string scope = gin::ExpectReference(v, byte ? kByteVocab : kVocab, true, model_scope);
  out.byte = byte;
  if (!byte) {
    out.sentencepiece_model_file = c.Query(kVocab, "sentencepiece_model_file", scope).AsString();
  }
  out.extra_ids = c.Query(byte ? kByteVocab : kVocab, "extra_ids", scope).AsInt();
  return out;
}

}  // namespace

void RegisterModelConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  gin::ParamSpec lnf = Optional("loss_normalizing_factor", T::kOptionalFloat, None(),
                           "Divides the summed loss; a number, None, or a special factor name.");
  lnf.allowed_strings = {"NUM_REAL_TARGET_TOKENS", "NUM_TOTAL_TARGET_TOKENS",
                         "AVERAGE_PER_SEQUENCE"};
  const gin::ParamSpec z_loss =
      Optional("z_loss", T::kFloat, F(0.0), "Coefficient of the log(Z)^2 auxiliary loss.");
  const gin::ParamSpec label_smoothing = Optional("label_smoothing", T::kFloat, F(0.0));
  r.Register({kEncoderDecoderModel,
              {Required("module", T::kReference, "The flax network (network.Transformer)."),
               Required("input_vocabulary", T::kReference),
               Required("output_vocabulary", T::kReference),
               Required("optimizer_def", T::kReference),
               Optional("decode_fn", T::kReference,
                        Value::Reference(kDefaultEncoderDecoderDecodeFn, "", false),
                        "@decoding.beam_search or @decoding.temperature_sample."),
               Optional("default_decoder_params", T::kOptionalReference, None(),
                        "@models.DecoderParams(): num_decodes and return_all_decodes."),
               z_loss, label_smoothing, lnf},
              "Encoder-decoder model: loss, scoring and decoding around a network."});
  r.Register({kDecoderOnlyModel,
              {Required("module", T::kReference, "The flax network (network.DecoderWrapper)."),
               Required("vocabulary", T::kReference), Required("optimizer_def", T::kReference),
               Optional("decode_fn", T::kReference,
                        Value::Reference(kDefaultDecoderOnlyDecodeFn, "", false),
                        "@decoding.temperature_sample or @decoding.beam_search."),
               Optional("default_decoder_params", T::kOptionalReference, None(),
                        "@models.DecoderParams(): num_decodes and return_all_decodes."),
               Optional("inputs_bidirectional_attention", T::kBool, B(false),
                        "Prefix LM: the inputs attend to each other bidirectionally."),
               z_loss, label_smoothing, lnf},
              "Decoder-only (GPT-style or prefix-LM) model: loss, scoring and decoding around "
              "a network."});
  r.Register({kTransformer,
              {Required("config", T::kReference, "A network.T5Config."),
               Optional("prompt", T::kOptionalReference, None(),
                        "t5xx only: @train_prompts.Prompt() (prompt-tuning's prompt, prepended "
                        "to the encoder's embedded inputs); None: no prompt.")},
              "The T5.1.1 encoder-decoder network."});
  RegisterPromptConfigurables(r);
  r.Register({kDecoderWrapper, {Required("config", T::kReference, "A network.TransformerConfig.")},
              "The decoder-only network."});
  // The two network configs share every field but their layer counts (and
  // T5Config's float32_attention_logits).
  auto network_config = [&](std::vector<gin::ParamSpec> layers, bool float32_attention_logits) {
    std::vector<gin::ParamSpec> p = {
        Required("vocab_size", T::kInt),
        Optional("dtype", T::kString, S("float32"),
                 "Activation dtype: 'float32' or 'bfloat16' (parameters stay float32)."),
        Required("emb_dim", T::kInt), Required("num_heads", T::kInt)};
    p.insert(p.end(), layers.begin(), layers.end());
    for (gin::ParamSpec q : {Required("head_dim", T::kInt), Required("mlp_dim", T::kInt),
                        Optional("mlp_activations", T::kList, Value::Tuple({S("relu")})),
                        Optional("dropout_rate", T::kFloat, F(0.1)),
                        Optional("logits_via_embedding", T::kBool, B(false))}) {
      p.push_back(std::move(q));
    }
    if (float32_attention_logits) {
      p.push_back(Optional("float32_attention_logits", T::kBool, B(false),
                           "With dtype 'bfloat16': attention logits and softmax in float32."));
    }
    p.push_back(Optional("remat_policy", T::kString, S("none"),
                         "t5xx only: 'none'; 'minimal' to keep the weight matmuls' outputs and "
                         "recompute the rest; 'full' to recompute each layer in the backward "
                         "pass (activation checkpointing)."));
    return p;
  };
  r.Register({kT5Config,
              network_config({Required("num_encoder_layers", T::kInt),
                              Required("num_decoder_layers", T::kInt)},
                             true),
              "Hyperparameters of the T5.1.1 network."});
  r.Register({kScalableTransformer, {Required("config", T::kReference, "A network.T5Config.")},
              "t5x's scalable_t5 encoder-decoder (umT5's): a relative position table per "
              "layer."});
  std::vector<gin::ParamSpec> scalable = network_config(
      {Required("num_encoder_layers", T::kInt), Required("num_decoder_layers", T::kInt)}, false);
  scalable.push_back(Optional("scan_layers", T::kBool, B(true),
                              "t5x stacks the layers' parameters along a 'layers' axis in its "
                              "checkpoints and its Adafactor factors them so (t5xx trains per layer "
                              "and saves the stacked layout)."));
  scalable.push_back(Optional("param_scan_axis", T::kInt, I(1),
                              "Where the 'layers' axis sits in stacked parameters."));
  r.Register({kScalableT5Config, scalable, "Hyperparameters of t5x's scalable_t5 network."});
  r.Register({kDecoderOnlyConfig, network_config({Required("num_layers", T::kInt)}, false),
              "Hyperparameters of the decoder-only network."});
}

ModelConfig ReadModel(gin::Config& c, const std::string& root, std::string* model_name_out,
                      std::string* model_scope_out) {
  return ReadModelValue(c, c.Query(root, "model"), model_name_out, model_scope_out);
}

ModelConfig ReadModelValue(gin::Config& c, const Value& model_ref, std::string* model_name_out,
                           std::string* model_scope_out) {
  ModelConfig m;
  T5XX_CHECK(model_ref.kind() == Value::Kind::kReference &&
                 (model_ref.reference_name() == kEncoderDecoderModel ||
                  model_ref.reference_name() == kDecoderOnlyModel),
             gin::Where(model_ref) + ": expected @models.EncoderDecoderModel() or "
                                     "@models.DecoderOnlyModel(), got " +
                 model_ref.ToGinString());
  const std::string model_name = model_ref.reference_name();
  const std::string model_scope = gin::ExpectReference(model_ref, model_name);
  // The fields both network configs share, read into `t` around the layer
  // counts (in the order t5x declares them).
  auto read_head = [](auto& t, auto&& q) {
    t.vocab_size = q("vocab_size").AsInt();
    t.dtype = q("dtype").AsString();
    t.emb_dim = q("emb_dim").AsInt();
    t.num_heads = q("num_heads").AsInt();
  };
  auto read_tail = [](auto& t, auto&& q) {
    t.head_dim = q("head_dim").AsInt();
    t.mlp_dim = q("mlp_dim").AsInt();
    t.mlp_activations = gin::StringList(q("mlp_activations"));
    t.dropout_rate = q("dropout_rate").AsFloat();
    t.logits_via_embedding = q("logits_via_embedding").AsBool();
  };
  if (model_name == kEncoderDecoderModel) {
    m.kind = ModelKind::kEncoderDecoder;
    const Value module = c.Query(kEncoderDecoderModel, "module", model_scope);
    const bool scalable =
        module.kind() == Value::Kind::kReference && module.reference_name() == kScalableTransformer;
    const char* transformer = scalable ? kScalableTransformer : kTransformer;
    const char* t5_config = scalable ? kScalableT5Config : kT5Config;
    const std::string module_scope = gin::ExpectReference(module, transformer, true, model_scope);
    const std::string cfg_scope = gin::ExpectReference(c.Query(transformer, "config", module_scope),
                                                       t5_config, true, module_scope);
    auto tq = [&](const char* p) { return c.Query(t5_config, p, cfg_scope); };
    models::T5Config& t = m.t5_config;
    read_head(t, tq);
    t.num_encoder_layers = tq("num_encoder_layers").AsInt();
    t.num_decoder_layers = tq("num_decoder_layers").AsInt();
    read_tail(t, tq);
    t.float32_attention_logits = !scalable && tq("float32_attention_logits").AsBool();
    if (!scalable) ReadPrompt(c, transformer, module_scope, t);
    t.remat_policy = tq("remat_policy").AsString();
    if (scalable) {
      t.relpos_per_layer = true;
      t.scan_layers = tq("scan_layers").AsBool();
      const Value axis = tq("param_scan_axis");
      // flax's scan_with_axes inserts 'layers' into every parameter, the
      // rank-1 layer-norm scales included: 0 or 1.
      T5XX_CHECK(axis.AsInt() == 0 || axis.AsInt() == 1,
                 gin::Where(axis) + ": " + std::string(kScalableT5Config) +
                     ".param_scan_axis = " + std::to_string(axis.AsInt()) +
                     " must be 0 or 1 (the layer-norm scales are rank 1 per layer; t5x's "
                     "default is 1)");
      t.param_scan_axis = static_cast<int>(axis.AsInt());
    }
    t.Validate([&](const char* field) { return gin::Where(tq(field)); });
  } else {
    m.kind = ModelKind::kDecoderOnly;
    const std::string module_scope = gin::ExpectReference(
        c.Query(kDecoderOnlyModel, "module", model_scope), kDecoderWrapper, true, model_scope);
    const std::string cfg_scope = gin::ExpectReference(
        c.Query(kDecoderWrapper, "config", module_scope), kDecoderOnlyConfig, true, module_scope);
    auto tq = [&](const char* p) { return c.Query(kDecoderOnlyConfig, p, cfg_scope); };
    models::DecoderOnlyConfig& t = m.decoder_only_config;
    read_head(t, tq);
    t.num_layers = tq("num_layers").AsInt();
    read_tail(t, tq);
    t.remat_policy = tq("remat_policy").AsString();
    t.Validate([&](const char* field) { return gin::Where(tq(field)); });
    m.inputs_bidirectional_attention =
        c.Query(kDecoderOnlyModel, "inputs_bidirectional_attention", model_scope).AsBool();
  }

  m.z_loss = c.Query(model_name, "z_loss", model_scope).AsFloat();
  {
    const Value ls = c.Query(model_name, "label_smoothing", model_scope);
    m.label_smoothing = ls.AsFloat();
    // t5x's cross_entropy_with_logits: confidence = 1 - label_smoothing.
    T5XX_CHECK(m.label_smoothing >= 0 && m.label_smoothing < 1,
               gin::Where(ls) + " = " + ls.ToGinString() +
                   " must be in [0, 1) (the target's probability is 1 - label_smoothing)");
  }
  {
    const Value lnf = c.Query(model_name, "loss_normalizing_factor", model_scope);
    std::string text = lnf.is_none() ? "None"
                       : lnf.kind() == Value::Kind::kString ? lnf.AsString()
                                                            : std::to_string(lnf.AsFloat());
    m.loss_normalizing_factor = models::LossNormalizingFactor::Parse(text, gin::Where(lnf));
  }
  {
    // The model's vocabularies are used for decoding; for training t5xx
    // checks that the task's vocabulary is the model's.
    if (m.kind == ModelKind::kEncoderDecoder) {
      ReadModelVocabulary(c, c.Query(kEncoderDecoderModel, "input_vocabulary", model_scope),
                          model_scope);
      m.output_vocabulary = ReadModelVocabulary(
          c, c.Query(kEncoderDecoderModel, "output_vocabulary", model_scope), model_scope);
    } else {
      m.output_vocabulary = ReadModelVocabulary(
          c, c.Query(kDecoderOnlyModel, "vocabulary", model_scope), model_scope);
    }
  }
  ReadDecodeFn(c, model_name, model_scope, m);
  *model_name_out = model_name;
  *model_scope_out = model_scope;
  return m;
}

}  // namespace t5xx::run
