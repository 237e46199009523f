// How a task cache is written: an Example as a tf.Example record, the
// features of info.<split>.json and the token counts of stats.<split>.json,
// and the JSON text of both files.
//
// Behaviour source: seqio/utils.py (dict_to_tfexample, _to_tffeature,
// tfexample_ragged_length_key) and seqio/beam_utils.py (GetInfo, GetStats,
// _CountTokens, WriteJson: sorted keys, indent 2, one trailing newline).
// The reader of these files is task_cache.h. Framework-free: no libtorch.
//
// t5xx caches hold features of rank 0 and 1 only, so the ragged (rank >= 2)
// features seqio stores with `_rl:<dim>:<key>` row-length keys, and the
// sparse ones with `_sp:...` keys, never occur in what t5xx writes;
// an Example feature named like those keys is refused here, and the reader
// refuses a cache that declares such features.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/example.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// The seqio version t5xx's caches claim in info.<split>.json's
// "seqio_version": the seqio release whose format they follow. Any value >=
// "0.0.0" tells seqio's reader that the stored dtypes are the true ones.
inline constexpr char kCacheSeqioVersion[] = "0.0.19";

// seqio's prefixes of the keys that carry the row lengths of ragged features
// and the indices of sparse ones in a tf.Example.
inline constexpr char kRaggedLengthKeyPrefix[] = "_rl:";
inline constexpr char kSparseIndicesKeyPrefix[] = "_sp:";

// seqio.dict_to_tfexample of an Example, serialized: Tokens as an int64_list
// (int32 widened, as _to_tffeature stores every integer), a string as a
// bytes_list of one element; keys in sorted order, so the bytes are
// deterministic. Throws t5xx::Error naming the feature when its name starts
// with "_rl:" or "_sp:" (it would be read back as ragged/sparse metadata).
std::string EncodeCacheExample(const Example& example);

// The "features" object of info.<split>.json for an example, as GetInfo
// describes one: Tokens -> {"dtype": "int32", "shape": [null]}, a string ->
// {"dtype": "string", "shape": []}, an Array of rank 0 or 1 -> its dtype
// and [] or [null] (int64 scalar "idx", string [n] "answers"). Throws
// t5xx::Error naming the feature for an array of rank >= 2 or ragged.
nlohmann::json CacheFeaturesOf(const Example& example);

// info.<split>.json: {"features": features, "num_shards": num_shards,
// "seqio_version": kCacheSeqioVersion, "t5xx_cache_format":
// kCacheFormatVersion (task_cache.h)}.
nlohmann::json CacheInfoJson(const nlohmann::json& features, int64_t num_shards);

// The counts of stats.<split>.json (GetStats without character counts).
struct CacheStats {
  int64_t examples = 0;
  // For each output feature of the task holding tokens in an example: the
  // ids that are neither the vocabulary's EOS nor PAD (0), summed over the
  // examples ("<f>_tokens") and the largest per-example count
  // ("<f>_max_tokens"). A feature no example holds has no entry (GetStats
  // emits counts only for features it saw).
  std::map<std::string, int64_t> tokens;
  std::map<std::string, int64_t> max_tokens;

  // Counts one example. Features not in output_features, and string
  // features, are not counted (_CountTokens counts int arrays of output
  // features only).
  void Add(const Example& example, const OutputFeatures& output_features);
  // Adds another part's counts (sums, and the max of the maxima).
  void Merge(const CacheStats& other);
  // {"examples": n, "<f>_tokens": n, "<f>_max_tokens": n, ...}.
  nlohmann::json ToJson() const;
  // Inverse of ToJson. Throws t5xx::Error naming `where` for a value that is
  // not a non-negative integer, or a missing "examples".
  static CacheStats FromJson(const nlohmann::json& j, const std::string& where);
};

// The text seqio's WriteJson writes: json.dumps(j, sort_keys=True,
// indent=2) plus one "\n" (WriteToText ends every element with one).
// Object keys are written in sorted (bytewise = code point) order; text
// that is not ASCII is written as UTF-8 where Python writes \u escapes
// (the same JSON value).
std::string CacheJsonText(const nlohmann::json& j);

}  // namespace t5xx::seqio
