// TensorBoard event files — the summaries t5x writes through
// clu.metric_writers (t5x/trainer.py MetricsManager, t5x/gin_utils.py
// summarize_gin_config), without TensorFlow, protobuf or libtorch.
//
// What t5x writes, and where (t5x/trainer.py, t5x/train.py, t5x/models.py,
// t5x/gin_utils.py; clu.metric_writers.create_default_writer(summary_dir,
// collection=name) writes to summary_dir/name, and t5x's summary_dir is
// MODEL_DIR):
//   MODEL_DIR/train/                  MetricsManager("train"), every
//       summary period, at the step reached: the model's metrics
//       (models.compute_base_metrics) "accuracy", "loss",
//       "loss_per_nonpadding_target_token", "loss_per_all_target_tokens",
//       "z_loss", "z_loss_per_all_target_tokens", "cross_ent_loss",
//       "cross_ent_loss_per_all_target_tokens",
//       "non_padding_fraction/loss_weights" (more "non_padding_fraction/*"
//       when packed), "timing/seconds", "timing/seqs",
//       "timing/steps_per_second", "timing/seqs_per_second",
//       "timing/seqs_per_second_per_core", "timing/target_tokens_per_second",
//       "timing/target_tokens_per_second_per_core"; the trainer's
//       "learning_rate" and "timing/uptime"; once each (train.py, trainer.py)
//       "timing/init_or_restore_seconds", "timing/compilation_seconds",
//       "timing/train_iter_warmup", and per checkpoint/eval
//       "timing/checkpoint_seconds", "timing/evaluate_seconds"; and the
//       operative gin config as the text summary tagged "config"
//       (gin_utils.summarize_gin_config: summary_writer.write_texts(step,
//       {'config': gin.markdown(config_str)}), at the start step, 0 for a
//       fresh run; the fiddle path, config_utils.py, uses "fiddle_config").
//   MODEL_DIR/training_eval/<task>/   MetricsManager(f"training_eval/{task[:113]}"):
//       the same model metrics on the train_eval dataset of each task.
// Tags are the metric names as they are, "/" included (TensorBoard groups
// by the part before the first "/").
//
// File format (the record framing is TFRecord's,
// tensorflow/core/lib/io/record_writer.h; little-endian):
//   uint64 length | uint32 masked_crc32c(length) | byte data[length] |
//   uint32 masked_crc32c(data)
// with masked_crc = ((c >> 15) | (c << 17)) + 0xa282ead8, c = CRC-32C; each
// data is one serialized tensorboard.Event (tensorboard/compat/proto/
// event.proto, summary.proto, tensor.proto, tensor_shape.proto; field numbers
// checked against tensorboard 2.21's descriptors):
//   Event           { double wall_time = 1; int64 step = 2;
//                     string file_version = 3; Summary summary = 5; }
//   Summary         { repeated Value value = 1; }
//   Summary.Value   { string tag = 1; float simple_value = 2;
//                     TensorProto tensor = 8; SummaryMetadata metadata = 9; }
//   SummaryMetadata { PluginData plugin_data = 1; }
//   PluginData      { string plugin_name = 1; bytes content = 2; }
//   TensorProto     { DataType dtype = 1; TensorShapeProto tensor_shape = 2;
//                     repeated bytes string_val = 8; }   // DT_STRING = 7
// The first record is the file-version event "brain.Event:2" (as TF's
// EventsWriter writes). Messages are encoded as protobuf would serialize them
// (fields in number order, proto3 defaults omitted), so they are byte-equal
// to what tensorboard's Python protos produce.
//
// Differences from t5x's files: scalars are written as Value.simple_value (as
// tf.compat.v1 summaries and tensorboard's own writers do; TensorBoard
// reads them as scalars the same way as TF2's DT_FLOAT tensors with the
// "scalars" plugin). Text summaries are exactly tf.summary.text's: a scalar
// DT_STRING tensor and plugin_name "text" with empty content
// (TextPluginData{version: 0}).
//
// Tags and texts are written as UTF-8 (tf.summary takes Python strs, and a
// proto string field must be UTF-8): bytes that are not well-formed UTF-8
// are written as U+FFFD, one per ill-formed sequence (ToValidUtf8,
// util/utf8.h), so a task name or gin string holding such bytes still gives
// an event file TensorBoard reads.
//
// Framework-free: no libtorch.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "t5xx/util/files/record_frame.h"  // TFRecordFrame, the frame of each event

namespace t5xx::trainer {

// Serialized tensorboard.Event protos (see the header comment). wall_time is
// in seconds since the Unix epoch.
// {wall_time, file_version: "brain.Event:2"}
std::string FileVersionEvent(double wall_time);
// {wall_time, step, summary {value {tag, simple_value: value}}}; tag and text
// pass through ToValidUtf8.
std::string ScalarEvent(double wall_time, int64_t step, const std::string& tag,
                        float value);
// {wall_time, step, summary {value {tag, tensor {dtype: DT_STRING,
//  tensor_shape {}, string_val: text}, metadata {plugin_data {plugin_name:
//  "text"}}}}} — tensorboard.plugins.text.summary_v2.text_pb(tag, text).
std::string TextEvent(double wall_time, int64_t step, const std::string& tag,
                      const std::string& text);

// Writes one TensorBoard event file in `log_dir`, as
// clu.metric_writers.SummaryWriter (tf.summary.create_file_writer) does.
// Thread-safe; not copyable.
//
// The file is named as TF2's summary file writer names it
// (tensorflow/core/summary/summary_file_writer.cc + EventsWriter):
//   events.out.tfevents.<unix seconds, %010d>.<hostname>.<pid>.<n>.v2
// where n counts the writers this process has opened, so two writers on the
// same directory in the same second never share a file.
//
// Events are buffered and written out by Flush(), automatically once 10 are
// pending or 120 s have passed since the last flush (TF's defaults,
// max_queue=10, flush_millis=120000), and by the destructor.
class SummaryWriter {
 public:
  // Creates `log_dir` (and its parents) if missing, and the event file with
  // its file-version event (flushed at once, so TensorBoard sees the run).
  // Throws t5xx::Error naming the path when the directory cannot be created
  // or the file cannot be created or written.
  explicit SummaryWriter(const std::string& log_dir);
  // Flushes and closes; errors are reported on stderr (never thrown).
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // A scalar summary (clu's write_scalars; t5x's metric values), at the
  // current wall time. Throws t5xx::Error naming the file when writing fails.
  // Write steps in non-decreasing order within a run directory: when an
  // event's step is below the largest seen so far, TensorBoard's
  // EventAccumulator (purge_orphaned_data) drops the events of that event's
  // tags with larger steps, taking it for a restart.
  void Scalar(const std::string& tag, float value, int64_t step);
  // A text summary (clu's write_texts / tf.summary.text); `text` is written
  // as UTF-8 (invalid bytes as U+FFFD), rendered by TensorBoard as Markdown. Throws t5xx::Error as Scalar.
  void Text(const std::string& tag, const std::string& text, int64_t step);
  // Writes out every pending event (fflush). Throws t5xx::Error naming the
  // file when that fails.
  void Flush();

  const std::string& log_dir() const { return log_dir_; }
  // The event file's full path.
  const std::string& path() const { return path_; }

 private:
  void Append(const std::string& event);  // needs mu_
  void FlushLocked();                     // needs mu_

  std::mutex mu_;
  std::string log_dir_;
  std::string path_;
  std::FILE* file_ = nullptr;
  int pending_ = 0;
  std::chrono::steady_clock::time_point last_flush_;
};

// Reading back (t5x's SaveBestCheckpointer reads the run's summaries).

// One event's first summary value when it is a scalar.
struct FirstScalar {
  int64_t step = 0;
  std::string tag;
  double value = 0;
};

// The events of the event file `path`, in file order, whose summary's first
// value is a scalar: a simple_value, or a DT_FLOAT / DT_DOUBLE tensor of one
// element (what tf.summary.scalar and clu write). Reading stops at a
// truncated or corrupt record, as TensorBoard's reader does (a file still
// being written ends in a partial record). Throws t5xx::Error naming the
// path when it cannot be opened.
std::vector<FirstScalar> ReadFirstScalars(const std::string& path);

// t5x's checkpoints.populate_metrics_for_steps: the values of metric
// `metric_name` ('{run}/{tag}') at `steps`, read from the event files under
// `model_dir`. The run is the first directory holding event files (names
// containing "tfevents"), walking top-down in name order, whose path
// relative to model_dir is a leading part of metric_name split at '/'; the
// tag is the rest. Its event files are read in name order; an event counts
// when its step is in `steps` and its first value has the tag (a later one
// overwrites an earlier). Empty when no run or value matches.
std::map<int64_t, double> MetricsForSteps(const std::string& model_dir,
                                          const std::string& metric_name,
                                          const std::set<int64_t>& steps);

}  // namespace t5xx::trainer
