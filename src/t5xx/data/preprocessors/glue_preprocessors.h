// t5's GLUE / SuperGLUE preprocessors beyond glue() itself, as
// get_glue_text_preprocessor (t5/data/glue_utils.py) picks them: stsb
// (regression labels as strings) and record (one example per answer).
// glue itself, multirc included, is in text_preprocessors.h.
//
// Behaviour source: t5/data/preprocessors.py stsb and record; checked
// against t5's own functions by tests/data/preprocessors/
// t5_catalog_preprocessors_test.cc. Features as TFDS decodes them
// (catalog_features.h): nested FeaturesDicts flattened with '/'. Errors
// (t5xx::Error) name the preprocessor, the example index and the feature.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// STS-B's label as t5 writes it: tf.as_string(tf.round(label * 5) / 5,
// precision=1) in float32 -- rounded to the nearest 0.2, halves to even
// (1.7 -> "1.6", 0.45 -> "0.4"), printed "%.1f" ("3.8", "5.0", "-1.0" for
// the test set's -1, "-0.0" for -0.05).
std::string StsbLabelString(float label);

// stsb (t5): {"inputs": "stsb sentence1: <s1> sentence2: <s2>",
// "targets": StsbLabelString(label), "idx": ex["idx"]}; other features are
// dropped. In: "sentence1", "sentence2" strings, "label" a float32 scalar
// (an integer scalar is taken as its value), "idx" any. Throws t5xx::Error
// for a missing feature or another type.
Example StsbExample(const Example& ex, uint64_t index = 0);
DatasetPtr Stsb(DatasetPtr input);
Preprocessor StsbPreprocessor();

// record (t5, SuperGLUE ReCoRD): one output example per answer, in order;
// an example without answers (the test split) gives one with targets
// "<unk>". Each output:
//   "inputs":  "record query: <query> entities: <e1>, <e2>, ... passage:
//              <passage>", the passage's "\n@highlight\n" markers turned into
//              sentence breaks as t5 does: after . ? ! " or ' the marker
//              becomes " " (the punctuation kept), any other marker ". ";
//   "targets": the answer (or "<unk>");
//   "answers": all the example's answers (string [n], [0] when none);
//   "idx/passage", "idx/query": from TFDS's nested idx.
// In: "passage", "query" strings, "entities" and "answers" rank-1 string
// arrays, "idx/passage", "idx/query" any. Other features are dropped.
std::vector<Example> RecordExamples(const Example& ex, uint64_t index = 0);
DatasetPtr Record(DatasetPtr input);
Preprocessor RecordPreprocessor();

}  // namespace t5xx::seqio
