// The msgpack `checkpoint` index: encoding the 'optimizer' tree, decoding it.
#include "t5xx/checkpoints/t5x/msgpack_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <msgpack.hpp>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

namespace {

constexpr int8_t kExtNdarray = 1;   // flax _MsgpackExtType.ndarray
constexpr int8_t kExtNpScalar = 3;  // flax _MsgpackExtType.npscalar

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
              const std::vector<int64_t>& chunks,
              std::optional<int> gzip_level) {
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
  if (gzip_level) {
    pk.pack_map(2);
    PackStr(pk, "id");
    PackStr(pk, "gzip");
    PackStr(pk, "level");
    pk.pack(*gzip_level);
  } else {
    pk.pack_nil();
  }
  PackStr(pk, "shape");
  PackInts(pk, shape);
}

// ---- msgpack reading ----

// Unpacks `size` bytes of msgpack with every declared count and length
// bounded by `size` (each element takes at least one byte, so a larger
// count is a lie, refused before msgpack allocates for it) and nesting
// bounded by kMaxIndexDepth. Throws t5xx::Error "<what>: ..." otherwise.
msgpack::object_handle UnpackBounded(const char* data, size_t size, const std::string& what) {
  const std::size_t n = std::max<size_t>(size, 1);
  const msgpack::unpack_limit limit(n, n, n, n, n, kMaxIndexDepth);
  try {
    return msgpack::unpack(data, size, nullptr, nullptr, limit);
  } catch (const msgpack::depth_size_overflow&) {
    throw Error(what + ": msgpack nested more than " + std::to_string(kMaxIndexDepth) +
                " levels deep (the limit; a t5x index is a few levels deep)");
  } catch (const msgpack::size_overflow& e) {
    throw Error(what + ": a msgpack array, map or string declares more entries than the " +
                std::to_string(size) + " bytes it is read from hold (" + e.what() +
                "); the data is corrupt");
  } catch (const std::exception& e) {
    throw Error(what + ": malformed msgpack (" + e.what() + ")");
  }
}

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
  msgpack::object_handle h =
      UnpackBounded(o.via.ext.data(), o.via.ext.size, "checkpoint leaf '" + at + "'");
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
  const std::optional<uint64_t> want = CheckedNumBytes(out.shape, *dt);
  if (!want || n != *want) {
    throw Error("checkpoint leaf '" + at + "': ndarray has " +
                std::to_string(n) + " bytes, expected shape " +
                ShapeString(out.shape) + " of " + dname);
  }
  out.bytes.assign(p, p + n);
  return out;
}

std::string JoinRel(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

IndexEntry ReadSpecLeaf(const fs::path& ckpt_dir, const msgpack::object& spec,
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
  IndexEntry e;
  while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
  e.zarr_rel = rel;
  e.zarr_dir = fs::path(rel).is_absolute() ? fs::path(rel) : ckpt_dir / rel;
  e.zarr = ReadZarrMetadata(e.zarr_dir, at, spec_dtype, spec_shape);
  e.dtype = e.zarr->dtype;
  e.shape = e.zarr->shape;
  return e;
}

IndexEntry Inline(LoadedArray a) {
  IndexEntry e;
  e.dtype = a.dtype;
  e.shape = a.shape;
  e.inline_array = std::move(a);
  return e;
}

void Walk(const fs::path& ckpt_dir, const msgpack::object& o,
          const std::string& at, std::map<std::string, IndexEntry>& arrays,
          std::optional<LoadedArray>& step) {
  auto put = [&](IndexEntry e) {
    if (at == "state.step") {
      if (!e.inline_array) {
        e.inline_array = ReadZarrRegion(e.zarr_dir, at, *e.zarr, std::nullopt);
      }
      step = std::move(*e.inline_array);
    } else {
      arrays[at] = std::move(e);
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
        Walk(ckpt_dir, o.via.map.ptr[i].val, JoinName(at, key, '.'),
             arrays, step);
      }
      return;
    case msgpack::type::EXT:
      put(Inline(DecodeNdarrayExt(o, at)));
      return;
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER: {
      LoadedArray a;
      a.dtype = DType::kInt64;
      int64_t v = o.as<int64_t>();
      a.bytes.resize(8);
      std::memcpy(a.bytes.data(), &v, 8);
      put(Inline(std::move(a)));
      return;
    }
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: {
      LoadedArray a;
      a.dtype = DType::kFloat32;
      float v = static_cast<float>(o.via.f64);
      a.bytes.resize(4);
      std::memcpy(a.bytes.data(), &v, 4);
      put(Inline(std::move(a)));
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


// Packs IndexBuilder's tree (a template only because IndexBuilder::Node is
// private to the builder).
template <typename Node>
void PackTree(Packer& pk, const Node& node, int64_t step,
              std::optional<int> gzip_level) {
  if (node.leaf) {
    const auto& leaf = *node.leaf;
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
               leaf.chunks, gzip_level);
    }
    return;
  }
  pk.pack_map(static_cast<uint32_t>(node.children.size()));
  for (const auto& [key, child] : node.children) {
    PackStr(pk, key);
    PackTree(pk, child, step, gzip_level);
  }
}

}  // namespace

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
      if (!(v >= 0 && v < 9.2e18f) || v != std::floor(v)) {
        throw Error(what + " is " + std::to_string(v) + ", not a step number");
      }
      return static_cast<int64_t>(v);
    }
    default:
      throw Error(what + " has a non-integer dtype");
  }
}

IndexBuilder::IndexBuilder() {
  Leaf s;
  s.is_step = true;
  Insert("state.step", std::move(s));
}

void IndexBuilder::Add(const ArrayRef& array, std::vector<int64_t> chunks) {
  Leaf leaf;
  leaf.array = &array;
  leaf.chunks = std::move(chunks);
  Insert(array.path, std::move(leaf));
}

void IndexBuilder::Insert(const std::string& path, Leaf leaf) {
  Node* node = &root_;
  std::string sofar;
  for (const std::string& part : SplitName(path)) {
    if (part.empty()) {
      throw Error("checkpoint array path '" + path +
                  "' has an empty component (paths are dot-separated keys "
                  "under 'optimizer', e.g. 'target.encoder.kernel')");
    }
    if (node->leaf) {
      throw Error("checkpoint array path '" + path + "' nests under array '" +
                  sofar + "'");
    }
    sofar = JoinName(sofar, part, '.');
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

std::string IndexBuilder::Encode(int64_t step,
                                 std::optional<int> gzip_level) const {
  msgpack::sbuffer sbuf;
  Packer pk(sbuf);
  pk.pack_map(2);
  PackStr(pk, "version");
  pk.pack(kCheckpointVersion);
  PackStr(pk, "optimizer");
  PackTree(pk, root_, step, gzip_level);
  return std::string(sbuf.data(), sbuf.size());
}

IndexListing ListIndex(const fs::path& dir, const std::string& checkpoint_dir) {
  const fs::path index = dir / "checkpoint";
  std::vector<uint8_t> raw = ReadFile(index, "checkpoint index");
  msgpack::object_handle h =
      UnpackBounded(reinterpret_cast<const char*>(raw.data()), raw.size(), index.string());
  const msgpack::object& top = h.get();
  if (top.type != msgpack::type::MAP) {
    throw Error(index.string() + " is not a t5x checkpoint (top level is not "
                "a map; Orbax checkpoints are not supported)");
  }
  IndexListing out;
  const msgpack::object* version = MapGet(top, "version");
  if (!version || (version->type != msgpack::type::POSITIVE_INTEGER &&
                   version->type != msgpack::type::NEGATIVE_INTEGER)) {
    throw Error(index.string() + " has no integer 'version'");
  }
  // Read as msgpack stored it: a positive version may not fit int64.
  if (version->type == msgpack::type::POSITIVE_INTEGER &&
      version->via.u64 > static_cast<uint64_t>(kCheckpointVersion)) {
    throw Error("checkpoint " + checkpoint_dir +
                " was written by a newer t5x/t5xx (version " +
                std::to_string(version->via.u64) + " > " +
                std::to_string(kCheckpointVersion) + ")");
  }
  if (version->type == msgpack::type::NEGATIVE_INTEGER) {
    throw Error(index.string() + " has a negative 'version' (" +
                std::to_string(version->via.i64) + "); the index is corrupt");
  }
  out.version = static_cast<int>(version->via.u64);
  const msgpack::object* opt = MapGet(top, "optimizer");
  if (!opt || opt->type != msgpack::type::MAP) {
    throw Error(index.string() + " has no 'optimizer' map");
  }
  std::optional<LoadedArray> step;
  try {
    Walk(dir, *opt, "", out.entries, step);
    if (step) out.step = ScalarToInt(*step, "optimizer.state.step");
  } catch (const msgpack::type_error& e) {
    throw Error("malformed checkpoint " + index.string() + ": " + e.what());
  } catch (const Error& e) {
    // Errors of one leaf name the leaf; say which checkpoint holds it.
    const std::string message = e.what();
    if (message.find(index.string()) != std::string::npos ||
        message.find(dir.string()) != std::string::npos) {
      throw;
    }
    throw Error(index.string() + ": " + message);
  }
  return out;
}

LoadedArray ReadEntry(const IndexEntry& entry, const std::string& at,
                      const std::optional<Box>& box, const ChunkChecksums* sums,
                      uint64_t* bytes_read) {
  if (entry.inline_array) {
    if (!box) return *entry.inline_array;
    return SliceArray(*entry.inline_array, *box, at);
  }
  return ReadZarrRegion(entry.zarr_dir, at, *entry.zarr, box, sums, entry.zarr_rel, bytes_read);
}

IndexContents ReadIndex(const fs::path& dir, const std::string& checkpoint_dir) {
  IndexListing listing = ListIndex(dir, checkpoint_dir);
  IndexContents out;
  out.version = listing.version;
  out.step = listing.step;
  for (const auto& [path, entry] : listing.entries) {
    out.arrays[path] = ReadEntry(entry, path, std::nullopt, nullptr, nullptr);
  }
  return out;
}

}  // namespace t5xx::checkpoints
