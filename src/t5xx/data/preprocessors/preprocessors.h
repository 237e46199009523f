// seqio's generic preprocessors (seqio/preprocessors.py) and the types a Task
// hands to its preprocessors (seqio/utils.py Feature, dataset_providers.py).
//
// A Preprocessor is a function (DatasetPtr, const PreprocessContext&) ->
// DatasetPtr; the context carries what seqio injects by argument name
// (sequence_length, output_features) plus a seed. Each preprocessor also has a
// plain DatasetPtr -> DatasetPtr form taking its arguments explicitly.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/vocabularies/vocabulary.h"

namespace t5xx::seqio {

// seqio.Feature: an int32, rank-1 token feature of a Task's output.
struct Feature {
  VocabularyPtr vocabulary;
  bool add_eos = true;   // append_eos / append_eos_after_trim act on it
  bool required = true;  // Task::GetDataset fails if it is missing
};
using OutputFeatures = std::map<std::string, Feature>;

// What a Task passes to each preprocessor step.
struct PreprocessContext {
  FeatureLengths sequence_length;  // may be empty (no length known)
  OutputFeatures output_features;
  uint64_t seed = 0;  // per-step seed (Task derives it from the user's seed)
};

using Preprocessor =
    std::function<DatasetPtr(DatasetPtr, const PreprocessContext&)>;

// Wraps a context-free DatasetPtr -> DatasetPtr function as a Preprocessor.
Preprocessor MakePreprocessor(std::function<DatasetPtr(DatasetPtr)> fn);

// ---------------------------------------------------------------------------
// rekey (seqio/preprocessors.py): each output example is
// {new_key: ex[old_key]} for every (new_key, old_key) in key_map; an empty
// old_key gives the empty string "". Features not named are dropped.
// Throws t5xx::Error naming old_key when an example lacks it.
Example RekeyExample(const Example& ex,
                     const std::map<std::string, std::string>& key_map);
DatasetPtr Rekey(DatasetPtr input, std::map<std::string, std::string> key_map);
Preprocessor RekeyPreprocessor(std::map<std::string, std::string> key_map);

// tokenize (seqio/preprocessors.py): every string feature k that is listed in
// output_features is replaced by vocabulary->Encode(text) ([n] int32); with
// copy_pretokenized the text is kept as "<k>_pretokenized"; with with_eos and
// Feature::add_eos, EOS is appended. Features not listed, and features that
// already hold tokens, are left unchanged. Throws t5xx::Error when a listed
// feature has no vocabulary. Tokenize encodes on num_threads threads
// (ParallelMap; 0 = DataThreads(), data_threads.h, resolved when the
// dataset is built): the same examples in the same order for any count, as
// Vocabulary::Encode is a const, thread-safe call.
Example TokenizeExample(Example ex, const OutputFeatures& output_features,
                        bool copy_pretokenized = true, bool with_eos = false);
DatasetPtr Tokenize(DatasetPtr input, OutputFeatures output_features,
                    bool copy_pretokenized = true, bool with_eos = false,
                    int num_threads = 0);
Preprocessor TokenizePreprocessor(bool copy_pretokenized = true,
                                  bool with_eos = false);

// append_eos (seqio/preprocessors.py): appends vocabulary->eos_id() to every
// token feature with Feature::add_eos.
DatasetPtr AppendEos(DatasetPtr input, OutputFeatures output_features);
Preprocessor AppendEosPreprocessor();

// append_eos_after_trim (seqio/preprocessors.py), one sequence: with a
// length L, keeps the first L-1 tokens then appends eos_id (result <= L);
// without a length, only appends. L must be >= 1 (t5xx::Error).
Tokens AppendEosAfterTrim(const Tokens& tokens, int32_t eos_id,
                          std::optional<int64_t> length);
// Dataset form: applies the above to every token feature with
// Feature::add_eos, using sequence_length[k] when present; other features are
// untouched.
DatasetPtr AppendEosAfterTrim(DatasetPtr input, OutputFeatures output_features,
                              FeatureLengths sequence_length);
Preprocessor AppendEosAfterTrimPreprocessor();

// truncate_inputs_left (seqio/preprocessors.py): keeps the LAST L tokens of
// "inputs" (drops from the left), L = sequence_length["inputs"]. Examples
// without "inputs" and other features are unchanged. Throws t5xx::Error when
// L < 0 or "inputs" is a string; the Preprocessor form throws when the
// context's sequence_length has no "inputs".
Tokens TruncateLeft(const Tokens& tokens, int64_t length);
DatasetPtr TruncateInputsLeft(DatasetPtr input, FeatureLengths sequence_length);
Preprocessor TruncateInputsLeftPreprocessor();

}  // namespace t5xx::seqio
