// Writes step metrics as a one-line summary on stdout and as JSON lines
// (one object per record) to a file, e.g. MODEL_DIR/train/metrics.jsonl.
#pragma once

#include <fstream>
#include <map>
#include <ostream>
#include <string>

namespace t5xx::trainer {

class MetricsWriter {
 public:
  // Creates parent directories; throws t5xx::Error naming the path when the
  // file cannot be opened for appending.
  MetricsWriter(const std::string& jsonl_path, std::ostream* console);

  // Writes {"step": step, name: value, ...} to the file (flushed) and
  // "[prefix] step N | name value | ..." to the console.
  void Write(const std::string& prefix, int64_t step,
             const std::map<std::string, double>& scalars);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream file_;
  std::ostream* console_;
};

}  // namespace t5xx::trainer
