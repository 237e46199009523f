// Checkpoint file I/O: whole-file writes and reads and directory creation,
// with errors that name the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// Creates (truncates) `path` and writes `size` bytes. Throws t5xx::Error
// naming the path if it cannot be created or written in full.
void WriteFile(const std::filesystem::path& path, const void* data,
               size_t size);
// Reads all of `path`; `what` names it in errors ("cannot read <what> ...",
// with a hint when the file is missing).
std::vector<uint8_t> ReadFile(const std::filesystem::path& path,
                              const std::string& what);
// create_directories; throws t5xx::Error naming the path on failure.
void MakeDir(const std::filesystem::path& path);

}  // namespace t5xx::checkpoints
