// TFDS's feature specification and its records -- the implementation of
// features.h.
#include "t5xx/data/tfds/features.h"

#include <nlohmann/json.hpp>

#include <limits>

#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;

int64_t Count(const json& v) {
  if (v.is_string()) return std::stoll(v.get<std::string>());
  return v.get<int64_t>();
}

// TFDS's dtype names -> what an Example holds them as; throws naming the
// dtype otherwise.
Array::DType DTypeOf(const std::string& dtype, const std::string& where) {
  if (dtype == "int64" || dtype == "uint32" || dtype == "uint64") return Array::DType::kInt64;
  if (dtype == "int32" || dtype == "int16" || dtype == "int8" || dtype == "uint8" ||
      dtype == "uint16") {
    return Array::DType::kInt32;
  }
  if (dtype == "float32" || dtype == "float16" || dtype == "bfloat16" || dtype == "float64") {
    return Array::DType::kFloat32;
  }
  if (dtype == "bool") return Array::DType::kBool;
  if (dtype == "string") return Array::DType::kString;
  throw Error(where + ": dtype '" + dtype + "' is not read by t5xx (int, float, bool and string "
              "tensors are)");
}

// Appends the leaves of feature `f` (at features.json path `path`) under
// key `key`, inside `sequences` Sequence levels.
void Collect(const json& f, const std::string& key, const std::string& path,
             const std::vector<int64_t>& sequences, std::vector<TfdsFeature>* out) {
  const std::string cls = f.value("pythonClassName", "");
  const std::string where = path + " (" + (cls.empty() ? "?" : cls) + ")";
  if (f.contains("featuresDict")) {
    for (const auto& [name, sub] : f["featuresDict"].at("features").items()) {
      Collect(sub, key.empty() ? name : key + "/" + name, path + "/" + name, sequences, out);
    }
    return;
  }
  if (f.contains("sequence")) {
    std::vector<int64_t> inner = sequences;
    inner.push_back(Count(f["sequence"].value("length", json("-1"))));
    Collect(f["sequence"].at("feature"), key, path + "[sequence]", inner, out);
    return;
  }
  if (f.contains("translation")) {
    for (const json& lang : f["translation"].at("languages")) {
      TfdsFeature t;
      t.key = key.empty() ? lang.get<std::string>() : key + "/" + lang.get<std::string>();
      t.kind = TfdsFeature::kText;
      t.sequence_lengths = sequences;
      t.path = where;
      out->push_back(t);
    }
    return;
  }
  TfdsFeature t;
  t.key = key;
  t.sequence_lengths = sequences;
  t.path = where;
  if (f.contains("text")) {
    t.kind = TfdsFeature::kText;
  } else if (f.contains("classLabel")) {
    t.kind = TfdsFeature::kClassLabel;
    t.dtype = Array::DType::kInt64;
  } else if (f.contains("tensor")) {
    const json& tensor = f["tensor"];
    const std::string encoding = tensor.value("encoding", "none");
    T5XX_CHECK(encoding == "none", where + ": tensor encoding '" + encoding +
                                       "' is not read by t5xx (only 'none')");
    t.kind = TfdsFeature::kTensor;
    t.dtype = DTypeOf(tensor.at("dtype").get<std::string>(), where);
    if (tensor.contains("shape") && tensor["shape"].contains("dimensions")) {
      for (const json& d : tensor["shape"]["dimensions"]) t.shape.push_back(Count(d));
    }
    int unknown = 0;
    for (int64_t d : t.shape) unknown += d < 0;
    T5XX_CHECK(unknown <= 1, where + ": a tensor of more than one unknown dimension "
                                     "(TFDS encodes it ragged) is not read by t5xx yet");
  } else {
    throw Error(where + ": this kind of TFDS feature is not read by t5xx (it reads Text, "
                "Tensor, Scalar, ClassLabel, Translation, Sequence and FeaturesDict; not "
                "Image, Audio, Video, BBox...); leave it out of the dataset or decode it "
                "before t5xx");
  }
  out->push_back(t);
}

std::string Kind(const RawFeature& r) {
  return r.kind == RawFeature::kBytes ? "bytes_list" : r.kind == RawFeature::kFloat ? "float_list" : "int64_list";
}

// The flat values of `raw` as an Array of `dtype` (no shape yet).
Array Values(const RawFeature& raw, Array::DType dtype, const std::string& what) {
  Array a;
  a.dtype = dtype;
  switch (dtype) {
    case Array::DType::kString:
      T5XX_CHECK(raw.kind == RawFeature::kBytes, what + " is a " + Kind(raw) + ", expected a bytes_list");
      a.strings = raw.bytes;
      break;
    case Array::DType::kFloat32:
      T5XX_CHECK(raw.kind == RawFeature::kFloat, what + " is a " + Kind(raw) + ", expected a float_list");
      a.floats = raw.floats;
      break;
    default:
      T5XX_CHECK(raw.kind == RawFeature::kInt64, what + " is a " + Kind(raw) + ", expected an int64_list");
      a.ints = raw.ints;
      if (dtype == Array::DType::kInt32) {
        for (int64_t v : a.ints) {
          T5XX_CHECK(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
                     what + " holds " + std::to_string(v) + ", outside int32");
        }
      }
      break;
  }
  return a;
}

const RawFeature& Find(const std::map<std::string, RawFeature>& raw, const std::string& key,
                       const std::string& where) {
  auto it = raw.find(key);
  T5XX_CHECK(it != raw.end(), where + ": the record has no feature '" + key +
                                  "' that features.json declares");
  return it->second;
}

}  // namespace

std::vector<TfdsFeature> LoadTfdsFeatures(const std::string& path) {
  const std::string text = storage::ReadFile(path, "the TFDS dataset's feature specification");
  std::vector<TfdsFeature> out;
  try {
    Collect(json::parse(text), "", path + ": feature ", {}, &out);
  } catch (const json::exception& e) {
    throw Error(path + ": " + e.what() + " (is it a TFDS features.json?)");
  } catch (const std::logic_error& e) {  // stoll
    throw Error(path + ": a malformed count: " + e.what());
  }
  return out;
}

Example DecodeTfdsExample(const std::map<std::string, RawFeature>& raw,
                          const std::vector<TfdsFeature>& features, const std::string& where) {
  Example ex;
  for (const TfdsFeature& f : features) {
    const std::string what = where + ": feature '" + f.key + "'";
    const size_t depth = f.sequence_lengths.size();
    const bool scalar_string =
        depth == 0 && (f.kind == TfdsFeature::kText ||
                       (f.kind == TfdsFeature::kTensor && f.dtype == Array::DType::kString &&
                        f.shape.empty()));
    if (scalar_string) {  // a string, as seqio's tf.string scalar
      const RawFeature& r = Find(raw, f.key, where);
      T5XX_CHECK(r.kind == RawFeature::kBytes && r.bytes.size() == 1,
                 what + " is a " + Kind(r) + " of " +
                     std::to_string(r.kind == RawFeature::kBytes ? r.bytes.size() : 0) +
                     " values, expected one string");
      ex[f.key] = r.bytes[0];
      continue;
    }
    const Array::DType dtype = f.kind == TfdsFeature::kText ? Array::DType::kString : f.dtype;
    const std::vector<int64_t> leaf = f.kind == TfdsFeature::kTensor ? f.shape : std::vector<int64_t>{};
    int64_t leaf_known = 1;
    bool leaf_unknown = false;
    for (int64_t d : leaf) {
      if (d < 0) leaf_unknown = true;
      else leaf_known *= d;
    }
    if (depth <= 1) {
      Array a = Values(Find(raw, f.key, where), dtype, what);
      const int64_t n = a.size();
      std::vector<int64_t> shape = leaf;
      if (depth == 1) shape.insert(shape.begin(), f.sequence_lengths[0]);
      // One unknown dim (a variable sequence or a tensor's None): from the count.
      int64_t known = 1, unknown_at = -1;
      for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 0) unknown_at = static_cast<int64_t>(i);
        else known *= shape[i];
      }
      T5XX_CHECK(!(depth == 1 && leaf_unknown && shape[0] < 0),
                 what + ": a sequence of tensors with an unknown dimension is not read by t5xx yet");
      if (unknown_at >= 0) {
        T5XX_CHECK(known > 0 ? n % known == 0 : n == 0,
                   what + " holds " + std::to_string(n) + " values, not a whole number of " +
                       std::to_string(known));
        shape[static_cast<size_t>(unknown_at)] = known > 0 ? n / known : 0;
      } else {
        T5XX_CHECK(n == known, what + " holds " + std::to_string(n) + " values, expected " +
                                   std::to_string(known) + " (shape from features.json)");
      }
      a.shape = shape;
      ex[f.key] = std::move(a);
      continue;
    }
    // Nested sequences: TFDS's ragged encoding.
    Array a = Values(Find(raw, f.key + "/ragged_flat_values", where), dtype, what);
    a.shape.assign(1, 0);
    for (size_t level = 0; level + 1 < depth; ++level) {
      const RawFeature& r = Find(raw, f.key + "/ragged_row_lengths_" + std::to_string(level), where);
      T5XX_CHECK(r.kind == RawFeature::kInt64, what + ": row lengths are a " + Kind(r));
      a.row_lengths.push_back(r.ints);
      a.shape.push_back(-1);
    }
    a.shape[0] = static_cast<int64_t>(a.row_lengths[0].size());
    for (int64_t d : leaf) a.shape.push_back(d);
    // Each ragged dim's lengths sum to the next one's rows; the last to the
    // leaf elements.
    for (size_t level = 0; level < a.row_lengths.size(); ++level) {
      int64_t sum = 0;
      for (int64_t len : a.row_lengths[level]) {
        T5XX_CHECK(len >= 0, what + ": a negative row length");
        sum += len;
      }
      const int64_t next = level + 1 < a.row_lengths.size()
                               ? static_cast<int64_t>(a.row_lengths[level + 1].size())
                               : (leaf_known > 0 ? a.size() / leaf_known : 0);
      T5XX_CHECK(sum == next && (level + 1 < a.row_lengths.size() || a.size() == sum * leaf_known),
                 what + ": row lengths that do not add up to its values");
    }
    ex[f.key] = std::move(a);
  }
  return ex;
}

}  // namespace t5xx::seqio
