// The name -> factory registry of seqio/t5 preprocessors, with argument checks
// (see preprocessor_registry.h).
#include "t5xx/data/preprocessors/preprocessor_registry.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "t5xx/data/preprocessors/lm_preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/preprocessors/text_preprocessors.h"
#include "t5xx/util/edit_distance.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::seqio {
namespace {

using nlohmann::json;

const char* TypeName(ArgType t) {
  switch (t) {
    case ArgType::kBool: return "a bool";
    case ArgType::kInt: return "an integer";
    case ArgType::kNumber: return "a number";
    case ArgType::kString: return "a string";
    case ArgType::kStringList: return "a list of strings";
    case ArgType::kStringOrStringList: return "a string or a list of strings";
    case ArgType::kStringMap: return "an object of strings (or null values)";
  }
  return "?";
}

bool HasType(const json& v, ArgType t) {
  switch (t) {
    case ArgType::kBool: return v.is_boolean();
    case ArgType::kInt: return v.is_number_integer();
    case ArgType::kNumber: return v.is_number();
    case ArgType::kString: return v.is_string();
    case ArgType::kStringOrStringList:
      if (v.is_string()) return true;
      [[fallthrough]];
    case ArgType::kStringList:
      return v.is_array() && std::all_of(v.begin(), v.end(),
                                         [](const json& e) { return e.is_string(); });
    case ArgType::kStringMap:
      if (!v.is_object()) return false;
      for (const auto& kv : v.items())
        if (!kv.value().is_string() && !kv.value().is_null()) return false;
      return true;
  }
  return false;
}

// Typed getters with defaults (values already validated).
template <typename T>
T Get(const json& kw, const char* key, T dflt) {
  auto it = kw.find(key);
  if (it == kw.end() || it->is_null()) return dflt;
  return it->get<T>();
}

}  // namespace

void PreprocessorRegistry::Register(const std::string& name,
                                    std::vector<ArgSpec> args,
                                    PreprocessorFactory factory,
                                    PreprocessorSignature signature) {
  T5XX_CHECK(!entries_.count(name),
        "preprocessor registry: '" + name + "' is already registered");
  entries_[name] = Entry{std::move(args), std::move(factory), signature};
}

const PreprocessorSignature& PreprocessorRegistry::Signature(const std::string& name) const {
  return Find(name).signature;
}

bool PreprocessorRegistry::Contains(const std::string& name) const {
  return entries_.count(name) > 0;
}

std::vector<std::string> PreprocessorRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& kv : entries_) names.push_back(kv.first);
  return names;
}

const PreprocessorRegistry::Entry& PreprocessorRegistry::Find(
    const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::string msg = "unknown preprocessor '" + name + "'";
    std::vector<std::string> names = Names();
    // Also match on the short name after the last '.'.
    std::string hint = ClosestName(name, names);
    if (hint.empty()) {
      const std::string tail = name.substr(name.rfind('.') + 1);
      for (const std::string& n : names)
        if (n.substr(n.rfind('.') + 1) == tail) hint = n;
    }
    if (!hint.empty()) msg += "; did you mean '" + hint + "'?";
    else msg += " (" + std::to_string(names.size()) + " registered; see Names())";
    throw Error(msg);
  }
  return it->second;
}

const std::vector<ArgSpec>& PreprocessorRegistry::Args(const std::string& name) const {
  return Find(name).args;
}

Preprocessor PreprocessorRegistry::Create(const std::string& name,
                                          const json& kwargs) const {
  const Entry& e = Find(name);
  json kw = kwargs.is_null() ? json::object() : kwargs;
  T5XX_CHECK(kw.is_object(), name + ": keyword arguments must be a JSON object, got " +
                            std::string(kw.type_name()));
  std::vector<std::string> declared;
  for (const ArgSpec& a : e.args) declared.push_back(a.name);
  for (const auto& kv : kw.items()) {
    auto it = std::find_if(e.args.begin(), e.args.end(),
                           [&](const ArgSpec& a) { return a.name == kv.key(); });
    if (it == e.args.end()) {
      std::string msg = name + ": unknown argument '" + kv.key() + "'";
      std::string hint = ClosestName(kv.key(), declared);
      if (!hint.empty()) msg += "; did you mean '" + hint + "'?";
      std::string all;
      for (const std::string& d : declared) all += (all.empty() ? "" : ", ") + d;
      msg += " (arguments: " + (all.empty() ? std::string("none") : all) + ")";
      throw Error(msg);
    }
    if (kv.value().is_null() && it->nullable) continue;
    T5XX_CHECK(HasType(kv.value(), it->type),
          name + ": argument '" + kv.key() + "' must be " + TypeName(it->type) +
              ", got " + DumpJson(kv.value()));
  }
  for (const ArgSpec& a : e.args)
    T5XX_CHECK(!a.required || kw.contains(a.name),
          name + ": missing required argument '" + a.name + "' (" +
              TypeName(a.type) + ")");
  return e.factory(kw);
}

namespace {

// The Python signatures (PreprocessorSignature): [L] in the header.
const PreprocessorSignature kPlain{false, false};
const PreprocessorSignature kTakesLength{true, false};

// rekey(x, key_map=None): without a key_map (None or empty) seqio returns
// the example unchanged. t5.data.preprocessors.rekey is the same function.
std::vector<ArgSpec> RekeyArgs() { return {{"key_map", ArgType::kStringMap, false, true}}; }

Preprocessor RekeyFactory(const json& kw) {
  const auto it = kw.find("key_map");
  if (it == kw.end() || it->is_null() || it->empty()) {
    return MakePreprocessor([](DatasetPtr ds) { return ds; });
  }
  std::map<std::string, std::string> key_map;
  for (const auto& kv : it->items())
    key_map[kv.key()] = kv.value().is_null() ? "" : kv.value().get<std::string>();
  return RekeyPreprocessor(std::move(key_map));
}

// seqio.preprocessors.*.
void RegisterSeqioModulePreprocessors(PreprocessorRegistry& r) {
  r.Register("seqio.preprocessors.rekey", RekeyArgs(), RekeyFactory, kPlain);
  r.Register("seqio.preprocessors.tokenize",
             {{"copy_pretokenized", ArgType::kBool}, {"with_eos", ArgType::kBool}},
             [](const json& kw) {
               return TokenizePreprocessor(Get(kw, "copy_pretokenized", true),
                                           Get(kw, "with_eos", false));
             }, kPlain);
  r.Register("seqio.preprocessors.tokenize_and_append_eos",
             {{"copy_pretokenized", ArgType::kBool}}, [](const json& kw) {
               return TokenizePreprocessor(Get(kw, "copy_pretokenized", true), true);
             }, kPlain);
  r.Register("seqio.preprocessors.append_eos", {},
             [](const json&) { return AppendEosPreprocessor(); }, kPlain);
  r.Register("seqio.preprocessors.append_eos_after_trim", {},
             [](const json&) { return AppendEosAfterTrimPreprocessor(); }, kTakesLength);
  r.Register("seqio.preprocessors.truncate_inputs_left", {},
             [](const json&) { return TruncateInputsLeftPreprocessor(); }, kTakesLength);
}

// t5.data.preprocessors' language-model objectives and token reshaping.
void RegisterT5LmPreprocessors(PreprocessorRegistry& r) {
  r.Register("t5.data.preprocessors.span_corruption",
             {{"mean_noise_span_length", ArgType::kNumber},
              {"noise_density", ArgType::kNumber},
              {"num_threads", ArgType::kInt}},
             [](const json& kw) {
               // Unbound: 0, the process-wide T5XX_DATA_THREADS (data_threads.h).
               const bool bound = kw.contains("num_threads") && !kw["num_threads"].is_null();
               const int64_t threads = Get<int64_t>(kw, "num_threads", 0);
               T5XX_CHECK(!bound || (threads >= 1 && threads <= 256),
                          "t5.data.preprocessors.span_corruption: num_threads must be in "
                          "[1, 256], got " + std::to_string(threads));
               return SpanCorruptionPreprocessor(
                   Get(kw, "mean_noise_span_length", 3.0),
                   Get(kw, "noise_density", 0.15), static_cast<int>(threads));
             }, kTakesLength);
  r.Register("t5.data.preprocessors.prefix_lm",
             {{"noise_density", ArgType::kNumber}}, [](const json& kw) {
               const double d = Get(kw, "noise_density", 0.5);
               T5XX_CHECK(d >= 0.0 && d <= 0.5,
                     "t5.data.preprocessors.prefix_lm: noise_density must be in "
                     "[0, 0.5], got " + std::to_string(d));
               return PrefixLmPreprocessor(d);
             }, kTakesLength);
  r.Register("t5.data.preprocessors.full_lm", {},
             [](const json&) { return FullLmPreprocessor(); }, kTakesLength);
  r.Register("t5.data.preprocessors.iid_denoising",
             {{"noise_density", ArgType::kNumber}}, [](const json& kw) {
               const double d = Get(kw, "noise_density", 0.15);
               T5XX_CHECK(d >= 0.0 && d <= 1.0,
                     "t5.data.preprocessors.iid_denoising: noise_density must be "
                     "in [0, 1], got " + std::to_string(d));
               return IidDenoisingPreprocessor(d);
             }, kTakesLength);
  r.Register("t5.data.preprocessors.select_random_chunk",
             {{"max_length", ArgType::kInt}, {"feature_key", ArgType::kString}},
             [](const json& kw) {
               const int64_t max_length = Get<int64_t>(kw, "max_length", 65536);
               const std::string key = Get<std::string>(kw, "feature_key", "targets");
               T5XX_CHECK(max_length >= 1, "t5.data.preprocessors.select_random_chunk: "
                                      "max_length must be >= 1");
               return Preprocessor([=](DatasetPtr ds, const PreprocessContext& ctx) {
                 return SelectRandomChunk(std::move(ds), ctx.seed, max_length, key);
               });
             }, kTakesLength);
  r.Register("t5.data.preprocessors.reduce_concat_tokens",
             {{"batch_size", ArgType::kInt}, {"feature_key", ArgType::kString}},
             [](const json& kw) {
               const int64_t batch = Get<int64_t>(kw, "batch_size", 128);
               const std::string key = Get<std::string>(kw, "feature_key", "targets");
               T5XX_CHECK(batch >= 1, "t5.data.preprocessors.reduce_concat_tokens: "
                                 "batch_size must be >= 1");
               return MakePreprocessor([=](DatasetPtr ds) {
                 return ReduceConcatTokens(std::move(ds), batch, key);
               });
             }, kPlain);
  r.Register("t5.data.preprocessors.split_tokens",
             {{"max_tokens_per_segment", ArgType::kInt, true},
              {"feature_key", ArgType::kString}},
             [](const json& kw) {
               const int64_t n = kw.at("max_tokens_per_segment").get<int64_t>();
               const std::string key = Get<std::string>(kw, "feature_key", "targets");
               T5XX_CHECK(n >= 1, "t5.data.preprocessors.split_tokens: "
                             "max_tokens_per_segment must be >= 1");
               return MakePreprocessor([=](DatasetPtr ds) {
                 return SplitTokens(std::move(ds), n, key);
               });
             }, kPlain);
}

// t5.data.preprocessors' text-to-text task formats.
void RegisterT5TextPreprocessors(PreprocessorRegistry& r) {
  r.Register("t5.data.preprocessors.translate",
             {{"source_language", ArgType::kString, true},
              {"target_language", ArgType::kString, true}},
             [](const json& kw) {
               return TranslatePreprocessor(kw.at("source_language").get<std::string>(),
                                            kw.at("target_language").get<std::string>());
             }, kPlain);
  r.Register("t5.data.preprocessors.summarize",
             {{"article_key", ArgType::kString, true},
              {"summary_key", ArgType::kString, true}},
             [](const json& kw) {
               return SummarizePreprocessor(kw.at("article_key").get<std::string>(),
                                            kw.at("summary_key").get<std::string>());
             }, kPlain);
  r.Register("t5.data.preprocessors.glue",
             {{"benchmark_name", ArgType::kString, true},
              {"label_names", ArgType::kStringList, true},
              {"feature_names", ArgType::kStringList, false, true},
              {"id_key", ArgType::kString, false, true}},
             [](const json& kw) {
               std::optional<std::vector<std::string>> features;
               if (kw.contains("feature_names") && !kw["feature_names"].is_null())
                 features = kw["feature_names"].get<std::vector<std::string>>();
               std::string id_key = "idx";
               if (kw.contains("id_key"))
                 id_key = kw["id_key"].is_null() ? "" : kw["id_key"].get<std::string>();
               return GluePreprocessor(
                   kw.at("benchmark_name").get<std::string>(),
                   kw.at("label_names").get<std::vector<std::string>>(),
                   std::move(features), id_key);
             }, kPlain);
}

}  // namespace

void RegisterSeqioPreprocessors(PreprocessorRegistry& r) {
  RegisterSeqioModulePreprocessors(r);
  RegisterT5LmPreprocessors(r);
  RegisterT5TextPreprocessors(r);
  // t5/data/preprocessors.py: `rekey = seqio.preprocessors.rekey`.
  r.Register("t5.data.preprocessors.rekey", RekeyArgs(), RekeyFactory, kPlain);
  RegisterT5CatalogPreprocessors(r);
}

}  // namespace t5xx::seqio
