// The commit of a checkpoint several processes write together (t5x: "each
// host writes its own slices"), coordinated through files in the temporary
// directory only -- never collectives, so it runs on the background save
// threads. Process i > 0, once its chunks and extra files are written and
// fsync'ed, writes its part of the checksums (t5xx_checksums-<i>-of-<n>.json)
// and last a done-marker (t5xx_done-<i>-of-<n>), or, when its writing
// failed, t5xx_failed-<i>-of-<n> holding the error. Process 0 waits
// (bounded) for every marker, merges the checksums, removes the parts and
// markers, then writes the index and commits (checkpoints.cc).
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "t5xx/checkpoints/zarr_array.h"

namespace t5xx::checkpoints {

// "t5xx_done-002-of-004" for kind "done" (kinds: done, failed, checksums;
// checksums ends in ".json").
std::string PartFileName(const std::string& kind, int index, int count);

// Process `index` > 0: writes its checksums part and then its done-marker
// into `tmp_dir`, each fsync'ed, and fsyncs the directory. Throws
// t5xx::Error naming the file on I/O failure.
void FinishPart(const std::filesystem::path& tmp_dir, int index, int count,
                const ChunkChecksums& sums);

// Process `index` > 0 failed to write its part: leaves `message` in
// t5xx_failed-<i>-of-<n> for process 0 to report (best effort: errors are
// ignored).
void ReportFailedPart(const std::filesystem::path& tmp_dir, int index, int count,
                      const std::string& message) noexcept;

// Process 0: waits up to `wait_seconds` for the done-markers of processes
// 1..count-1, then returns their merged checksums and removes their parts
// and markers. Throws t5xx::Error naming each process that failed (with its
// error) or left no marker in time -- or by the time `cancel` (when given)
// became true (the run is ending: a dead process must not hold it up).
ChunkChecksums CollectParts(const std::filesystem::path& tmp_dir, int count,
                            double wait_seconds, const std::atomic<bool>* cancel = nullptr);

}  // namespace t5xx::checkpoints
