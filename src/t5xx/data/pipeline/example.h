// seqio's unit of data: an Example maps feature names to values.
//
// A value is one of:
//  - a string of bytes, text as the source holds it (usually UTF-8, but
//    bytes that are not pass through unchanged, as tf.string's do;
//    util/utf8.h) (e.g. "text", "inputs_pretokenized");
//  - a rank-1 sequence of int32 token ids (e.g. "inputs", "targets"), the
//    token pipeline's own type;
//  - an Array: anything else a dataset holds -- what TFDS features decode
//    to and seqio gives as tf.Tensor or tf.RaggedTensor: int32, int64,
//    float32, bool or string elements, any rank (0 for a scalar such as
//    GLUE's label), possibly ragged in its leading dims (SQuAD's answers).
// This mirrors the tf.data dictionaries of seqio (seqio/dataset_providers.py)
// without TensorFlow. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace t5xx::seqio {

using Tokens = std::vector<int32_t>;

struct Array {
  enum class DType { kInt32, kInt64, kFloat32, kBool, kString };
  DType dtype = DType::kInt64;
  // The dims. A dense array: its shape ({} for a scalar). A ragged one:
  // the first 1 + row_lengths.size() dims are dim 0's size followed by -1
  // for each ragged dim, then the uniform inner dims.
  std::vector<int64_t> shape;
  // The row lengths of each ragged dim in turn (TFDS's
  // ragged_row_lengths_<i>, tf.RaggedTensor's nested row lengths): for dim
  // 1 one length per element of dim 0, for dim 2 one per row of dim 1, ...
  std::vector<std::vector<int64_t>> row_lengths;
  // Every element in row-major order, in the list of its dtype: ints for
  // int32, int64 and bool (0 or 1), floats for float32, strings for string.
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;

  // The number of elements.
  int64_t size() const;
  bool operator==(const Array& o) const;
  bool operator!=(const Array& o) const { return !(*this == o); }

  // A scalar.
  static Array Int64(int64_t v);
  static Array Int32(int32_t v);
  static Array Float32(float v);
  static Array Bool(bool v);
  // A rank-1 array of strings.
  static Array Strings(std::vector<std::string> v);
};

// "int64", "float32", "string", ...
const char* DTypeName(Array::DType dtype);
// "int64 scalar", "float32 [2, 3]", "string [3]", "int32 ragged [2, ?]".
std::string Describe(const Array& a);

using FeatureValue = std::variant<std::string, Tokens, Array>;
using Example = std::map<std::string, FeatureValue>;

// Accessors that throw t5xx::Error naming the feature when it is missing or
// has another type.
const std::string& GetString(const Example& ex, const std::string& key);
const Tokens& GetTokens(const Example& ex, const std::string& key);
Tokens& GetMutableTokens(Example& ex, const std::string& key);
const Array& GetArray(const Example& ex, const std::string& key);

// What a value is, for messages: "a string", "int32 tokens", or the array's
// Describe.
std::string DescribeValue(const FeatureValue& v);

}  // namespace t5xx::seqio
