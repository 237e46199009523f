// zarr v3 metadata and sharded chunks (see zarr_v3.h).
#include "t5xx/checkpoints/orbax/zarr_v3.h"

#include <nlohmann/json.hpp>

#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/little_endian.h"

namespace t5xx::checkpoints {
using json = nlohmann::json;

namespace {

constexpr uint64_t kMissing = ~uint64_t{0};

// A codec chain [bytes{endian: little}, (zstd|gzip)?] as a v2 compressor
// (null when there is none). Throws naming `source` otherwise.
json CompressorOf(const json& codecs, const std::string& source, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Error(source + ": " + why + " in " + what +
                 " is not supported (t5xx reads the codecs [bytes (little-endian), then "
                 "optionally zstd or gzip], what Orbax writes)");
  };
  auto name_of = [](const json& c) {
    return c.is_object() ? c.value("name", std::string("?")) : std::string("?");
  };
  if (!codecs.is_array() || codecs.empty() || codecs.size() > 2) {
    std::string names;
    for (const json& c : codecs.is_array() ? codecs : json::array()) {
      names += (names.empty() ? "'" : ", '") + name_of(c) + "'";
    }
    throw bad("the codec list [" + names + "]");
  }
  const json& first = codecs[0];
  if (name_of(first) != "bytes") throw bad("codec '" + name_of(first) + "'");
  if (first.contains("configuration") &&
      first["configuration"].value("endian", std::string("little")) != "little") {
    throw bad("big-endian bytes");
  }
  if (codecs.size() == 1) return nullptr;
  const std::string name = name_of(codecs[1]);
  if (name != "zstd" && name != "gzip") throw bad("codec '" + name + "'");
  return json{{"id", name}, {"level", 1}};
}

}  // namespace

ZarrV3Layout ParseZarrV3Metadata(std::string_view text, const std::string& source) {
  json meta;
  std::string parse_error;
  if (!ParseJson(text, &meta, &parse_error)) {
    throw Error("malformed zarr metadata " + source + ": " + parse_error);
  }
  ZarrV3Layout out;
  try {
    if (meta.value("zarr_format", 0) != 3 || meta.value("node_type", "") != "array") {
      throw Error(source + ": not a zarr v3 array (zarr_format 3, node_type 'array')");
    }
    const json& grid = meta.at("chunk_grid");
    if (grid.value("name", "") != "regular") {
      throw Error(source + ": chunk_grid '" + grid.value("name", std::string("?")) +
                  "' is not supported (only 'regular')");
    }
    const json& keys = meta.value("chunk_key_encoding", json{{"name", "default"}});
    if (keys.value("name", "") != "default" ||
        (keys.contains("configuration") &&
         keys["configuration"].value("separator", std::string("/")) != "/")) {
      throw Error(source + ": chunk_key_encoding " + DumpJson(keys) +
                  " is not supported (only 'default' with '/')");
    }
    const json& codecs = meta.at("codecs");
    json v2 = {{"zarr_format", 2}, {"order", "C"}, {"filters", nullptr},
               {"dimension_separator", "/"}, {"shape", meta.at("shape")},
               {"fill_value", meta.value("fill_value", json())}};
    const std::string dtype = meta.at("data_type").get<std::string>();
    const std::optional<DType> dt = DTypeFromName(dtype);
    if (!dt) {
      throw Error(source + ": data_type '" + dtype +
                  "' is not supported (float32, bfloat16, int32, int64)");
    }
    v2["dtype"] = ZarrDTypeName(*dt);
    const json outer = grid.at("configuration").at("chunk_shape");
    if (codecs.is_array() && codecs.size() == 1 &&
        codecs[0].value("name", "") == "sharding_indexed") {
      const json& c = codecs[0].at("configuration");
      out.sharded = true;
      v2["chunks"] = c.at("chunk_shape");
      v2["compressor"] = CompressorOf(c.at("codecs"), source, "the shards' inner chunks");
      const std::string at = c.value("index_location", std::string("end"));
      if (at != "end" && at != "start") throw Error(source + ": index_location '" + at + "'");
      out.index_at_end = at == "end";
      const json& index = c.at("index_codecs");
      out.index_crc32c = index.is_array() && index.size() == 2 &&
                         index[1].value("name", "") == "crc32c";
      if (index.is_array() && index.size() == 2 && !out.index_crc32c) {
        throw Error(source + ": index codec '" + index[1].value("name", std::string("?")) +
                    "' is not supported (only crc32c)");
      }
      CompressorOf(json::array({index[0]}), source, "the shard index");
    } else {
      v2["chunks"] = outer;
      v2["compressor"] = CompressorOf(codecs, source, "the array's chunks");
    }
    out.meta = ParseZarrMetadata(v2.dump(), source, std::nullopt, std::nullopt);
    out.shard_shape = out.meta.chunks;
    if (out.sharded) {
      // The stored chunk: checked against the inner chunks it is made of.
      const ZarrMetadata shard = ParseZarrMetadata(
          json{{"zarr_format", 2}, {"dtype", v2["dtype"]}, {"shape", v2["shape"]},
               {"chunks", outer}, {"compressor", nullptr}}.dump(),
          source, std::nullopt, std::nullopt);
      out.shard_shape = shard.chunks;
      for (size_t d = 0; d < out.shard_shape.size(); ++d) {
        if (out.shard_shape[d] % out.meta.chunks[d] != 0) {
          throw Error(source + ": the inner chunks " + ShapeString(out.meta.chunks) +
                      " do not divide the shards " + ShapeString(out.shard_shape));
        }
      }
    }
  } catch (const json::exception& e) {
    throw Error("malformed zarr metadata " + source + ": " + e.what());
  }
  return out;
}

ZarrV3ChunkStore::ZarrV3ChunkStore(const ZarrChunkStore& stored, const ZarrV3Layout& layout)
    : stored_(stored), layout_(layout) {
  for (size_t d = 0; d < layout_.shard_shape.size(); ++d) {
    inner_per_shard_ *= static_cast<uint64_t>(layout_.shard_shape[d] / layout_.meta.chunks[d]);
  }
}

std::pair<std::string, uint64_t> ZarrV3ChunkStore::Locate(const std::string& key) const {
  const size_t rank = layout_.meta.shape.size();
  std::vector<int64_t> g;
  if (rank > 0) {
    size_t start = 0;
    while (true) {
      const size_t slash = key.find('/', start);
      g.push_back(std::stoll(key.substr(start, slash - start)));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
  }
  std::string stored = "c";
  uint64_t inner = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t per_shard = layout_.shard_shape[d] / layout_.meta.chunks[d];
    stored += "/" + std::to_string(g[d] / per_shard);
    inner = inner * static_cast<uint64_t>(per_shard) + static_cast<uint64_t>(g[d] % per_shard);
  }
  return {stored, inner};
}

std::pair<uint64_t, uint64_t> ZarrV3ChunkStore::Entry(const std::string& shard_key,
                                                      uint64_t inner) const {
  if (cached_key_ != shard_key) {
    cached_ = stored_.Get(shard_key);
    cached_key_ = shard_key;
  }
  const uint64_t count = inner_per_shard_;
  const uint64_t index_bytes = count * 16 + (layout_.index_crc32c ? 4 : 0);
  const std::string name = stored_.Name(shard_key);
  if (index_bytes > cached_.size()) {
    throw Error("zarr v3 shard " + name + " has " + std::to_string(cached_.size()) +
                " bytes, less than its index of " + std::to_string(index_bytes) +
                "; it is truncated");
  }
  const uint8_t* index = cached_.data() + (layout_.index_at_end ? cached_.size() - index_bytes : 0);
  if (layout_.index_crc32c) {
    const uint32_t stored = LoadLittleEndian<uint32_t>(index + count * 16);
    if (Crc32c(index, count * 16) != stored) {
      throw Error("zarr v3 shard " + name + ": its index fails its CRC-32C check; it is corrupted");
    }
  }
  const uint64_t offset = LoadLittleEndian<uint64_t>(index + inner * 16);
  const uint64_t nbytes = LoadLittleEndian<uint64_t>(index + inner * 16 + 8);
  if (offset == kMissing && nbytes == kMissing) return {offset, nbytes};
  if (offset > cached_.size() || nbytes > cached_.size() - offset) {
    throw Error("zarr v3 shard " + name + ": inner chunk " + std::to_string(inner) +
                " lies at bytes " + std::to_string(offset) + "+" + std::to_string(nbytes) +
                ", outside the shard's " + std::to_string(cached_.size()) + " bytes");
  }
  return {offset, nbytes};
}

bool ZarrV3ChunkStore::Has(const std::string& key) const {
  const auto [shard, inner] = Locate(key);
  if (!stored_.Has(shard)) return false;
  return !layout_.sharded || Entry(shard, inner).second != kMissing;
}

std::vector<uint8_t> ZarrV3ChunkStore::Get(const std::string& key) const {
  const auto [shard, inner] = Locate(key);
  if (!layout_.sharded) return stored_.Get(shard);
  const auto [offset, nbytes] = Entry(shard, inner);
  return std::vector<uint8_t>(cached_.begin() + static_cast<std::ptrdiff_t>(offset),
                              cached_.begin() + static_cast<std::ptrdiff_t>(offset + nbytes));
}

std::string ZarrV3ChunkStore::Name(const std::string& key) const {
  const auto [shard, inner] = Locate(key);
  return stored_.Name(shard) + (layout_.sharded ? " (inner chunk " + std::to_string(inner) + ")"
                                                : std::string());
}

}  // namespace t5xx::checkpoints
