#include "t5xx/trainer/metrics_writer.h"

#include <filesystem>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"

namespace t5xx::trainer {

MetricsWriter::MetricsWriter(const std::string& jsonl_path, std::ostream* console)
    : path_(jsonl_path), console_(console) {
  std::error_code ec;
  std::filesystem::create_directories(
      std::filesystem::path(jsonl_path).parent_path(), ec);
  file_.open(jsonl_path, std::ios::app);
  Check(file_.good(), "cannot open metrics file " + jsonl_path +
                          " for writing; check that MODEL_DIR is writable");
}

void MetricsWriter::Write(const std::string& prefix, int64_t step,
                          const std::map<std::string, double>& scalars) {
  nlohmann::json j;
  j["step"] = step;
  for (const auto& [k, v] : scalars) j[k] = v;
  file_ << j.dump() << "\n";
  file_.flush();
  if (console_) {
    std::ostringstream line;
    line << "[" << prefix << "] step " << step;
    for (const auto& [k, v] : scalars) {
      line << " | " << k << " " << std::setprecision(5) << v;
    }
    *console_ << line.str() << std::endl;
  }
}

}  // namespace t5xx::trainer
