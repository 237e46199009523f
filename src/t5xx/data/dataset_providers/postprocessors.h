// Task postprocessors (seqio Task.postprocess_fn; t5/data/postprocessors.py).
//
// A postprocessor turns decoded model output (or a decoded target) into the
// value a metric scores: seqio calls postprocess_fn(decoded, example=ex,
// is_target=...) for targets (is_target=true) and predictions (false). Python
// lets it return anything; t5xx's PostprocessedValue covers what t5's
// postprocessors and metrics use: a string, an integer class id, a float, or a
// list of reference strings. Framework-free: no libtorch.
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

// t5 postprocessors.string_to_float: the decoded text parsed as a float
// (Python float(): surrounding whitespace allowed, "inf"/"nan" accepted), or
// `default_value` (t5's default -1.0) when it does not parse.
PostprocessFn string_to_float(double default_value = -1.0);

// t5 postprocessors.lower_text: ASCII-lowercased text (Python's str.lower also
// lowercases non-ASCII letters; t5xx leaves bytes >= 0x80 unchanged).
PostprocessFn lower_text();

// t5 postprocessors.string_label_to_class_id: the index of the decoded text in
// label_classes, or `default_value` (t5's -1) when it is none of them.
// Throws t5xx::Error when label_classes is empty.
PostprocessFn string_label_to_class_id(std::vector<std::string> label_classes,
                                       int64_t default_value = -1);

// t5 postprocessors.qa: a prediction stays the decoded text; a target becomes
// the list of reference answers from the example's "answers" feature.
// Deviation: t5xx Examples hold no string lists yet, so "answers" is one
// string and the list has that one answer. Throws t5xx::Error (while
// postprocessing a target) when the example has no string "answers".
PostprocessFn qa();

}  // namespace postprocessors
}  // namespace t5xx::seqio
