// t5x's infer() (t5x/infer.py): decode or score every example of a
// DatasetConfig's task (each task of a mixture) with a restored model and
// write the results as JSON lines, in chunks that survive a restart:
//   <output_dir>/tmp-<task>-<shard:05>-of-<num_shards:05>/
//       <task>-<mode>.<ext>-<shard:05>-of-<num_shards:05>-chunk<i:05>
//       (+ .COMPLETED once written; a completed chunk is never recomputed)
//   <output_dir>/<task>-<mode>.<ext>-<shard:05>-of-<num_shards:05>
//       (+ .COMPLETED): the chunks merged, the tmp directory removed; a task
//       whose merged file is COMPLETED is skipped.
// A chunk is checkpoint_period batches of dataset_cfg.batch_size examples.
// shard_id / num_shards give this job its part of the data (seqio
// ShardInfo). Each line is {"inputs": {the *_pretokenized features},
// "prediction": decoded text (predict, predict_with_aux),
// "prediction_tokens": [ids up to the first 0] (with output_ids),
// "score": float (score), "aux": {"scores": ...} (predict_with_aux)} as
// t5x's write_inferences_to_file writes them.
#pragma once

#include <ostream>

#include "t5xx/run/train_setup.h"

namespace t5xx::run {

struct InferResult {
  std::vector<std::string> files;  // the merged files written or already complete
  int64_t examples = 0;            // examples inferred by this run (not skipped)
  int64_t chunks_skipped = 0;      // chunks found completed
  int rank = 0;  // this process's rank of the run (only rank 0 writes)
};

// Runs `t5xx infer` for a loaded infer configuration, logging progress to
// `log`. Under a launcher the run's processes infer together
// (replicas.h): num_partitions of them per 'model' group, the data replicas
// each decoding their share of every chunk; the chief (rank 0) alone
// writes, and the output is byte-identical to one process's. Throws
// t5xx::Error when num_partitions does not divide the process count, for a
// missing checkpoint, a dataset that cannot be read, or no examples.
InferResult RunInfer(const LoadedTrainConfig& loaded, std::ostream& log);

// What RunInfer refuses before it reads the checkpoint, beyond
// ValidateInferRun (t5xx config runs both): infer.output_dir cannot be
// created (CheckOutputDirUsable), or a task's finished output there was
// written with other settings than this run's, restoring `checkpoint`
// (naming the file and the setting). Throws t5xx::Error.
void PreflightInferRun(const LoadedTrainConfig& loaded, const std::string& checkpoint);

}  // namespace t5xx::run
