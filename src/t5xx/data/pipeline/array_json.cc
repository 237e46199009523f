// Arrays as JSON -- the implementation of array_json.h.
#include "t5xx/data/pipeline/array_json.h"

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

using json = nlohmann::json;

json Element(const Array& a, int64_t i) {
  const size_t k = static_cast<size_t>(i);
  switch (a.dtype) {
    case Array::DType::kFloat32: return json(static_cast<double>(a.floats[k]));
    case Array::DType::kString: return json(a.strings[k]);
    case Array::DType::kBool: return json(a.ints[k] != 0);
    default: return json(a.ints[k]);
  }
}

// The elements [*next, ...) as dims `dim`.. of `a`, nested; advances *next.
// `rows` says how many rows each ragged dim has left to hand out.
json Nested(const Array& a, size_t dim, int64_t count, int64_t* next,
            std::vector<size_t>* ragged_pos) {
  const size_t ragged = a.row_lengths.size();
  if (dim == a.shape.size()) {
    T5XX_CHECK(*next < a.size(), "array " + Describe(a) + ": fewer elements than its shape says");
    return Element(a, (*next)++);
  }
  json out = json::array();
  for (int64_t i = 0; i < count; ++i) {
    int64_t inner = 0;
    if (dim + 1 < a.shape.size()) {
      if (dim < ragged) {  // dim + 1 is ragged: its next row length
        const auto& lengths = a.row_lengths[dim];
        size_t& pos = (*ragged_pos)[dim];
        T5XX_CHECK(pos < lengths.size(), "array " + Describe(a) + ": too few row lengths");
        inner = lengths[pos++];
      } else {
        inner = a.shape[dim + 1];
      }
    }
    out.push_back(Nested(a, dim + 1, inner, next, ragged_pos));
  }
  return out;
}

Array::DType DTypeFromName(const std::string& name, const std::string& where) {
  for (auto d : {Array::DType::kInt32, Array::DType::kInt64, Array::DType::kFloat32,
                 Array::DType::kBool, Array::DType::kString}) {
    if (name == DTypeName(d)) return d;
  }
  throw Error(where + ": unknown array dtype '" + name + "'");
}

}  // namespace

json ArrayToNestedJson(const Array& a) {
  if (a.shape.empty()) {
    T5XX_CHECK(a.size() == 1, "array " + Describe(a) + ": a scalar with " +
                                  std::to_string(a.size()) + " elements");
    return Element(a, 0);
  }
  int64_t next = 0;
  std::vector<size_t> ragged_pos(a.row_lengths.size(), 0);
  json out = Nested(a, 0, a.shape[0], &next, &ragged_pos);
  T5XX_CHECK(next == a.size(), "array " + Describe(a) + ": more elements than its shape says");
  return out;
}

json ArrayToStateJson(const Array& a) {
  json values = json::array();
  for (int64_t i = 0; i < a.size(); ++i) values.push_back(Element(a, i));
  return {{"dtype", DTypeName(a.dtype)}, {"shape", a.shape}, {"row_lengths", a.row_lengths},
          {"values", values}};
}

Array ArrayFromStateJson(const json& j, const std::string& where) {
  T5XX_CHECK(j.is_object() && j.contains("dtype") && j.contains("shape") &&
                 j.contains("row_lengths") && j.contains("values") && j["values"].is_array(),
             where + ": an array must be {dtype, shape, row_lengths, values}");
  Array a;
  try {
    a.dtype = DTypeFromName(j["dtype"].get<std::string>(), where);
    a.shape = j["shape"].get<std::vector<int64_t>>();
    a.row_lengths = j["row_lengths"].get<std::vector<std::vector<int64_t>>>();
    for (const json& v : j["values"]) {
      switch (a.dtype) {
        case Array::DType::kFloat32: a.floats.push_back(v.get<float>()); break;
        case Array::DType::kString: a.strings.push_back(v.get<std::string>()); break;
        case Array::DType::kBool: a.ints.push_back(v.get<bool>() ? 1 : 0); break;
        default: a.ints.push_back(v.get<int64_t>()); break;
      }
    }
  } catch (const json::exception& e) {
    throw Error(where + ": a malformed array: " + e.what());
  }
  return a;
}

}  // namespace t5xx::seqio
