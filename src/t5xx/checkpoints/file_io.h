// Checkpoint file I/O: durable whole-file writes (written, fsync'ed, closed),
// whole-file reads, directory creation and directory fsync, with errors that
// name the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// Creates (truncates) `path`, writes `size` bytes and fsyncs the file, so a
// checkpoint committed after its files survives a crash of the machine.
// Throws t5xx::Error naming the path and the system's reason ("No space left
// on device", "Permission denied", ...) if it cannot be created, written in
// full or synced.
void WriteFile(const std::filesystem::path& path, const void* data,
               size_t size);
// Reads all of `path`; `what` names it in errors ("cannot read <what> ...",
// with a hint when the file is missing; also for a path that is not a
// regular file, refused without waiting on it).
std::vector<uint8_t> ReadFile(const std::filesystem::path& path,
                              const std::string& what);
// Reads bytes [offset, offset + length) of `path` (an OCDBT value or node
// inside a data file), refused as ReadFile refuses a missing or non-regular
// file, and with "... has N bytes, but ... refers to bytes OFFSET+LENGTH of
// it; the file is truncated or the reference is corrupt" when the range
// passes its end -- checked before anything is allocated.
std::vector<uint8_t> ReadFileRange(const std::filesystem::path& path, uint64_t offset,
                                   uint64_t length, const std::string& what);
// Observers of the files WriteFile writes: `fn` is called on the writing
// thread after each file under `dir` (a path prefix) is written and
// synced, with its path and bytes -- e.g. to upload it while the rest of the
// checkpoint is still being written (BucketModelDir). An exception it
// throws fails that write. Returns an id for RemoveFileObserver.
using FileWrittenFn = std::function<void(const std::filesystem::path& path, const void* data, size_t size)>;
int AddFileObserver(const std::string& dir, FileWrittenFn fn);
void RemoveFileObserver(int id);

// create_directories; throws t5xx::Error naming the path on failure.
void MakeDir(const std::filesystem::path& path);
// fsync of a directory, so that the entries created or renamed in it are
// durable. Throws t5xx::Error naming the directory on failure.
void SyncDir(const std::filesystem::path& path);

}  // namespace t5xx::checkpoints
