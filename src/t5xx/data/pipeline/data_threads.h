// The process-wide number of threads the input pipeline's parallel stages
// use: the one setting behind tf.data's num_parallel_calls /
// AUTOTUNE in t5xx (seqio's preprocessors run inside tf.data, which picks
// its parallelism from the machine; t5xx asks this setting instead).
//
// Read by the stages built after it is set: seqio.preprocessors.tokenize
// (Tokenize, a ParallelMap), t5's span_corruption (its per-example denoise
// step, when built with num_threads = 0), trim_and_pack (blocks packed at
// once, utils.h) and the feature converter's Prefetch of its input (the
// task's steps on their own thread, feature_converters.h). Any value gives
// the same examples in the same order. Framework-free: no libtorch.
#pragma once

namespace t5xx::seqio {

// The environment variable that sets DataThreads() when SetDataThreads has
// not been called.
inline constexpr char kDataThreadsEnv[] = "T5XX_DATA_THREADS";
// The most threads a pipeline stage may be given.
inline constexpr int kMaxDataThreads = 256;

// The number of threads for the input pipeline's parallel stages, >= 1:
// the value given to SetDataThreads; else $T5XX_DATA_THREADS (an integer in
// [1, 256]); else the machine's hardware threads
// (std::thread::hardware_concurrency), at most 8. Throws t5xx::Error naming
// T5XX_DATA_THREADS when it is set to anything else. Thread-safe.
int DataThreads();

// Sets DataThreads() for pipelines built from now on (n in [1, 256]); 0
// returns to the default above. Throws t5xx::Error for other values.
// Thread-safe.
void SetDataThreads(int n);

// num_threads if it is >= 1, else DataThreads(): how a stage's num_threads
// argument of 0 ("the process-wide setting") is resolved.
int ResolveDataThreads(int num_threads);

}  // namespace t5xx::seqio
