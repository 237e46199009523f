// The checksums sidecar of a checkpoint: t5xx_checksums.json in
// checkpoint_<step>/, the CRC-32C of every file t5xx wrote there (the
// msgpack index, each stored zarr chunk, the dataset state files). t5x's,
// TensorStore's and zarr's readers do not look at it; t5xx's reader uses it to
// detect a corrupted or truncated chunk and name it. A t5x-written
// checkpoint has none and is read unchecked.
//
//   {"format": "t5xx.checksums", "version": 1, "algorithm": "crc32c",
//    "files": {"checkpoint": "1a2b3c4d",
//              "target.encoder.layers_0.mlp.wi.kernel/0.0": "...", ...}}
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "t5xx/checkpoints/zarr_array.h"

namespace t5xx::checkpoints {

inline constexpr char kChecksumsFile[] = "t5xx_checksums.json";
inline constexpr int kChecksumsVersion = 1;

// Writes (and fsyncs) `dir`/`name` (t5xx_checksums.json, or one process's
// part of a sharded save). Throws t5xx::Error naming the file on I/O
// failure.
void WriteChecksums(const std::filesystem::path& dir, const ChunkChecksums& sums,
                    const std::string& name = kChecksumsFile);

// Reads `dir`/`name` (t5xx_checksums.json); nullopt when absent.
// Throws t5xx::Error naming the file when it is malformed or from a newer
// t5xx (version > kChecksumsVersion).
std::optional<ChunkChecksums> ReadChecksums(const std::filesystem::path& dir,
                                            const std::string& name = kChecksumsFile);

// Throws t5xx::Error ("... is corrupted ...") when `sums` lists `name` with
// a checksum other than that of `data`. `what` names the file's role.
void VerifyChecksum(const ChunkChecksums* sums, const std::string& name, const void* data,
                    size_t size, const std::filesystem::path& file, const std::string& what);

}  // namespace t5xx::checkpoints
