// zarr v2's .zarray metadata read and checked for t5xx's reader: dtype,
// shape, chunks, compressor, separator and fill value (see zarr_array.h,
// ReadZarrMetadata). Behaviour source: the zarr v2 storage spec and what
// TensorStore writes for t5x.
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// fill_value as one element of `dtype` (null: zeros).
std::vector<uint8_t> FillElement(DType dtype, const json& fill) {
  std::vector<uint8_t> bytes(DTypeSize(dtype), 0);
  if (fill.is_null()) return bytes;
  double v = 0;
  if (fill.is_number()) {
    v = fill.get<double>();
  } else if (fill.is_string()) {
    const std::string s = fill.get<std::string>();
    if (s == "NaN") v = std::nan("");
    else if (s == "Infinity") v = HUGE_VAL;
    else if (s == "-Infinity") v = -HUGE_VAL;
    else throw Error("unsupported zarr fill_value '" + s + "'");
  } else {
    throw Error("unsupported zarr fill_value " + fill.dump() +
                " (expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or null)");
  }
  // A finite double beyond float's range becomes +-inf, as numpy casts it.
  const float f = std::isfinite(v) && std::fabs(v) > 3.4028234663852886e38
                      ? static_cast<float>(v > 0 ? HUGE_VAL : -HUGE_VAL)
                      : static_cast<float>(v);
  const auto integer = [&](double lo, double hi) {
    if (fill.is_number_integer() && !fill.is_number_unsigned()) {
      const int64_t i = fill.get<int64_t>();
      if (i >= lo && i <= hi) return i;
    } else if (fill.is_number_unsigned()) {
      const uint64_t u = fill.get<uint64_t>();
      if (u <= static_cast<uint64_t>(hi)) return static_cast<int64_t>(u);
    } else if (std::isfinite(v) && v == std::floor(v) && v >= lo && v <= hi) {
      return static_cast<int64_t>(v);
    }
    throw Error("zarr fill_value " + fill.dump() + " does not fit the integer dtype");
  };
  switch (dtype) {
    case DType::kFloat32:
      std::memcpy(bytes.data(), &f, 4);
      break;
    case DType::kBFloat16: {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      const uint16_t h = static_cast<uint16_t>(u >> 16);
      std::memcpy(bytes.data(), &h, 2);
      break;
    }
    case DType::kInt32: {
      const int32_t i = static_cast<int32_t>(integer(-2147483648.0, 2147483647.0));
      std::memcpy(bytes.data(), &i, 4);
      break;
    }
    case DType::kInt64: {
      const int64_t i = integer(-9223372036854775808.0, 9223372036854775807.0);
      std::memcpy(bytes.data(), &i, 8);
      break;
    }
  }
  return bytes;
}


// Errors about one .zarray file, naming it.
struct MetadataErrors {
  fs::path path;
  Error operator()(const std::string& msg) const { return Error(path.string() + ": " + msg); }
};

// dtype, checked against the msgpack spec's.
DType ZarrDType(const json& meta, std::optional<DType> spec_dtype, const MetadataErrors& bad) {
  std::string dname = meta.at("dtype").get<std::string>();
  auto dt = DTypeFromZarrName(dname);
  if (!dt) {
    if (dname == "<u2") {
      throw bad("dtype '<u2' is t5x's pre-version-3 bfloat16 encoding; "
                "re-save the checkpoint with native bfloat16");
    }
    throw bad("unsupported dtype '" + dname + "' (supported: <f4, bfloat16, <i4, <i8)");
  }
  if (spec_dtype && *spec_dtype != *dt) {
    throw bad(std::string("dtype ") + ZarrDTypeName(*dt) + " disagrees with the msgpack spec (" +
              DTypeName(*spec_dtype) + ")");
  }
  return *dt;
}

// A list of int64s. Element by element: get<std::vector<int64_t>>() would
// cast a float such as 1e84 to int64 (undefined behaviour; found by fuzzing).
std::vector<int64_t> Dims(const json& meta, const std::string& key, const MetadataErrors& bad) {
  const json& list = meta.at(key);
  if (!list.is_array()) throw bad(key + " is " + DumpJson(list) + ", not a list of integers");
  std::vector<int64_t> values;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::optional<int64_t> d = JsonInteger(list[i]);
    if (!d) {
      throw bad(key + "[" + std::to_string(i) + "] is " + DumpJson(list[i]) +
                ", not an integer in int64 range");
    }
    values.push_back(*d);
  }
  return values;
}

// shape and chunks, with the limits on rank and bytes.
void ReadShapeAndChunks(const json& meta, const std::optional<std::vector<int64_t>>& spec_shape,
                        const MetadataErrors& bad, ZarrMetadata& out) {
  out.shape = Dims(meta, "shape", bad);
  out.chunks = Dims(meta, "chunks", bad);
  if (out.chunks.size() != out.shape.size()) throw bad("chunks rank != shape rank");
  if (out.shape.size() > kMaxZarrRank) {
    throw bad("rank " + std::to_string(out.shape.size()) + " is over the limit of " +
              std::to_string(kMaxZarrRank));
  }
  for (int64_t c : out.chunks) {
    if (c <= 0) throw bad("non-positive chunk size");
  }
  for (int64_t d : out.shape) {
    if (d < 0) throw bad("negative shape");
  }
  const std::optional<uint64_t> array_bytes = CheckedNumBytes(out.shape, out.dtype);
  if (!array_bytes || *array_bytes > kMaxZarrArrayBytes) {
    throw bad("shape " + ShapeString(out.shape) + " of " + ZarrDTypeName(out.dtype) +
              " declares more than " + std::to_string(kMaxZarrArrayBytes) +
              " bytes (the limit, 1 TiB); the metadata is corrupt");
  }
  const std::optional<uint64_t> chunk_bytes = CheckedNumBytes(out.chunks, out.dtype);
  if (!chunk_bytes || *chunk_bytes > kMaxZarrChunkBytes) {
    throw bad("chunks " + ShapeString(out.chunks) + " of " + ZarrDTypeName(out.dtype) +
              " declare more than " + std::to_string(kMaxZarrChunkBytes) +
              " bytes per chunk (the limit, 2 GiB; t5x writes chunks of at most 64 MiB)");
  }
  out.chunk_bytes = static_cast<size_t>(*chunk_bytes);
  if (spec_shape && *spec_shape != out.shape) {
    throw bad("shape " + ShapeString(out.shape) + " disagrees with the msgpack spec " +
              ShapeString(*spec_shape));
  }
}

}  // namespace

ZarrMetadata ReadZarrMetadata(
    const fs::path& dir, const std::string& at,
    std::optional<DType> spec_dtype,
    const std::optional<std::vector<int64_t>>& spec_shape) {
  const fs::path zarray_path = dir / ".zarray";
  const std::vector<uint8_t> raw = ReadFile(zarray_path, "zarr metadata of '" + at + "'");
  return ParseZarrMetadata(
      std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()),
      zarray_path.string(), spec_dtype, spec_shape);
}

ZarrMetadata ParseZarrMetadata(std::string_view text, const std::string& source,
                               std::optional<DType> spec_dtype,
                               const std::optional<std::vector<int64_t>>& spec_shape) {
  const fs::path zarray_path(source);
  json meta;
  std::string parse_error;
  if (!ParseJson(text, &meta, &parse_error)) {
    throw Error("malformed zarr metadata " + source + ": " + parse_error);
  }
  const MetadataErrors bad{zarray_path};
  try {
    // JsonInteger, not value<int>: a float such as 1e69 would be cast with
    // undefined behaviour (found by fuzzing).
    if (!meta.contains("zarr_format") || JsonInteger(meta["zarr_format"]) != 2) {
      throw bad("zarr_format is " +
                (meta.contains("zarr_format") ? DumpJson(meta["zarr_format"]) : "missing") +
                ", not 2");
    }
    ZarrMetadata out;
    out.dtype = ZarrDType(meta, spec_dtype, bad);
    if (meta.value("order", std::string("C")) != "C") {
      throw bad("order 'F' is not supported (only C order)");
    }
    if (meta.contains("filters") && !meta["filters"].is_null() && !meta["filters"].empty()) {
      throw bad("zarr filters are not supported");
    }
    ReadShapeAndChunks(meta, spec_shape, bad, out);
    if (meta.contains("compressor") && !meta["compressor"].is_null()) {
      std::string id = meta["compressor"].at("id").get<std::string>();
      if (id == "gzip" || id == "zlib") {
        out.compressor = ZarrCompressor::kZlib;
      } else if (id == "zstd") {
        out.compressor = ZarrCompressor::kZstd;
      } else {
        throw bad("compressor '" + id + "' is not supported (only null, gzip, zlib, zstd)");
      }
    }
    if (meta.contains("dimension_separator")) {
      std::string sep = meta["dimension_separator"].get<std::string>();
      if (sep != "." && sep != "/") throw bad("bad dimension_separator");
      out.separator = sep[0];
    }
    try {
      out.fill_element =
          FillElement(out.dtype, meta.contains("fill_value") ? meta["fill_value"] : json());
    } catch (const Error& e) {
      throw bad(e.what());
    }
    return out;
  } catch (const json::exception& e) {
    throw bad(std::string("malformed zarr metadata: ") + e.what());
  }
}

}  // namespace t5xx::checkpoints
