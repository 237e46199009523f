// One collection of summaries, as t5x's MetricsManager writes it through a clu
// metric writer (t5x/trainer.py) -- the implementation of metrics_writer.h.
#include "t5xx/trainer/metrics_writer.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::trainer {

MetricsWriter::MetricsWriter(const std::string& dir)
    : dir_(dir), jsonl_path_(dir + "/metrics.jsonl"), summary_(dir) {
  file_.open(jsonl_path_, std::ios::app);
  T5XX_CHECK(file_.good(), "cannot open metrics file " + jsonl_path_ +
                          " for writing; check that MODEL_DIR is writable");
}

void MetricsWriter::WriteScalars(int64_t step,
                                 const std::map<std::string, double>& scalars) {
  nlohmann::json j;
  j["step"] = step;
  for (const auto& [k, v] : scalars) {
    summary_.Scalar(k, static_cast<float>(v), step);
    if (std::isfinite(v)) {
      j[k] = v;
    } else {
      j[k] = nullptr;
    }
  }
  summary_.Flush();
  file_ << DumpJson(j) << "\n";
  file_.flush();
  T5XX_CHECK(file_.good(), "cannot write metrics file " + jsonl_path_ +
                          "; check that MODEL_DIR is writable and not full");
}

void MetricsWriter::WriteText(const std::string& tag, const std::string& text,
                              int64_t step) {
  summary_.Text(tag, text, step);
  summary_.Flush();
}

}  // namespace t5xx::trainer
