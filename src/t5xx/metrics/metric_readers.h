// Internal to src/t5xx/metrics/: reading postprocessed values as the kinds
// a metric needs (metric_fns.cc), shared by the metric_fns of
// metric_fns.cc and catalog_metric_fns.cc. Each reader throws t5xx::Error
// "metrics.<metric>: <role> <index> is a <value> but the metric needs
// <kind> (postprocess_fn=...)" naming the postprocess_fn that gives the
// right kind. `role` is "target" or "prediction".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/metrics/metric_fns.h"

namespace t5xx::seqio::metric_readers {

[[noreturn]] void WrongKind(const std::string& metric, size_t index, const char* role,
                            const PostprocessedValue& v, const std::string& want);

// Strings (no postprocess_fn, or lower_text).
std::vector<std::string> Strings(const std::string& metric, const char* role,
                                 const std::vector<PostprocessedValue>& xs);
// Integer class ids (floats with integral values accepted).
std::vector<int64_t> Ints(const std::string& metric, const char* role,
                          const std::vector<PostprocessedValue>& xs);
// Lists of reference answers (postprocess_fn=qa); role "target".
std::vector<std::vector<std::string>> AnswerLists(const std::string& metric,
                                                  const std::vector<PostprocessedValue>& xs);
// Numbers as doubles (postprocess_fn=string_to_float).
std::vector<double> Floats(const std::string& metric, const char* role,
                           const std::vector<PostprocessedValue>& xs);

}  // namespace t5xx::seqio::metric_readers
