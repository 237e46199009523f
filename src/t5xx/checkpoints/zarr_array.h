// zarr v2 array store: one directory per array with its .zarray metadata
// (JSON) and C-order chunk files "i.j..." (raw, or gzip/zlib compressed).
// Behaviour of TensorStore's zarr driver as t5x uses it
// (t5x/checkpoints.py, _get_spec / _run_future_tree).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "t5xx/checkpoints/array.h"

namespace t5xx::checkpoints {

// t5x's chunk choice: starting from `shape`, repeatedly lower the currently
// largest chunk dimension to its next smaller divisor of the full dimension
// until the chunk has <= target_elements elements.
std::vector<int64_t> ChooseChunkShape(const std::vector<int64_t>& shape,
                                      int64_t target_elements);

// Chunk shape SaveCheckpoint writes `array` with: ChooseChunkShape of the
// part it holds (array.box's shape, else its shape) when that has more than
// max_chunk_bytes bytes (and max_chunk_bytes > 0), else that part as one
// chunk (0-sized dimensions as 1) -- t5x's chunks "divide each host's
// slice".
std::vector<int64_t> ChunkShapeFor(const ArrayRef& array,
                                   int64_t max_chunk_bytes);

// CRC-32C of every stored (compressed) chunk file, keyed by
// "<array directory name>/<chunk key>", e.g.
// "target.encoder.layers_0.mlp.wi.kernel/0.0". t5xx writes them to a sidecar
// file that t5x's and zarr's readers ignore (checkpoints.h).
using ChunkChecksums = std::map<std::string, uint32_t>;

// How a zarr v2 array's chunks are compressed: none, gzip or zlib
// (numcodecs' and TensorStore's, auto-detected on reading), or zstd (what
// Orbax writes).
enum class ZarrCompressor { kNone, kZlib, kZstd };

// A compressor and its level, as a .zarray's "compressor" names them
// ({"id": "gzip", "level": 1}, {"id": "zstd", "level": 1}, or null).
struct ZarrCodec {
  ZarrCompressor compressor = ZarrCompressor::kNone;
  int level = 0;
};

// Receives what EncodeZarrArray produces: ".zarray" and each chunk key
// ("0.0") with its stored bytes. Called from one thread per array.
using ZarrPut = std::function<void(const std::string& key, const uint8_t* data, size_t size)>;

// Encodes `array` as zarr v2: its .zarray (only when array.box starts at
// the origin, or is unset) and the chunks of shape `chunks` that
// array.box covers (edge chunks full-size, zero padded), compressed with
// `codec`, each handed to `put`. What WriteZarrArray writes as files and the
// Orbax writer stores as OCDBT values.
void EncodeZarrArray(const ArrayRef& array, const std::vector<int64_t>& chunks,
                     const ZarrCodec& codec, const ZarrPut& put);

// Writes `array` as zarr directory `dir` (created): .zarray, then one chunk
// file per chunk of shape `chunks` (edge chunks full-size, zero padded),
// gzip-compressed at `gzip_level` or raw when nullopt; every file fsync'ed.
// With array.box set, only the chunks of the box (which `chunks` divide),
// and the .zarray (global shape) only when the box starts at the origin, so
// that processes writing the boxes of one array never write the same file.
// Adds each chunk's checksum to `sums` (when given) under
// "<dir's name>/<chunk key>". Throws t5xx::Error naming the file on I/O
// failure.
void WriteZarrArray(const std::filesystem::path& dir, const ArrayRef& array,
                    const std::vector<int64_t>& chunks,
                    std::optional<int> gzip_level,
                    ChunkChecksums* sums = nullptr);

// Limits on what a .zarray may declare, checked before anything is
// allocated (issue 17): an array of at most 1 TiB, chunks of at most 2 GiB
// (t5x writes chunks of at most 64 MiB, checkpoints.py
// _DESIRED_CHUNK_SIZE_BYTES), rank at most 32 (numpy's); one read visits at
// most 2^20 chunk files (a 1 TiB array in t5x's chunks has 16,384).
inline constexpr uint64_t kMaxZarrArrayBytes = uint64_t{1} << 40;
inline constexpr uint64_t kMaxZarrChunkBytes = uint64_t{1} << 31;
inline constexpr size_t kMaxZarrRank = 32;
inline constexpr uint64_t kMaxZarrChunksPerRead = uint64_t{1} << 20;

// A zarr array's .zarray, checked.
struct ZarrMetadata {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<int64_t> chunks;
  size_t chunk_bytes = 0;   // bytes of one (uncompressed) chunk
  ZarrCompressor compressor = ZarrCompressor::kNone;
  char separator = '.';
  std::vector<uint8_t> fill_element;  // fill_value as one element of dtype
};

// Reads and checks `dir`/.zarray (see ReadZarrArray for what is accepted).
// Throws t5xx::Error naming the file for malformed JSON, an unsupported
// dtype/compressor/order/filter, and shapes or chunks over the limits above.
ZarrMetadata ReadZarrMetadata(
    const std::filesystem::path& dir, const std::string& at,
    std::optional<DType> spec_dtype,
    const std::optional<std::vector<int64_t>>& spec_shape);

// The same check of a .zarray's text, read from `source` (named in errors:
// a file, or a key of an Orbax checkpoint's OCDBT store).
ZarrMetadata ParseZarrMetadata(std::string_view text, const std::string& source,
                               std::optional<DType> spec_dtype,
                               const std::optional<std::vector<int64_t>>& spec_shape);

// Where a zarr array's chunks are stored: chunk files in its directory, or
// values of a key-value store (an Orbax checkpoint's OCDBT database).
class ZarrChunkStore {
 public:
  virtual ~ZarrChunkStore() = default;
  // Whether chunk `key` ("0.1", or "0/1" with the '/' separator) exists.
  virtual bool Has(const std::string& key) const = 0;
  // Its stored (compressed) bytes; throws t5xx::Error naming it.
  virtual std::vector<uint8_t> Get(const std::string& key) const = 0;
  // How errors name chunk `key` (a file path, or a store and key).
  virtual std::string Name(const std::string& key) const = 0;
};

// Reads the part `box` of the array in directory `dir` (nullopt: all of it) from only the
// chunks that intersect it; the result has shape box.shape. When `sums` is
// given, every chunk listed in it under `sums_prefix` + "/" + key must exist
// and match its checksum, else t5xx::Error names the array, the chunk file
// and "corrupted" or "missing". Adds the stored bytes read to *bytes_read.
// Throws t5xx::Error for a box outside the array, truncated or undecodable
// chunks, or a chunk that would inflate past its size (naming the array and
// the chunk file); for a box of more bytes than the machine's physical
// memory or more than kMaxZarrChunksPerRead chunks (naming the array),
// before anything is allocated.
LoadedArray ReadZarrRegion(const std::filesystem::path& dir,
                           const std::string& at, const ZarrMetadata& meta,
                           const std::optional<Box>& box,
                           const ChunkChecksums* sums = nullptr,
                           const std::string& sums_prefix = "",
                           uint64_t* bytes_read = nullptr);

// ReadZarrRegion over any chunk store; `where` names the array's place
// in errors about the whole read (its directory, or its store key).
LoadedArray ReadZarrRegionFrom(const ZarrChunkStore& store, const std::string& where,
                               const std::string& at, const ZarrMetadata& meta,
                               const std::optional<Box>& box,
                               const ChunkChecksums* sums = nullptr,
                               const std::string& sums_prefix = "",
                               uint64_t* bytes_read = nullptr);

// The part `box` of a whole C-order array `whole` (used for arrays stored
// inline in the index). Throws t5xx::Error (naming `at`) for a box outside
// the array.
LoadedArray SliceArray(const LoadedArray& whole, const Box& box,
                       const std::string& at);

// Reads zarr directory `dir` (any chunking; compressor null, gzip or zlib;
// '.' or '/' dimension separator; missing chunks read as fill_value). `at`
// (the dotted checkpoint path) names the array in errors; `spec_dtype` and
// `spec_shape`, when given, must agree with the .zarray. Throws t5xx::Error
// for missing or malformed files, unsupported dtypes/compressors/filters/order
// and chunk size mismatches.
LoadedArray ReadZarrArray(
    const std::filesystem::path& dir, const std::string& at,
    std::optional<DType> spec_dtype,
    const std::optional<std::vector<int64_t>>& spec_shape);

}  // namespace t5xx::checkpoints
