// seqio.experimental.add_task_with_sentinels' preprocessors: the steps of a
// task's "_<n>_sentinel" variant (t5's catalog adds one for each SuperGLUE
// task, dpr_v001_simple and the wsc_simple tasks).
//
// Behaviour source: seqio/experimental.py add_task_with_sentinels (seqio
// 0.0.19: _add_sentinels, _append_eos_after_trim_and_preserve,
// _create_new_task_name); checked against seqio's own function by
// tests/data/preprocessors/t5_catalog_preprocessors_test.cc. The variant's
// postprocess_fn (strip the decoded sentinels before the task's own) is the
// dataset_providers room's. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// One step of a task's preprocessors list, as the sentinel variant needs to
// see it: its registry name (seqio's check is `is
// seqio.preprocessors.append_eos_after_trim`), the step and its signature.
struct NamedPreprocessor {
  std::string name;
  Preprocessor preprocessor;
  PreprocessorSignature signature;
};

// The names the two new steps carry in the list.
inline constexpr char kAddSentinelsName[] =
    "seqio.experimental.add_task_with_sentinels._add_sentinels";
inline constexpr char kAppendEosAfterTrimAndPreserveName[] =
    "seqio.experimental.add_task_with_sentinels._append_eos_after_trim_and_preserve";

// seqio's _create_new_task_name: "_<n>_sentinel" goes before the first of
// "_train", "_dev", "_test", "_eval", "." found (tried in that order), else
// at the end: ("super_glue_wsc_v102_simple_train", 1) ->
// "super_glue_wsc_v102_simple_1_sentinel_train".
std::string SentinelTaskName(const std::string& task_name, int64_t num_sentinels = 1);

// _add_sentinels: "inputs" gets the sentinels V-1, V-2, ..., V-n appended
// and "targets" the same ids (of its own vocabulary) prepended, with V =
// output_features[k].vocabulary->vocab_size(). Other features are kept.
// Throws t5xx::Error if output_features lacks "inputs" or "targets" (or
// their vocabulary), or an example lacks either feature.
DatasetPtr AddSentinels(DatasetPtr input, const OutputFeatures& output_features,
                        int64_t num_sentinels);
Preprocessor AddSentinelsPreprocessor(int64_t num_sentinels);

// _append_eos_after_trim_and_preserve(preserve_final_n_tokens_when_trimming
// = n), for each token feature k with output_features[k].add_eos:
//  * no sequence_length[k]: EOS appended;
//  * n <= 0: append_eos_after_trim (the first L-1 tokens, then EOS);
//  * else, with T = min(L, |v| + 1) and m = min(n, T - 1):
//    v[:T - (m + 1)] ++ v[-m:] ++ [EOS] -- the last m tokens survive the
//    trim. As seqio's Python slice, v[-0:] is all of v: when m is 0 (L = 1,
//    or an empty v) the result is v ++ [EOS], longer than L.
// Other features are unchanged.
Tokens AppendEosAfterTrimAndPreserve(const Tokens& value, int32_t eos_id,
                                     std::optional<int64_t> length, int64_t preserve);
DatasetPtr AppendEosAfterTrimAndPreserve(DatasetPtr input, const OutputFeatures& output_features,
                                         const FeatureLengths& sequence_length,
                                         int64_t preserve);
Preprocessor AppendEosAfterTrimAndPreservePreprocessor(int64_t preserve);

// The sentinel variant's preprocessors list, as add_task_with_sentinels
// builds it from the task's: when the last step is
// "seqio.preprocessors.append_eos_after_trim", it is replaced by
// _append_eos_after_trim_and_preserve(num_sentinels) and _add_sentinels is
// inserted before it; otherwise _add_sentinels is appended. Both new steps
// take sequence_length (their Python signatures), neither a seed. Throws
// t5xx::Error for an empty list (seqio's steps[-1] fails) or
// num_sentinels < 1.
std::vector<NamedPreprocessor> AddSentinelSteps(std::vector<NamedPreprocessor> steps,
                                                int64_t num_sentinels = 1);

}  // namespace t5xx::seqio
