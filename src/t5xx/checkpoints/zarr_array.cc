// zarr v2 array store: chunk files and .zarray metadata written, chunks read
// (the metadata is read in zarr_metadata.cc).
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/checkpoints/zstd_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/checksums.h"
#include "t5xx/checkpoints/compression.h"
#include "t5xx/checkpoints/file_io.h"
#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/system/system_memory.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Advances the C-order multi-index `idx` over its first `ndims` dimensions
// (dimension d runs over [0, counts[d])). Returns false, with those
// dimensions back at 0, once every combination has been visited.
bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& counts,
               size_t ndims) {
  for (size_t d = ndims; d > 0;) {
    --d;
    if (++idx[d] < counts[d]) return true;
    idx[d] = 0;
  }
  return false;
}
// Copies, between two C-order buffers that hold the boxes (src_origin,
// src_shape) and (dst_origin, dst_shape) of one array, the elements of their
// intersection.
void CopyIntersection(const uint8_t* src, const std::vector<int64_t>& src_origin,
                      const std::vector<int64_t>& src_shape, uint8_t* dst,
                      const std::vector<int64_t>& dst_origin,
                      const std::vector<int64_t>& dst_shape, size_t elem) {
  const size_t rank = src_shape.size();
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  std::vector<int64_t> lo(rank), extent(rank);
  for (size_t d = 0; d < rank; ++d) {
    lo[d] = std::max(src_origin[d], dst_origin[d]);
    const int64_t hi = std::min(src_origin[d] + src_shape[d], dst_origin[d] + dst_shape[d]);
    extent[d] = hi - lo[d];
    if (extent[d] <= 0) return;
  }
  std::vector<int64_t> sstride(rank, 1), dstride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) {
    sstride[d - 1] = sstride[d] * src_shape[d];
    dstride[d - 1] = dstride[d] * dst_shape[d];
  }
  const size_t row_bytes = static_cast<size_t>(extent[rank - 1]) * elem;
  std::vector<int64_t> idx(rank, 0);
  while (true) {
    int64_t so = 0, dof = 0;
    for (size_t d = 0; d < rank; ++d) {
      so += (lo[d] + idx[d] - src_origin[d]) * sstride[d];
      dof += (lo[d] + idx[d] - dst_origin[d]) * dstride[d];
    }
    std::memcpy(dst + dof * elem, src + so * elem, row_bytes);
    if (!NextIndex(idx, extent, rank - 1)) return;
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
    if (!NextIndex(g, counts, rank)) return;
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

std::string ZarrayJson(DType dtype, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& chunks, const ZarrCodec& codec) {
  json j;
  j["chunks"] = chunks;
  if (codec.compressor == ZarrCompressor::kZlib) {
    j["compressor"] = {{"id", "gzip"}, {"level", codec.level}};
  } else if (codec.compressor == ZarrCompressor::kZstd) {
    j["compressor"] = {{"id", "zstd"}, {"level", codec.level}};
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

// Fills `out` (n elements of dtype) with a zarr fill_value.
// One element of zarr's fill_value in `dtype`'s bytes (null: zero). Throws
// t5xx::Error for a fill_value that is not a number, "NaN", "Infinity" or
// "-Infinity", and for one an integer dtype cannot hold.
}  // namespace

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

std::vector<int64_t> ChunkShapeFor(const ArrayRef& array,
                                   int64_t max_chunk_bytes) {
  const std::vector<int64_t>& held = array.box ? array.box->shape : array.shape;
  const int64_t elem = static_cast<int64_t>(DTypeSize(array.dtype));
  const int64_t bytes = NumElements(held) * elem;
  if (max_chunk_bytes > 0 && bytes > max_chunk_bytes) {
    return ChooseChunkShape(held, max_chunk_bytes / elem);
  }
  std::vector<int64_t> chunks;
  for (int64_t d : held) chunks.push_back(std::max<int64_t>(d, 1));
  return chunks;
}

void EncodeZarrArray(const ArrayRef& a, const std::vector<int64_t>& chunks,
                     const ZarrCodec& codec, const ZarrPut& put) {
  const size_t rank = a.shape.size();
  // The part held: the box, or all of the array.
  const std::vector<int64_t> origin = a.box ? a.box->origin : std::vector<int64_t>(rank, 0);
  const std::vector<int64_t>& held = a.box ? a.box->shape : a.shape;
  if (std::all_of(origin.begin(), origin.end(), [](int64_t o) { return o == 0; })) {
    const std::string meta = ZarrayJson(a.dtype, a.shape, chunks, codec);
    put(".zarray", reinterpret_cast<const uint8_t*>(meta.data()), meta.size());
  }
  const size_t elem = DTypeSize(a.dtype);
  const uint8_t* src = static_cast<const uint8_t*>(a.data);
  const bool whole = chunks == held;
  std::vector<uint8_t> buf;
  if (!whole) buf.resize(static_cast<size_t>(NumElements(chunks)) * elem);
  // The box's chunks, in C order: grid index = box origin / chunk + local.
  ForEachChunk(held, chunks, [&](const std::vector<int64_t>& local) {
    std::vector<int64_t> g(rank);
    for (size_t d = 0; d < rank; ++d) g[d] = origin[d] / chunks[d] + local[d];
    const uint8_t* raw = src;
    size_t raw_size = static_cast<size_t>(NumElements(held)) * elem;
    if (!whole) {
      std::fill(buf.begin(), buf.end(), 0);
      std::vector<int64_t> chunk_origin(rank);
      for (size_t d = 0; d < rank; ++d) chunk_origin[d] = g[d] * chunks[d];
      CopyIntersection(src, origin, held, buf.data(), chunk_origin, chunks, elem);
      raw = buf.data();
      raw_size = buf.size();
    }
    std::vector<uint8_t> z;
    if (codec.compressor == ZarrCompressor::kZlib) {
      z = GzipCompress(raw, raw_size, codec.level);
    } else if (codec.compressor == ZarrCompressor::kZstd) {
      z = ZstdCompress(raw, raw_size, codec.level);
    }
    if (codec.compressor != ZarrCompressor::kNone) {
      raw = z.data();
      raw_size = z.size();
    }
    put(ChunkKey(g, '.'), raw, raw_size);
  });
}

void WriteZarrArray(const fs::path& dir, const ArrayRef& a,
                    const std::vector<int64_t>& chunks,
                    std::optional<int> gzip_level, ChunkChecksums* sums) {
  MakeDir(dir);
  const ZarrCodec codec = gzip_level ? ZarrCodec{ZarrCompressor::kZlib, *gzip_level} : ZarrCodec{};
  EncodeZarrArray(a, chunks, codec, [&](const std::string& key, const uint8_t* data, size_t size) {
    WriteFile(dir / key, data, size);
    if (sums && key != ".zarray") (*sums)[dir.filename().string() + "/" + key] = Crc32c(data, size);
  });
}

namespace {

// Checks that `box` lies inside `shape`; returns box or the whole array.
Box CheckedBox(const std::vector<int64_t>& shape, const std::optional<Box>& box,
               const std::string& at) {
  if (!box) return Box{std::vector<int64_t>(shape.size(), 0), shape};
  bool ok = box->origin.size() == shape.size() && box->shape.size() == shape.size();
  for (size_t d = 0; ok && d < shape.size(); ++d) {
    ok = box->origin[d] >= 0 && box->shape[d] >= 0 &&
         box->origin[d] + box->shape[d] <= shape[d];
  }
  if (!ok) {
    throw Error("cannot read the slice at " + ShapeString(box->origin) + " of shape " +
                ShapeString(box->shape) + " of checkpoint array '" + at + "' of shape " +
                ShapeString(shape) + ": it lies outside the array");
  }
  return *box;
}

// Fills `bytes` (a whole number of elements) with copies of one element.
void FillWithElement(std::vector<uint8_t>& bytes, const std::vector<uint8_t>& element) {
  for (size_t off = 0; off < bytes.size(); off += element.size()) {
    std::memcpy(bytes.data() + off, element.data(), element.size());
  }
}

// The names, relative to `dir` and with '/' between levels, of everything
// in the array directory down to the depth chunk keys have (1 for the '.'
// separator, the rank for '/'). Listed once per read so that a read of many
// chunks, most of them missing (fill_value), does not look each one up in
// the file system (issue 17, fault 24: 988,389 lookups for a 151-byte .zarray).
// Throws t5xx::Error naming `dir` when it cannot be listed.
std::unordered_set<std::string> ListChunkFiles(const fs::path& dir, size_t key_depth,
                                               const std::string& at) {
  std::unordered_set<std::string> names;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  std::vector<std::string> parents;  // parents[k]: the name of the directory at depth k
  for (; !ec && it != end; it.increment(ec)) {
    const size_t depth = static_cast<size_t>(it.depth());
    parents.resize(depth);
    std::string name = depth == 0 ? it->path().filename().string()
                                  : parents[depth - 1] + "/" + it->path().filename().string();
    if (depth + 1 >= key_depth) {
      it.disable_recursion_pending();
    } else {
      parents.push_back(name);
    }
    names.insert(std::move(name));
  }
  if (ec) {
    throw Error("checkpoint array '" + at + "': cannot list the zarr directory " +
                dir.string() + ": " + ec.message());
  }
  return names;
}

}  // namespace

namespace {

// Reads chunk `key` from `store` (checked against `sums` at `sum_key`) and
// returns its decompressed bytes; throws t5xx::Error naming the array and
// chunk when it is corrupt or of the wrong size.
std::vector<uint8_t> ReadChunk(const ZarrChunkStore& store, const std::string& key,
                               const std::string& at, const ZarrMetadata& meta,
                               const ChunkChecksums* sums, const std::string& sum_key,
                               uint64_t* bytes_read) {
  std::vector<uint8_t> data = store.Get(key);
  const std::string name = store.Name(key);
  if (bytes_read) *bytes_read += data.size();
  VerifyChecksum(sums, sum_key, data.data(), data.size(), name,
                 "checkpoint array '" + at + "': chunk file");
  try {
    if (meta.compressor == ZarrCompressor::kZlib) {
      data = Inflate(data.data(), data.size(), name, meta.chunk_bytes);
    } else if (meta.compressor == ZarrCompressor::kZstd) {
      data = ZstdDecompress(data.data(), data.size(), name, meta.chunk_bytes);
    }
  } catch (const Error& e) {
    throw Error("checkpoint array '" + at + "': " + e.what());
  }
  if (data.size() != meta.chunk_bytes) {
    throw Error("checkpoint array '" + at + "': zarr chunk " + name + " has " +
                std::to_string(data.size()) + " bytes, expected " +
                std::to_string(meta.chunk_bytes) + " (chunk " + ShapeString(meta.chunks) +
                " of " + ZarrDTypeName(meta.dtype) + "); it is truncated or corrupted");
  }
  return data;
}

// Chunk files in a zarr directory, listed once per read, on the first
// lookup (a read of nothing lists nothing).
class DirectoryChunkStore : public ZarrChunkStore {
 public:
  DirectoryChunkStore(const fs::path& dir, size_t key_depth, const std::string& at)
      : dir_(dir), key_depth_(key_depth), at_(at) {}
  bool Has(const std::string& key) const override {
    if (!present_) present_ = ListChunkFiles(dir_, key_depth_, at_);
    return present_->count(key) > 0;
  }
  std::vector<uint8_t> Get(const std::string& key) const override {
    return ReadFile(dir_ / key, "zarr chunk of '" + at_ + "'");
  }
  std::string Name(const std::string& key) const override { return (dir_ / key).string(); }

 private:
  fs::path dir_;
  size_t key_depth_;
  std::string at_;
  mutable std::optional<std::unordered_set<std::string>> present_;
};

// The limits on one read, checked before anything is allocated or any chunk
// is looked for: more bytes than this machine has, or more chunks than
// kMaxZarrChunksPerRead. Returns the output's bytes.
uint64_t CheckReadSize(const std::string& where, const std::string& at, const ZarrMetadata& meta,
                       const Box& want, uint64_t chunk_count) {
  const uint64_t out_bytes =
      static_cast<uint64_t>(NumElements(want.shape)) * DTypeSize(meta.dtype);
  if (out_bytes > PhysicalMemoryBytes()) {
    throw Error("checkpoint array '" + at + "' (" + where + "): reading " +
                ShapeString(want.shape) + " of " + ZarrDTypeName(meta.dtype) + " needs " +
                std::to_string(out_bytes) + " bytes, more than this machine's " +
                std::to_string(PhysicalMemoryBytes()) + " bytes of memory");
  }
  if (chunk_count > kMaxZarrChunksPerRead) {
    throw Error("checkpoint array '" + at + "' (" + where + "): reading " +
                ShapeString(want.shape) + " in chunks " + ShapeString(meta.chunks) +
                " means " + std::to_string(chunk_count) + " chunk files, more than the limit of " +
                std::to_string(kMaxZarrChunksPerRead) + " (t5x writes chunks of up to 64 MiB)");
  }
  return out_bytes;
}

}  // namespace

LoadedArray ReadZarrRegion(const fs::path& dir, const std::string& at,
                           const ZarrMetadata& meta, const std::optional<Box>& box,
                           const ChunkChecksums* sums, const std::string& sums_prefix,
                           uint64_t* bytes_read) {
  const DirectoryChunkStore store(
      dir, meta.separator == '/' ? std::max<size_t>(meta.shape.size(), 1) : 1, at);
  return ReadZarrRegionFrom(store, dir.string(), at, meta, box, sums, sums_prefix, bytes_read);
}

LoadedArray ReadZarrRegionFrom(const ZarrChunkStore& store, const std::string& where,
                               const std::string& at, const ZarrMetadata& meta,
                               const std::optional<Box>& box, const ChunkChecksums* sums,
                               const std::string& sums_prefix, uint64_t* bytes_read) {
  const Box want = CheckedBox(meta.shape, box, at);
  const size_t rank = meta.shape.size();
  const size_t elem = DTypeSize(meta.dtype);
  LoadedArray out;
  out.dtype = meta.dtype;
  out.shape = want.shape;
  if (NumElements(want.shape) == 0) return out;
  // The chunk grid range that intersects the box.
  std::vector<int64_t> first(rank), count(rank);
  uint64_t chunk_count = 1;
  for (size_t d = 0; d < rank; ++d) {
    first[d] = want.origin[d] / meta.chunks[d];
    count[d] = (want.origin[d] + want.shape[d] - 1) / meta.chunks[d] - first[d] + 1;
    chunk_count *= static_cast<uint64_t>(count[d]);  // <= the element count: no overflow
  }
  const uint64_t out_bytes = CheckReadSize(where, at, meta, want, chunk_count);
  const bool one_chunk = want.shape == meta.shape && meta.chunks == meta.shape;
  if (!one_chunk) {
    // zarr: a missing chunk is all fill_value (TensorStore writes none for
    // chunks equal to it), so the output starts as fill_value and only the
    // chunks that exist are copied in.
    out.bytes.resize(static_cast<size_t>(out_bytes));
    FillWithElement(out.bytes, meta.fill_element);
  }
  // Per chunk, only the key is built unless the chunk exists or checksums
  // are given: a read of 2^20 mostly missing chunks stays in the seconds
  // under the sanitizers too.
  std::vector<int64_t> step(rank, 0), g(rank), chunk_origin(rank);
  while (true) {
    for (size_t d = 0; d < rank; ++d) {
      g[d] = first[d] + step[d];
      chunk_origin[d] = g[d] * meta.chunks[d];
    }
    const std::string key = ChunkKey(g, meta.separator);
    const bool exists = store.Has(key);
    const std::string sum_key =
        sums ? sums_prefix + "/" + (meta.separator == '.' ? key : ChunkKey(g, '.')) : "";
    const bool listed = sums && sums->count(sum_key) > 0;
    if (!exists && !listed && !one_chunk) {
      if (rank == 0 || !NextIndex(step, count, rank)) break;
      continue;  // fill_value, already in place
    }
    if (!exists) {
      if (listed) {
        throw Error("checkpoint array '" + at + "': chunk file " + store.Name(key) +
                    " is missing, though the checkpoint's checksums list it (the checkpoint "
                    "was damaged after it was written; restore an earlier checkpoint)");
      }
      if (one_chunk) {  // the whole array is this one missing chunk
        out.bytes.resize(meta.chunk_bytes);
        FillWithElement(out.bytes, meta.fill_element);
      }
    } else {
      std::vector<uint8_t> data = ReadChunk(store, key, at, meta, sums, sum_key, bytes_read);
      if (one_chunk) {
        out.bytes = std::move(data);  // one chunk that is the whole array
      } else {
        CopyIntersection(data.data(), chunk_origin, meta.chunks, out.bytes.data(),
                         want.origin, want.shape, elem);
      }
    }
    if (rank == 0 || !NextIndex(step, count, rank)) break;
  }
  return out;
}

LoadedArray SliceArray(const LoadedArray& whole, const Box& box, const std::string& at) {
  const Box want = CheckedBox(whole.shape, box, at);
  LoadedArray out;
  out.dtype = whole.dtype;
  out.shape = want.shape;
  const size_t elem = DTypeSize(whole.dtype);
  out.bytes.resize(static_cast<size_t>(NumElements(want.shape)) * elem);
  if (out.bytes.empty()) return out;
  CopyIntersection(whole.bytes.data(), std::vector<int64_t>(whole.shape.size(), 0), whole.shape,
                   out.bytes.data(), want.origin, want.shape, elem);
  return out;
}

LoadedArray ReadZarrArray(
    const fs::path& dir, const std::string& at,
    std::optional<DType> spec_dtype,
    const std::optional<std::vector<int64_t>>& spec_shape) {
  return ReadZarrRegion(dir, at, ReadZarrMetadata(dir, at, spec_dtype, spec_shape),
                        std::nullopt);
}

}  // namespace t5xx::checkpoints
