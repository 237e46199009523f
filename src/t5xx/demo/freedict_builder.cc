// The demo translation task's data from FreeDict eng-deu: select, split,
// write JSON lines.
//
// Measured with the default options on Debian's dict-freedict-eng-deu
// 2022.04.15 (freedict-eng-deu.dict.dz 15.3 MB, 79.6 MB text, 460,315
// entries), 2 shared cores, Release build:
//   pairs         741,527 in the dictionary; 178,309 of unambiguous English
//                 phrases of 1-3 words and <= 30 code points in plain
//                 letters; 35,615 of them spelled alike (similarity >= 0.5)
//   splits        35,115 train (1.6 MB) / 500 validation (the cap; 2%
//                 would be ~710)
//   time          4.8 s wall, 4.6 s CPU;
//                 peak RSS 300 MB (the whole text in memory)
//   re-run        reused: freedict_info.json found, its files' lines
//                 counted, nothing rebuilt (build_corpus: 1 s with the C4
//                 part's check)
#include "t5xx/demo/freedict_builder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/demo/build_marker.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/json_text.h"

namespace t5xx::seqio {
namespace {

using nlohmann::json;

constexpr char kFreedictInfoFile[] = "freedict_info.json";
constexpr char kTrainFile[] = "train.jsonl";
constexpr char kValidationFile[] = "validation.jsonl";

// The split hash: the phrase's FNV-1a mixed with the seed, as the corpus
// builder hashes a url.
uint64_t PhraseHash(const std::string& english, uint64_t seed) {
  return SplitMix64(Fnv1a64(english) ^ SplitMix64(seed));
}

// u in [0, 1) from the top 53 bits.
double Unit(uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }

json OptionsJson(const FreedictOptions& o) {
  return json{{"dictionary", o.dictionary},
              {"max_words", o.selection.max_words},
              {"max_characters", o.selection.max_characters},
              {"min_spelling_similarity", o.selection.min_spelling_similarity},
              {"validation_fraction", o.validation_fraction},
              {"max_validation_examples", o.max_validation_examples},
              {"seed", o.seed}};
}

FreedictInfo FreedictInfoFromJson(const json& j, const std::string& dir) {
  FreedictInfo info;
  info.output_dir = dir;
  info.train_file = dir + "/" + j.at("splits").at("train").at("file").get<std::string>();
  info.validation_file =
      dir + "/" + j.at("splits").at("validation").at("file").get<std::string>();
  info.train_examples = j.at("splits").at("train").at("examples").get<int64_t>();
  info.validation_examples = j.at("splits").at("validation").at("examples").get<int64_t>();
  info.dictionary_pairs = j.at("dictionary_pairs").get<int64_t>();
  info.build_seconds = j.at("build_seconds").get<double>();
  return info;
}

int64_t CountLines(const std::string& path) {
  LineReader reader(path);
  std::string line;
  int64_t n = 0;
  while (reader.Next(&line)) ++n;
  return n;
}

// True when both files exist with the marker's line counts.
bool FilesAreIntact(const FreedictInfo& info) {
  return FileExists(info.train_file) && FileExists(info.validation_file) &&
         CountLines(info.train_file) == info.train_examples &&
         CountLines(info.validation_file) == info.validation_examples;
}

std::string JsonLines(const std::vector<TranslationPair>& pairs) {
  std::string out;
  for (const TranslationPair& p : pairs) {
    out += DumpJson(json{{"en", p.english}, {"de", p.german}});
    out += '\n';
  }
  return out;
}

}  // namespace

FreedictInfo ReadFreedictInfo(const std::string& output_dir) {
  const std::string path = output_dir + "/" + kFreedictInfoFile;
  if (!FileExists(path)) {
    throw Error("freedict translation data not built: '" + path +
                "' is missing (run `t5xx build_corpus`)");
  }
  try {
    const json j = json::parse(ReadFileToString(path));
    if (j.at("format_version").get<int>() != FreedictInfo::kFormatVersion) {
      throw Error("'" + path + "' has format_version " + DumpJson(j.at("format_version")) +
                  ", expected " + std::to_string(FreedictInfo::kFormatVersion) +
                  "; rebuild it with `t5xx build_corpus --overwrite=true`");
    }
    return FreedictInfoFromJson(j, output_dir);
  } catch (const json::exception& e) {
    throw Error("malformed freedict info '" + path + "': " + e.what() +
                "; delete it and run `t5xx build_corpus`");
  }
}

FreedictInfo BuildFreedictData(const FreedictOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  T5XX_CHECK(!o.output_dir.empty(), "BuildFreedictData: output_dir is empty");
  T5XX_CHECK(o.validation_fraction >= 0 && o.validation_fraction < 1,
             "BuildFreedictData: validation_fraction must be in [0, 1), got " +
                 std::to_string(o.validation_fraction));
  T5XX_CHECK(o.max_validation_examples >= 0,
             "BuildFreedictData: max_validation_examples must be >= 0, got " +
                 std::to_string(o.max_validation_examples));

  const std::string dir = o.output_dir;
  const std::string info_path = dir + "/" + kFreedictInfoFile;
  const json options_json = OptionsJson(o);
  if (std::optional<json> j = ReadBuildMarker(info_path, dir, FreedictInfo::kFormatVersion,
                                              options_json, o.overwrite,
                                              "freedict translation data set")) {
    try {
      FreedictInfo info = FreedictInfoFromJson(*j, dir);
      if (FilesAreIntact(info)) {
        info.reused = true;
        return info;
      }
    } catch (const json::exception&) {
    } catch (const Error&) {
    }
    // Missing or damaged files: rebuild below.
  }

  // Read before touching the output directory.
  const std::vector<TranslationPair> all = ReadFreedictPairs(o.dictionary);
  const std::vector<TranslationPair> kept = SelectFreedictPairs(all, o.selection);
  if (kept.empty()) {
    throw Error("BuildFreedictData: no pair of '" + o.dictionary + "' (" +
                std::to_string(all.size()) + " pairs) passes the selection (max_words " +
                std::to_string(o.selection.max_words) + ", max_characters " +
                std::to_string(o.selection.max_characters) + ")");
  }

  // Validation: the phrases with u < validation_fraction, at most
  // max_validation_examples of them, smallest u first; train: the rest, in
  // order of a second hash.
  std::vector<std::pair<uint64_t, size_t>> by_hash;
  by_hash.reserve(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    by_hash.push_back({PhraseHash(kept[i].english, o.seed), i});
  }
  std::sort(by_hash.begin(), by_hash.end());
  std::vector<TranslationPair> validation, train;
  std::vector<std::pair<uint64_t, size_t>> train_order;
  for (const auto& [h, i] : by_hash) {
    if (Unit(h) < o.validation_fraction &&
        static_cast<int64_t>(validation.size()) < o.max_validation_examples) {
      validation.push_back(kept[i]);
    } else {
      train_order.push_back({SplitMix64(h ^ 0x747261696eULL), i});
    }
  }
  std::sort(train_order.begin(), train_order.end());
  for (const auto& [h, i] : train_order) train.push_back(kept[i]);

  MakeDirs(dir);
  std::remove(info_path.c_str());  // no longer complete while rebuilding
  FreedictInfo info;
  info.output_dir = dir;
  info.train_file = dir + "/" + kTrainFile;
  info.validation_file = dir + "/" + kValidationFile;
  info.train_examples = static_cast<int64_t>(train.size());
  info.validation_examples = static_cast<int64_t>(validation.size());
  info.dictionary_pairs = static_cast<int64_t>(all.size());
  WriteStringToFileAtomic(info.train_file, JsonLines(train));
  WriteStringToFileAtomic(info.validation_file, JsonLines(validation));
  info.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const json info_json = {
      {"format_version", FreedictInfo::kFormatVersion},
      {"format", "json lines: en, de (TFDS wmt's keys)"},
      {"options", options_json},
      {"dictionary_pairs", info.dictionary_pairs},
      {"splits",
       {{"train", {{"file", kTrainFile}, {"examples", info.train_examples}}},
        {"validation", {{"file", kValidationFile}, {"examples", info.validation_examples}}}}},
      {"build_seconds", info.build_seconds},
  };
  WriteStringToFileAtomic(info_path, DumpJson(info_json, 2) + "\n");
  return info;
}

}  // namespace t5xx::seqio
