// One collection of summaries, as t5x's MetricsManager writes it through a
// clu metric writer (t5x/trainer.py): TensorBoard event files in `dir`
// (SummaryWriter, summary_writer.h) and, for programs and people, the same
// scalars as JSON lines in dir/metrics.jsonl. t5x's collections are
// MODEL_DIR/train and MODEL_DIR/training_eval/<task>.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>

#include "t5xx/trainer/summary_writer.h"

namespace t5xx::trainer {

class MetricsWriter {
 public:
  // Creates `dir` (and parents), its event file and dir/metrics.jsonl
  // (appended to when it exists). Throws t5xx::Error naming the path when
  // either cannot be created.
  explicit MetricsWriter(const std::string& dir);

  // Writes every scalar as a TensorBoard scalar event at `step` (float32, as
  // TensorBoard stores them) and one JSON line {"step": step, name: value,
  // ...} (doubles; a NaN or infinite value is written as null, JSON having
  // neither; a name that is not UTF-8 is written with U+FFFD, DumpJson),
  // then flushes both, so a reader sees the record at once.
  // Throws t5xx::Error naming the file when writing fails.
  void WriteScalars(int64_t step, const std::map<std::string, double>& scalars);

  // A text summary (TensorBoard only, e.g. t5x's "config"); flushed.
  void WriteText(const std::string& tag, const std::string& text, int64_t step);

  const std::string& dir() const { return dir_; }
  const std::string& jsonl_path() const { return jsonl_path_; }
  const std::string& event_file() const { return summary_.path(); }

 private:
  std::string dir_;
  std::string jsonl_path_;
  SummaryWriter summary_;  // creates dir_
  std::ofstream file_;
};

}  // namespace t5xx::trainer
