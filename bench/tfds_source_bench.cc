// Reading C4-shaped data: seqio.TfdsDataSource over a dataset in TFDS's
// layout against the JSON-lines source over the same documents (issue 51:
// the TFDS source at >= the JSON-lines source's examples/s).
//
//   build/bin/t5xx_tfds_source_bench
//
// 20,000 documents with c4/en's features (text, url, timestamp,
// content-length, content-type; text of 150-600 words, ~2 KB as C4's
// average), written once into a temporary directory both ways: 8 shards
// c4-train.tfrecord-0000N-of-00008 with dataset_info.json and c4's
// features.json (as TFDS 4.9 writes them, tests/testdata/tfds/), and 8 JSON
// lines files of the same records. An iteration reads every example of the
// train split in the source's order, on one thread. Counters: examples/s and
// MB/s of the records read; the label the files' bytes.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/sources/json_lines_source.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/data/tfds/tfds_data_source.h"

namespace t5xx::seqio {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kDocs = 20000;
constexpr int kShards = 8;

struct Data {
  std::string root;  // <root>/tfds/c4/en/2.2.0, <root>/json/c4-train.json-0000N
  int64_t tfds_bytes = 0, json_bytes = 0;
};

const Data& TheData() {
  static const Data data = [] {
    Data d;
    d.root = (fs::temp_directory_path() / ("t5xx_tfds_bench_" + std::to_string(getpid()))).string();
    const fs::path dir = fs::path(d.root) / "tfds" / "c4" / "en" / "2.2.0";
    fs::create_directories(dir);
    fs::create_directories(fs::path(d.root) / "json");
    std::mt19937 rng(3);
    std::vector<std::string> words;
    for (int w = 0; w < 5000; ++w) {
      std::string s;
      const int len = 2 + static_cast<int>(rng() % 8);
      for (int i = 0; i < len; ++i) s += static_cast<char>('a' + rng() % 26);
      words.push_back(s);
    }
    json lengths = json::array();
    for (int shard = 0; shard < kShards; ++shard) {
      std::vector<std::string> records;
      std::string lines;
      const int n = kDocs / kShards;
      for (int i = 0; i < n; ++i) {
        std::string text;
        const int count = 150 + static_cast<int>(rng() % 450);
        for (int k = 0; k < count; ++k) {
          text += words[rng() % words.size()];
          text += (k % 15 == 14) ? ".\n" : " ";
        }
        Example ex{{"text", text},
                   {"url", "https://example.com/page/" + std::to_string(shard * n + i)},
                   {"timestamp", "2019-04-2" + std::to_string(i % 10) + "T10:00:00Z"},
                   {"content-length", std::to_string(text.size())},
                   {"content-type", "text/plain"}};
        records.push_back(SerializeTFExample(ex));
        json j;
        for (const auto& [k, v] : ex) j[k] = std::get<std::string>(v);
        lines += j.dump() + "\n";
      }
      char name[64];
      std::snprintf(name, sizeof(name), "c4-train.tfrecord-%05d-of-%05d", shard, kShards);
      WriteTFRecordFile((dir / name).string(), records);
      d.tfds_bytes += static_cast<int64_t>(fs::file_size(dir / name));
      const fs::path jf = fs::path(d.root) / "json" / ("c4-train.json-0000" + std::to_string(shard));
      std::ofstream(jf) << lines;
      d.json_bytes += static_cast<int64_t>(fs::file_size(jf));
      lengths.push_back(std::to_string(n));  // TFDS writes int64s as strings
    }
    json text = {{"pythonClassName", "tensorflow_datasets.core.features.text_feature.Text"},
                 {"text", json::object()}};
    json features = {
        {"pythonClassName", "tensorflow_datasets.core.features.features_dict.FeaturesDict"},
        {"featuresDict",
         {{"features",
           {{"text", text}, {"url", text}, {"timestamp", text}, {"content-length", text},
            {"content-type", text}}}}}};
    std::ofstream(dir / "features.json") << features.dump();
    json info = {{"name", "c4"}, {"configName", "en"}, {"version", "2.2.0"},
                 {"fileFormat", "tfrecord"},
                 {"splits",
                  {{{"name", "train"},
                    {"shardLengths", lengths},
                    {"filepathTemplate", "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"}}}}};
    std::ofstream(dir / "dataset_info.json") << info.dump();
    return d;
  }();
  return data;
}

void Read(benchmark::State& state, const DataSource& source, int64_t bytes) {
  int64_t examples = 0;
  for (auto _ : state) {
    DatasetPtr ds = source.GetDataset("train", /*shuffle=*/false, 0, ShardInfo{});
    while (auto ex = ds->Next()) benchmark::DoNotOptimize(ex);
    examples += kDocs;
  }
  state.counters["examples_per_s"] =
      benchmark::Counter(static_cast<double>(examples), benchmark::Counter::kIsRate);
  state.counters["MB_per_s"] = benchmark::Counter(
      static_cast<double>(bytes) * state.iterations() / 1e6, benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(kDocs) + " C4-shaped documents, " + std::to_string(bytes / 1000000) +
                 " MB in " + std::to_string(kShards) + " files");
}

void BM_TfdsSource(benchmark::State& state) {
  const Data& d = TheData();
  TfdsDataSource source("c4/en:2.2.0", d.root + "/tfds", {});
  Read(state, source, d.tfds_bytes);
}
BENCHMARK(BM_TfdsSource)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_JsonLinesSource(benchmark::State& state) {
  const Data& d = TheData();
  JsonLinesDataSource source({{"train", d.root + "/json/c4-train.json-*"}});
  Read(state, source, d.json_bytes);
}
BENCHMARK(BM_JsonLinesSource)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace t5xx::seqio

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::error_code ec;
  std::filesystem::remove_all(t5xx::seqio::TheData().root, ec);
  return 0;
}
