// Accessors for t5xx::seqio::Example (see example.h).
#include "t5xx/data/pipeline/example.h"

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

std::string KeysOf(const Example& ex) {
  std::string out;
  for (const auto& kv : ex) {
    if (!out.empty()) out += ", ";
    out += kv.first;
  }
  return "[" + out + "]";
}

const FeatureValue& Find(const Example& ex, const std::string& key) {
  auto it = ex.find(key);
  if (it == ex.end()) {
    throw Error("example has no feature '" + key + "' (features: " + KeysOf(ex) + ")");
  }
  return it->second;
}

}  // namespace

int64_t Array::size() const {
  switch (dtype) {
    case DType::kFloat32: return static_cast<int64_t>(floats.size());
    case DType::kString: return static_cast<int64_t>(strings.size());
    default: return static_cast<int64_t>(ints.size());
  }
}

bool Array::operator==(const Array& o) const {
  return dtype == o.dtype && shape == o.shape && row_lengths == o.row_lengths && ints == o.ints &&
         floats == o.floats && strings == o.strings;
}

namespace {
Array Scalar(Array::DType dtype, std::vector<int64_t> ints, std::vector<float> floats) {
  Array a;
  a.dtype = dtype;
  a.ints = std::move(ints);
  a.floats = std::move(floats);
  return a;
}
}  // namespace

Array Array::Int64(int64_t v) { return Scalar(DType::kInt64, {v}, {}); }
Array Array::Int32(int32_t v) { return Scalar(DType::kInt32, {v}, {}); }
Array Array::Float32(float v) { return Scalar(DType::kFloat32, {}, {v}); }
Array Array::Bool(bool v) { return Scalar(DType::kBool, {v ? 1 : 0}, {}); }
Array Array::Strings(std::vector<std::string> v) {
  Array a;
  a.dtype = DType::kString;
  a.shape = {static_cast<int64_t>(v.size())};
  a.strings = std::move(v);
  return a;
}

const char* DTypeName(Array::DType dtype) {
  switch (dtype) {
    case Array::DType::kInt32: return "int32";
    case Array::DType::kInt64: return "int64";
    case Array::DType::kFloat32: return "float32";
    case Array::DType::kBool: return "bool";
    case Array::DType::kString: return "string";
  }
  return "?";
}

std::string Describe(const Array& a) {
  std::string out = DTypeName(a.dtype);
  if (a.shape.empty()) return out + " scalar";
  out += a.row_lengths.empty() ? " [" : " ragged [";
  for (size_t i = 0; i < a.shape.size(); ++i) {
    out += (i ? ", " : "") + (a.shape[i] < 0 ? std::string("?") : std::to_string(a.shape[i]));
  }
  return out + "]";
}

std::string DescribeValue(const FeatureValue& v) {
  if (std::holds_alternative<std::string>(v)) return "a string";
  if (std::holds_alternative<Tokens>(v)) return "int32 tokens";
  return "an array (" + Describe(std::get<Array>(v)) + ")";
}

const std::string& GetString(const Example& ex, const std::string& key) {
  const FeatureValue& v = Find(ex, key);
  if (!std::holds_alternative<std::string>(v)) {
    throw Error("feature '" + key + "' is " + DescribeValue(v) + ", expected a string");
  }
  return std::get<std::string>(v);
}

const Tokens& GetTokens(const Example& ex, const std::string& key) {
  const FeatureValue& v = Find(ex, key);
  if (!std::holds_alternative<Tokens>(v)) {
    throw Error("feature '" + key + "' is " + DescribeValue(v) +
                ", expected int32 tokens (was it tokenized?)");
  }
  return std::get<Tokens>(v);
}

Tokens& GetMutableTokens(Example& ex, const std::string& key) {
  return const_cast<Tokens&>(GetTokens(ex, key));
}

const Array& GetArray(const Example& ex, const std::string& key) {
  const FeatureValue& v = Find(ex, key);
  if (!std::holds_alternative<Array>(v)) {
    throw Error("feature '" + key + "' is " + DescribeValue(v) + ", expected an array");
  }
  return std::get<Array>(v);
}

}  // namespace t5xx::seqio
