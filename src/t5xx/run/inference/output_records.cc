// See output_records.h.
#include "t5xx/data/pipeline/array_json.h"
#include "t5xx/run/inference/output_records.h"

#include <nlohmann/json.hpp>

#include "t5xx/run/train_setup.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/md5.h"

namespace t5xx::run {

using json = nlohmann::json;

std::string ExamplesMd5(const std::vector<seqio::Example>& examples) {
  std::string bytes;
  auto put_size = [&](uint64_t n) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  };
  for (const seqio::Example& ex : examples) {
    put_size(ex.size());
    for (const auto& [name, value] : ex) {
      put_size(name.size());
      bytes += name;
      if (const auto* s = std::get_if<std::string>(&value)) {
        bytes.push_back('s');
        put_size(s->size());
        bytes += *s;
      } else if (const auto* a = std::get_if<seqio::Array>(&value)) {
        const std::string text = seqio::ArrayToStateJson(*a).dump();
        bytes.push_back('a');
        put_size(text.size());
        bytes += text;
      } else {
        const seqio::Tokens& t = std::get<seqio::Tokens>(value);
        bytes.push_back('t');
        put_size(t.size());
        for (int32_t id : t) put_size(static_cast<uint32_t>(id));
      }
    }
  }
  return Md5Hex(Md5(bytes));
}

std::string OutputRecordJson(const OutputRecord& r) {
  json settings = json::object();
  for (const auto& [k, v] : r.settings) settings[k] = v;
  json j{{"t5xx_infer_chunk", 1},
         {"examples", {r.first, r.end}},
         {"cut", {{"batch_size", r.batch_size}, {"checkpoint_period", r.checkpoint_period}}},
         {"settings", settings}};
  if (!r.examples_md5.empty()) j["examples_md5"] = r.examples_md5;
  return DumpJson(j) + "\n";
}

std::optional<OutputRecord> ReadOutputRecord(const std::string& path) {
  const std::string text = seqio::ReadFileToString(path, size_t{16} << 20);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  const std::string why =
      "; it is not a marker t5xx infer wrote: delete it and its chunk to recompute them";
  json j;
  std::string error;
  T5XX_CHECK(ParseJson(text, &j, &error), path + ": " + error + why);
  auto integer = [&](const json& v, const char* what) {
    const std::optional<int64_t> i = JsonInteger(v, 0);
    T5XX_CHECK(i.has_value(), path + ": " + what + " is not a count" + why);
    return *i;
  };
  try {
    T5XX_CHECK(j.is_object() && j.value("t5xx_infer_chunk", 0) == 1,
               path + " holds no t5xx_infer_chunk record" + why);
    OutputRecord r;
    const json& ex = j.at("examples");
    r.first = integer(ex.at(0), "examples[0]");
    r.end = integer(ex.at(1), "examples[1]");
    r.batch_size = integer(j.at("cut").at("batch_size"), "cut.batch_size");
    r.checkpoint_period = integer(j.at("cut").at("checkpoint_period"), "cut.checkpoint_period");
    for (const auto& [k, v] : j.at("settings").items()) r.settings[k] = v.get<std::string>();
    if (j.contains("examples_md5")) r.examples_md5 = j.at("examples_md5").get<std::string>();
    return r;
  } catch (const json::exception& e) {
    throw Error(path + ": " + e.what() + why);
  }
}

std::map<std::string, std::string> OutputSettings(const LoadedTrainConfig& loaded,
                                                  const std::vector<std::string>& skip) {
  auto ends_with = [](const std::string& k, const std::string& suffix) {
    return k.size() >= suffix.size() &&
           k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : loaded.config->OperativeValues()) {
    bool skipped = false;
    for (const std::string& s : skip) skipped = skipped || ends_with(k, s);
    if (!skipped) out[k] = v;
  }
  out["--data_dir"] = "'" + loaded.options.data_dir + "'";
  // int8 kernels change the outputs; float32 runs record nothing (as before).
  if (loaded.options.int8_weights) out["--int8_weights"] = "True";
  return out;
}

std::string OutputRecordMismatch(const std::string& name, const OutputRecord& old,
                                 const OutputRecord& wanted, bool compare_range) {
  if (compare_range && (old.first != wanted.first || old.end != wanted.end)) {
    auto range = [](const OutputRecord& r) {
      return "examples " + std::to_string(r.first) + "-" + std::to_string(r.end - 1) +
             " (batch_size " + std::to_string(r.batch_size) + " x checkpoint_period " +
             std::to_string(r.checkpoint_period) + ")";
    };
    return name + " holds " + range(old) + "; this run's chunk is " + range(wanted);
  }
  if (!old.examples_md5.empty() && !wanted.examples_md5.empty() &&
      old.examples_md5 != wanted.examples_md5) {
    return name + " holds other examples than this run reads for it (examples " +
           std::to_string(wanted.first) + "-" + std::to_string(wanted.end - 1) +
           ": their MD5 was " + old.examples_md5 + ", now " + wanted.examples_md5 +
           "; the data changed since it was written)";
  }
  for (const auto& [k, v] : wanted.settings) {
    auto it = old.settings.find(k);
    if (it == old.settings.end()) {
      return name + " was written without " + k + "; this run has " + k + " = " + v;
    }
    if (it->second != v) {
      return name + (name.rfind("the ", 0) == 0 ? " were" : " was") + " written with " + k + " = " +
             it->second + "; this run has " + v;
    }
  }
  for (const auto& [k, v] : old.settings) {
    if (!wanted.settings.count(k))
      return name + " was written with " + k + " = " + v + "; this run has none";
  }
  return "";
}

}  // namespace t5xx::run
