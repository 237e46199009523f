// seqio utilities without TensorFlow: a counter-based RNG, trim-and-pack,
// autoregressive decoder inputs and a window shuffle.
//
// Behaviour sources: seqio/utils.py (trim_and_pack_dataset's TF path,
// make_autoregressive_inputs) and tf.data's Dataset.shuffle (which the
// window shuffle stands in for).
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/example.h"
#include "t5xx/util/hash.h"  // SplitMix64, HashSeed

namespace t5xx::seqio {

// Feature name -> length (seqio's sequence_length / task_feature_lengths).
using FeatureLengths = std::map<std::string, int64_t>;

// ---------------------------------------------------------------------------
// Randomness. Every random decision in t5xx::seqio is a pure function of
// (seed, example index in the stream, purpose), so results never depend on
// batching, threads or how far another stream has been read. Not bit-equal to
// TF's Philox; only distributions/structure match seqio/t5. The mixers
// (SplitMix64, HashSeed) are in t5xx/util/hash.h.

// Counter-based generator: the k-th draw is SplitMix64(key + k*golden).
class StatelessRng {
 public:
  explicit StatelessRng(uint64_t key) : key_(key) {}
  StatelessRng(uint64_t seed, uint64_t index, uint64_t purpose)
      : key_(HashSeed(seed, index, purpose)) {}
  uint64_t NextU64();
  // Uniform integer in [0, n); n must be > 0 (throws t5xx::Error otherwise).
  int64_t UniformInt(int64_t n);
  // Uniform double in [0, 1).
  double Uniform01();
  // Number of draws so far (for saving/restoring a position).
  uint64_t counter() const { return counter_; }
  void set_counter(uint64_t c) { counter_ = c; }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// ---------------------------------------------------------------------------
// make_autoregressive_inputs (seqio/utils.py).
//
// Unpacked: shifts `targets` ([length] int32) right by one, putting `bos_id`
// at position 0; the last token falls off (a final EOS stays, shifted).
// Returns [length] int32.
Tokens MakeAutoregressiveInputs(const Tokens& targets, int32_t bos_id = 0);

// Packed: as above, and additionally every position whose segment id differs
// from its left neighbour's gets `bos_id` -- including the first padding slot
// after the last segment (seqio behaviour). `segment_ids` must have the same
// length as `targets` (throws t5xx::Error otherwise).
Tokens MakeAutoregressiveInputs(const Tokens& targets, const Tokens& segment_ids,
                                int32_t bos_id = 0);

// ---------------------------------------------------------------------------
// trim_and_pack_dataset, seqio's default TF path (seqio/utils.py).
//
// For each feature k in `lengths` (other features are dropped):
//  * each example's value (int32 tokens, rank 1) is trimmed to lengths[k];
//  * examples are taken in blocks of max(lengths) consecutive examples
//    (padded_batch); rows never cross blocks;
//  * within a block, greedy next-fit: an example's length per feature is its
//    count of non-zero tokens, taken as a prefix of the trimmed value; if
//    appending it would overflow ANY feature, the current row is flushed and
//    a new row started; the last row of each block is flushed.
// Output rows hold, per feature k, [lengths[k]] int32 each:
//   k, k_segment_ids (= cumsum(pos==0) * (tok!=0), 1-based), k_positions
//   (restarting at 0 per example; 0 in padding).
// Throws t5xx::Error naming the feature when an example lacks a feature in
// `lengths`, holds a string, or when a length is < 1.
std::vector<Example> TrimAndPack(const std::vector<Example>& examples,
                                 const FeatureLengths& lengths);
// Lazy dataset version of TrimAndPack: reads num_threads blocks at a time
// (0 = DataThreads(), data_threads.h) and packs them on that many threads,
// each block alone, so the rows are the same for every count. An error is
// rethrown after the rows of the blocks before it. State (version 2):
// {"input": the input's state where the block being emitted started,
// "skip": its rows emitted, "done"}.
DatasetPtr TrimAndPackDataset(DatasetPtr input, const FeatureLengths& lengths,
                              int num_threads = 0);

// Pads (with 0) or trims every feature in `lengths` to exactly its length;
// other features are kept unchanged. Throws t5xx::Error for a missing or
// string feature.
Example TrimAndPad(Example ex, const FeatureLengths& lengths);

// ---------------------------------------------------------------------------
// Shuffles in windows (t5xx's stand-in for tf.data's
// Dataset.shuffle(buffer_size, seed)): reads `buffer_size` examples, emits
// them in a random order -- a Fisher-Yates permutation drawn from (seed,
// window number) -- then reads the next window. tf.data instead refills its
// buffer one example at a time, so an example can be held back
// indefinitely; a window holds every example back by less than buffer_size,
// and its position is a window number, the input's state where the window
// started and the examples emitted (no examples: pipeline state version 2,
// dataset.h). Neither is bit-equal to the other. Deterministic for a seed.
// buffer_size must be >= 1 (t5xx::Error).
DatasetPtr Shuffle(DatasetPtr input, int64_t buffer_size, uint64_t seed);

}  // namespace t5xx::seqio
