// t5's task and mixture catalog against t5 and seqio themselves:
// tests/testdata/t5_catalog/catalog_oracle.json holds what seqio + t5
// (google-research/text-to-text-transfer-transformer at e081111, seqio
// 0.0.19) give over the TFDS fixtures of tests/testdata/tfds/ with the small
// vocabulary beside it (tests/interop/make_t5_catalog_oracle.py; ctest
// interop_t5_catalog_oracle checks the file against them again): every
// task's and mixture's name, each task's source and output features, the
// examples of every split before and after the preprocessors and the feature
// converter, the metrics of fixed predictions, and every mixture's rates.
#include "t5xx/catalog/t5_catalog.h"

#include <gtest/gtest.h>

#include "scoped_env.h"
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/pipeline/array_json.h"
#include "t5xx/data/tfds/tfds_data_source.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::catalog {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using seqio::Example;

const std::string kRoot = T5XX_SOURCE_DIR;

const json& Oracle() {
  static const json oracle = [] {
    std::ifstream in(kRoot + "/tests/testdata/t5_catalog/catalog_oracle.json");
    return json::parse(in);
  }();
  return oracle;
}

// The oracle's {"dtype", "shape", "value"} of a t5xx feature.
json AsOracle(const seqio::FeatureValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    return {{"dtype", "string"}, {"shape", json::array()}, {"value", *s}};
  }
  if (const auto* t = std::get_if<seqio::Tokens>(&v)) {
    return {{"dtype", "int32"}, {"shape", {t->size()}}, {"value", *t}};
  }
  const seqio::Array& a = std::get<seqio::Array>(v);
  return {{"dtype", seqio::DTypeName(a.dtype)}, {"shape", a.shape},
          {"value", seqio::ArrayToNestedJson(a)}};
}

json AsOracle(const Example& ex) {
  json out = json::object();
  for (const auto& [k, v] : ex) out[k] = AsOracle(v);
  return out;
}

std::vector<Example> All(seqio::DatasetPtr ds) {
  std::vector<Example> out;
  while (auto ex = ds->Next()) out.push_back(std::move(*ex));
  return out;
}

// Registries with the catalog over the fixtures: the gs:// vocabularies'
// copies under a data directory of the test's own, TFDS data from the
// fixtures.
struct Catalog {
  seqio::TaskRegistry tasks;
  seqio::MixtureRegistry mixtures;
  Catalog() {
    const std::string dir = ::testing::TempDir() + "/t5_catalog_" + std::to_string(getpid());
    for (const json& gs : Oracle()["vocabulary"]["gs_paths"]) {
      const std::string path = gs.get<std::string>();
      const fs::path local = fs::path(dir) / path.substr(5);
      fs::create_directories(local.parent_path());
      if (!fs::exists(local)) {
        fs::copy_file(kRoot + "/" + Oracle()["vocabulary"]["file"].get<std::string>(), local);
      }
    }
    seqio::SetTfdsDataDirOverride(kRoot + "/tests/testdata/tfds/data");
    RegisterT5Catalog(tasks, mixtures, {dir, false});
  }
};

Catalog& TheCatalog() {
  static Catalog* c = new Catalog();
  return *c;
}

TEST(T5Catalog, NamesAreT5s) {
  std::vector<std::string> tasks, mixtures;
  for (const auto& [name, t] : Oracle()["tasks"].items()) tasks.push_back(name);
  for (const auto& [name, m] : Oracle()["mixtures"].items()) mixtures.push_back(name);
  EXPECT_EQ(TheCatalog().tasks.Names(), tasks);
  EXPECT_EQ(TheCatalog().mixtures.Names(), mixtures);
  EXPECT_EQ(T5CatalogTaskNames(), tasks);
  EXPECT_EQ(T5CatalogMixtureNames(), mixtures);
}

TEST(T5Catalog, OutputFeaturesAreT5s) {
  for (const auto& [name, want] : Oracle()["tasks"].items()) {
    seqio::TaskPtr task = TheCatalog().tasks.Get(name);
    json got = json::object();
    for (const auto& [k, f] : task->output_features()) {
      got[k] = {{"add_eos", f.add_eos}, {"required", f.required}};
    }
    EXPECT_EQ(got, want["output_features"]) << name;
    EXPECT_EQ(task->predict_metric_fns().size(), want["metric_fns"].size()) << name;
    EXPECT_EQ(static_cast<bool>(task->postprocess_fn()), !want["postprocess_fn"].is_null())
        << name;
  }
}

seqio::FeatureLengths Lengths(const json& j) {
  seqio::FeatureLengths out;
  for (const auto& [k, v] : j.items()) out[k] = v.get<int64_t>();
  return out;
}

// Compares the examples t5xx made with the oracle's, naming the first
// difference.
void ExpectExamples(const std::vector<Example>& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const json g = AsOracle(got[i]);
    if (g == want[i]) continue;
    for (const auto& [k, v] : want[i].items()) {
      EXPECT_EQ(g.value(k, json()), v) << what << " example " << i << " feature " << k;
    }
    EXPECT_EQ(g.size(), want[i].size()) << what << " example " << i << ": " << g.dump();
    return;
  }
}

TEST(T5Catalog, ExamplesAreT5s) {
  for (const auto& [name, want] : Oracle()["tasks"].items()) {
    seqio::TaskPtr task = TheCatalog().tasks.Get(name);
    const seqio::FeatureLengths lengths = Lengths(want["sequence_length"]);
    for (const auto& [split, w] : want["splits"].items()) {
      const std::string what = name + " " + split;
      SCOPED_TRACE(what);
      try {
        if (w.contains("precache")) {
          seqio::DatasetPtr source = task->source()->GetDataset(split, false, 0, {});
          std::vector<Example> got = All(task->PreprocessPrecache(std::move(source), 0));
          if (got.size() > w["precache"].size()) got.resize(w["precache"].size());
          ExpectExamples(got, w["precache"], what + " precache");
        }
        if (!want["deterministic"].get<bool>()) continue;
        std::vector<Example> pre = All(task->GetDataset(lengths, split, /*shuffle=*/false, 0));
        ExpectExamples(pre, w["preprocessed"], what + " preprocessed");
        if (w.contains("converted")) {
          std::unique_ptr<seqio::FeatureConverter> converter;
          if (task->output_features().count("inputs")) {
            converter = std::make_unique<seqio::EncDecFeatureConverter>(/*pack=*/false);
          } else {
            converter = std::make_unique<seqio::DecoderFeatureConverter>(/*pack=*/false);
          }
          std::vector<Example> conv = converter->Convert(pre, lengths);
          // The oracle holds the first examples only.
          if (conv.size() > w["converted"].size()) conv.resize(w["converted"].size());
          ExpectExamples(conv, w["converted"], what + " converted");
        }
      } catch (const Error& e) {
        ADD_FAILURE() << what << ": " << e.what();
      }
    }
  }
}

TEST(T5Catalog, MetricsAreT5s) {
  for (const auto& [name, want] : Oracle()["tasks"].items()) {
    if (!want.contains("metrics") || want["metrics"].is_null()) continue;
    const json& m = want["metrics"];
    seqio::TaskPtr task = TheCatalog().tasks.Get(name);
    const std::string split = m["split"];
    try {
      std::vector<Example> examples =
          All(task->GetDataset(Lengths(want["sequence_length"]), split, false, 0));
      const auto got =
          seqio::EvaluatePredictions(*task, examples, m["predictions"].get<std::vector<std::string>>());
      for (const auto& [k, v] : m["results"].items()) {
        ASSERT_TRUE(got.count(k)) << name << ": no metric " << k;
        EXPECT_NEAR(got.at(k), v.get<double>(), 1e-6) << name << " " << k;
      }
      EXPECT_EQ(got.size(), m["results"].size()) << name;
    } catch (const Error& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

TEST(T5Catalog, MixtureRatesAreT5s) {
  for (const auto& [name, want] : Oracle()["mixtures"].items()) {
    seqio::MixturePtr mixture = TheCatalog().mixtures.Get(name);
    for (const auto& [task, rate] : want["rates"].items()) {
      if (rate.is_object()) {
        // seqio fails for this task (en_mix's rate_num_examples of a task
        // without a train split): so must t5xx.
        SCOPED_TRACE(name + " " + task + ": seqio: " + rate["error"].dump());
        EXPECT_ERROR_CONTAINS(mixture->GetRate(*TheCatalog().tasks.Get(task)), "train");
        continue;
      }
      EXPECT_NEAR(mixture->GetRate(*TheCatalog().tasks.Get(task)), rate.get<double>(),
                  1e-9 * std::max(1.0, rate.get<double>()))
          << name << " " << task;
    }
  }
}

TEST(T5Catalog, MissingVocabularyCopyIsNamedOnUse) {
  seqio::TaskRegistry tasks;
  seqio::MixtureRegistry mixtures;
  const std::string dir = ::testing::TempDir() + "/t5_catalog_empty_" + std::to_string(getpid());
  seqio::SetTfdsDataDirOverride(kRoot + "/tests/testdata/tfds/data");
  // (Offline: a host that never resolves stands for the bucket.)
  testing::ScopedEnv offline("STORAGE_EMULATOR_HOST", "http://t5xx-offline.invalid");
  RegisterT5Catalog(tasks, mixtures, {dir, false});
  seqio::TaskPtr task = tasks.Get("glue_cola_v002");
  EXPECT_ERROR_CONTAINS(
      All(task->GetDataset({{"inputs", 32}, {"targets", 8}}, "validation", false, 0)),
      "gs://t5-data/vocabs/cc_all.32000/sentencepiece.model: cannot reach t5xx-offline.invalid");
  EXPECT_ERROR_CONTAINS(
      All(task->GetDataset({{"inputs", 32}, {"targets", 8}}, "validation", false, 0)),
      "nor is there a copy of gs://t5-data/vocabs/cc_all.32000/sentencepiece.model under --data_dir (" +
          dir + "/t5-data/vocabs/cc_all.32000/sentencepiece.model)");
}

}  // namespace
}  // namespace t5xx::catalog
