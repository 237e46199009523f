// One checkpoint array leaf: dtype names and sizes, shape helpers.
#include "t5xx/checkpoints/array.h"

namespace t5xx::checkpoints {

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<uint64_t> CheckedNumBytes(const std::vector<int64_t>& shape, DType dtype) {
  int64_t n = static_cast<int64_t>(DTypeSize(dtype));
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return static_cast<uint64_t>(n);
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::optional<DType> DTypeFromName(const std::string& name) {
  if (name == "float32") return DType::kFloat32;
  if (name == "bfloat16") return DType::kBFloat16;
  if (name == "int32") return DType::kInt32;
  if (name == "int64") return DType::kInt64;
  return std::nullopt;
}

std::optional<DType> DTypeFromZarrName(const std::string& name) {
  if (name == "<f4") return DType::kFloat32;
  if (name == "bfloat16" || name == "<V2bfloat16") return DType::kBFloat16;
  if (name == "<i4") return DType::kInt32;
  if (name == "<i8") return DType::kInt64;
  return std::nullopt;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "?";
}

const char* ZarrDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "<f4";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
  }
  return "?";
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
  }
  return 0;
}

}  // namespace t5xx::checkpoints
