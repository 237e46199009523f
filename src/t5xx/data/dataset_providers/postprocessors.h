// Task postprocessors (seqio Task.postprocess_fn; t5/data/postprocessors.py).
//
// A postprocessor turns decoded model output (or a decoded target) into the
// value a metric scores: seqio calls postprocess_fn(decoded, example=ex,
// is_target=...) for targets (is_target=true) and predictions (false), with
// the task example as it leaves the task's preprocessors (TFDS's nested
// features flattened with '/', e.g. "idx/question"; data/tfds/features.h).
// Python lets it return anything; t5xx's PostprocessedValue (metric_fns.h)
// covers what t5's postprocessors and metrics use: a string, an integer
// class id, a float, a list of reference strings, a tuple of integers, or a
// dict (multirc, record, span_qa). Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"
#include "t5xx/metrics/metric_fns.h"

namespace t5xx::seqio {

// postprocess_fn(decoded text, the task example, is_target).
using PostprocessFn = std::function<PostprocessedValue(
    const std::string& decoded, const Example& example, bool is_target)>;

namespace postprocessors {

// t5 postprocessors.string_to_float: the decoded text parsed as Python's
// float() does (surrounding Unicode whitespace, '_' between digits, Unicode
// decimal digits, "inf"/"nan" accepted; hex refused), or `default_value`
// (t5's default -1.0) when float() would raise ValueError.
PostprocessFn string_to_float(double default_value = -1.0);

// t5 postprocessors.lower_text: Python str.lower() of the text (the full
// Unicode lowercase mapping, unicode_properties.h's Lower).
PostprocessFn lower_text();

// t5 postprocessors.string_label_to_class_id: the index of the decoded text in
// label_classes (its first occurrence, Python's list.index), or
// `default_value` (t5's -1) when it is none of them.
// Throws t5xx::Error when label_classes is empty.
PostprocessFn string_label_to_class_id(std::vector<std::string> label_classes,
                                       int64_t default_value = -1);

// The reference answers of an example, as t5 reads example["answers"]: a
// rank-1 string Array (TFDS Sequence(Text), what t5's squad, trivia_qa and
// record preprocessors keep) gives its strings; a plain string feature (a
// source without lists, e.g. TextLineDataSource) gives a list of that one
// answer. Throws t5xx::Error naming `who` and the feature otherwise.
std::vector<std::string> ExampleAnswers(const Example& example, const std::string& who);

// t5 postprocessors.qa: a prediction stays the decoded text; a target becomes
// the list of reference answers from the example's "answers" feature
// (ExampleAnswers). Throws t5xx::Error (while postprocessing a target) when
// the example has no string "answers".
PostprocessFn qa();

// t5 postprocessors.span_qa: a prediction stays the decoded text (a span
// "start: 3 end: 6", scored by metric_fns::span_squad); a target becomes the
// dict {"answers": ExampleAnswers, "context": the example's "context" text}
// (a string feature or a string scalar Array). Throws t5xx::Error naming the
// missing feature.
PostprocessFn span_qa();

// t5 postprocessors.multirc: {"value": string_label_to_class_id(text,
// ["False", "True"])} (-1 for any other text), and for a target also
// "group": the example's "idx/question" (an integer scalar Array, int32 from
// TFDS, which t5's glue() preprocessor keeps with idx/paragraph and
// idx/answer). Throws t5xx::Error when a target's example lacks it.
PostprocessFn multirc();

// t5 postprocessors.record: a prediction becomes {"value": text}; a target
// {"value": ExampleAnswers (every answer of the ReCoRD query, which t5's
// record() preprocessor passes through as "answers"), "group": (idx/passage,
// idx/query)} (a tuple of the two integer scalar features t5's record()
// keeps). Throws t5xx::Error when a target's example lacks them.
PostprocessFn record();

// t5 postprocessors.wsc_simple: a target becomes the example's "label" (an
// integer scalar, 1 when the candidate is the referent). A prediction is
// compared with the example's "targets_pretokenized" (the candidate
// referent): both are cleaned (Python strip(), lower(), split(" ") and
// every determiner of t5's list dropped: a an few her his each every many
// much my our some that the their these this those which whose your); an
// empty cleaned prediction gives -1; if exactly one of the two holds an
// apostrophe, 0; else 1 when either's set of words contains the other's,
// otherwise 0. Throws t5xx::Error when the example lacks the feature used.
PostprocessFn wsc_simple();

// t5 postprocessors.rank_classification: a target becomes the tuple
// (example["idx"], example["is_correct"], example.get("weight", 1.0),
// len(example["targets"])) (metrics::RankClassificationTarget) for the
// rank_classification score metric; a prediction is returned as it is
// (t5 returns the score unchanged). In: "idx" a rank-1 integer array,
// "is_correct" a bool (or integer) scalar, "weight" a float32 scalar when
// present, "targets" the tokenized targets -- what the
// rank_classification preprocessor and the task's tokenize step give.
// Throws t5xx::Error naming the feature when one is missing or another kind.
PostprocessFn rank_classification();

// glue_utils.get_glue_postprocess_fn(builder_config): what t5's catalog
// gives the GLUE/SuperGLUE task of TFDS builder config `name`: "stsb" ->
// string_to_float(); "multirc" -> multirc(); "record" -> record(); any other
// -> string_label_to_class_id(label_classes) (the builder config's
// label_classes, e.g. {"unacceptable", "acceptable"} for cola). Throws
// t5xx::Error when that needs label_classes and none are given.
PostprocessFn glue_postprocess_fn(const std::string& name,
                                  const std::vector<std::string>& label_classes = {});

}  // namespace postprocessors
}  // namespace t5xx::seqio
