// See rank_classification.h.
#include "t5xx/data/preprocessors/rank_classification.h"

#include <cctype>
#include <memory>
#include <set>
#include <utility>

#include "t5xx/data/preprocessors/catalog_features.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

constexpr char kWho[] = "t5.data.preprocessors.rank_classification_formatter";
// Where the stream index rides from the indexed map to the flat map.
constexpr char kIndexKey[] = "\x01rank_classification_index";

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The keys Python's re.findall(r'{(\S+)}', fmt) finds: after a '{', the
// longest run of non-space characters that ends just before a '}'.
std::set<std::string> FormatKeys(const std::string& fmt) {
  std::set<std::string> keys;
  size_t pos = 0;
  while ((pos = fmt.find('{', pos)) != std::string::npos) {
    size_t end = pos + 1;
    while (end < fmt.size() && !IsSpace(fmt[end])) ++end;
    // The last '}' in fmt[pos + 2, end) closes the greedy match.
    size_t close = std::string::npos;
    for (size_t j = end; j > pos + 2; --j) {
      if (fmt[j - 1] == '}') {
        close = j - 1;
        break;
      }
    }
    if (close == std::string::npos) {
      ++pos;
      continue;
    }
    keys.insert(fmt.substr(pos + 1, close - pos - 1));
    pos = close + 1;
  }
  return keys;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) {
    s.replace(p, from.size(), to);
  }
  return s;
}

std::string Format(const Example& ex, const std::string& fmt, uint64_t index) {
  std::string s = fmt;
  for (const std::string& key : FormatKeys(fmt)) {
    auto it = ex.find(key);
    if (it == ex.end()) catalog::Require(ex, key, kWho, index);  // names what the example has
    const std::string* text = std::get_if<std::string>(&it->second);
    if (!text) {
      throw Error(catalog::Where(kWho, index) + ": the final value of key '" + key +
                  "' (in the format '" + fmt + "') must be a tf.string; it is " +
                  DescribeValue(it->second));
    }
    s = ReplaceAll(s, "{" + key + "}", *text);
  }
  return s;
}

// tf.one_hot(label, n) (reduce_any over a list of labels): the choices the
// label marks correct; labels outside [0, n) mark none.
std::vector<bool> CorrectChoices(const Example& ex, const std::string& label_key, size_t n,
                                 uint64_t index) {
  std::vector<bool> correct(n, false);
  const FeatureValue& v = catalog::Require(ex, label_key, kWho, index);
  std::vector<int64_t> labels;
  const auto* a = std::get_if<Array>(&v);
  if (a && a->shape.size() == 1 &&
      (a->dtype == Array::DType::kInt32 || a->dtype == Array::DType::kInt64)) {
    labels = a->ints;
  } else {
    labels.push_back(catalog::RequireInt(ex, label_key, kWho, index));
  }
  for (int64_t l : labels) {
    if (l >= 0 && static_cast<size_t>(l) < n) correct[static_cast<size_t>(l)] = true;
  }
  return correct;
}

}  // namespace

Preprocessor RankClassificationFormatterPreprocessor(RankClassificationFormat f,
                                                     bool inputs_is_list, bool targets_is_list) {
  if (inputs_is_list && targets_is_list) {
    T5XX_CHECK(f.inputs_formats.size() == f.targets_formats.size(),
               std::string(kWho) + ": the inputs_formats (" +
                   std::to_string(f.inputs_formats.size()) + ") and targets_formats (" +
                   std::to_string(f.targets_formats.size()) +
                   ") are both lists but do not have matching lengths");
  } else if (inputs_is_list) {
    f.targets_formats.assign(f.inputs_formats.size(), f.targets_formats.at(0));
  } else if (targets_is_list) {
    f.inputs_formats.assign(f.targets_formats.size(), f.inputs_formats.at(0));
  } else {
    throw Error(std::string(kWho) +
                ": one of inputs_formats and targets_formats has to be a list (one format "
                "per choice); both are strings");
  }
  T5XX_CHECK(!f.inputs_formats.empty(),
             std::string(kWho) + ": the formats are empty lists; give one per choice");
  T5XX_CHECK(f.mode == "eval" || f.mode == "train",
             std::string(kWho) + ": mode '" + f.mode + "' " +
                 (f.mode == "fewshot_eval"
                      ? "(the choices of an input batched into one example) is not supported "
                        "by t5xx; use 'eval'"
                      : "is not one of 'train', 'eval' (t5's ValueError)"));
  auto format = std::make_shared<const RankClassificationFormat>(std::move(f));
  return MakePreprocessor([format](DatasetPtr ds) {
    ds = MapIndexed(std::move(ds), [](Example ex, uint64_t index) -> std::optional<Example> {
      ex[kIndexKey] = Array::Int64(static_cast<int64_t>(index));
      return ex;
    });
    return FlatMap(std::move(ds), [format](Example ex) {
      const uint64_t index = static_cast<uint64_t>(std::get<Array>(ex.at(kIndexKey)).ints[0]);
      ex.erase(kIndexKey);  // not a feature of the example (messages list those)
      const size_t n = format->inputs_formats.size();
      const std::vector<bool> correct = CorrectChoices(ex, format->label_key, n, index);
      std::optional<float> weight;
      if (format->weight_key) weight = catalog::RequireFloat(ex, *format->weight_key, kWho, index);
      std::vector<Example> out;
      for (size_t c = 0; c < n; ++c) {
        if (format->mode == "train" && !correct[c]) continue;
        Example o;
        Array idx;
        idx.dtype = Array::DType::kInt32;
        idx.shape = {2};
        idx.ints = {static_cast<int64_t>(static_cast<int32_t>(index)), static_cast<int64_t>(c)};
        o["idx"] = std::move(idx);
        o["inputs"] = Format(ex, format->inputs_formats[c], index);
        o["targets"] = Format(ex, format->targets_formats[c], index);
        o["is_correct"] = Array::Bool(correct[c]);
        if (weight) o["weight"] = Array::Float32(*weight);
        out.push_back(std::move(o));
      }
      return out;
    });
  });
}

}  // namespace t5xx::seqio
