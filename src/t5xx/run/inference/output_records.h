// What an output of infer or eval was made with, so that a rerun with other
// settings never mixes its results with older ones. t5x resumes by name
// alone: infer by chunk number (a rerun with another batch_size or
// checkpoint_period then cuts the examples differently and duplicates or
// drops some: issue 32), eval by the list of evaluated checkpoints
// (eval.<task>.ckpt, so a rerun with another split skips checkpoints
// evaluated on the old one).
// A record is JSON:
//   {"t5xx_infer_chunk": 1, "examples": [first, end), "cut": {"batch_size",
//    "checkpoint_period"}, "settings": {name: value}, "examples_md5": hex}
// t5xx writes one into each infer chunk's .COMPLETED marker and the merged
// file's (t5x's markers are empty; only their existence counts there), and
// beside eval's list (eval.<task>.ckpt.settings.json). `examples` are
// indices into the task's examples of this shard, in order (eval: none);
// `settings` are what decides the results (OutputSettings); `examples_md5`
// (a chunk's) is ExamplesMd5 of the examples it holds, so that a chunk made
// before the data changed is not reused (absent in older markers: not
// compared).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::run {

struct LoadedTrainConfig;

struct OutputRecord {
  int64_t first = 0;  // the first example's index
  int64_t end = 0;    // one past the last
  int64_t batch_size = 0;
  int64_t checkpoint_period = 0;
  std::map<std::string, std::string> settings;
  std::string examples_md5;  // "" = not recorded
};

// MD5 (hex) of the examples' features in order: each feature's name, kind
// (text or tokens) and value, length-prefixed so that no two lists of
// examples give the same bytes.
std::string ExamplesMd5(const std::vector<seqio::Example>& examples);

// The marker's text.
std::string OutputRecordJson(const OutputRecord& r);

// The record in marker `path`; nullopt for an empty marker (t5x's, or one
// written before t5xx kept records). Throws t5xx::Error naming `path` for a
// marker that is neither.
std::optional<OutputRecord> ReadOutputRecord(const std::string& path);

// What decides a command's results: the operative gin values but those
// whose keys end with one of `skip` (settings that only cut or name the
// output), and the --data_dir.
std::map<std::string, std::string> OutputSettings(const LoadedTrainConfig& loaded,
                                                  const std::vector<std::string>& skip);

// Why output `name`, recorded as `old`, cannot stand for `wanted`: "" when it
// can. Names the first setting that differs ("it was written with
// t5x.utils.DatasetConfig.split = 'train'; this run has 'validation'") or
// how each cut the examples, or that the examples differ (both records have
// examples_md5 and they differ). `compare_range`: false for a merged file,
// whose examples are counted only once they are all read.
std::string OutputRecordMismatch(const std::string& name, const OutputRecord& old,
                                 const OutputRecord& wanted, bool compare_range = true);

}  // namespace t5xx::run
