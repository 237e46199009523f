// MODEL_DIR in a bucket: staging, reconciliation and publication (see
// bucket_model_dir.h).
#include "t5xx/checkpoints/bucket_model_dir.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <set>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/orbax/orbax_checkpoint.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

namespace {

constexpr char kLegacyMarker[] = "checkpoint";
constexpr char kOrbaxMarker[] = "commit_success.txt";
// checkpoint_<N>.t5xx-incomplete, beside checkpoint_<N>/ while t5xx uploads
// or deletes it: a prefix without a commit marker is deleted at start-up
// only when this says t5xx left it (never another program's checkpoint).
// t5x's all_steps (regex checkpoint_(\d+)$) and Orbax's step listing skip
// the name.
constexpr char kIncompleteSuffix[] = ".t5xx-incomplete";

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// The step of a checkpoint directory's name ("checkpoint_12"), else nullopt.
std::optional<int64_t> StepOfName(const std::string& name) {
  static const std::regex re("checkpoint_(0|[1-9][0-9]{0,17})");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  return std::stoll(m[1]);
}

// Copies the tree `from` to `to` (hard links where the file system allows:
// the object cache and the staging directory share it).
void LinkTree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  T5XX_CHECK(!ec, "cannot create " + to.string() + ": " + ec.message());
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path target = to / fs::relative(it->path(), from);
    if (it->is_directory()) {
      fs::create_directories(target, ec);
    } else {
      std::error_code link_ec;
      fs::create_hard_link(it->path(), target, link_ec);
      if (link_ec) fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, ec);
    }
    T5XX_CHECK(!ec, "cannot copy " + it->path().string() + " to " + target.string() + ": " + ec.message());
  }
  T5XX_CHECK(!ec, "cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
}

// Whether `rel` (relative to MODEL_DIR) lies in a checkpoint directory, a
// temporary one, or is a .t5xx-incomplete marker: what the commit protocol
// handles, not the plain file sync.
bool IsCheckpointEntry(const std::string& rel) {
  const std::string top = rel.substr(0, rel.find('/'));
  const std::string stem = top.substr(0, top.find('.'));
  return StepOfName(stem).has_value() || top.find(".tmp-") != std::string::npos;
}

}  // namespace

std::string BucketModelDir::IncompleteMarker(int64_t step) const {
  return storage::JoinPath(url(), "checkpoint_" + std::to_string(step) + kIncompleteSuffix);
}

void BucketModelDir::MarkIncomplete(int64_t step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!marked_incomplete_.insert(step).second) return;
  }
  storage::WriteFile(IncompleteMarker(step), "t5xx is uploading or deleting checkpoint_" + std::to_string(step));
}

void BucketModelDir::UnmarkIncomplete(int64_t step) {
  storage::DeleteFile(IncompleteMarker(step));
  std::lock_guard<std::mutex> lock(mu_);
  marked_incomplete_.erase(step);
}

BucketCheckpoints ListBucketCheckpoints(const std::string& url) {
  BucketCheckpoints out;
  const std::vector<std::string> names = storage::ListDirectory(url);
  for (const std::string& name : names) {
    const size_t dot = name.find('.');
    if (dot != std::string::npos && name.substr(dot) == kIncompleteSuffix) {
      if (const auto step = StepOfName(name.substr(0, dot))) out.incomplete_markers.insert(*step);
    }
  }
  for (const std::string& name : names) {
    const std::string remote = storage::JoinPath(url, name);
    if (name.find(".tmp-") != std::string::npos && name.rfind("checkpoint_", 0) == 0) {
      out.temporary.push_back(name);
      continue;
    }
    const std::optional<int64_t> step = StepOfName(name);
    if (!step) continue;
    if (storage::FileSize(remote + "/" + kLegacyMarker) || storage::FileSize(remote + "/" + kOrbaxMarker)) {
      out.committed.insert(*step);
    } else if (out.incomplete_markers.count(*step)) {
      out.t5xx_unfinished.insert(*step);
    } else if (storage::FileSize(remote + "/_CHECKPOINT_METADATA")) {
      out.committed.insert(*step);  // Orbax's, committed by a rename (Orbax writes commit_success.txt on GCS only)
    } else {
      out.foreign_unfinished.push_back(*step);
    }
  }
  return out;
}

std::optional<std::string> LatestCheckpointCopy(const std::string& url) {
  const BucketCheckpoints listed = ListBucketCheckpoints(url);
  if (listed.committed.empty()) return std::nullopt;
  const std::string remote = CheckpointDir(url, *listed.committed.rbegin());
  const std::optional<std::string> local = CachedCopy(remote);
  T5XX_CHECK(local.has_value(), "cannot download " + remote + ": it was deleted while being read");
  // The cached copy's parent: it may hold other cached checkpoints of the
  // same directory, but none newer than the bucket's newest committed one
  // unless the bucket lost it since; keep only this one there.
  const fs::path parent = fs::path(*local).parent_path();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::optional<int64_t> step = StepOfName(e.path().filename().string());
    if (step && *step > *listed.committed.rbegin()) fs::remove_all(e.path(), ec);
  }
  return parent.string();
}

std::string CommitMarkerOf(const std::string& checkpoint_dir) {
  return IsOrbaxCheckpoint(checkpoint_dir) ? kOrbaxMarker : kLegacyMarker;
}

BucketModelDir::BucketModelDir(const std::string& url) : uploader_(storage::StagingDir(url), url) {}

BucketModelDir::~BucketModelDir() {
  if (observer_) RemoveFileObserver(observer_);
}

void BucketModelDir::UploadWhileWriting() {
  if (observer_) return;
  observer_ = AddFileObserver(local(), [this](const fs::path& path, const void* data, size_t size) {
    // <local>/checkpoint_<N>.tmp-<stamp>/<dir>/<file> -> checkpoint_<N>/<dir>/<file>: an
    // array's file; the top-level ones (index, checksums, dataset states,
    // a sharded save's parts) are left to Publish.
    const std::string rel = path.lexically_relative(local()).generic_string();
    const size_t slash = rel.find('/');
    const size_t tmp = rel.find(".tmp-");
    if (slash == std::string::npos || tmp == std::string::npos || tmp > slash ||
        rel.find('/', slash + 1) == std::string::npos || !StepOfName(rel.substr(0, tmp))) {
      return;
    }
    MarkIncomplete(*StepOfName(rel.substr(0, tmp)));
    uploader_.UploadInBackground(rel.substr(0, tmp) + rel.substr(slash),
                                 std::string(static_cast<const char*>(data), size), path.string());
  });
}

std::vector<std::string> BucketModelDir::Reconcile() {
  std::vector<std::string> did;
  std::error_code ec;
  fs::create_directories(local(), ec);
  T5XX_CHECK(!ec, "cannot create MODEL_DIR " + url() + "'s staging directory " + local() + ": " +
                      ec.message() + "; set T5XX_OBJECT_CACHE to a writable directory");
  storage::StagingLock lock(local());
  // The bucket's checkpoints: committed (with their marker) or not.
  const BucketCheckpoints listed = ListBucketCheckpoints(url());
  for (const std::string& name : listed.temporary) {
    const std::string remote = storage::JoinPath(url(), name);
    storage::DeleteTree(remote);
    did.push_back("deleted " + remote + ": an unfinished checkpoint (never restored)");
  }
  for (int64_t step : listed.t5xx_unfinished) {
    const std::string remote = CheckpointDir(url(), step);
    storage::DeleteTree(remote);
    did.push_back("deleted " + remote + ": a checkpoint t5xx's upload (or deletion) left unfinished " +
                  "(it has no commit marker; never restored)");
  }
  for (int64_t step : listed.foreign_unfinished) {
    did.push_back("left " + CheckpointDir(url(), step) + " alone: it has no commit marker and t5xx did " +
                  "not write it (another program's checkpoint being written?); it is not restored");
  }
  for (int64_t step : listed.incomplete_markers) storage::DeleteFile(IncompleteMarker(step));
  const std::set<int64_t>& committed = listed.committed;
  // Staged checkpoints the bucket lacks were never published.
  for (int64_t step : ListCheckpointSteps(local())) {
    if (committed.count(step)) continue;
    const std::string dir = CheckpointDir(local(), step);
    const bool real = IsCheckpointDir(dir);
    fs::remove_all(dir, ec);
    T5XX_CHECK(!ec, "cannot remove " + dir + ": " + ec.message());
    if (real) did.push_back("removed the staged " + dir + ": the bucket never committed it");
  }
  if (!committed.empty()) {
    const int64_t newest = *committed.rbegin();
    const std::string dir = CheckpointDir(local(), newest);
    if (!IsCheckpointDir(dir)) {
      const std::string remote = CheckpointDir(url(), newest);
      const auto t0 = std::chrono::steady_clock::now();
      const std::optional<std::string> cached = CachedCopy(remote);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      T5XX_CHECK(cached.has_value(), "cannot download " + remote + ": it was deleted while being read");
      const std::string tmp = dir + ".tmp-download";
      fs::remove_all(tmp, ec);
      LinkTree(*cached, tmp);
      fs::remove_all(dir, ec);
      fs::rename(tmp, dir, ec);
      T5XX_CHECK(!ec, "cannot move " + tmp + " to " + dir + ": " + ec.message());
      uint64_t bytes = 0;
      for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (it->is_regular_file(ec)) bytes += it->file_size(ec);
      }
      const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
      did.push_back("downloaded " + remote + " (the bucket's latest checkpoint, " + FormatNumber(mib) + " MiB in " +
                    FormatNumber(seconds) + " s, " + FormatNumber(mib / std::max(seconds, 1e-9)) + " MiB/s) to " + dir);
    }
    for (int64_t step : committed) {
      // Older checkpoints stay in the bucket; an empty directory stands in
      // for each, so that retention (keep) counts and deletes them.
      if (step != newest) fs::create_directories(CheckpointDir(local(), step), ec);
    }
  }
  // The other files (config.gin, summaries, metrics.jsonl) as the bucket
  // has them: another machine may have appended to them, or the user
  // deleted them.
  uploader_.SyncDown(IsCheckpointEntry);
  published_bytes_ = uploader_.bytes_uploaded();
  return did;
}

std::string BucketModelDir::Publish(int64_t step, const std::vector<std::string>& deleted) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string name = "checkpoint_" + std::to_string(step);
  const std::string marker = CommitMarkerOf(CheckpointDir(local(), step));
  const std::string remote = storage::JoinPath(url(), name);
  uploader_.WaitForBackground();  // the files uploaded while they were written
  MarkIncomplete(step);
  const std::string index = name + "/" + kLegacyMarker;
  uploader_.Upload(name, {}, [&](const std::string& rel) { return rel == index; });
  // The summaries written up to this step go up before the checkpoint is
  // committed: a run resumed from it continues them without a gap.
  SyncFiles();
  if (marker == kLegacyMarker) {
    uploader_.Upload(name, {index});
  } else {
    storage::WriteFile(remote + "/" + kOrbaxMarker, "Checkpoint commit was successful to " + remote);
  }
  UnmarkIncomplete(step);
  for (const std::string& path : deleted) {
    const std::string rel = fs::path(path).lexically_relative(local()).generic_string();
    T5XX_CHECK(!rel.empty() && rel.rfind("..", 0) != 0,
               "retention deleted " + path + ", which is not in MODEL_DIR's staging directory " + local());
    if (const auto deleted_step = StepOfName(rel)) {
      MarkIncomplete(*deleted_step);
      storage::DeleteTree(storage::JoinPath(url(), rel), {kLegacyMarker, kOrbaxMarker});
      UnmarkIncomplete(*deleted_step);
    } else {
      storage::DeleteFile(storage::JoinPath(url(), rel));
    }
    uploader_.Forget(rel);
  }
  const double mib = static_cast<double>(uploader_.bytes_uploaded() - published_bytes_) / (1024.0 * 1024.0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  published_bytes_ = uploader_.bytes_uploaded();
  return "published to " + remote + " (" + FormatNumber(mib) + " MiB uploaded, " +
         (observer_ ? "most while it was written; " : "") + FormatNumber(seconds) +
         " s after the local commit)";
}

void BucketModelDir::SyncFiles() { uploader_.Upload("", {}, IsCheckpointEntry); }

}  // namespace t5xx::checkpoints
