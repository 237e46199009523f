// The checks `t5xx train` makes before its first step that read data but no
// model parameters, run by train before it initialises anything and by
// `t5xx config`, so that the two refuse the same configurations (issue 32:
// config accepted a mixture rated by seqio.mixing_rate_num_examples over
// tasks without caches, which train refused). With ValidateTrainRun
// (validation.h) this is every check train makes before step 1 except the
// ones that need this machine or the run itself: the memory plan (config
// prints its verdict as a note: a configuration may be meant for a larger
// machine), joining the other processes, and fitting a checkpoint's arrays
// to the model (which reads them).
#pragma once

#include "t5xx/run/train_setup.h"
#include "t5xx/run/validation.h"

namespace t5xx::run {

// The mesh for the launch's process count (PjitPartitioner: num_partitions
// against the processes) and the batch splits over its data axis
// (CheckBatchSplits); the first full batch of the train dataset (building
// it computes mixture rates, opens the files, reads and converts the
// first records) and of each train-eval dataset, for this process's data
// shard; the inference evaluation's examples (InferenceEvaluator, writing
// nothing); the data is not read when the memory plan refuses the run
// (run.memory_problem). Every failure in one t5xx::Error ("N errors in the
// train configuration:"), each message as train would give it.
void PreflightTrainRun(const LoadedTrainConfig& loaded, const ValidatedTrainRun& run);

}  // namespace t5xx::run
