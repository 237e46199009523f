// T5's text-to-text preprocessors: translate, summarize, glue (see
// text_preprocessors.h).
#include "t5xx/data/preprocessors/text_preprocessors.h"

#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/preprocessors/catalog_features.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {


std::string KeysOf(const Example& ex) {
  std::string s;
  for (const auto& kv : ex) s += (s.empty() ? "" : ", ") + kv.first;
  return "[" + s + "]";
}

const FeatureValue& Require(const Example& ex, const std::string& key,
                            const char* who, uint64_t index) {
  auto it = ex.find(key);
  T5XX_CHECK(it != ex.end(), std::string(who) + ": example " + std::to_string(index) +
                            " has no feature '" + key + "' (it has " +
                            KeysOf(ex) + ")");
  return it->second;
}

const std::string& RequireString(const Example& ex, const std::string& key,
                                 const char* who, uint64_t index) {
  const FeatureValue& v = Require(ex, key, who, index);
  const std::string* s = std::get_if<std::string>(&v);
  T5XX_CHECK(s != nullptr, std::string(who) + ": example " + std::to_string(index) +
                          " feature '" + key +
                          "' must be a string, but holds tokens");
  return *s;
}

Preprocessor FromDataset(std::function<DatasetPtr(DatasetPtr)> fn) {
  return [fn = std::move(fn)](DatasetPtr ds, const PreprocessContext&) {
    return fn(std::move(ds));
  };
}

}  // namespace

std::string LanguageName(const std::string& code) {
  static const std::map<std::string, std::string> kNames = {
      {"ar", "Arabic"},   {"cs", "Czech"},     {"da", "Danish"},
      {"de", "German"},   {"el", "Greek"},     {"en", "English"},
      {"es", "Spanish"},  {"et", "Estonian"},  {"fi", "Finnish"},
      {"fr", "French"},   {"gu", "Gujarati"},  {"he", "Hebrew"},
      {"hi", "Hindi"},    {"hu", "Hungarian"}, {"id", "Indonesian"},
      {"it", "Italian"},  {"ja", "Japanese"},  {"kk", "Kazakh"},
      {"ko", "Korean"},   {"lt", "Lithuanian"}, {"lv", "Latvian"},
      {"nl", "Dutch"},    {"no", "Norwegian"}, {"pl", "Polish"},
      {"ps", "Pashto"},   {"pt", "Portuguese"}, {"ro", "Romanian"},
      {"ru", "Russian"},  {"sv", "Swedish"},   {"ta", "Tamil"},
      {"th", "Thai"},     {"tr", "Turkish"},   {"uk", "Ukrainian"},
      {"vi", "Vietnamese"}, {"zh", "Chinese"},
  };
  auto it = kNames.find(code.substr(0, 2));
  T5XX_CHECK(it != kNames.end(),
        "translate: unknown language code '" + code +
            "' (expected a two-letter code such as 'en', 'de', 'fr', 'ro')");
  return it->second;
}

Example TranslateExample(const Example& ex, const std::string& source_language,
                         const std::string& target_language, uint64_t index) {
  const std::string prefix = "translate " + LanguageName(source_language) +
                             " to " + LanguageName(target_language) + ": ";
  Example out;
  out["inputs"] = prefix + RequireString(ex, source_language, "translate", index);
  out["targets"] = RequireString(ex, target_language, "translate", index);
  return out;
}

DatasetPtr Translate(DatasetPtr input, std::string source_language,
                     std::string target_language) {
  LanguageName(source_language);  // validate now, not at the first example
  LanguageName(target_language);
  return MapIndexed(
      std::move(input), [=](Example ex, uint64_t index) {
        return TranslateExample(ex, source_language, target_language, index);
      });
}

Preprocessor TranslatePreprocessor(std::string source_language,
                                   std::string target_language) {
  LanguageName(source_language);
  LanguageName(target_language);
  return FromDataset([=](DatasetPtr ds) {
    return Translate(std::move(ds), source_language, target_language);
  });
}

Example SummarizeExample(const Example& ex, const std::string& article_key,
                         const std::string& summary_key, uint64_t index) {
  Example out;
  out["inputs"] = "summarize: " + RequireString(ex, article_key, "summarize", index);
  out["targets"] = RequireString(ex, summary_key, "summarize", index);
  return out;
}

DatasetPtr Summarize(DatasetPtr input, std::string article_key,
                     std::string summary_key) {
  return MapIndexed(
      std::move(input), [=](Example ex, uint64_t index) {
        return SummarizeExample(ex, article_key, summary_key, index);
      });
}

Preprocessor SummarizePreprocessor(std::string article_key,
                                   std::string summary_key) {
  return FromDataset([=](DatasetPtr ds) {
    return Summarize(std::move(ds), article_key, summary_key);
  });
}

namespace {

int64_t GlueLabel(const Example& ex, uint64_t index) {
  const FeatureValue& v = Require(ex, "label", "glue", index);
  const std::string where = "glue: example " + std::to_string(index) + " feature 'label'";
  if (const Tokens* t = std::get_if<Tokens>(&v)) {
    T5XX_CHECK(t->size() == 1, where + " must hold exactly 1 token, got " +
                              std::to_string(t->size()));
    return (*t)[0];
  }
  if (const Array* a = std::get_if<Array>(&v)) {  // TFDS's ClassLabel: an int64 scalar
    T5XX_CHECK(a->shape.empty() && !a->ints.empty() && a->dtype != Array::DType::kFloat32 &&
                   a->dtype != Array::DType::kString,
               where + " must be an integer scalar, got " + Describe(*a));
    return a->ints[0];
  }
  const std::string& s = std::get<std::string>(v);
  size_t pos = 0;
  int64_t label = 0;
  bool ok = !s.empty();
  if (ok) {
    try {
      label = std::stoll(s, &pos);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  T5XX_CHECK(ok && pos == s.size(), where + " must hold an integer, got '" + s + "'");
  return label;
}

// glue's classification-only check, made when the step is built.
void CheckGlueLabelNames(const std::vector<std::string>& label_names) {
  T5XX_CHECK(!label_names.empty(),
        "glue: label_names must not be empty (stsb's float labels: use "
        "t5.data.preprocessors.stsb)");
}

}  // namespace

Example GlueExample(const Example& ex, const std::string& benchmark_name,
                    const std::vector<std::string>& label_names,
                    const std::optional<std::vector<std::string>>& feature_names,
                    const std::string& id_key, uint64_t index) {
  // t5: `feature_names or sorted(set(x.keys()) - {'label', 'idx'})`: an
  // empty list sorts too. Python's keys are the top-level ones ("idx" for
  // multirc's flattened "idx/paragraph").
  std::vector<std::string> keys;
  if (feature_names && !feature_names->empty()) {
    keys = *feature_names;
  } else {
    for (const std::string& k : catalog::TopLevelNames(ex))
      if (k != "label" && k != "idx") keys.push_back(k);
  }
  std::string inputs = benchmark_name;
  for (const std::string& k : keys)
    inputs += " " + k + ": " + RequireString(ex, k, "glue", index);
  const int64_t label = GlueLabel(ex, index);
  T5XX_CHECK(label >= -1 && label < static_cast<int64_t>(label_names.size()),
        "glue: example " + std::to_string(index) + " has label " +
            std::to_string(label) + ", outside [-1, " +
            std::to_string(label_names.size()) + ") for label_names of '" +
            benchmark_name + "'");
  Example out;
  if (benchmark_name == "multirc") {
    // t5 removes multirc's HTML markup (regex '<br>' -> ' ', '<(/)?b>' ->
    // '') and keeps its nested index, whatever id_key says.
    inputs = catalog::ReplaceAll(inputs, "<br>", " ");
    std::string stripped;  // one left-to-right pass, as RE2's global replace
    for (size_t i = 0; i < inputs.size();) {
      if (inputs.compare(i, 3, "<b>") == 0) {
        i += 3;
      } else if (inputs.compare(i, 4, "</b>") == 0) {
        i += 4;
      } else {
        stripped += inputs[i++];
      }
    }
    inputs = std::move(stripped);
    for (const char* part : {"idx/paragraph", "idx/question", "idx/answer"})
      out[part] = Require(ex, part, "glue", index);
  } else if (!id_key.empty()) {
    out["idx"] = Require(ex, id_key, "glue", index);
  }
  out["inputs"] = std::move(inputs);
  out["targets"] = label == -1 ? std::string("<unk>")
                               : label_names[static_cast<size_t>(label)];
  return out;
}

DatasetPtr Glue(DatasetPtr input, std::string benchmark_name,
                std::vector<std::string> label_names,
                std::optional<std::vector<std::string>> feature_names,
                std::string id_key) {
  CheckGlueLabelNames(label_names);
  return MapIndexed(
      std::move(input), [=](Example ex, uint64_t index) {
        return GlueExample(ex, benchmark_name, label_names, feature_names,
                           id_key, index);
      });
}

Preprocessor GluePreprocessor(std::string benchmark_name,
                              std::vector<std::string> label_names,
                              std::optional<std::vector<std::string>> feature_names,
                              std::string id_key) {
  CheckGlueLabelNames(label_names);
  return FromDataset([=](DatasetPtr ds) {
    return Glue(std::move(ds), benchmark_name, label_names, feature_names, id_key);
  });
}

}  // namespace t5xx::seqio
