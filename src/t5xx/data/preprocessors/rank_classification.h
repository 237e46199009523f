// t5's rank_classification_formatter (t5/data/preprocessors.py): one
// example per (input, choice) for multiple-choice evaluation by
// log-likelihood ranking, scored by the rank_classification postprocessor
// and metric (data/dataset_providers/postprocessors.h,
// metrics/rank_classification.h). t5's rank_classification itself takes
// Python callables, which gin cannot write; the formatter is how configs
// reach it.
//
// Behaviour source: t5's rank_classification_formatter and
// rank_classification; checked through seqio's Evaluator by
// tests/interop/run_rank_classification_test.sh. Framework-free: no
// libtorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

struct RankClassificationFormat {
  // One format per choice, or one shared by all (t5: a string is repeated
  // to the other list's length; at least one of the two must be a list, and
  // two lists must have the same length). "{key}" is replaced by the string
  // feature `key` (nested TFDS features as "a/b", which t5 reads as
  // ex["a"]["b"]); a key is what t5's r'{(\S+)}' finds: no whitespace.
  std::vector<std::string> inputs_formats;
  std::vector<std::string> targets_formats;
  // "eval": every choice; "train": only the correct ones. t5's
  // "fewshot_eval" (the choices of an input batched into one example) is
  // refused: t5xx's features are not batched per example.
  std::string mode = "eval";
  // The integer label (a scalar, or a rank-1 list of labels: any of them is
  // correct). A label outside [0, number of choices) marks no choice correct
  // (tf.one_hot's rule), as a test split's -1.
  std::string label_key = "label";
  // A float feature copied to every choice as the float32 "weight".
  std::optional<std::string> weight_key;
};

// Checks the formats (lists' lengths, one of them a list: t5's ValueError
// messages) and the mode, then maps each input example (its 0-based index i
// in the stream, tf.data's enumerate) to num_choices examples
//   {"idx": int32 [i, c], "inputs": string, "targets": string,
//    "is_correct": bool, "weight": float32 (with weight_key)}
// in choice order (mode "train": only the correct ones). Other features are
// dropped. Throws t5xx::Error (naming the preprocessor, the example index and
// the key) when a format names a feature that is missing or not a string,
// or the label is not an integer; t5xx::Error for bad arguments when made.
// `inputs_is_list` / `targets_is_list`: whether the Python argument was a
// list (a one-element list is not repeated).
Preprocessor RankClassificationFormatterPreprocessor(RankClassificationFormat format,
                                                     bool inputs_is_list, bool targets_is_list);

}  // namespace t5xx::seqio
