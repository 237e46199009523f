// Task postprocessors (seqio Task.postprocess_fn) (see postprocessors.h).
#include "t5xx/data/dataset_providers/postprocessors.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "t5xx/metrics/unicode_properties.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

namespace {

constexpr char kQa[] = "t5.data.postprocessors.qa";
constexpr char kSpanQa[] = "t5.data.postprocessors.span_qa";
constexpr char kMultirc[] = "t5.data.postprocessors.multirc";
constexpr char kRecord[] = "t5.data.postprocessors.record";
constexpr char kWscSimple[] = "t5.data.postprocessors.wsc_simple";

// string_label_to_class_id: label_classes.index(text), or default.
int64_t ClassId(const std::string& text, const std::vector<std::string>& label_classes,
                int64_t default_value) {
  for (size_t i = 0; i < label_classes.size(); ++i) {
    if (label_classes[i] == text) return static_cast<int64_t>(i);
  }
  return default_value;
}

// An integer scalar feature (int32, int64 or bool Array of rank 0), as t5
// reads example[key] for a group or label.
int64_t IntFeature(const Example& example, const std::string& key, const char* who,
                   const std::string& why) {
  auto it = example.find(key);
  if (it != example.end()) {
    if (const auto* a = std::get_if<Array>(&it->second);
        a && a->shape.empty() && a->ints.size() == 1 &&
        (a->dtype == Array::DType::kInt32 || a->dtype == Array::DType::kInt64 ||
         a->dtype == Array::DType::kBool)) {
      return a->ints[0];
    }
  }
  throw Error(std::string(who) + ": the example has no integer scalar feature '" + key + "'" +
              (it == example.end() ? std::string() : " (it is " + DescribeValue(it->second) + ")") +
              " (" + why + "); keep it in the task's examples");
}

// A text feature: a string, or a string scalar Array.
std::string TextFeature(const Example& example, const std::string& key, const char* who,
                        const std::string& why) {
  auto it = example.find(key);
  if (it != example.end()) {
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
    if (const auto* a = std::get_if<Array>(&it->second);
        a && a->dtype == Array::DType::kString && a->shape.empty() && a->strings.size() == 1) {
      return a->strings[0];
    }
  }
  throw Error(std::string(who) + ": the example has no text feature '" + key + "'" +
              (it == example.end() ? std::string() : " (it is " + DescribeValue(it->second) + ")") +
              " (" + why + "); keep it in the task's examples");
}

// wsc_simple's clean(): strip(), lower(), split(" ") without determiners
// (the words are kept, empty ones included, as " ".join would see them).
std::vector<std::string> WscClean(const std::string& s) {
  static const std::set<std::string> kDeterminers = {
      "a",   "an",    "few",   "her",   "his",   "each",  "every", "many",  "much", "my",  "our",
      "some", "that", "the",   "their", "these", "this",  "those", "which", "whose", "your"};
  std::u32string u = unicode::Decode(s);
  size_t b = 0, e = u.size();
  while (b < e && unicode::IsSpace(u[b])) ++b;
  while (e > b && unicode::IsSpace(u[e - 1])) --e;
  const std::string lowered = unicode::Encode(unicode::Lower(u.substr(b, e - b)));
  std::vector<std::string> words;
  size_t start = 0;
  while (true) {
    const size_t space = lowered.find(' ', start);
    const std::string w = lowered.substr(start, space == std::string::npos ? space : space - start);
    if (!kDeterminers.count(w)) words.push_back(w);
    if (space == std::string::npos) break;
    start = space + 1;
  }
  return words;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i ? " " : "") + words[i];
  return out;
}

// Python float(text): surrounding whitespace (str.isspace) stripped,
// Unicode decimal digits read as digits, '_' allowed only between digits,
// "inf"/"infinity"/"nan" in any case with an optional sign; nullopt where
// Python raises ValueError.
std::optional<double> PythonFloat(const std::string& text) {
  const std::u32string u = unicode::Decode(text);
  size_t b = 0, e = u.size();
  while (b < e && unicode::IsSpace(u[b])) ++b;
  while (e > b && unicode::IsSpace(u[e - 1])) --e;
  std::string ascii;
  for (size_t i = b; i < e; ++i) {
    const char32_t c = u[i];
    if (c == U'_') {
      const bool between = i > b && i + 1 < e && unicode::DecimalValue(u[i - 1]) >= 0 &&
                           unicode::DecimalValue(u[i + 1]) >= 0;
      if (!between) return std::nullopt;
      continue;
    }
    if (const int d = unicode::DecimalValue(c); d >= 0) {
      ascii += static_cast<char>('0' + d);
    } else if (c < 0x80 && (std::isalpha(static_cast<int>(c)) || c == '+' || c == '-' ||
                            c == '.')) {
      ascii += static_cast<char>(c);
    } else {
      return std::nullopt;  // whitespace inside, '(' of strtod's "nan(...)", ...
    }
  }
  if (ascii.empty()) return std::nullopt;
  // strtod also reads hex floats ("0x1p3"), which Python's float() refuses.
  if (ascii.find_first_of("xX") != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(ascii.c_str(), &end);
  if (end != ascii.c_str() + ascii.size()) return std::nullopt;
  return v;
}

}  // namespace

namespace postprocessors {

PostprocessFn string_to_float(double default_value) {
  return [default_value](const std::string& text, const Example&, bool) -> PostprocessedValue {
    const std::optional<double> v = PythonFloat(text);
    return v ? *v : default_value;
  };
}

PostprocessFn lower_text() {
  return [](const std::string& text, const Example&, bool) -> PostprocessedValue {
    return unicode::Encode(unicode::Lower(unicode::Decode(text)));
  };
}

PostprocessFn string_label_to_class_id(std::vector<std::string> label_classes,
                                       int64_t default_value) {
  T5XX_CHECK(!label_classes.empty(),
        "t5.data.postprocessors.string_label_to_class_id: label_classes is empty; bind "
        "string_label_to_class_id.label_classes = ['negative', 'positive'] (for example)");
  return [label_classes = std::move(label_classes), default_value](
             const std::string& text, const Example&, bool) -> PostprocessedValue {
    return ClassId(text, label_classes, default_value);
  };
}

std::vector<std::string> ExampleAnswers(const Example& example, const std::string& who) {
  auto it = example.find("answers");
  if (it != example.end()) {
    if (const auto* s = std::get_if<std::string>(&it->second)) return {*s};
    if (const auto* a = std::get_if<Array>(&it->second);
        a && a->dtype == Array::DType::kString && a->shape.size() == 1 && a->row_lengths.empty()) {
      return a->strings;
    }
  }
  throw Error(who + ": the example has no feature 'answers' holding the reference answers (a "
              "list of strings)" +
              (it == example.end() ? std::string() : ", it is " + DescribeValue(it->second)) +
              "; keep 'answers' in the task's examples (t5's squad, trivia_qa and record "
              "preprocessors do)");
}

PostprocessFn qa() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    if (!is_target) return text;
    return ExampleAnswers(example, kQa);
  };
}

PostprocessFn span_qa() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    if (!is_target) return text;
    ValueDict d;
    d.items["answers"] = ExampleAnswers(example, kSpanQa);
    d.items["context"] = TextFeature(example, "context", kSpanQa,
                                     "the passage the span indices point into; t5's "
                                     "squad_span_space_tokenized preprocessor keeps it");
    return d;
  };
}

PostprocessFn multirc() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    ValueDict d;
    d.items["value"] = ClassId(text, {"False", "True"}, -1);
    if (is_target) {
      d.items["group"] = IntFeature(example, "idx/question", kMultirc,
                                    "the question index MultiRC's answers are grouped by; t5's "
                                    "glue() preprocessor keeps idx/paragraph, idx/question and "
                                    "idx/answer");
    }
    return d;
  };
}

PostprocessFn rank_classification() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    if (!is_target) return text;
    const char* who = "t5.data.postprocessors.rank_classification";
    const std::string why = "the rank_classification preprocessor makes it";
    metrics::RankClassificationTarget t;
    auto idx = example.find("idx");
    const auto* a = idx == example.end() ? nullptr : std::get_if<Array>(&idx->second);
    if (!a || a->shape.size() != 1 || a->dtype == Array::DType::kFloat32 ||
        a->dtype == Array::DType::kString) {
      throw Error(std::string(who) + ": the example has no rank-1 integer feature 'idx'" +
                  (idx == example.end() ? std::string() : " (it is " + DescribeValue(idx->second) + ")") +
                  " (" + why + ": [input index, choice index]); keep it in the task's examples");
    }
    t.idx = a->ints;
    t.is_correct = IntFeature(example, "is_correct", who, why) != 0;
    if (auto w = example.find("weight"); w != example.end()) {
      const auto* f = std::get_if<Array>(&w->second);
      if (!f || !f->shape.empty() || f->dtype != Array::DType::kFloat32) {
        throw Error(std::string(who) + ": the example's 'weight' is " + DescribeValue(w->second) +
                    "; it must be a float32 scalar (the preprocessor's weight_key feature)");
      }
      t.weight = f->floats[0];
    }
    auto targets = example.find("targets");
    if (targets != example.end() && std::holds_alternative<Tokens>(targets->second)) {
      t.target_length = static_cast<int64_t>(std::get<Tokens>(targets->second).size());
    } else {
      throw Error(std::string(who) + ": the example's 'targets' " +
                  (targets == example.end() ? std::string("is missing")
                                            : "is " + DescribeValue(targets->second)) +
                  "; the task must tokenize them (its length is part of the tuple)");
    }
    return t;
  };
}

PostprocessFn record() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    ValueDict d;
    if (!is_target) {
      d.items["value"] = text;
      return d;
    }
    const char* why = "ReCoRD's examples are grouped by (idx/passage, idx/query); t5's record() "
                      "preprocessor keeps both";
    d.items["value"] = ExampleAnswers(example, kRecord);
    d.items["group"] = std::vector<int64_t>{IntFeature(example, "idx/passage", kRecord, why),
                                            IntFeature(example, "idx/query", kRecord, why)};
    return d;
  };
}

PostprocessFn wsc_simple() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    if (is_target) {
      return IntFeature(example, "label", kWscSimple,
                        "1 when the candidate is the referent; t5's wsc_simple and wnli_simple "
                        "preprocessors keep it");
    }
    const std::vector<std::string> prediction = WscClean(text);
    // An empty prediction must not return 0 and spuriously match the label.
    if (Join(prediction).empty()) return int64_t{-1};
    const std::vector<std::string> referent = WscClean(TextFeature(
        example, "targets_pretokenized", kWscSimple, "the candidate referent, as text"));
    auto has_apostrophe = [](const std::vector<std::string>& words) {
      return Join(words).find('\'') != std::string::npos;
    };
    // "Bob" does not predict the referent "Bob's hat".
    if (has_apostrophe(prediction) != has_apostrophe(referent)) return int64_t{0};
    // "fuzzy bunny" predicts "bunny" and the other way round.
    const std::set<std::string> p(prediction.begin(), prediction.end());
    const std::set<std::string> r(referent.begin(), referent.end());
    const bool predicted = std::includes(r.begin(), r.end(), p.begin(), p.end()) ||
                           std::includes(p.begin(), p.end(), r.begin(), r.end());
    return int64_t{predicted ? 1 : 0};
  };
}

PostprocessFn glue_postprocess_fn(const std::string& name,
                                  const std::vector<std::string>& label_classes) {
  if (name == "stsb") return string_to_float();
  if (name == "multirc") return multirc();
  if (name == "record") return record();
  T5XX_CHECK(!label_classes.empty(),
             "glue_postprocess_fn('" + name + "'): t5 maps the labels of builder config '" +
                 name + "' with string_label_to_class_id(label_classes=builder_config."
                 "label_classes); give its label_classes");
  return string_label_to_class_id(label_classes);
}

}  // namespace postprocessors
}  // namespace t5xx::seqio
