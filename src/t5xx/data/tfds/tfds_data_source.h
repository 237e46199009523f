// seqio.TfdsDataSource over data TensorFlow Datasets prepared, read without
// TensorFlow: the layout of dataset_info.h, the records' features decoded as
// features.h says.
//
// Behaviour source: seqio/dataset_providers.py (TfdsDataSource),
// seqio/utils.py (LazyTfdsLoader: the data dir override, splits as a list or
// a map of canonical name -> TFDS split), tensorflow_datasets 4.9's
// core/reader.py (_read_files: the file instructions of the split, sharded
// per file over the input pipelines, then interleaved with cycle length 16
// -- 1 when the dataset disables shuffling -- and block length 16).
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/sources/data_source.h"
#include "t5xx/data/sources/file_data_source.h"
#include "t5xx/data/tfds/dataset_info.h"
#include "t5xx/data/tfds/features.h"

namespace t5xx::seqio {

// seqio.set_tfds_data_dir_override (t5x's --tfds_data_dir): the data
// directory every TfdsDataSource reads, before its own tfds_data_dir. ""
// clears it. Thread-safe.
void SetTfdsDataDirOverride(const std::string& dir);
std::string TfdsDataDirOverride();

class TfdsDataSource : public DataSource {
 public:
  // `tfds_name`: "name[/config][:version]" (dataset_info.h). `splits`: the
  // canonical split names a task asks for, each mapped to the TFDS split it
  // reads ("train" -> "train", "validation" -> "train[:10%]"); empty: every
  // split of the dataset under its own name (seqio's splits=None; a list is
  // a map of each name to itself). Nothing is read until first use, so a
  // registry can hold sources of datasets not prepared here; the data
  // directory is chosen then (TfdsDataDir with the override).
  TfdsDataSource(std::string tfds_name, std::string tfds_data_dir,
                 std::map<std::string, std::string> splits, bool caching_permitted = true,
                 BadRecordPolicy bad_records = {});

  // The canonical names (those given, else the dataset's split names --
  // reading dataset_info.json).
  std::vector<std::string> splits() const override;
  // The examples of `split` in TFDS's order. shard_info: the files of the
  // split's file instructions, every num_shards-th from index (TFDS's
  // input_context); Task::GetDataset shards the examples instead when
  // there are fewer files than shards (supports_arbitrary_sharding false,
  // as seqio's). shuffle permutes this reader's files with `seed` (seqio
  // shuffles them with tf.data's own generator: the same files, another
  // order). Throws t5xx::Error for the bad input of dataset_info.h and
  // features.h, and, while iterating, "<file>: record N: ..." for a
  // corrupt shard.
  DatasetPtr GetDataset(const std::string& split, bool shuffle, uint64_t seed,
                        const ShardInfo& shard_info) const override;
  // The files the split reads, in order (seqio list_shards: the file
  // instructions' file names).
  std::vector<std::string> ListShards(const std::string& split) const override;
  bool supports_arbitrary_sharding() const override { return false; }
  bool caching_permitted() const override { return caching_permitted_; }
  int64_t skipped_records() const override { return bad_records_.skipped->load(); }
  // The examples the split reads, from dataset_info.json's shard lengths
  // (seqio num_input_examples; mixing_rate_num_examples).
  std::optional<int64_t> num_input_examples(const std::string& split) const override;

  const std::string& tfds_name() const { return tfds_name_; }
  // The dataset as found on disk (loads it on first use).
  const TfdsDataset& dataset() const;

 private:
  struct Loaded {
    std::string data_dir;
    TfdsDataset dataset;
    std::shared_ptr<const std::vector<TfdsFeature>> features;
  };
  std::shared_ptr<const Loaded> Load() const;
  std::vector<TfdsFileRead> FileReadsOf(const Loaded& loaded, const std::string& split) const;

  std::string tfds_name_, tfds_data_dir_;
  std::map<std::string, std::string> splits_;
  bool caching_permitted_;
  BadRecordPolicy bad_records_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Loaded> loaded_;
};

}  // namespace t5xx::seqio
