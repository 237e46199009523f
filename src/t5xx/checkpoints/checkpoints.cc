// The checkpointer: checkpoint_<step> directories under MODEL_DIR, written
// through a temporary directory and a rename, listed, and loaded.
#include "t5xx/checkpoints/checkpoints.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <optional>
#include <regex>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

std::string CheckpointDir(const std::string& model_dir, int64_t step) {
  return (fs::path(model_dir) / ("checkpoint_" + std::to_string(step))).string();
}

std::string SaveCheckpoint(const std::string& model_dir, int64_t step,
                           const std::vector<ArrayRef>& arrays,
                           const SaveOptions& options) {
  if (options.gzip && (options.gzip_level < 0 || options.gzip_level > 9)) {
    throw Error("checkpoint gzip_level " + std::to_string(options.gzip_level) +
                " is out of range (0-9)");
  }
  // Build and validate the index tree before touching the disk.
  IndexBuilder index;
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
    if (!a.store_inline) chunks[i] = ChunkShapeFor(a, options.max_chunk_bytes);
    index.Add(a, chunks[i]);
  }
  const std::optional<int> gzip_level =
      options.gzip ? std::optional<int>(options.gzip_level) : std::nullopt;

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
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (arrays[i].store_inline) continue;
      WriteZarrArray(tmp_dir / arrays[i].path, arrays[i], chunks[i],
                     gzip_level);
    }
    const std::string encoded = index.Encode(step, gzip_level);
    WriteFile(tmp_dir / "checkpoint", encoded.data(), encoded.size());

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
  IndexContents index = ReadIndex(dir, checkpoint_dir);
  LoadedCheckpoint out;
  out.version = index.version;
  out.arrays = std::move(index.arrays);
  if (index.step) {
    out.step = *index.step;
  } else {
    std::smatch m;
    const std::string name = dir.filename().empty()
                                 ? dir.parent_path().filename().string()
                                 : dir.filename().string();
    static const std::regex re("checkpoint_(\\d+)");
    if (!std::regex_match(name, m, re)) {
      throw Error((dir / "checkpoint").string() +
                  " has no optimizer.state.step");
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
