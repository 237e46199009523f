// Writes TensorStore OCDBT databases as Orbax lays them out for a
// checkpoint: each process writes its own database (values appended to one
// data file, then a B+tree leaf node and a manifest), and the committing
// process writes the root database whose leaf node refers to the
// processes' data files through their paths (orbax's
// merge_ocdbt_per_process_files: state/ocdbt.process_<i>/ under state/).
// Nodes and manifests are written uncompressed (compression_method 0, which
// TensorStore and Orbax read); one leaf node holds every key (at most
// kOcdbtMaxNodeBytes of keys and inline values). Framework-free.
// Source: TensorStore's OCDBT specification (index.rst, v0.1.65);
// docs/notes/orbax_ocdbt_format.md §9 (what Orbax 0.6.4 restores).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "t5xx/checkpoints/orbax/ocdbt_reader.h"

namespace t5xx::checkpoints {

// Orbax's settings (type_handlers add_ocdbt_write_options): values up to
// this size are stored in the leaf node, larger ones in the data file.
inline constexpr uint64_t kOcdbtMaxInlineValueBytes = 1024;
inline constexpr uint64_t kOcdbtMaxNodeBytes = 100000000;

class OcdbtWriter {
 public:
  // Starts a database in `root` (made; it must hold no manifest.ocdbt):
  // values go to one new data file root/d/<32 hex digits>. Throws
  // t5xx::Error naming the file on I/O failure.
  explicit OcdbtWriter(const std::filesystem::path& root);
  ~OcdbtWriter();
  OcdbtWriter(const OcdbtWriter&) = delete;
  OcdbtWriter& operator=(const OcdbtWriter&) = delete;

  // Stores `key` (safe to call from several threads). Throws t5xx::Error
  // for a key given twice and on I/O failure.
  void Put(const std::string& key, const void* data, size_t size);
  // Appends the leaf node, fsyncs the data file, writes manifest.ocdbt and
  // fsyncs it and the directories. Throws t5xx::Error naming the file.
  void Finish();

 private:
  std::filesystem::path root_;
  std::string data_file_;  // relative to root_
  int fd_ = -1;
  uint64_t size_ = 0;
  std::mutex mu_;
  std::map<std::string, OcdbtValue> values_;  // out-of-line ones: in data_file_
};

// Writes database `root`'s manifest and a root leaf node (in a new data file
// root/d/<hex>) listing every key of the databases `children` (directories
// relative to root, e.g. "ocdbt.process_0", each written by OcdbtWriter or
// Orbax) and referring to their values where they lie. Throws t5xx::Error
// for a key two children hold and for what OcdbtReader refuses.
void MergeOcdbtDatabases(const std::filesystem::path& root,
                         const std::vector<std::string>& children);

}  // namespace t5xx::checkpoints
