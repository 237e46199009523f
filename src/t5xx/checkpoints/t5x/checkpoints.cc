// The checkpointer: checkpoint_<step> directories under MODEL_DIR, written
// through a temporary directory and a rename, listed, and loaded.
#include "t5xx/checkpoints/t5x/checkpoints.h"

#include "t5xx/checkpoints/orbax/orbax_checkpoint.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <cstdio>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/sharded_commit.h"
#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/parallel_for.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

std::string CheckpointDir(const std::string& model_dir, int64_t step) {
  return (fs::path(model_dir) / ("checkpoint_" + std::to_string(step))).string();
}

std::string DatasetStateFileName(int index, int count) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "t5xx_train_ds-%03d-of-%03d.json", index, count);
  return buf;
}

std::optional<int> DatasetStateFileCount(const std::string& file_name) {
  int index = 0, count = 0, end = 0;
  if (std::sscanf(file_name.c_str(), "t5xx_train_ds-%d-of-%d.json%n", &index, &count, &end) != 2 ||
      static_cast<size_t>(end) != file_name.size()) {
    return std::nullopt;
  }
  return count;
}

namespace {

// "checkpoint_<N>.tmp-..." and the step, for a name in MODEL_DIR.
bool IsTemporaryName(const std::string& name) {
  static const std::regex re("checkpoint_\\d+\\.tmp-.*");
  return std::regex_match(name, re);
}

void CheckExtraFiles(const std::vector<ExtraFile>& files, const std::vector<ArrayRef>& arrays) {
  std::set<std::string> taken = {"checkpoint", kChecksumsFile};
  for (const ArrayRef& a : arrays) taken.insert(a.path);
  for (const ExtraFile& f : files) {
    const bool plain = !f.name.empty() && f.name != "." && f.name != ".." &&
                       f.name.find('/') == std::string::npos;
    if (!plain || !taken.insert(f.name).second) {
      throw Error("checkpoint extra file name '" + f.name +
                  "' is not a plain file name unused by the checkpoint's own files");
    }
  }
}

// Checks that a box lies inside its array and starts at a multiple of its
// shape (so the chunks dividing it tile the array), and that an inline
// array is whole.
void CheckBox(const ArrayRef& a) {
  if (!a.box) return;
  const Box& b = *a.box;
  bool ok = b.origin.size() == a.shape.size() && b.shape.size() == a.shape.size();
  for (size_t d = 0; ok && d < a.shape.size(); ++d) {
    ok = b.origin[d] >= 0 && b.shape[d] >= 0 && b.origin[d] + b.shape[d] <= a.shape[d] &&
         (b.shape[d] == 0 || b.origin[d] % b.shape[d] == 0);
  }
  if (!ok) {
    throw Error("checkpoint array '" + a.path + "': its part at " + ShapeString(b.origin) +
                " of shape " + ShapeString(b.shape) + " is not an aligned block of its shape " +
                ShapeString(a.shape));
  }
  if (a.store_inline && b.shape != a.shape) {
    throw Error("checkpoint array '" + a.path + "' is stored inline in the index, so it must "
                "be whole (gather it first), not its part of shape " + ShapeString(b.shape));
  }
}

}  // namespace

std::string ShardedTemporaryDir(const std::string& model_dir, int64_t step, int64_t stamp) {
  return CheckpointDir(model_dir, step) + ".tmp-" + std::to_string(stamp);
}

std::string BeginShardedSave(const std::string& model_dir, int64_t step, int64_t stamp) {
  const fs::path final_dir = CheckpointDir(model_dir, step);
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    throw Error("checkpoint directory " + final_dir.string() +
                " already exists; refusing to overwrite it (delete it or "
                "save under another step)");
  }
  const fs::path tmp_dir = ShardedTemporaryDir(model_dir, step, stamp);
  MakeDir(model_dir);
  fs::remove_all(tmp_dir, ec);
  MakeDir(tmp_dir);
  SyncDir(model_dir);
  return tmp_dir.string();
}

namespace {

// The arrays checked and added to `index`; their chunk shapes. Throws
// t5xx::Error naming the array before anything is written.
std::vector<std::vector<int64_t>> IndexArrays(const std::vector<ArrayRef>& arrays,
                                              const SaveOptions& options, IndexBuilder& index) {
  std::vector<std::vector<int64_t>> chunks(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const ArrayRef& a = arrays[i];
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
    CheckBox(a);
    if (!a.store_inline) chunks[i] = ChunkShapeFor(a, options.max_chunk_bytes);
    index.Add(a, chunks[i]);
  }
  return chunks;
}

// Writes the extra files into tmp_dir, adding their checksums to `sums`.
void WriteExtraFiles(const fs::path& tmp_dir, const std::vector<ExtraFile>& extra_files,
                     ChunkChecksums& sums) {
  for (const ExtraFile& f : extra_files) {
    WriteFile(tmp_dir / f.name, f.content.data(), f.content.size());
    sums[f.name] = Crc32c(f.content.data(), f.content.size());
  }
}

// Writes this process's zarr arrays (largest first, so that the threads
// finish together) and the extra files into tmp_dir; returns their chunks'
// checksums.
ChunkChecksums WriteArrays(const fs::path& tmp_dir, const std::vector<ArrayRef>& arrays,
                           const std::vector<std::vector<int64_t>>& chunks,
                           const std::vector<ExtraFile>& extra_files, const SaveOptions& options,
                           const std::optional<int>& gzip_level) {
  std::vector<size_t> order;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (!arrays[i].store_inline && arrays[i].write) order.push_back(i);
  }
  auto held_bytes = [&](size_t i) {
    const ArrayRef& a = arrays[i];
    return NumElements(a.box ? a.box->shape : a.shape) * static_cast<int64_t>(DTypeSize(a.dtype));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return held_bytes(a) > held_bytes(b); });
  std::vector<ChunkChecksums> array_sums(arrays.size());
  ParallelFor(order.size(), options.num_threads, [&](size_t k) {
    const size_t i = order[k];
    WriteZarrArray(tmp_dir / arrays[i].path, arrays[i], chunks[i], gzip_level, &array_sums[i]);
    SyncDir(tmp_dir / arrays[i].path);
  });
  ChunkChecksums sums;
  for (const ChunkChecksums& a : array_sums) sums.insert(a.begin(), a.end());
  WriteExtraFiles(tmp_dir, extra_files, sums);
  return sums;
}

// The committing process's last steps: the index and the checksums into
// tmp_dir, then tmp_dir renamed to final_dir (the commit).
// An Orbax checkpoint has no index (`encoded_index` empty).
void CommitCheckpoint(const std::string& model_dir, const fs::path& tmp_dir,
                      const fs::path& final_dir, const std::string& encoded_index,
                      ChunkChecksums sums) {
  if (!encoded_index.empty()) {
    WriteFile(tmp_dir / "checkpoint", encoded_index.data(), encoded_index.size());
    sums["checkpoint"] = Crc32c(encoded_index.data(), encoded_index.size());
  }
  WriteChecksums(tmp_dir, sums);
  SyncDir(tmp_dir);
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    throw Error("checkpoint directory " + final_dir.string() +
                " appeared while saving; refusing to overwrite it");
  }
  fs::rename(tmp_dir, final_dir, ec);
  if (ec) {
    throw Error("cannot rename " + tmp_dir.string() + " to " + final_dir.string() + ": " +
                ec.message());
  }
  SyncDir(model_dir);
}

// A failed save's error, once its partial files are removed: what was and
// was not saved, and what is left.
std::string FailedSaveMessage(const std::string& what, const std::string& model_dir,
                              int64_t step, const fs::path& tmp_dir,
                              const std::error_code& removed) {
  const std::vector<int64_t> steps = ListCheckpointSteps(model_dir);
  return what + "; the checkpoint of step " + std::to_string(step) + " was not saved and " +
         (removed ? "its partial directory " + tmp_dir.string() + " could not be removed (" +
                        removed.message() + "; the next start removes it)"
                  : std::string("its partial files were removed")) +
         "; " +
         (steps.empty() ? std::string("there is no earlier checkpoint")
                        : "earlier checkpoints are intact (the latest is " +
                              CheckpointDir(model_dir, steps.back()) + ")") +
         "; free space or fix the permissions of " + model_dir;
}

}  // namespace

std::string SaveCheckpoint(const std::string& model_dir, int64_t step,
                           const std::vector<ArrayRef>& arrays,
                           const SaveOptions& options,
                           const std::vector<ExtraFile>& extra_files,
                           const ShardedSave& sharded) {
  const bool several = sharded.process_count > 1;
  const bool commits = sharded.process_index == 0;  // writes the index, renames
  const bool orbax = options.format == CheckpointFormat::kOrbax;
  const int64_t init_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  if (several && (sharded.process_index < 0 || sharded.process_index >= sharded.process_count ||
                  sharded.tmp_dir.empty())) {
    throw Error("sharded checkpoint save: process " + std::to_string(sharded.process_index) +
                " of " + std::to_string(sharded.process_count) +
                (sharded.tmp_dir.empty() ? " has no temporary directory" : " is out of range"));
  }
  if (options.gzip && (options.gzip_level < 0 || options.gzip_level > 9)) {
    throw Error("checkpoint gzip_level " + std::to_string(options.gzip_level) +
                " is out of range (0-9)");
  }
  // Build and validate the index tree before touching the disk.
  IndexBuilder index;
  const std::vector<std::vector<int64_t>> chunks = IndexArrays(arrays, options, index);
  CheckExtraFiles(extra_files, arrays);
  const std::optional<int> gzip_level =
      options.gzip ? std::optional<int>(options.gzip_level) : std::nullopt;

  const fs::path final_dir = CheckpointDir(model_dir, step);
  std::error_code ec;
  if (!several && fs::exists(final_dir, ec)) {
    throw Error("checkpoint directory " + final_dir.string() +
                " already exists; refusing to overwrite it (delete it or "
                "save under another step)");
  }
  const fs::path tmp_dir = several ? fs::path(sharded.tmp_dir)
                                   : fs::path(final_dir.string() + ".tmp-" +
                                              std::to_string(std::time(nullptr)));
  try {
    if (several) {
      if (!fs::is_directory(tmp_dir, ec)) {
        throw Error("the temporary directory " + tmp_dir.string() +
                    " process 0 made for this checkpoint does not exist (MODEL_DIR must be "
                    "one directory shared by every process)");
      }
    } else {
      MakeDir(model_dir);
      fs::remove_all(tmp_dir, ec);  // stale leftover of a crashed save
      MakeDir(tmp_dir);
    }
    ChunkChecksums sums;
    if (orbax) {
      sums = WriteOrbaxPart(tmp_dir, arrays, chunks,
                            ZarrCodec{options.gzip ? ZarrCompressor::kZstd : ZarrCompressor::kNone, 1},
                            step, sharded.process_index, options.num_threads);
      WriteExtraFiles(tmp_dir, extra_files, sums);
    } else {
      sums = WriteArrays(tmp_dir, arrays, chunks, extra_files, options, gzip_level);
    }
    if (several && !commits) {
      FinishPart(tmp_dir, sharded.process_index, sharded.process_count, sums);
      return final_dir.string();
    }
    if (several) {
      const ChunkChecksums others =
          CollectParts(tmp_dir, sharded.process_count, sharded.wait_seconds, sharded.cancel);
      sums.insert(others.begin(), others.end());
    }
    if (orbax) CommitOrbaxState(tmp_dir, arrays, several ? sharded.process_count : 1, init_ns);
    CommitCheckpoint(model_dir, tmp_dir, final_dir,
                     orbax ? std::string() : index.Encode(step, gzip_level), std::move(sums));
  } catch (const Error& e) {
    if (several && !commits) {
      // Process 0 owns the directory: it reports this and removes it.
      ReportFailedPart(tmp_dir, sharded.process_index, sharded.process_count, e.what());
      throw Error(std::string(e.what()) + "; process " + std::to_string(sharded.process_index) +
                  "'s part of the checkpoint of step " + std::to_string(step) +
                  " was not written (process 0 does not commit it)");
    }
    std::error_code removed;
    fs::remove_all(tmp_dir, removed);
    throw Error(FailedSaveMessage(e.what(), model_dir, step, tmp_dir, removed));
  } catch (...) {
    std::error_code ignore;
    if (several && !commits) {
      ReportFailedPart(tmp_dir, sharded.process_index, sharded.process_count, "unexpected error");
    } else {
      fs::remove_all(tmp_dir, ignore);
    }
    throw;
  }
  return final_dir.string();
}

namespace {

// The step a checkpoint holds: its state.step, else its directory's name
// (checkpoint_<N>). Throws t5xx::Error naming `index` when neither says.
int64_t StepFromName(const fs::path& dir, const std::optional<int64_t>& stored,
                     const fs::path& index) {
  if (stored) return *stored;
  std::smatch m;
  const std::string name = dir.filename().empty() ? dir.parent_path().filename().string()
                                                  : dir.filename().string();
  static const std::regex re("checkpoint_(\\d{1,18})");
  if (!std::regex_match(name, m, re)) {
    throw Error(index.string() + " has no optimizer.state.step");
  }
  return std::stoll(m[1]);
}

}  // namespace

CheckpointReader::CheckpointReader(const std::string& checkpoint_dir) : dir_(checkpoint_dir) {
  const fs::path dir(checkpoint_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error("checkpoint directory " + checkpoint_dir + " does not exist");
  }
  if (!fs::exists(dir / "checkpoint", ec) && !fs::exists(dir / kOrbaxStateItem, ec)) {
    throw Error(checkpoint_dir + " is not a checkpoint: it has neither t5x's legacy index (" +
                (dir / "checkpoint").string() + ") nor Orbax's " +
                (dir / kOrbaxStateItem / "manifest.ocdbt").string() +
                "; give a checkpoint_<N> directory");
  }
  if (!fs::exists(dir / "checkpoint", ec)) {  // then Orbax's layout (state/ exists)
    sums_ = ReadChecksums(dir);  // of the chunk values and extra files t5xx wrote
    OrbaxListing orbax = ListOrbaxCheckpoint(dir, sums_ ? &*sums_ : nullptr);
    listing_ = std::move(orbax.listing);
    orbax_ = std::make_shared<const OrbaxListing>(std::move(orbax));
    step_ = StepFromName(dir, listing_.step, orbax_->store->root() / "manifest.ocdbt");
    return;
  }
  sums_ = ReadChecksums(dir);
  if (sums_) {
    // The index itself, before trusting what it says.
    const std::vector<uint8_t> raw = ReadFile(dir / "checkpoint", "checkpoint index");
    VerifyChecksum(&*sums_, "checkpoint", raw.data(), raw.size(), dir / "checkpoint",
                   "checkpoint index");
  }
  listing_ = ListIndex(dir, checkpoint_dir);
  step_ = StepFromName(dir, listing_.step, dir / "checkpoint");
}

LoadedArray CheckpointReader::Read(const std::string& path, const std::optional<Box>& box) {
  const auto it = listing_.entries.find(path);
  if (it == listing_.entries.end()) {
    throw Error("checkpoint " + dir_ + " has no array '" + path + "'");
  }
  uint64_t read = 0;
  LoadedArray a = orbax_ ? ReadOrbaxArray(*orbax_, path, *it->second.zarr, box, &read,
                                          sums_ ? &*sums_ : nullptr)
                         : ReadEntry(it->second, path, box, sums_ ? &*sums_ : nullptr, &read);
  bytes_read_ += read;
  return a;
}

std::optional<std::string> CheckpointReader::ReadExtraFile(const std::string& name) {
  const fs::path file = fs::path(dir_) / name;
  std::error_code ec;
  // Absent: never written, or deleted by keep_dataset_checkpoints.
  if (!fs::exists(file, ec)) return std::nullopt;
  const std::vector<uint8_t> raw = ReadFile(file, "checkpoint file");
  bytes_read_ += raw.size();
  VerifyChecksum(sums_ ? &*sums_ : nullptr, name, raw.data(), raw.size(), file,
                 "checkpoint file");
  return std::string(raw.begin(), raw.end());
}

LoadedCheckpoint LoadCheckpoint(const std::string& checkpoint_dir) {
  const fs::path dir(checkpoint_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error("checkpoint directory " + checkpoint_dir + " does not exist");
  }
  CheckpointReader reader(checkpoint_dir);
  LoadedCheckpoint out;
  out.version = reader.version();
  out.step = reader.step();
  for (const auto& [path, entry] : reader.arrays()) out.arrays[path] = reader.Read(path);
  return out;
}

bool IsCheckpointDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "checkpoint", ec) || IsOrbaxCheckpoint(dir);
}

std::vector<int64_t> ListCheckpointSteps(const std::string& model_dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return steps;
  // Canonical names only (no leading zeros, at most 18 digits):
  // CheckpointDir(step) must name the directory listed.
  static const std::regex re("checkpoint_(0|[1-9][0-9]{0,17})");
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

std::vector<std::string> RemoveTemporaryCheckpoints(const std::string& model_dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return removed;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(model_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsTemporaryName(it->path().filename().string())) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  for (const fs::path& p : found) {
    fs::remove_all(p, ec);
    if (ec) {
      throw Error("cannot remove the unfinished checkpoint " + p.string() + ": " +
                  ec.message() + "; delete it by hand");
    }
    removed.push_back(p.string());
  }
  return removed;
}

std::vector<std::string> ApplyRetention(const std::string& model_dir,
                                        const RetentionPolicy& policy) {
  std::vector<std::string> deleted;
  std::vector<int64_t> steps = ListCheckpointSteps(model_dir);
  std::vector<int64_t> candidates;
  if (policy.choose_removals) {
    candidates = policy.choose_removals(steps);
  } else if (policy.keep && static_cast<int64_t>(steps.size()) > *policy.keep) {
    // Candidates: all but the newest `keep`, minus those force_keep_period
    // protects (t5x's _filter_out_force_keep_period_steps).
    for (auto it = steps.begin(); it != steps.end() - *policy.keep; ++it) {
      if (!policy.force_keep_period || *it % *policy.force_keep_period != 0) candidates.push_back(*it);
    }
  }
  if (!candidates.empty()) {
    for (int64_t s : candidates) {
      const fs::path dir = CheckpointDir(model_dir, s);
      const fs::path doomed = dir.string() + ".tmp-delete";
      std::error_code ec;
      fs::remove_all(doomed, ec);
      fs::rename(dir, doomed, ec);
      if (!ec) fs::remove_all(doomed, ec);
      if (ec) {
        throw Error("cannot delete the old checkpoint " + dir.string() +
                    " (utils.SaveCheckpointConfig.keep = " +
                    (policy.keep ? std::to_string(*policy.keep) : std::string("None")) +
                    "): " + ec.message());
      }
      deleted.push_back(dir.string());
    }
    steps = ListCheckpointSteps(model_dir);
  }
  if (policy.keep_dataset_checkpoints &&
      static_cast<int64_t>(steps.size()) > *policy.keep_dataset_checkpoints) {
    static const std::regex re("t5xx_train_ds-\\d+-of-\\d+\\.json");
    for (size_t i = 0; i + static_cast<size_t>(*policy.keep_dataset_checkpoints) < steps.size();
         ++i) {
      const fs::path dir = CheckpointDir(model_dir, steps[i]);
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!std::regex_match(it->path().filename().string(), re)) continue;
        std::error_code rec;
        fs::remove(it->path(), rec);
        if (rec) {
          throw Error("cannot delete the dataset state " + it->path().string() +
                      " (utils.SaveCheckpointConfig.keep_dataset_checkpoints = " +
                      std::to_string(*policy.keep_dataset_checkpoints) + "): " + rec.message());
        }
        deleted.push_back(it->path().string());
      }
    }
  }
  return deleted;
}

}  // namespace t5xx::checkpoints
