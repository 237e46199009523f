// The demo tasks over the data that `t5xx build_corpus` makes: pretraining
// over the corpus (C4's format, English text from Debian packages) and
// English->German translation over FreeDict's dictionary pairs.
//
// "c4_demo_span_corruption" mirrors t5's c4_v220_span_corruption: JSON-lines
// source -> rekey {inputs: "", targets: "text"} -> tokenize -> span_corruption
// (noise density 0.15, mean span length 3) -> append_eos_after_trim, with the
// corpus's SentencePiece model plus 100 extra ids as vocabulary.
//
// "c4_demo_span_corruption_cached" is the same task with
// seqio.CacheDatasetPlaceholder() after tokenize, where t5's
// c4_v220_span_corruption has it: `t5xx cache_tasks` stores the tokenized
// documents once, and a run with use_cached=True (USE_CACHED_TASKS = True)
// reads them and only runs span_corruption and append_eos_after_trim.
//
// "freedict_en_de_translate" is shaped as t5's wmt translation tasks
// (t5/data/tasks.py, e.g. wmt_t2t_ende_v003): source {"en", "de"} JSON lines
// (freedict_builder.h) -> t5.data.preprocessors.translate("en", "de"):
// {inputs: "translate English to German: <en>", targets: "<de>"} ->
// seqio.preprocessors.tokenize (keeping inputs_pretokenized and
// targets_pretokenized) -> seqio.preprocessors.append_eos_after_trim; the
// same vocabulary (German umlauts and ß go through its byte-fallback pieces,
// corpus_spm.cc); metric_fns t5.evaluation.metrics.bleu (sacrebleu's
// corpus BLEU, 'intl' tokenizer, as t5's wmt tasks) and sequence_accuracy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"

namespace t5xx::seqio {

inline constexpr char kDemoTaskName[] = "c4_demo_span_corruption";
// kDemoTaskName with an offline-cache placeholder after tokenize.
inline constexpr char kDemoCachedTaskName[] = "c4_demo_span_corruption_cached";
// The causal-LM demo task, as t5's c4_v220_full_lm: rekey {targets: "text"}
// -> tokenize -> full_lm (random chunk, EOS, concatenation, split into
// sequence_length["targets"] pieces); output feature "targets" only. For
// decoder-only models with LMFeatureConverter.
inline constexpr char kDemoLmTaskName[] = "c4_demo_full_lm";
// The English->German demo task (the finetuning demo).
inline constexpr char kFreedictTaskName[] = "freedict_en_de_translate";
inline constexpr int32_t kDemoExtraIds = 100;

// The names of the demo tasks, {kDemoTaskName, kDemoCachedTaskName,
// kDemoLmTaskName, kFreedictTaskName}.
inline std::vector<std::string> DemoTaskNames() {
  return {kDemoTaskName, kDemoCachedTaskName, kDemoLmTaskName, kFreedictTaskName};
}

// Whether `name` is one of DemoTaskNames().
inline bool IsDemoTaskName(const std::string& name) {
  return name == kDemoTaskName || name == kDemoCachedTaskName || name == kDemoLmTaskName ||
         name == kFreedictTaskName;
}

// <data_dir>/c4_demo: where build_corpus writes the demo corpus.
std::string DemoCorpusDir(const std::string& data_dir);
// <data_dir>/freedict_en_de: where build_corpus writes the translation data.
std::string FreedictDataDir(const std::string& data_dir);

// Registers the demo tasks when the corpus under data_dir is complete (all
// three use its vocabulary).
// Returns std::nullopt on success, else the reason they were not registered
// (corpus or vocabulary missing, with the command that builds it); the
// caller raises it when a demo task is requested. When the corpus is there
// but the translation data is not (no FreedictDataDir(data_dir)/
// freedict_info.json), kFreedictTaskName is still registered, and reading it
// throws t5xx::Error naming the missing file, the command that builds it and
// the Debian package dict-freedict-eng-deu (as TFDS refuses a dataset that
// was not prepared). skip_bad_records: the JSON-lines sources skip and count
// malformed lines (BadRecordPolicy) instead of failing on the first one.
std::optional<std::string> RegisterDemoTasks(
    const std::string& data_dir, TaskRegistry& registry = TaskRegistry::Global(),
    bool skip_bad_records = false);

}  // namespace t5xx::seqio
