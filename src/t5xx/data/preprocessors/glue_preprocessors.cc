// t5's stsb and record preprocessors (see glue_preprocessors.h).
#include "t5xx/data/preprocessors/glue_preprocessors.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "t5xx/data/preprocessors/catalog_features.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using catalog::RequireText;

std::string StsbLabelString(float label) {
  // float32 throughout, as TF: x * 5, round half to even, / 5.
  float v = label * 5.0f;
  v = std::nearbyint(v);  // default rounding mode: to nearest, ties to even
  v = v / 5.0f;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(v));
  return buf;
}

Example StsbExample(const Example& ex, uint64_t index) {
  Example out;
  out["inputs"] = "stsb sentence1: " + RequireText(ex, "sentence1", "stsb", index) +
                  " sentence2: " + RequireText(ex, "sentence2", "stsb", index);
  out["targets"] = StsbLabelString(catalog::RequireFloat(ex, "label", "stsb", index));
  out["idx"] = catalog::Require(ex, "idx", "stsb", index);
  return out;
}

DatasetPtr Stsb(DatasetPtr input) {
  return MapIndexed(std::move(input),
                    [](Example ex, uint64_t index) { return StsbExample(ex, index); });
}

Preprocessor StsbPreprocessor() {
  return MakePreprocessor([](DatasetPtr ds) { return Stsb(std::move(ds)); });
}

namespace {

// t5's two regex_replace calls on the passage:
//   r'(\.|\?|\!|\"|\')\n@highlight\n' -> r'\1 ', then r'\n@highlight\n' -> '. '.
std::string RecordPassage(const std::string& passage) {
  static const std::string kMarker = "\n@highlight\n";
  std::string first;
  for (size_t i = 0; i < passage.size();) {
    const char c = passage[i];
    if ((c == '.' || c == '?' || c == '!' || c == '"' || c == '\'') &&
        passage.compare(i + 1, kMarker.size(), kMarker) == 0) {
      first += c;
      first += ' ';
      i += 1 + kMarker.size();
    } else {
      first += c;
      ++i;
    }
  }
  return catalog::ReplaceAll(first, kMarker, ". ");
}

}  // namespace

std::vector<Example> RecordExamples(const Example& ex, uint64_t index) {
  const char* who = "record";
  const std::vector<std::string>& entities = catalog::RequireTexts(ex, "entities", who, index);
  const std::vector<std::string>& answers = catalog::RequireTexts(ex, "answers", who, index);
  std::string joined_entities;
  for (size_t i = 0; i < entities.size(); ++i)
    joined_entities += (i ? ", " : "") + entities[i];
  const std::string inputs = "record query: " + RequireText(ex, "query", who, index) +
                             " entities: " + joined_entities + " passage: " +
                             RecordPassage(RequireText(ex, "passage", who, index));
  Example base;
  base["idx/passage"] = catalog::Require(ex, "idx/passage", who, index);
  base["idx/query"] = catalog::Require(ex, "idx/query", who, index);
  base["inputs"] = inputs;
  base["answers"] = Array::Strings(answers);
  std::vector<Example> out;
  if (answers.empty()) {
    out.push_back(base);
    out.back()["targets"] = std::string("<unk>");
    return out;
  }
  for (const std::string& a : answers) {
    out.push_back(base);
    out.back()["targets"] = a;
  }
  return out;
}

DatasetPtr Record(DatasetPtr input) {
  // FlatMap's function has no index: count the examples ourselves (the
  // index only names an example in messages).
  auto counter = std::make_shared<uint64_t>(0);
  return FlatMap(std::move(input), [counter](Example ex) {
    return RecordExamples(ex, (*counter)++);
  });
}

Preprocessor RecordPreprocessor() {
  return MakePreprocessor([](DatasetPtr ds) { return Record(std::move(ds)); });
}

}  // namespace t5xx::seqio
