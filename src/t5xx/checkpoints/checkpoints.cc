// t5x legacy checkpoint writer/reader: msgpack index + zarr v2 arrays.
// Format notes: checkpoints.h and docs/checkpoints.md.
#include "t5xx/checkpoints/checkpoints.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>

#include <msgpack.hpp>
#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int8_t kExtNdarray = 1;   // flax _MsgpackExtType.ndarray
constexpr int8_t kExtNpScalar = 3;  // flax _MsgpackExtType.npscalar

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
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

// ---- file I/O ----

void WriteFile(const fs::path& path, const void* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    throw Error("cannot create checkpoint file " + path.string() + ": " +
                std::strerror(errno));
  }
  size_t written = size ? std::fwrite(data, 1, size, f) : 0;
  int saved_errno = errno;
  bool ok = written == size && std::fflush(f) == 0;
  if (!ok) saved_errno = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    saved_errno = errno;
  }
  if (!ok) {
    throw Error("cannot write checkpoint file " + path.string() + ": " +
                std::strerror(saved_errno));
  }
}

std::vector<uint8_t> ReadFile(const fs::path& path, const std::string& what) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    throw Error("cannot read " + what + " " + path.string() + ": " +
                std::strerror(errno) +
                (errno == ENOENT ? " (missing file; is this a complete t5x "
                                   "legacy checkpoint directory?)"
                                 : ""));
  }
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    out.insert(out.end(), buf, buf + n);
  }
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) throw Error("error reading " + what + " " + path.string());
  return out;
}

void MakeDir(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    throw Error("cannot create directory " + path.string() + ": " +
                ec.message());
  }
}

// ---- chunk <-> array copies ----

// Copies the intersection of chunk `grid` (chunk shape `chunk`) with the
// array between the full C-order array buffer and a full-size C-order chunk
// buffer. Zarr v2 stores edge chunks full-size; the out-of-range part of the
// chunk buffer is left untouched.
void CopyChunk(bool array_to_chunk, uint8_t* array,
               const std::vector<int64_t>& shape, uint8_t* chunk_buf,
               const std::vector<int64_t>& chunk,
               const std::vector<int64_t>& grid, size_t elem) {
  const size_t rank = shape.size();
  if (rank == 0) {
    if (array_to_chunk) {
      std::memcpy(chunk_buf, array, elem);
    } else {
      std::memcpy(array, chunk_buf, elem);
    }
    return;
  }
  std::vector<int64_t> origin(rank), extent(rank);
  for (size_t d = 0; d < rank; ++d) {
    origin[d] = grid[d] * chunk[d];
    extent[d] = std::min(chunk[d], shape[d] - origin[d]);
    if (extent[d] <= 0) return;
  }
  // Strides (in elements) of the array and the chunk.
  std::vector<int64_t> astride(rank, 1), cstride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) {
    astride[d - 1] = astride[d] * shape[d];
    cstride[d - 1] = cstride[d] * chunk[d];
  }
  const size_t row_bytes = static_cast<size_t>(extent[rank - 1]) * elem;
  std::vector<int64_t> idx(rank, 0);  // index within the chunk, last dim = 0
  while (true) {
    int64_t aoff = 0, coff = 0;
    for (size_t d = 0; d < rank; ++d) {
      aoff += (origin[d] + idx[d]) * astride[d];
      coff += idx[d] * cstride[d];
    }
    uint8_t* a = array + aoff * elem;
    uint8_t* c = chunk_buf + coff * elem;
    if (array_to_chunk) {
      std::memcpy(c, a, row_bytes);
    } else {
      std::memcpy(a, c, row_bytes);
    }
    // Advance over all dims but the last.
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (rank == 1) return;
  }
}

// Calls fn(grid_index) for every chunk of the grid in C order.
template <typename Fn>
void ForEachChunk(const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& chunk, Fn fn) {
  const size_t rank = shape.size();
  std::vector<int64_t> counts(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] == 0) return;  // empty array: no chunks at all
    counts[d] = (shape[d] + chunk[d] - 1) / chunk[d];
  }
  std::vector<int64_t> g(rank, 0);
  while (true) {
    fn(g);
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++g[d] < counts[d]) break;
      g[d] = 0;
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

std::string ChunkKey(const std::vector<int64_t>& grid, char sep) {
  if (grid.empty()) return "0";
  std::string key;
  for (size_t d = 0; d < grid.size(); ++d) {
    if (d) key += sep;
    key += std::to_string(grid[d]);
  }
  return key;
}

// ---- msgpack writing ----

using Packer = msgpack::packer<msgpack::sbuffer>;

void PackInts(Packer& pk, const std::vector<int64_t>& v) {
  pk.pack_array(static_cast<uint32_t>(v.size()));
  for (int64_t x : v) pk.pack(x);
}

void PackStr(Packer& pk, const std::string& s) { pk.pack(s); }

// flax ndarray ext: payload = msgpack [shape, dtype name, raw bytes].
void PackNdarray(Packer& pk, DType dtype, const std::vector<int64_t>& shape,
                 const void* data) {
  msgpack::sbuffer payload;
  Packer inner(payload);
  inner.pack_array(3);
  PackInts(inner, shape);
  PackStr(inner, DTypeName(dtype));
  const size_t n = static_cast<size_t>(NumElements(shape)) * DTypeSize(dtype);
  inner.pack_bin(static_cast<uint32_t>(n));
  inner.pack_bin_body(static_cast<const char*>(data), static_cast<uint32_t>(n));
  pk.pack_ext(payload.size(), kExtNdarray);
  pk.pack_ext_body(payload.data(), static_cast<uint32_t>(payload.size()));
}

// What TensorStore's Spec.to_json() produces for the spec t5x builds (keys in
// TensorStore's sorted order; path with the trailing '/').
void PackSpec(Packer& pk, const std::string& path, DType dtype,
              const std::vector<int64_t>& shape,
              const std::vector<int64_t>& chunks, const SaveOptions& options) {
  pk.pack_map(4);
  PackStr(pk, "driver");
  PackStr(pk, "zarr");
  PackStr(pk, "dtype");
  PackStr(pk, DTypeName(dtype));
  PackStr(pk, "kvstore");
  pk.pack_map(2);
  PackStr(pk, "driver");
  PackStr(pk, "file");
  PackStr(pk, "path");
  PackStr(pk, path + "/");
  PackStr(pk, "metadata");
  pk.pack_map(3);
  PackStr(pk, "chunks");
  PackInts(pk, chunks);
  PackStr(pk, "compressor");
  if (options.gzip) {
    pk.pack_map(2);
    PackStr(pk, "id");
    PackStr(pk, "gzip");
    PackStr(pk, "level");
    pk.pack(options.gzip_level);
  } else {
    pk.pack_nil();
  }
  PackStr(pk, "shape");
  PackInts(pk, shape);
}

struct Leaf {
  const ArrayRef* array = nullptr;          // a user array, or
  std::vector<int64_t> chunks;              // (zarr only)
  bool is_step = false;                     // optimizer.state.step
};

struct Node {
  std::map<std::string, Node> children;
  std::optional<Leaf> leaf;
};

void PackTree(Packer& pk, const Node& node, int64_t step,
              const SaveOptions& options) {
  if (node.leaf) {
    const Leaf& leaf = *node.leaf;
    if (leaf.is_step) {
      if (step >= std::numeric_limits<int32_t>::min() &&
          step <= std::numeric_limits<int32_t>::max()) {
        int32_t s = static_cast<int32_t>(step);
        PackNdarray(pk, DType::kInt32, {}, &s);
      } else {
        PackNdarray(pk, DType::kInt64, {}, &step);
      }
    } else if (leaf.array->store_inline) {
      PackNdarray(pk, leaf.array->dtype, leaf.array->shape, leaf.array->data);
    } else {
      PackSpec(pk, leaf.array->path, leaf.array->dtype, leaf.array->shape,
               leaf.chunks, options);
    }
    return;
  }
  pk.pack_map(static_cast<uint32_t>(node.children.size()));
  for (const auto& [key, child] : node.children) {
    PackStr(pk, key);
    PackTree(pk, child, step, options);
  }
}

void InsertLeaf(Node& root, const std::string& path, Leaf leaf) {
  Node* node = &root;
  std::string sofar;
  for (const std::string& part : SplitPath(path)) {
    if (part.empty()) {
      throw Error("checkpoint array path '" + path +
                  "' has an empty component (paths are dot-separated keys "
                  "under 'optimizer', e.g. 'target.encoder.kernel')");
    }
    if (node->leaf) {
      throw Error("checkpoint array path '" + path + "' nests under array '" +
                  sofar + "'");
    }
    sofar += (sofar.empty() ? "" : ".") + part;
    node = &node->children[part];
  }
  if (node->leaf) {
    throw Error("checkpoint array path '" + path + "' given twice");
  }
  if (!node->children.empty()) {
    throw Error("checkpoint array path '" + path +
                "' is also a prefix of other array paths");
  }
  node->leaf = std::move(leaf);
}

std::string ZarrayJson(DType dtype, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& chunks,
                       const SaveOptions& options) {
  json j;
  j["chunks"] = chunks;
  if (options.gzip) {
    j["compressor"] = {{"id", "gzip"}, {"level", options.gzip_level}};
  } else {
    j["compressor"] = nullptr;
  }
  j["dimension_separator"] = ".";
  j["dtype"] = ZarrDTypeName(dtype);
  j["fill_value"] = nullptr;
  j["filters"] = nullptr;
  j["order"] = "C";
  j["shape"] = shape;
  j["zarr_format"] = 2;
  return j.dump();  // nlohmann::json objects keep keys sorted
}

void WriteZarrArray(const fs::path& dir, const ArrayRef& a,
                    const std::vector<int64_t>& chunks,
                    const SaveOptions& options) {
  MakeDir(dir);
  std::string meta = ZarrayJson(a.dtype, a.shape, chunks, options);
  WriteFile(dir / ".zarray", meta.data(), meta.size());
  const size_t elem = DTypeSize(a.dtype);
  uint8_t* src = const_cast<uint8_t*>(static_cast<const uint8_t*>(a.data));
  const bool whole = chunks == a.shape;
  std::vector<uint8_t> buf;
  if (!whole) buf.resize(static_cast<size_t>(NumElements(chunks)) * elem);
  ForEachChunk(a.shape, chunks, [&](const std::vector<int64_t>& g) {
    const uint8_t* raw = src;
    size_t raw_size = static_cast<size_t>(NumElements(a.shape)) * elem;
    if (!whole) {
      std::fill(buf.begin(), buf.end(), 0);
      CopyChunk(true, src, a.shape, buf.data(), chunks, g, elem);
      raw = buf.data();
      raw_size = buf.size();
    }
    fs::path file = dir / ChunkKey(g, '.');
    if (options.gzip) {
      std::vector<uint8_t> z = GzipCompress(raw, raw_size, options.gzip_level);
      WriteFile(file, z.data(), z.size());
    } else {
      WriteFile(file, raw, raw_size);
    }
  });
}

// ---- msgpack reading ----

const msgpack::object* MapGet(const msgpack::object& map,
                              const std::string& key) {
  if (map.type != msgpack::type::MAP) return nullptr;
  for (uint32_t i = 0; i < map.via.map.size; ++i) {
    const msgpack::object& k = map.via.map.ptr[i].key;
    if ((k.type == msgpack::type::STR &&
         std::string(k.via.str.ptr, k.via.str.size) == key) ||
        (k.type == msgpack::type::BIN &&
         std::string(k.via.bin.ptr, k.via.bin.size) == key)) {
      return &map.via.map.ptr[i].val;
    }
  }
  return nullptr;
}

std::string AsString(const msgpack::object& o) {
  if (o.type == msgpack::type::STR) return {o.via.str.ptr, o.via.str.size};
  if (o.type == msgpack::type::BIN) return {o.via.bin.ptr, o.via.bin.size};
  throw Error("expected a string");
}

std::vector<int64_t> AsInts(const msgpack::object& o, const std::string& what) {
  if (o.type != msgpack::type::ARRAY) throw Error(what + " is not a list");
  std::vector<int64_t> v;
  for (uint32_t i = 0; i < o.via.array.size; ++i) {
    const msgpack::object& e = o.via.array.ptr[i];
    if (e.type != msgpack::type::POSITIVE_INTEGER &&
        e.type != msgpack::type::NEGATIVE_INTEGER) {
      throw Error(what + " has a non-integer entry");
    }
    v.push_back(e.as<int64_t>());
  }
  return v;
}

bool IsSpec(const msgpack::object& o) {
  if (o.type != msgpack::type::MAP) return false;
  const msgpack::object* driver = MapGet(o, "driver");
  return driver && driver->type == msgpack::type::STR &&
         (MapGet(o, "kvstore") || MapGet(o, "metadata") || MapGet(o, "path"));
}

LoadedArray DecodeNdarrayExt(const msgpack::object& o, const std::string& at) {
  const int8_t type = o.via.ext.type();
  if (type != kExtNdarray && type != kExtNpScalar) {
    throw Error("checkpoint leaf '" + at + "' has msgpack ext type " +
                std::to_string(type) + " (only flax ndarray (1) and numpy "
                "scalar (3) are supported)");
  }
  msgpack::object_handle h = msgpack::unpack(o.via.ext.data(), o.via.ext.size);
  const msgpack::object& t = h.get();
  if (t.type != msgpack::type::ARRAY || t.via.array.size != 3) {
    throw Error("checkpoint leaf '" + at + "': malformed flax ndarray");
  }
  LoadedArray out;
  out.shape = AsInts(t.via.array.ptr[0], "ndarray shape of '" + at + "'");
  std::string dname = AsString(t.via.array.ptr[1]);
  auto dt = DTypeFromName(dname);
  if (!dt) {
    throw Error("checkpoint leaf '" + at + "' has unsupported dtype '" +
                dname + "' (supported: float32, bfloat16, int32, int64)");
  }
  out.dtype = *dt;
  const msgpack::object& b = t.via.array.ptr[2];
  if (b.type != msgpack::type::BIN && b.type != msgpack::type::STR) {
    throw Error("checkpoint leaf '" + at + "': ndarray data is not bytes");
  }
  const char* p = b.type == msgpack::type::BIN ? b.via.bin.ptr : b.via.str.ptr;
  uint32_t n = b.type == msgpack::type::BIN ? b.via.bin.size : b.via.str.size;
  if (n != static_cast<uint64_t>(NumElements(out.shape)) * DTypeSize(*dt)) {
    throw Error("checkpoint leaf '" + at + "': ndarray has " +
                std::to_string(n) + " bytes, expected shape " +
                ShapeString(out.shape) + " of " + dname);
  }
  out.bytes.assign(p, p + n);
  return out;
}

// Fills `out` (n elements of dtype) with a zarr fill_value.
void Fill(std::vector<uint8_t>& out, DType dtype, const json& fill) {
  if (fill.is_null()) {
    std::fill(out.begin(), out.end(), 0);
    return;
  }
  double v = 0;
  if (fill.is_number()) {
    v = fill.get<double>();
  } else if (fill.is_string()) {
    std::string s = fill.get<std::string>();
    if (s == "NaN") v = std::nan("");
    else if (s == "Infinity") v = HUGE_VAL;
    else if (s == "-Infinity") v = -HUGE_VAL;
    else throw Error("unsupported zarr fill_value '" + s + "'");
  }
  const size_t elem = DTypeSize(dtype);
  uint8_t bytes[8];
  switch (dtype) {
    case DType::kFloat32: {
      float f = static_cast<float>(v);
      std::memcpy(bytes, &f, 4);
      break;
    }
    case DType::kBFloat16: {
      float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      uint16_t h = static_cast<uint16_t>(u >> 16);
      std::memcpy(bytes, &h, 2);
      break;
    }
    case DType::kInt32: {
      int32_t i = static_cast<int32_t>(v);
      std::memcpy(bytes, &i, 4);
      break;
    }
    case DType::kInt64: {
      int64_t i = fill.is_number_integer() ? fill.get<int64_t>()
                                           : static_cast<int64_t>(v);
      std::memcpy(bytes, &i, 8);
      break;
    }
  }
  for (size_t off = 0; off < out.size(); off += elem) {
    std::memcpy(out.data() + off, bytes, elem);
  }
}

LoadedArray ReadZarrArray(const fs::path& dir, const std::string& at,
                          std::optional<DType> spec_dtype,
                          const std::optional<std::vector<int64_t>>& spec_shape) {
  const fs::path zarray_path = dir / ".zarray";
  std::vector<uint8_t> raw = ReadFile(zarray_path, "zarr metadata of '" + at + "'");
  json meta;
  try {
    meta = json::parse(raw.begin(), raw.end());
  } catch (const json::exception& e) {
    throw Error("malformed zarr metadata " + zarray_path.string() + ": " +
                e.what());
  }
  auto bad = [&](const std::string& msg) {
    return Error(zarray_path.string() + ": " + msg);
  };
  try {
    if (meta.value("zarr_format", 0) != 2) throw bad("zarr_format is not 2");
    std::string dname = meta.at("dtype").get<std::string>();
    auto dt = DTypeFromZarrName(dname);
    if (!dt) {
      if (dname == "<u2") {
        throw bad("dtype '<u2' is t5x's pre-version-3 bfloat16 encoding; "
                  "re-save the checkpoint with native bfloat16");
      }
      throw bad("unsupported dtype '" + dname +
                "' (supported: <f4, bfloat16, <i4, <i8)");
    }
    if (spec_dtype && *spec_dtype != *dt) {
      throw bad(std::string("dtype ") + ZarrDTypeName(*dt) +
                " disagrees with the msgpack spec (" + DTypeName(*spec_dtype) +
                ")");
    }
    if (meta.value("order", std::string("C")) != "C") {
      throw bad("order 'F' is not supported (only C order)");
    }
    if (meta.contains("filters") && !meta["filters"].is_null() &&
        !meta["filters"].empty()) {
      throw bad("zarr filters are not supported");
    }
    std::vector<int64_t> shape = meta.at("shape").get<std::vector<int64_t>>();
    std::vector<int64_t> chunks = meta.at("chunks").get<std::vector<int64_t>>();
    if (chunks.size() != shape.size()) throw bad("chunks rank != shape rank");
    for (int64_t c : chunks) {
      if (c <= 0) throw bad("non-positive chunk size");
    }
    if (spec_shape && *spec_shape != shape) {
      throw bad("shape " + ShapeString(shape) +
                " disagrees with the msgpack spec " + ShapeString(*spec_shape));
    }
    bool compressed = false;
    if (meta.contains("compressor") && !meta["compressor"].is_null()) {
      std::string id = meta["compressor"].at("id").get<std::string>();
      if (id != "gzip" && id != "zlib") {
        throw bad("compressor '" + id +
                  "' is not supported (only null, gzip, zlib)");
      }
      compressed = true;
    }
    char sep = '.';
    if (meta.contains("dimension_separator")) {
      std::string s = meta["dimension_separator"].get<std::string>();
      if (s != "." && s != "/") throw bad("bad dimension_separator");
      sep = s[0];
    }
    json fill = meta.contains("fill_value") ? meta["fill_value"] : json();

    LoadedArray out;
    out.dtype = *dt;
    out.shape = shape;
    const size_t elem = DTypeSize(*dt);
    out.bytes.resize(static_cast<size_t>(NumElements(shape)) * elem);
    const size_t chunk_bytes = static_cast<size_t>(NumElements(chunks)) * elem;
    std::vector<uint8_t> fill_chunk(chunk_bytes);
    Fill(fill_chunk, *dt, fill);
    ForEachChunk(shape, chunks, [&](const std::vector<int64_t>& g) {
      fs::path file = dir / ChunkKey(g, sep);
      std::vector<uint8_t> data;
      std::error_code ec;
      if (!fs::exists(file, ec)) {
        data = fill_chunk;  // zarr: a missing chunk is all fill_value
      } else {
        data = ReadFile(file, "zarr chunk of '" + at + "'");
        if (compressed) {
          data = Inflate(data.data(), data.size(), file.string(), chunk_bytes);
        }
        if (data.size() != chunk_bytes) {
          throw Error("zarr chunk " + file.string() + " has " +
                      std::to_string(data.size()) + " bytes, expected " +
                      std::to_string(chunk_bytes) + " (chunk " +
                      ShapeString(chunks) + " of " + ZarrDTypeName(*dt) + ")");
        }
      }
      CopyChunk(false, out.bytes.data(), shape, data.data(), chunks, g, elem);
    });
    return out;
  } catch (const json::exception& e) {
    throw bad(std::string("malformed zarr metadata: ") + e.what());
  }
}

std::string JoinRel(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

LoadedArray ReadSpecLeaf(const fs::path& ckpt_dir, const msgpack::object& spec,
                         const std::string& at) {
  const std::string driver = AsString(*MapGet(spec, "driver"));
  if (driver != "zarr" && driver != "zarr2") {
    throw Error("checkpoint leaf '" + at + "' uses TensorStore driver '" +
                driver + "' (only zarr is supported)");
  }
  std::string rel;
  if (const msgpack::object* kv = MapGet(spec, "kvstore")) {
    if (kv->type == msgpack::type::STR) {
      throw Error("checkpoint leaf '" + at +
                  "': kvstore URL strings are not supported");
    }
    if (const msgpack::object* d = MapGet(*kv, "driver")) {
      std::string kd = AsString(*d);
      if (kd != "file" && kd != "gfile" && kd != "gcs") {
        throw Error("checkpoint leaf '" + at + "' uses kvstore driver '" + kd +
                    "' (supported: file, gfile, gcs with a relative path)");
      }
    }
    if (const msgpack::object* p = MapGet(*kv, "path")) rel = AsString(*p);
  }
  if (const msgpack::object* p = MapGet(spec, "path")) {
    rel = JoinRel(rel, AsString(*p));
  }
  if (rel.empty()) {
    throw Error("checkpoint leaf '" + at + "': TensorStore spec has no path");
  }
  std::optional<DType> spec_dtype;
  if (const msgpack::object* d = MapGet(spec, "dtype")) {
    std::string n = AsString(*d);
    spec_dtype = DTypeFromName(n);
    if (!spec_dtype) {
      throw Error("checkpoint leaf '" + at + "' has unsupported dtype '" + n +
                  "' (supported: float32, bfloat16, int32, int64)");
    }
  }
  std::optional<std::vector<int64_t>> spec_shape;
  if (const msgpack::object* m = MapGet(spec, "metadata")) {
    if (const msgpack::object* s = MapGet(*m, "shape")) {
      spec_shape = AsInts(*s, "spec shape of '" + at + "'");
    }
  }
  fs::path dir = fs::path(rel).is_absolute() ? fs::path(rel) : ckpt_dir / rel;
  return ReadZarrArray(dir, at, spec_dtype, spec_shape);
}

void Walk(const fs::path& ckpt_dir, const msgpack::object& o,
          const std::string& at, LoadedCheckpoint& out,
          std::optional<LoadedArray>& step) {
  auto put = [&](LoadedArray a) {
    if (at == "state.step") {
      step = std::move(a);
    } else {
      out.arrays[at] = std::move(a);
    }
  };
  switch (o.type) {
    case msgpack::type::MAP:
      if (IsSpec(o)) {
        put(ReadSpecLeaf(ckpt_dir, o, at));
        return;
      }
      for (uint32_t i = 0; i < o.via.map.size; ++i) {
        std::string key;
        try {
          key = AsString(o.via.map.ptr[i].key);
        } catch (const Error&) {
          throw Error("checkpoint has a non-string key under '" + at + "'");
        }
        Walk(ckpt_dir, o.via.map.ptr[i].val, at.empty() ? key : at + "." + key,
             out, step);
      }
      return;
    case msgpack::type::EXT:
      put(DecodeNdarrayExt(o, at));
      return;
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER: {
      LoadedArray a;
      a.dtype = DType::kInt64;
      int64_t v = o.as<int64_t>();
      a.bytes.resize(8);
      std::memcpy(a.bytes.data(), &v, 8);
      put(std::move(a));
      return;
    }
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: {
      LoadedArray a;
      a.dtype = DType::kFloat32;
      float v = static_cast<float>(o.via.f64);
      a.bytes.resize(4);
      std::memcpy(a.bytes.data(), &v, 4);
      put(std::move(a));
      return;
    }
    case msgpack::type::NIL:
      return;  // e.g. param_states of params no optimizer updates
    default:
      throw Error("checkpoint leaf '" + at +
                  "' has an unsupported msgpack type (expected an array, a "
                  "TensorStore spec or a number)");
  }
}

int64_t ScalarToInt(const LoadedArray& a, const std::string& what) {
  if (NumElements(a.shape) != 1) throw Error(what + " is not a scalar");
  switch (a.dtype) {
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, a.bytes.data(), 4);
      return v;
    }
    case DType::kInt64: {
      int64_t v;
      std::memcpy(&v, a.bytes.data(), 8);
      return v;
    }
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, a.bytes.data(), 4);
      return static_cast<int64_t>(v);
    }
    default:
      throw Error(what + " has a non-integer dtype");
  }
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i == 0) {
      small.push_back(i);
      if (i != n / i) large.push_back(n / i);
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;  // ascending
}

}  // namespace

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

std::string CheckpointDir(const std::string& model_dir, int64_t step) {
  return (fs::path(model_dir) / ("checkpoint_" + std::to_string(step))).string();
}

std::vector<uint8_t> GzipCompress(const void* data, size_t size, int level) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw Error("zlib deflateInit2 failed (gzip level " +
                std::to_string(level) + "; valid levels are 0-9)");
  }
  std::vector<uint8_t> out(deflateBound(&zs, static_cast<uLong>(
                               std::min<size_t>(size, 1u << 30))) + 64);
  const uint8_t* in = static_cast<const uint8_t*>(data);
  size_t remaining = size;
  size_t produced = 0;
  int ret = Z_OK;
  do {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
    zs.next_in = const_cast<Bytef*>(in);
    zs.avail_in = chunk;
    in += chunk;
    remaining -= chunk;
    const int flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      if (produced == out.size()) out.resize(out.size() * 2);
      zs.next_out = out.data() + produced;
      zs.avail_out = static_cast<uInt>(
          std::min<size_t>(out.size() - produced, 1u << 30));
      const uInt before = zs.avail_out;
      ret = deflate(&zs, flush);
      produced += before - zs.avail_out;
      if (ret == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        throw Error("zlib deflate failed");
      }
    } while (zs.avail_in > 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
  } while (remaining > 0);
  deflateEnd(&zs);
  out.resize(produced);
  return out;
}

std::vector<uint8_t> Inflate(const void* data, size_t size,
                             const std::string& what, size_t expected_size) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {  // +32: gzip or zlib header
    throw Error("zlib inflateInit2 failed");
  }
  std::vector<uint8_t> out(expected_size ? expected_size + 1
                                         : std::max<size_t>(size * 4, 1024));
  size_t produced = 0;
  const uint8_t* in = static_cast<const uint8_t*>(data);
  size_t remaining = size;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (zs.avail_in == 0) {
      if (remaining == 0) break;
      const uInt chunk =
          static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
      zs.next_in = const_cast<Bytef*>(in);
      zs.avail_in = chunk;
      in += chunk;
      remaining -= chunk;
    }
    if (produced == out.size()) out.resize(out.size() * 2);
    zs.next_out = out.data() + produced;
    zs.avail_out =
        static_cast<uInt>(std::min<size_t>(out.size() - produced, 1u << 30));
    const uInt before = zs.avail_out;
    ret = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
      inflateEnd(&zs);
      throw Error("corrupt compressed data in " + what + " (zlib error " +
                  std::to_string(ret) + ")");
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && remaining == 0) break;
  }
  inflateEnd(&zs);
  if (ret != Z_STREAM_END) {
    throw Error("truncated compressed data in " + what);
  }
  out.resize(produced);
  return out;
}

std::vector<int64_t> ChooseChunkShape(const std::vector<int64_t>& shape,
                                      int64_t target_elements) {
  if (target_elements < 1) target_elements = 1;
  std::vector<std::vector<int64_t>> divs;
  for (int64_t d : shape) divs.push_back(Divisors(std::max<int64_t>(d, 1)));
  auto total = [&] {
    int64_t t = 1;
    for (const auto& v : divs) t *= v.back();
    return t;
  };
  while (total() > target_elements) {
    // Reduce the first largest dimension to its next smaller divisor.
    size_t pick = 0;
    int64_t best = 1;
    for (size_t i = 0; i < divs.size(); ++i) {
      if (divs[i].back() > best) {
        best = divs[i].back();
        pick = i;
      }
    }
    divs[pick].pop_back();
  }
  std::vector<int64_t> out;
  for (const auto& v : divs) out.push_back(v.back());
  return out;
}

std::string SaveCheckpoint(const std::string& model_dir, int64_t step,
                           const std::vector<ArrayRef>& arrays,
                           const SaveOptions& options) {
  if (options.gzip && (options.gzip_level < 0 || options.gzip_level > 9)) {
    throw Error("checkpoint gzip_level " + std::to_string(options.gzip_level) +
                " is out of range (0-9)");
  }
  // Build and validate the tree before touching the disk.
  Node root;
  {
    Leaf s;
    s.is_step = true;
    InsertLeaf(root, "state.step", std::move(s));
  }
  for (const ArrayRef& a : arrays) {
    if (a.path == "state.step") {
      throw Error("checkpoint array path 'state.step' is reserved (pass the "
                  "step as SaveCheckpoint's `step` argument)");
    }
    for (int64_t d : a.shape) {
      if (d < 0) {
        throw Error("checkpoint array '" + a.path + "' has negative shape " +
                    ShapeString(a.shape));
      }
    }
    if (!a.data && NumElements(a.shape) > 0) {
      throw Error("checkpoint array '" + a.path + "' has null data");
    }
    Leaf leaf;
    leaf.array = &a;
    if (!a.store_inline) {
      const int64_t elem = static_cast<int64_t>(DTypeSize(a.dtype));
      const int64_t bytes = NumElements(a.shape) * elem;
      if (options.max_chunk_bytes > 0 && bytes > options.max_chunk_bytes) {
        leaf.chunks =
            ChooseChunkShape(a.shape, options.max_chunk_bytes / elem);
      } else {
        for (int64_t d : a.shape) leaf.chunks.push_back(std::max<int64_t>(d, 1));
      }
    }
    InsertLeaf(root, a.path, std::move(leaf));
  }

  MakeDir(model_dir);
  const fs::path final_dir = CheckpointDir(model_dir, step);
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    throw Error("checkpoint directory " + final_dir.string() +
                " already exists; refusing to overwrite it (delete it or "
                "save under another step)");
  }
  const fs::path tmp_dir =
      final_dir.string() + ".tmp-" + std::to_string(std::time(nullptr));
  fs::remove_all(tmp_dir, ec);  // stale leftover of a crashed save
  MakeDir(tmp_dir);
  try {
    for (const ArrayRef& a : arrays) {
      if (a.store_inline) continue;
      // Find the chunks chosen above.
      const Node* n = &root;
      for (const std::string& part : SplitPath(a.path)) n = &n->children.at(part);
      WriteZarrArray(tmp_dir / a.path, a, n->leaf->chunks, options);
    }
    msgpack::sbuffer sbuf;
    Packer pk(sbuf);
    pk.pack_map(2);
    PackStr(pk, "version");
    pk.pack(kCheckpointVersion);
    PackStr(pk, "optimizer");
    PackTree(pk, root, step, options);
    WriteFile(tmp_dir / "checkpoint", sbuf.data(), sbuf.size());

    if (fs::exists(final_dir, ec)) {
      throw Error("checkpoint directory " + final_dir.string() +
                  " appeared while saving; refusing to overwrite it");
    }
    fs::rename(tmp_dir, final_dir, ec);
    if (ec) {
      throw Error("cannot rename " + tmp_dir.string() + " to " +
                  final_dir.string() + ": " + ec.message());
    }
  } catch (...) {
    std::error_code ignore;
    fs::remove_all(tmp_dir, ignore);
    throw;
  }
  return final_dir.string();
}

LoadedCheckpoint LoadCheckpoint(const std::string& checkpoint_dir) {
  const fs::path dir(checkpoint_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error("checkpoint directory " + checkpoint_dir + " does not exist");
  }
  const fs::path index = dir / "checkpoint";
  std::vector<uint8_t> raw = ReadFile(index, "checkpoint index");
  msgpack::object_handle h;
  try {
    h = msgpack::unpack(reinterpret_cast<const char*>(raw.data()), raw.size());
  } catch (const std::exception& e) {
    throw Error("malformed msgpack in " + index.string() + ": " + e.what());
  }
  const msgpack::object& top = h.get();
  if (top.type != msgpack::type::MAP) {
    throw Error(index.string() + " is not a t5x checkpoint (top level is not "
                "a map; Orbax checkpoints are not supported)");
  }
  LoadedCheckpoint out;
  const msgpack::object* version = MapGet(top, "version");
  if (!version || (version->type != msgpack::type::POSITIVE_INTEGER &&
                   version->type != msgpack::type::NEGATIVE_INTEGER)) {
    throw Error(index.string() + " has no integer 'version'");
  }
  const int64_t v = version->as<int64_t>();
  if (v > kCheckpointVersion) {
    throw Error("checkpoint " + checkpoint_dir +
                " was written by a newer t5x/t5xx (version " +
                std::to_string(v) + " > " +
                std::to_string(kCheckpointVersion) + ")");
  }
  out.version = static_cast<int>(v);
  const msgpack::object* opt = MapGet(top, "optimizer");
  if (!opt || opt->type != msgpack::type::MAP) {
    throw Error(index.string() + " has no 'optimizer' map");
  }
  std::optional<LoadedArray> step;
  try {
    Walk(dir, *opt, "", out, step);
  } catch (const msgpack::type_error& e) {
    throw Error("malformed checkpoint " + index.string() + ": " + e.what());
  }
  if (step) {
    out.step = ScalarToInt(*step, "optimizer.state.step");
  } else {
    std::smatch m;
    const std::string name = dir.filename().empty()
                                 ? dir.parent_path().filename().string()
                                 : dir.filename().string();
    static const std::regex re("checkpoint_(\\d+)");
    if (!std::regex_match(name, m, re)) {
      throw Error(index.string() + " has no optimizer.state.step");
    }
    out.step = std::stoll(m[1]);
  }
  return out;
}

std::vector<int64_t> ListCheckpointSteps(const std::string& model_dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return steps;
  static const std::regex re("checkpoint_(\\d+)");
  for (fs::directory_iterator it(model_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::smatch m;
    if (std::regex_match(name, m, re) && it->is_directory(ec)) {
      steps.push_back(std::stoll(m[1]));
    }
  }
  if (ec) {
    throw Error("cannot list checkpoints in " + model_dir + ": " +
                ec.message());
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace t5xx::checkpoints
