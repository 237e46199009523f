// RegisterT5CatalogPreprocessors (preprocessor_registry.h): t5's catalog
// preprocessors under t5's Python names, with t5's parameter names and the
// Python signatures' traits ([L] = takes sequence_length).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/preprocessors/glue_preprocessors.h"
#include "t5xx/data/preprocessors/prefix_lm_objective.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/data/preprocessors/qa_preprocessors.h"
#include "t5xx/data/preprocessors/rank_classification.h"
#include "t5xx/data/preprocessors/wsc_preprocessors.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

using nlohmann::json;

const PreprocessorSignature kCatalogPlain{false, false};
const PreprocessorSignature kCatalogTakesLength{true, false};

template <typename T>
T CatalogArg(const json& kw, const char* key, T dflt) {
  auto it = kw.find(key);
  if (it == kw.end() || it->is_null()) return dflt;
  return it->get<T>();
}

int32_t GetPadId(const json& kw, const char* who) {
  const int64_t pad = CatalogArg<int64_t>(kw, "pad_id", 0);
  T5XX_CHECK(pad >= INT32_MIN && pad <= INT32_MAX,
             std::string(who) + ": pad_id must be an int32 token id, got " + std::to_string(pad));
  return static_cast<int32_t>(pad);
}

}  // namespace

void RegisterT5CatalogPreprocessors(PreprocessorRegistry& r) {
  const std::string t5 = "t5.data.preprocessors.";
  // GLUE / SuperGLUE (glue itself: preprocessor_registry.cc).
  r.Register(t5 + "stsb", {}, [](const json&) { return StsbPreprocessor(); }, kCatalogPlain);
  r.Register(t5 + "record", {}, [](const json&) { return RecordPreprocessor(); }, kCatalogPlain);
  // Multiple choice by log-likelihood ranking.
  r.Register(t5 + "rank_classification_formatter",
             {{"inputs_formats", ArgType::kStringOrStringList, true},
              {"targets_formats", ArgType::kStringOrStringList, true},
              {"mode", ArgType::kString},
              {"label_key", ArgType::kString},
              {"weight_key", ArgType::kString, false, true}},
             [](const json& kw) {
               auto formats = [](const json& v) {
                 return v.is_string() ? std::vector<std::string>{v.get<std::string>()}
                                      : v.get<std::vector<std::string>>();
               };
               RankClassificationFormat f;
               f.inputs_formats = formats(kw.at("inputs_formats"));
               f.targets_formats = formats(kw.at("targets_formats"));
               f.mode = CatalogArg<std::string>(kw, "mode", "eval");
               f.label_key = CatalogArg<std::string>(kw, "label_key", "label");
               if (kw.contains("weight_key") && !kw["weight_key"].is_null()) {
                 f.weight_key = kw["weight_key"].get<std::string>();
               }
               return RankClassificationFormatterPreprocessor(
                   std::move(f), kw.at("inputs_formats").is_array(),
                   kw.at("targets_formats").is_array());
             },
             kCatalogPlain);
  // Question answering.
  r.Register(t5 + "squad", {{"include_context", ArgType::kBool}}, [](const json& kw) {
    return SquadPreprocessor(CatalogArg(kw, "include_context", true));
  }, kCatalogPlain);
  r.Register(t5 + "squad_span_space_tokenized", {},
             [](const json&) { return SquadSpanSpaceTokenizedPreprocessor(); }, kCatalogPlain);
  r.Register(t5 + "trivia_qa", {}, [](const json&) { return TriviaQaPreprocessor(); }, kCatalogPlain);
  r.Register(t5 + "trivia_qa_truncate_inputs", {},
             [](const json&) { return TriviaQaTruncateInputsPreprocessor(); }, kCatalogTakesLength);
  // Winograd schemas.
  r.Register(t5 + "wsc_simple",
             {{"label", ArgType::kString}, {"correct_referent_only", ArgType::kBool}},
             [](const json& kw) {
               return WscSimplePreprocessor(CatalogArg<std::string>(kw, "label", "wsc:"),
                                            CatalogArg(kw, "correct_referent_only", false));
             }, kCatalogPlain);
  r.Register(t5 + "wnli_simple", {{"label", ArgType::kString}}, [](const json& kw) {
    return WnliSimplePreprocessor(CatalogArg<std::string>(kw, "label", "wsc:"));
  }, kCatalogPlain);
  r.Register(t5 + "definite_pronoun_resolution_simple", {{"label", ArgType::kString}},
             [](const json& kw) {
               return DefinitePronounResolutionSimplePreprocessor(
                   CatalogArg<std::string>(kw, "label", "wsc:"));
             }, kCatalogPlain);
  // Prefix-LM objective.
  r.Register(t5 + "targets_for_prefix_lm_objective", {},
             [](const json&) { return TargetsForPrefixLmObjectivePreprocessor(); },
             kCatalogTakesLength);
  r.Register(t5 + "pack_prefix_lm_encoder_decoder", {{"pad_id", ArgType::kInt}},
             [](const json& kw) {
               return PackPrefixLmEncoderDecoderPreprocessor(
                   GetPadId(kw, "t5.data.preprocessors.pack_prefix_lm_encoder_decoder"));
             }, kCatalogTakesLength);
  r.Register(t5 + "pack_prefix_lm_decoder_only",
             {{"loss_on_targets_only", ArgType::kBool}, {"pad_id", ArgType::kInt}},
             [](const json& kw) {
               return PackPrefixLmDecoderOnlyPreprocessor(
                   CatalogArg(kw, "loss_on_targets_only", true),
                   GetPadId(kw, "t5.data.preprocessors.pack_prefix_lm_decoder_only"));
             }, kCatalogTakesLength);
  // unsupervised(dataset, preprocessors=None, output_features=None,
  // sequence_length=None).
  const PreprocessorRegistry* registry = &r;
  r.Register(t5 + "unsupervised", {{"preprocessors", ArgType::kStringList, false, true}},
             [registry](const json& kw) {
               std::vector<Preprocessor> steps;
               for (const std::string& name :
                    CatalogArg(kw, "preprocessors", std::vector<std::string>{})) {
                 T5XX_CHECK(name != "t5.data.preprocessors.unsupervised",
                            "t5.data.preprocessors.unsupervised: a step cannot be "
                            "unsupervised itself");
                 try {
                   steps.push_back(registry->Create(name));
                 } catch (const Error& e) {
                   throw Error("t5.data.preprocessors.unsupervised: step '" + name +
                               "': " + e.what());
                 }
               }
               return UnsupervisedPreprocessor(std::move(steps));
             }, kCatalogTakesLength);
}

}  // namespace t5xx::seqio
