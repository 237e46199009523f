// A dataset prepared by TensorFlow Datasets -- the implementation of
// dataset_info.h.
#include "t5xx/data/tfds/dataset_info.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>

#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The sub-directories of `dir` (local, gs:// or s3://), sorted.
std::vector<std::string> Subdirs(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : storage::ListDirectory(dir)) {
    if (name[0] != '.' && storage::IsDirectory(storage::JoinPath(dir, name))) out.push_back(name);
  }
  return out;
}

// A version "1.2.3" as numbers; nullopt for another name.
std::optional<std::vector<int>> ParseVersion(const std::string& v) {
  static const std::regex re(R"(^(\d+)\.(\d+)\.(\d+)$)");
  std::smatch m;
  if (!std::regex_match(v, m, re)) return std::nullopt;
  return std::vector<int>{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

// Whether version `v` matches `pattern` ("1.2.3", "1.*.*", "1.2.*").
bool VersionMatches(const std::string& pattern, const std::string& v) {
  std::vector<std::string> p, x;
  std::stringstream ps(pattern), xs(v);
  for (std::string s; std::getline(ps, s, '.');) p.push_back(s);
  for (std::string s; std::getline(xs, s, '.');) x.push_back(s);
  if (p.size() != 3 || x.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (p[i] != "*" && p[i] != x[i]) return false;
  }
  return true;
}

std::string BuildHint(const std::string& tfds_name, const std::string& data_dir) {
  return "prepare it with TFDS (`tfds build " + tfds_name.substr(0, tfds_name.find(':')) +
         " --data_dir=" + data_dir + "`, or tfds.builder(...).download_and_prepare()), or "
         "point --tfds_data_dir (TFDS_DATA_DIR) at where it was prepared";
}

// "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}" for shard i of n.
std::string ShardFile(std::string tmpl, const std::string& name, const std::string& split,
                      const std::string& format, size_t i, size_t n) {
  char shard[64];
  std::snprintf(shard, sizeof(shard), "%05zu-of-%05zu", i, n);
  auto put = [&](const std::string& key, const std::string& value) {
    for (size_t at; (at = tmpl.find(key)) != std::string::npos;) tmpl.replace(at, key.size(), value);
  };
  put("{DATASET}", name);
  put("{SPLIT}", split);
  put("{FILEFORMAT}", format);
  put("{SHARD_X_OF_Y}", shard);
  return tmpl;
}

int64_t ParseCount(const json& v, const std::string& where) {
  // TFDS writes int64 fields as JSON strings ("shardLengths": ["5"]).
  try {
    if (v.is_string()) {
      size_t used = 0;
      const int64_t n = std::stoll(v.get<std::string>(), &used);
      if (used == v.get<std::string>().size() && n >= 0) return n;
    } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
      return v.get<int64_t>();
    }
  } catch (const std::exception&) {
  }
  throw Error(where + " is " + v.dump() + ", not a count");
}

}  // namespace

const TfdsSplitInfo& TfdsDataset::Split(const std::string& split) const {
  std::vector<std::string> names;
  for (const TfdsSplitInfo& s : splits) {
    if (s.name == split) return s;
    names.push_back(s.name);
  }
  throw Error("TFDS dataset " + name + (config.empty() ? "" : "/" + config) + ":" + version +
              " (" + dir + ") has no split '" + split + "' (its splits: " + QuotedList(names) +
              ")");
}

std::string TfdsDataDir(const std::string& override_dir, const std::string& source_dir) {
  if (!override_dir.empty()) return override_dir;
  if (!source_dir.empty()) return source_dir;
  if (const char* env = std::getenv("TFDS_DATA_DIR"); env && *env) return env;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/tensorflow_datasets";
}

TfdsDataset LoadTfdsDataset(const std::string& tfds_name, const std::string& data_dir) {
  static const std::regex re(R"(^([\w\-]+)(?:/([\w\-.]+))?(?::([\d*]+\.[\d*]+\.[\d*]+))?$)");
  std::smatch m;
  T5XX_CHECK(std::regex_match(tfds_name, m, re),
             "TFDS name '" + tfds_name + "' is not NAME[/CONFIG][:VERSION] (e.g. 'glue/cola:2.0.0', "
             "'c4/en:3.*.*')");
  TfdsDataset d;
  d.name = m[1];
  d.config = m[2];
  const std::string version_pattern = m[3];
  std::string base = data_dir + "/" + d.name;
  T5XX_CHECK(storage::IsDirectory(base), "TFDS dataset '" + tfds_name + "' is not prepared under " +
                                         data_dir + " (no directory " + base + "); " +
                                         BuildHint(tfds_name, data_dir));
  // Without a config: the one config there, or none (versions directly).
  if (d.config.empty()) {
    std::vector<std::string> configs;
    for (const std::string& s : Subdirs(base)) {
      if (!ParseVersion(s)) configs.push_back(s);
    }
    if (!configs.empty()) {
      T5XX_CHECK(configs.size() == 1,
                 "TFDS dataset '" + tfds_name + "' names no config, and " + base + " holds " +
                     std::to_string(configs.size()) + ": " + QuotedList(configs) +
                     "; name one, e.g. '" + d.name + "/" + configs[0] + "'");
      d.config = configs[0];
    }
  }
  if (!d.config.empty()) base += "/" + d.config;
  T5XX_CHECK(storage::IsDirectory(base), "TFDS dataset '" + tfds_name + "' has no config '" +
                                         d.config + "' under " + data_dir + " (no directory " +
                                         base + "; there: " + QuotedList(Subdirs(data_dir + "/" + d.name)) +
                                         "); " + BuildHint(tfds_name, data_dir));
  std::vector<std::string> versions;
  for (const std::string& s : Subdirs(base)) {
    if (ParseVersion(s) && storage::FileSize(base + "/" + s + "/dataset_info.json")) versions.push_back(s);
  }
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    return *ParseVersion(a) < *ParseVersion(b);
  });
  std::string chosen;
  for (const std::string& v : versions) {
    if (version_pattern.empty() || VersionMatches(version_pattern, v)) chosen = v;
  }
  T5XX_CHECK(!chosen.empty(),
             "TFDS dataset '" + tfds_name + "': " +
                 (versions.empty() ? "no prepared version under " + base
                                   : "no version matching " + version_pattern + " under " + base +
                                         " (there: " + QuotedList(versions) + ")") +
                 "; " + BuildHint(tfds_name, data_dir));
  d.version = chosen;
  d.dir = base + "/" + chosen;
  const std::string info_path = d.dir + "/dataset_info.json";
  json info;
  try {
    info = json::parse(storage::ReadFile(info_path, "the TFDS file"));
  } catch (const json::exception& e) {
    throw Error(info_path + ": not JSON: " + e.what());
  }
  try {
    d.file_format = info.value("fileFormat", "tfrecord");
    T5XX_CHECK(d.file_format == "tfrecord",
               info_path + ": fileFormat is '" + d.file_format + "'; t5xx reads TFDS's tfrecord "
               "shards only (array_record has no C++ reader in t5xx's stack yet): prepare the "
               "dataset with file_format='tfrecord'");
    d.disable_shuffling = info.value("disableShuffling", false);
    const std::string file_name = info.value("name", d.name);
    for (const json& s : info.at("splits")) {
      TfdsSplitInfo split;
      split.name = s.at("name").get<std::string>();
      const std::string where = info_path + ": splits[" + split.name + "]";
      for (const json& n : s.value("shardLengths", json::array())) {
        split.shard_lengths.push_back(ParseCount(n, where + ".shardLengths"));
        split.num_examples += split.shard_lengths.back();
      }
      const std::string tmpl =
          s.value("filepathTemplate", "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}");
      for (size_t i = 0; i < split.shard_lengths.size(); ++i) {
        split.files.push_back(d.dir + "/" + ShardFile(tmpl, file_name, split.name, d.file_format, i,
                                                      split.shard_lengths.size()));
      }
      d.splits.push_back(std::move(split));
    }
  } catch (const json::exception& e) {
    throw Error(info_path + ": " + e.what() + " (is it a TFDS dataset_info.json?)");
  }
  return d;
}

std::vector<TfdsReadInstruction> ResolveTfdsSplit(const std::string& spec,
                                                  const TfdsDataset& dataset) {
  static const std::regex sub_re(R"(^([\w\-]+)(?:\[([\d\w%:.\-]+)\])?$)");
  static const std::regex slice_re(R"(^(?:(-?[\d_.]+)(%|shard)?)?$)");
  const std::string bad = "split '" + spec + "' is not a TFDS split (e.g. 'train', "
                          "'train[:10%]', 'validation[100:200]', 'train+validation')";
  std::vector<TfdsReadInstruction> out;
  std::vector<std::string> parts;
  {
    // TFDS splits the spec at '+' and strips each part; a space inside a
    // part is no split.
    auto strip = [](std::string x) {
      const size_t b = x.find_first_not_of(" \t"), e = x.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : x.substr(b, e - b + 1);
    };
    std::string cur;
    for (char c : spec) {
      if (c == '+') {
        parts.push_back(strip(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    parts.push_back(strip(cur));
  }
  for (const std::string& part : parts) {
    std::smatch m;
    T5XX_CHECK(std::regex_match(part, m, sub_re), bad);
    const TfdsSplitInfo& split = dataset.Split(m[1]);
    const int64_t n = split.num_examples;
    TfdsReadInstruction r{split.name, 0, n};
    if (m[2].matched) {
      std::vector<std::string> bounds;
      std::stringstream ss(m[2].str());
      for (std::string b; std::getline(ss, b, ':');) bounds.push_back(b);
      if (m[2].str().back() == ':') bounds.push_back("");
      T5XX_CHECK(bounds.size() == 2, bad + ": slices are [from:to] ([N] only for shards)");
      std::smatch a, b;
      T5XX_CHECK(std::regex_match(bounds[0], a, slice_re) && std::regex_match(bounds[1], b, slice_re),
                 bad);
      const std::string unit = a[2].matched ? a[2].str() : b[2].matched ? b[2].str() : "";
      T5XX_CHECK(unit != "shard", "split '" + spec + "': shard slices are not supported yet");
      auto value = [&](const std::smatch& x, int64_t missing) -> int64_t {
        if (!x[1].matched) return missing;
        const std::string text = x[1].str();
        if (unit == "%") {
          const double percent = std::stod(text);
          T5XX_CHECK(std::abs(percent) <= 100,
                     "split '" + spec + "': percent slice boundaries must be in [-100, 100] "
                     "(TFDS's rule), got " + text + "%");
          // TFDS's "closest" rounding: Python's round, half to even.
          return static_cast<int64_t>(std::nearbyint(percent * static_cast<double>(n) / 100.0));
        }
        T5XX_CHECK(text.find('.') == std::string::npos, bad + ": absolute bounds are integers");
        return std::stoll(text);
      };
      int64_t from = value(a, 0), to = value(b, n);
      T5XX_CHECK(std::abs(from) <= n && std::abs(to) <= n,
                 "split '" + spec + "': the slice [" + bounds[0] + ":" + bounds[1] +
                     "] is out of range for the " + std::to_string(n) + " examples of '" +
                     split.name + "'");
      if (from < 0) from += n;
      if (to < 0) to += n;
      r.from = from;
      r.to = std::max(from, to);
    }
    // TFDS: "Instruction ... corresponds to no data!" -- a slice that reads
    // nothing is a mistake, not an empty epoch.
    T5XX_CHECK(r.to > r.from, "split '" + spec + "': '" + part + "' selects no example of '" +
                                  split.name + "' (" + std::to_string(n) +
                                  " examples); TFDS refuses it too (\"corresponds to no data\")");
    out.push_back(r);
  }
  return out;
}

std::vector<TfdsFileRead> TfdsFileReads(const std::vector<TfdsReadInstruction>& reads,
                                        const TfdsDataset& dataset) {
  std::vector<TfdsFileRead> out;
  for (const TfdsReadInstruction& r : reads) {
    const TfdsSplitInfo& split = dataset.Split(r.split);
    int64_t start = 0;
    for (size_t i = 0; i < split.files.size(); ++i) {
      const int64_t end = start + split.shard_lengths[i];
      const int64_t from = std::max(r.from, start), to = std::min(r.to, end);
      if (from < to) out.push_back({split.files[i], from - start, to - from});
      start = end;
    }
  }
  return out;
}

}  // namespace t5xx::seqio
