// Orbax checkpoints: the state/ OCDBT database listed as zarr v2 arrays.
#include "t5xx/checkpoints/orbax/orbax_checkpoint.h"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <limits>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/orbax/ocdbt_writer.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/system/parallel_for.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace t5xx::checkpoints {

namespace {

constexpr char kStepName[] = "state.step";

// An array's keys in the database: "<name>/.zarray", "<name>/<chunk key>".
class OcdbtChunkStore : public ZarrChunkStore {
 public:
  OcdbtChunkStore(const OcdbtReader& store, const std::string& name)
      : store_(store), prefix_(name + "/") {}
  bool Has(const std::string& key) const override { return store_.Contains(prefix_ + key); }
  std::vector<uint8_t> Get(const std::string& key) const override {
    return store_.Read(prefix_ + key);
  }
  std::string Name(const std::string& key) const override {
    return store_.Describe(prefix_ + key);
  }

 private:
  const OcdbtReader& store_;
  std::string prefix_;
};

// The arrays state/_METADATA says were saved ('.'-joined key paths of the
// leaves whose values live in the database).
std::set<std::string> ArraysInTreeMetadata(const fs::path& file) {
  std::set<std::string> names;
  const std::vector<uint8_t> raw = ReadFile(file, "Orbax tree metadata");
  json meta;
  std::string error;
  if (!ParseJson(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()), &meta,
                 &error)) {
    throw Error("malformed Orbax tree metadata " + file.string() + ": " + error);
  }
  try {
    for (const auto& [tuple, leaf] : meta.at("tree_metadata").items()) {
      const std::string type = leaf.at("value_metadata").at("value_type").get<std::string>();
      if (leaf.at("value_metadata").value("skip_deserialize", false)) continue;
      if (type != "jax.Array" && type != "np.ndarray" && type != "scalar") continue;
      std::string name;
      for (const json& k : leaf.at("key_metadata")) {
        name += (name.empty() ? "" : ".") + (k.at("key").is_string()
                                                 ? k.at("key").get<std::string>()
                                                 : k.at("key").dump());
      }
      names.insert(name);
    }
  } catch (const json::exception& e) {
    throw Error("malformed Orbax tree metadata " + file.string() + ": " + e.what());
  }
  return names;
}

}  // namespace

bool IsOrbaxCheckpoint(const fs::path& checkpoint_dir) {
  std::error_code ec;
  return !fs::exists(checkpoint_dir / "checkpoint", ec) &&
         fs::is_regular_file(checkpoint_dir / kOrbaxStateItem / "manifest.ocdbt", ec);
}

OrbaxListing ListOrbaxCheckpoint(const fs::path& checkpoint_dir, const ChunkChecksums* sums) {
  const fs::path state = checkpoint_dir / kOrbaxStateItem;
  std::error_code ec;
  auto store = std::make_shared<const OcdbtReader>(state);
  OrbaxListing out;
  out.listing.version = 3;  // t5x's format version of the arrays' layout
  std::set<std::string> with_chunks;
  for (const auto& [key, value] : store->entries()) {
    const size_t slash = key.find('/');
    const std::string name = key.substr(0, slash);
    const std::string rest = slash == std::string::npos ? "" : key.substr(slash + 1);
    const bool v3 = rest == "zarr.json";
    if (rest != ".zarray" && !v3) {
      if (rest.empty() || name.empty()) {
        throw Error(store->Describe(key) + ": not an array key ('<name>/.zarray', "
                    "'<name>/zarr.json' or '<name>/<chunk>'); this is not a t5x checkpoint "
                    "written by Orbax");
      }
      with_chunks.insert(name);
      continue;
    }
    if (out.listing.entries.count(name)) {
      throw Error(store->Describe(key) + ": array '" + name +
                  "' has both zarr v2 (.zarray) and zarr v3 (zarr.json) metadata");
    }
    const std::vector<uint8_t> raw = store->Read(key);
    const std::string_view text(reinterpret_cast<const char*>(raw.data()), raw.size());
    IndexEntry e;
    if (v3) {
      ZarrV3Layout layout = ParseZarrV3Metadata(text, store->Describe(key));
      e.zarr = layout.meta;
      out.zarr3.emplace(name, std::move(layout));
    } else {
      e.zarr = ParseZarrMetadata(text, store->Describe(key), std::nullopt, std::nullopt);
    }
    e.dtype = e.zarr->dtype;
    e.shape = e.zarr->shape;
    e.zarr_rel = name;
    out.listing.entries.emplace(name, std::move(e));
  }
  for (const std::string& name : with_chunks) {
    if (!out.listing.entries.count(name)) {
      throw Error(store->Describe(name + "/…") + ": chunks of an array '" + name +
                  "' without its metadata ('" + name + "/.zarray' or '" + name +
                  "/zarr.json'); the checkpoint is damaged");
    }
  }
  // Orbax cannot restore without it (FileNotFoundError "Metadata file
  // (named _METADATA) does not exist"): the checkpoint is incomplete.
  if (!fs::exists(state / "_METADATA", ec)) {
    throw Error((state / "_METADATA").string() +
                " is missing: the Orbax checkpoint is incomplete (Orbax cannot restore it "
                "either); restore an earlier checkpoint or copy the file back");
  }
  for (const std::string& name : ArraysInTreeMetadata(state / "_METADATA")) {
    if (!out.listing.entries.count(name)) {
      throw Error((state / "_METADATA").string() + " lists array '" + name +
                  "', but " + (state / "manifest.ocdbt").string() +
                  " has no metadata of it ('" + name + "/.zarray' or '" + name +
                  "/zarr.json'); the checkpoint is incomplete");
    }
  }
  out.store = std::move(store);
  const auto step = out.listing.entries.find(kStepName);
  if (step != out.listing.entries.end()) {
    const LoadedArray a =
        ReadOrbaxArray(out, kStepName, *step->second.zarr, std::nullopt, nullptr, sums);
    out.listing.step = ScalarToInt(a, out.store->Describe(std::string(kStepName) + "/…"));
    out.listing.entries.erase(step);
  }
  return out;
}

LoadedArray ReadOrbaxArray(const OrbaxListing& orbax, const std::string& name,
                           const ZarrMetadata& meta, const std::optional<Box>& box,
                           uint64_t* bytes_read, const ChunkChecksums* sums) {
  const OcdbtChunkStore chunks(*orbax.store, name);
  const std::string where = orbax.store->Describe(name + "/…");
  const auto v3 = orbax.zarr3.find(name);
  if (v3 == orbax.zarr3.end()) {
    return ReadZarrRegionFrom(chunks, where, name, meta, box, sums, name, bytes_read);
  }
  const ZarrV3ChunkStore inner(chunks, v3->second);
  return ReadZarrRegionFrom(inner, where, name, meta, box, nullptr, "", bytes_read);
}

namespace {

std::string ProcessDatabase(int index) { return "ocdbt.process_" + std::to_string(index); }

// Python's str() of a tuple of strings: "('target', 'decoder', 'x')".
std::string PythonTuple(const std::vector<std::string>& parts) {
  std::string s = "(";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", '" : "'") + parts[i] + "'";
  return s + (parts.size() == 1 ? ",)" : ")");
}

std::vector<std::string> SplitDots(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

std::string OrbaxTreeMetadataJson(const std::vector<std::string>& names) {
  json tree = json::object();
  for (const std::string& name : names) {
    const std::vector<std::string> parts = SplitDots(name);
    json keys = json::array();
    for (const std::string& p : parts) keys.push_back({{"key", p}, {"key_type", 2}});
    tree[PythonTuple(parts)] = {
        {"key_metadata", keys},
        {"value_metadata", {{"value_type", "np.ndarray"}, {"skip_deserialize", false}}}};
  }
  return json{{"tree_metadata", tree}, {"use_zarr3", false}}.dump();
}

ChunkChecksums WriteOrbaxPart(const fs::path& checkpoint_dir, const std::vector<ArrayRef>& arrays,
                    const std::vector<std::vector<int64_t>>& chunks, const ZarrCodec& codec,
                    int64_t step, int process_index, int num_threads) {
  OcdbtWriter db(checkpoint_dir / kOrbaxStateItem / ProcessDatabase(process_index));
  std::vector<size_t> order;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const bool writes = arrays[i].store_inline ? process_index == 0 : arrays[i].write;
    if (writes) order.push_back(i);
  }
  std::vector<ChunkChecksums> array_sums(order.size());
  ParallelFor(order.size(), num_threads, [&](size_t k) {
    const ArrayRef& a = arrays[order[k]];
    const std::vector<int64_t> c = a.store_inline ? ChunkShapeFor(a, 0) : chunks[order[k]];
    EncodeZarrArray(a, c, codec, [&](const std::string& key, const uint8_t* data, size_t size) {
      db.Put(a.path + "/" + key, data, size);
      if (key != ".zarray") array_sums[k][a.path + "/" + key] = Crc32c(data, size);
    });
  });
  ChunkChecksums sums;
  for (const ChunkChecksums& a : array_sums) sums.insert(a.begin(), a.end());
  if (process_index == 0) {
    const bool small = step >= std::numeric_limits<int32_t>::min() &&
                       step <= std::numeric_limits<int32_t>::max();
    const int32_t step32 = static_cast<int32_t>(step);
    ArrayRef s{std::string(kStepName), small ? DType::kInt32 : DType::kInt64, {}, nullptr};
    s.data = small ? static_cast<const void*>(&step32) : static_cast<const void*>(&step);
    EncodeZarrArray(s, {}, codec, [&](const std::string& key, const uint8_t* data, size_t size) {
      db.Put(s.path + "/" + key, data, size);
      if (key != ".zarray") sums[s.path + "/" + key] = Crc32c(data, size);
    });
  }
  db.Finish();
  return sums;
}

void CommitOrbaxState(const fs::path& checkpoint_dir, const std::vector<ArrayRef>& arrays,
                      int process_count, int64_t init_time_ns) {
  const fs::path state = checkpoint_dir / kOrbaxStateItem;
  std::vector<std::string> children;
  for (int i = 0; i < process_count; ++i) children.push_back(ProcessDatabase(i));
  MergeOcdbtDatabases(state, children);
  std::vector<std::string> names{kStepName};
  for (const ArrayRef& a : arrays) names.push_back(a.path);
  std::sort(names.begin(), names.end());
  const std::string meta = OrbaxTreeMetadataJson(names);
  WriteFile(state / "_METADATA", meta.data(), meta.size());
  SyncDir(state);
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::string step_meta =
      json{{"init_timestamp_nsecs", init_time_ns}, {"commit_timestamp_nsecs", now}}.dump();
  WriteFile(checkpoint_dir / "_CHECKPOINT_METADATA", step_meta.data(), step_meta.size());
}

}  // namespace t5xx::checkpoints
