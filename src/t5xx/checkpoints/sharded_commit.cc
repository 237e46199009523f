// The file protocol of a checkpoint several processes write (see
// sharded_commit.h).
#include "t5xx/checkpoints/sharded_commit.h"

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "t5xx/checkpoints/checksums.h"
#include "t5xx/checkpoints/file_io.h"
#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;

std::string PartFileName(const std::string& kind, int index, int count) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "t5xx_%s-%03d-of-%03d%s", kind.c_str(), index, count,
                kind == "checksums" ? ".json" : "");
  return buf;
}

void FinishPart(const fs::path& tmp_dir, int index, int count, const ChunkChecksums& sums) {
  WriteChecksums(tmp_dir, sums, PartFileName("checksums", index, count));
  SyncDir(tmp_dir);
  // The marker last: once process 0 sees it, everything above is durable.
  const std::string done = "done";
  WriteFile(tmp_dir / PartFileName("done", index, count), done.data(), done.size());
  try {
    SyncDir(tmp_dir);
  } catch (const Error&) {
    // Process 0 may already have seen every marker and committed (renamed)
    // the directory, syncing its parent: nothing of this part is left to
    // make durable. A directory still there failed for another reason.
    std::error_code ec;
    if (fs::exists(tmp_dir, ec)) throw;
  }
}

void ReportFailedPart(const fs::path& tmp_dir, int index, int count,
                      const std::string& message) noexcept {
  try {
    WriteFile(tmp_dir / PartFileName("failed", index, count), message.data(), message.size());
  } catch (...) {
  }
}

ChunkChecksums CollectParts(const fs::path& tmp_dir, int count, double wait_seconds,
                            const std::atomic<bool>* cancel) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(wait_seconds));
  std::vector<int> waiting;
  for (int i = 1; i < count; ++i) waiting.push_back(i);
  std::vector<std::string> failed;
  bool cancelled = false;
  while (true) {
    std::vector<int> still;
    for (int i : waiting) {
      std::error_code ec;
      const fs::path bad = tmp_dir / PartFileName("failed", i, count);
      if (fs::exists(bad, ec)) {
        const std::vector<uint8_t> m = ReadFile(bad, "failure report of process " +
                                                         std::to_string(i));
        failed.push_back("process " + std::to_string(i) + " of " + std::to_string(count) +
                         " failed to write its part: " + std::string(m.begin(), m.end()));
      } else if (!fs::exists(tmp_dir / PartFileName("done", i, count), ec)) {
        still.push_back(i);
      }
    }
    waiting = std::move(still);
    if (waiting.empty() || !failed.empty() || Clock::now() >= deadline) break;
    if (cancel && cancel->load()) {
      cancelled = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!failed.empty() || !waiting.empty()) {
    std::string msg;
    for (const std::string& f : failed) msg += (msg.empty() ? "" : "; ") + f;
    if (failed.empty()) {
      std::string who;
      for (size_t k = 0; k < waiting.size(); ++k) {
        who += (k ? (k + 1 == waiting.size() ? " and " : ", ") : "") + std::to_string(waiting[k]);
      }
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%g", wait_seconds);
      msg = "process" + std::string(waiting.size() == 1 ? " " : "es ") + who + " of " +
            std::to_string(count) + " did not finish writing " +
            (waiting.size() == 1 ? "its part" : "their parts") + " of the checkpoint " +
            (cancelled ? std::string("before the run stopped") : "within " + std::string(secs) + " s") +
            " (no " + PartFileName("done", waiting.front(), count) + " in " +
            tmp_dir.string() + "; the process died or its disk is too slow)";
    }
    throw Error(msg);
  }
  ChunkChecksums sums;
  for (int i = 1; i < count; ++i) {
    const std::string name = PartFileName("checksums", i, count);
    const std::optional<ChunkChecksums> part = ReadChecksums(tmp_dir, name);
    if (!part) throw Error("process " + std::to_string(i) + " left no " + name + " in " + tmp_dir.string());
    sums.insert(part->begin(), part->end());
    std::error_code ec;
    fs::remove(tmp_dir / name, ec);
    fs::remove(tmp_dir / PartFileName("done", i, count), ec);
  }
  return sums;
}

}  // namespace t5xx::checkpoints
