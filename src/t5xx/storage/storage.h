// Files wherever they live -- local paths, file://, gs://, s3:// -- through
// one set of calls (the role tf.io.gfile plays for t5x and seqio). Local
// paths use the file system; URLs go to their bucket's driver
// (object_store.h). Object stores have no directories: a "directory" is a
// prefix with objects under it, made by writing them. Framework-free.
//
// Errors throw t5xx::Error naming the path or URL and what failed (never a
// credential): a scheme t5xx does not know, a missing bucket, refused
// credentials, a store down past the retry budget (http_client.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "t5xx/storage/url.h"

namespace t5xx::storage {

// The whole file; nullopt when it does not exist (a directory is an error).
std::optional<std::string> ReadIfExists(const std::string& path);
// The whole file. Throws t5xx::Error "cannot read <what> <path>: it does
// not exist" when missing.
std::string ReadFile(const std::string& path, const std::string& what);
// Bytes [offset, offset + length), which must lie inside the file: a
// shorter answer throws, naming `what`, the path and the sizes.
std::string ReadRange(const std::string& path, uint64_t offset, uint64_t length,
                      const std::string& what);

// Creates or replaces the file with `data`; readers see the old file or the
// new one, never a part (local: a temporary in the same directory, fsync,
// rename; parents are created. Object stores: one PUT or a multipart
// upload, which become visible whole).
void WriteFile(const std::string& path, std::string_view data);

// The file's size in bytes; nullopt when it does not exist.
std::optional<uint64_t> FileSize(const std::string& path);
// A local directory, or a prefix with at least one object under "path/".
bool IsDirectory(const std::string& path);
// A file, or a directory as above.
bool Exists(const std::string& path);

// The names (not paths) of the entries directly inside `path`, sorted; a
// sub-directory's name has no trailing '/'. Empty when it does not exist.
std::vector<std::string> ListDirectory(const std::string& path);

// tf.io.gfile.glob: the paths matching `pattern` (*, ?, [...] within one
// path segment), sorted and de-duplicated. A pattern without wildcards
// matches itself when it exists.
std::vector<std::string> Glob(const std::string& pattern);

// Deletes the file (no error when missing).
void DeleteFile(const std::string& path);
// Deletes the directory and everything under it (no error when missing).
void DeleteRecursively(const std::string& path);
// Local: mkdir -p. Object stores: nothing (prefixes need no creation).
void MakeDirs(const std::string& path);

}  // namespace t5xx::storage
