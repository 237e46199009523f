// A dataset prepared by TensorFlow Datasets, as it lies on disk -- what
// seqio's TfdsDataSource reads through tfds.builder(...).as_dataset(...),
// read here without TensorFlow (facts from tensorflow_datasets 4.9's
// core/{dataset_info,splits,naming}.py and the files it writes):
//
//   <data_dir>/<name>/<config>/<version>/   (or <name>/<version>/ without configs)
//     dataset_info.json   name, configName, version, fileFormat, splits:
//                         [{name, shardLengths, filepathTemplate}]
//     features.json       the feature specification (features.h)
//     <name>-<split>.tfrecord-00000-of-00002 ...  the shards
//
// Names as t5's catalog writes them: "glue/cola:2.0.0", "c4/en:3.0.*",
// "cnn_dailymail:3.4.0" (one config on disk, or none), "squad/v1.1:3.*.*".
// A version with wildcards takes the highest version on disk it matches; no
// version, the highest on disk. The data directory: seqio's override
// (t5x's --tfds_data_dir) before the source's tfds_data_dir, before
// $TFDS_DATA_DIR, before ~/tensorflow_datasets (TFDS's default).
//
// Splits as TFDS parses them: "train", "train[:10%]", "validation[100:200]",
// "train[-5%:]", "train+validation", each slice's percent boundaries
// rounded to the closest example (TFDS's default rounding, Python's round:
// half to even). Shard slices ("train[2shard:4shard]") are refused by name.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::seqio {

struct TfdsSplitInfo {
  std::string name;
  std::vector<int64_t> shard_lengths;
  int64_t num_examples = 0;
  std::vector<std::string> files;  // the shard files, in order
};

struct TfdsDataset {
  std::string name, config, version;  // config "" when the dataset has none
  std::string dir;                     // .../<name>/<config>/<version>
  std::string file_format;             // "tfrecord"
  // dataset_info.json's disableShuffling: TFDS then reads the files one
  // after another (interleave cycle length 1) to keep the examples' order.
  bool disable_shuffling = false;
  std::vector<TfdsSplitInfo> splits;
  const TfdsSplitInfo& Split(const std::string& split) const;  // throws naming the known splits
};

// The data directory a source reads (see the top): `override_dir` (the
// flag), else `source_dir`, else $TFDS_DATA_DIR, else ~/tensorflow_datasets.
std::string TfdsDataDir(const std::string& override_dir, const std::string& source_dir);

// Finds and reads dataset `tfds_name` under `data_dir`. Throws t5xx::Error
// naming the path looked for and TFDS's `tfds build` command when the
// dataset is not there, the versions there when none matches, the configs
// there when the name gives none and there are several, and the file and
// key of a dataset_info.json it cannot read; array_record and other file
// formats are refused by name.
TfdsDataset LoadTfdsDataset(const std::string& tfds_name, const std::string& data_dir);

// A read of part of a split: examples [from, to) of split `split`.
struct TfdsReadInstruction {
  std::string split;
  int64_t from = 0, to = 0;
};

// Parses a TFDS split spec (see the top) into absolute read instructions.
// Throws t5xx::Error naming the spec for an unknown split, a malformed
// slice, or one out of the split's range.
std::vector<TfdsReadInstruction> ResolveTfdsSplit(const std::string& spec,
                                                  const TfdsDataset& dataset);

// The examples a read instruction covers, by file: (file, skip, take) in
// order, as TFDS's file instructions.
struct TfdsFileRead {
  std::string file;
  int64_t skip = 0, take = 0;
};
std::vector<TfdsFileRead> TfdsFileReads(const std::vector<TfdsReadInstruction>& reads,
                                        const TfdsDataset& dataset);

}  // namespace t5xx::seqio
