// The demo pretraining task over the corpus that `t5xx build_corpus` makes
// (C4's format, English text from Debian packages).
//
// "c4_demo_span_corruption" mirrors t5's c4_v220_span_corruption: JSON-lines
// source -> rekey {inputs: "", targets: "text"} -> tokenize -> span_corruption
// (noise density 0.15, mean span length 3) -> append_eos_after_trim, with the
// corpus's SentencePiece model plus 100 extra ids as vocabulary.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/task.h"

namespace t5xx::seqio {

inline constexpr char kDemoTaskName[] = "c4_demo_span_corruption";
// The causal-LM demo task, as t5's c4_v220_full_lm: rekey {targets: "text"}
// -> tokenize -> full_lm (random chunk, EOS, concatenation, split into
// sequence_length["targets"] pieces); output feature "targets" only. For
// decoder-only models with LMFeatureConverter.
inline constexpr char kDemoLmTaskName[] = "c4_demo_full_lm";
inline constexpr int32_t kDemoExtraIds = 100;

// The names of the demo tasks, {kDemoTaskName, kDemoLmTaskName}.
inline std::vector<std::string> DemoTaskNames() { return {kDemoTaskName, kDemoLmTaskName}; }

// Whether `name` is one of DemoTaskNames().
inline bool IsDemoTaskName(const std::string& name) {
  return name == kDemoTaskName || name == kDemoLmTaskName;
}

// <data_dir>/c4_demo: where build_corpus writes the demo corpus.
std::string DemoCorpusDir(const std::string& data_dir);

// Registers the demo tasks (kDemoTaskName, kDemoLmTaskName) when the corpus
// under data_dir is complete.
// Returns std::nullopt on success, else the reason it was not registered
// (corpus or vocabulary missing, with the command that builds it); the
// caller raises it when the demo task is requested. skip_bad_records: the
// JSON-lines source skips and counts malformed lines (BadRecordPolicy)
// instead of failing on the first one.
std::optional<std::string> RegisterDemoTasks(
    const std::string& data_dir, TaskRegistry& registry = TaskRegistry::Global(),
    bool skip_bad_records = false);

}  // namespace t5xx::seqio
