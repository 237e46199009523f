// zarr v3 arrays as Orbax writes them with use_zarr3 = True: "zarr.json"
// metadata, chunk keys "c/<i>/<j>" ("c" for a scalar), and each stored
// chunk a shard of the sharding_indexed codec -- inner chunks (bytes codec,
// little-endian, then zstd or gzip) followed by an index of (offset, nbytes)
// uint64 pairs per inner chunk and its CRC-32C. Read into the same
// ZarrMetadata as zarr v2 (its chunks: the inner chunks) and served to
// ReadZarrRegionFrom through ZarrV3ChunkStore. Unsharded arrays (a plain
// bytes[, zstd|gzip] codec chain) are read too.
// Source: the zarr v3 specification with the sharding_indexed codec (ZEP 2)
// as TensorStore 0.1.65 writes it for orbax-checkpoint 0.6.4
// (docs/notes/orbax_ocdbt_format.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "t5xx/checkpoints/zarr_array.h"

namespace t5xx::checkpoints {

struct ZarrV3Layout {
  ZarrMetadata meta;                 // chunks = the inner chunk shape
  bool sharded = false;
  std::vector<int64_t> shard_shape;  // the stored chunk's shape (sharded)
  bool index_at_end = true;
  bool index_crc32c = false;
};

// Parses and checks a zarr.json (read from `source`, named in errors).
// Throws t5xx::Error naming it for another node_type or zarr_format, an
// unsupported data_type, codec, endianness or chunk key encoding, shard
// shapes the inner chunks do not divide, and the limits of zarr_array.h.
ZarrV3Layout ParseZarrV3Metadata(std::string_view text, const std::string& source);

// Inner chunks by their key in the inner chunk grid ("i/j", "0" for a
// scalar), served from `stored` (keys "c/i/j", the array's stored chunks:
// shards when sharded). A missing shard or an index entry of all ones is
// a missing chunk (fill_value). Throws t5xx::Error naming the stored chunk
// for a truncated shard, an index failing its CRC-32C, or an entry outside
// the shard.
class ZarrV3ChunkStore : public ZarrChunkStore {
 public:
  ZarrV3ChunkStore(const ZarrChunkStore& stored, const ZarrV3Layout& layout);
  bool Has(const std::string& key) const override;
  std::vector<uint8_t> Get(const std::string& key) const override;
  std::string Name(const std::string& key) const override;

 private:
  // The stored key of inner chunk `key` and the inner chunk's index within
  // its shard (C order).
  std::pair<std::string, uint64_t> Locate(const std::string& key) const;
  // The (offset, nbytes) of an inner chunk; nbytes = ~0 when missing.
  std::pair<uint64_t, uint64_t> Entry(const std::string& shard_key, uint64_t inner) const;
  const ZarrChunkStore& stored_;
  const ZarrV3Layout& layout_;
  uint64_t inner_per_shard_ = 1;    // inner chunks in one shard (C order)
  mutable std::string cached_key_;  // the last shard read
  mutable std::vector<uint8_t> cached_;
};

}  // namespace t5xx::checkpoints
