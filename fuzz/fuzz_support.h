// Shared support of the fuzz targets (fuzz/*_fuzzer.cc): a per-process
// scratch directory the readers' input files are written to, the splitting
// of one fuzz input into several files, and the contract every target
// checks.
//
// The contract (issue 17): a reader given any bytes either succeeds or
// throws t5xx::Error whose message names the file it was reading. Any other
// exception (std::bad_alloc, std::out_of_range, a JSON library exception),
// a t5xx::Error that does not name the file, a sanitizer report, a leak or a
// hang is a fault: ExpectNamedError aborts, so libFuzzer and the seed-corpus
// replay (replay_main.cc) both report it with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace t5xx::fuzz {

// The separator between the files of one multi-file input (the zarr, task
// cache and gin targets): a line holding only "%%".
inline constexpr std::string_view kPartSeparator = "\n%%\n";

// The input's bytes from `skip` on (the option bytes some targets read
// first are skipped), as text; `skip` <= size.
inline std::string_view InputBytes(const uint8_t* data, size_t size, size_t skip = 0) {
  return std::string_view(reinterpret_cast<const char*>(data) + skip, size - skip);
}

// Reports a fault that is not an exception (a result breaking the reader's
// contract) and aborts.
[[noreturn]] void Fault(const std::string& what);

// Splits `data` at kPartSeparator into at most `max_parts` parts (the last
// part keeps any further separators).
std::vector<std::string> SplitParts(const uint8_t* data, size_t size, size_t max_parts);

// A directory of this process's own under $TMPDIR (or /dev/shm when it
// exists, as that is faster), created on first use and removed at exit.
const std::string& ScratchDir();

// Writes `bytes` to ScratchDir()/`name` (parents created), replacing it;
// returns the path. `name` is a fixed name chosen by the target.
std::string WriteScratchFile(const std::string& name, std::string_view bytes);

// As WriteScratchFile, but returns false instead of aborting when the file
// cannot be written (a name the input chose that collides with a folder).
bool TryWriteScratchFile(const std::string& name, std::string_view bytes);

// Removes everything under ScratchDir() (between inputs).
void ClearScratchDir();

// Called with the message of a t5xx::Error thrown by the reader: aborts
// (a fault) unless it contains every one of `names` (e.g. the file's path).
void ExpectNamedError(const std::string& message, const std::vector<std::string>& names);

// As ExpectNamedError, but one of `names` is enough (an error may name any
// of the files or flags a configuration came from).
void ExpectNamedErrorAny(const std::string& message, const std::vector<std::string>& names);

// Part `i` of a multi-file input, "" when the input has fewer parts.
inline const std::string& Part(const std::vector<std::string>& parts, size_t i) {
  static const std::string kEmpty;
  return i < parts.size() ? parts[i] : kEmpty;
}

}  // namespace t5xx::fuzz
