// The seed streams of the data pipeline: every HashSeed / StatelessRng
// purpose tag and per-step seed id (util/hash.h) used in data/, in one list
// so that independent random decisions visibly draw from distinct streams.
//
// The values are part of the output: changing one changes the shuffles,
// mixture draws, chunks and noise masks (and so every trained run). They
// are t5xx's own (seqio/t5 use tf.random seeds; t5xx stays deterministic
// and TensorFlow-free). Framework-free: no libtorch.
#pragma once

#include <cstdint>

namespace t5xx::seqio::seed_purpose {

// Task::GetDataset (task.cc): the per-epoch seed and the shuffle buffer.
inline constexpr uint64_t kTaskEpoch = 0x65706F6368ULL;          // "epoch"
inline constexpr uint64_t kTaskShuffle = 0x7461736B73687566ULL;  // "taskshuf"
// Shuffle (utils.cc): the buffer draws.
inline constexpr uint64_t kShuffleBuffer = 0x5348554646ULL;  // "SHUFF"
// Mixture sampling (mixture.cc): which task each example is drawn from.
inline constexpr uint64_t kMixtureSample = 0x6D69787475726573ULL;  // "mixtures"

// span_corruption.cc: the noise/clean run lengths of random_spans_noise_mask,
// select_random_chunk's window, denoise's per-example mask; and the step
// seeds span_corruption derives for its chunk and denoise steps.
inline constexpr uint64_t kSpanNoiseSegments = 11;
inline constexpr uint64_t kSpanCleanSegments = 12;
inline constexpr uint64_t kSpanChunk = 13;
inline constexpr uint64_t kSpanMask = 14;
inline constexpr uint64_t kSpanStepChunk = 101;
inline constexpr uint64_t kSpanStepDenoise = 102;

// lm_preprocessors.cc: random_prefix_noise_mask and iid_noise_mask, and the
// step seeds prefix_lm / full_lm / iid_denoising derive for their chunk and
// mask steps.
inline constexpr uint64_t kLmPrefix = 21;
inline constexpr uint64_t kLmIid = 22;
inline constexpr uint64_t kLmStepChunk = 201;
inline constexpr uint64_t kLmStepMask = 202;

// cache_tasks (cache_work_items.cc): the global shuffle of a cached split
// (seqio's beam.Reshuffle): the split's shuffle seed from the task seed, each
// source shard's key stream, and each example's key in it.
inline constexpr uint64_t kCacheShuffleSeed = 0x6361636865736565ULL;   // "cachesee"
inline constexpr uint64_t kCacheShuffleShard = 0x6361636865736864ULL;  // "cacheshd"
inline constexpr uint64_t kCacheShuffleKey = 0x63616368656B6579ULL;    // "cachekey"

}  // namespace t5xx::seqio::seed_purpose
