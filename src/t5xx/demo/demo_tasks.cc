// The demo tasks over the demo corpus (span corruption and full LM, as t5's
// c4_v220 tasks) and the FreeDict translation data; see demo_tasks.h.
#include "t5xx/demo/demo_tasks.h"

#include <filesystem>
#include <memory>

#include "t5xx/data/preprocessors/lm_preprocessors.h"
#include "t5xx/data/preprocessors/span_corruption.h"
#include "t5xx/data/preprocessors/text_preprocessors.h"
#include "t5xx/data/sources/json_lines_source.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/freedict_builder.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

std::string DemoCorpusDir(const std::string& data_dir) {
  return data_dir + "/c4_demo";
}

std::string FreedictDataDir(const std::string& data_dir) {
  return data_dir + "/freedict_en_de";
}

namespace {

// The source of a task whose data has not been built: it lists the splits
// the built data will have and refuses to read, saying why and how to build
// it (as TFDS's as_dataset refuses a dataset download_and_prepare has not
// prepared).
class UnbuiltDataSource : public DataSource {
 public:
  UnbuiltDataSource(std::vector<std::string> splits, std::string problem)
      : splits_(std::move(splits)), problem_(std::move(problem)) {}
  std::vector<std::string> splits() const override { return splits_; }
  DatasetPtr GetDataset(const std::string&, bool, uint64_t, const ShardInfo&) const override {
    throw Error(problem_);
  }
  std::vector<std::string> ListShards(const std::string&) const override {
    throw Error(problem_);
  }

 private:
  std::vector<std::string> splits_;
  std::string problem_;
};

// The translation task's source: its JSON lines when freedict_info.json is
// there, else an UnbuiltDataSource.
DataSourcePtr FreedictSource(const std::string& data_dir, bool skip_bad_records) {
  const std::string dir = FreedictDataDir(data_dir);
  const std::string marker = dir + "/freedict_info.json";
  FreedictInfo info;
  try {
    info = ReadFreedictInfo(dir);
  } catch (const Error& e) {
    return std::make_shared<UnbuiltDataSource>(
        std::vector<std::string>{"train", "validation"},
        "the data of the demo task '" + std::string(kFreedictTaskName) + "' is not built: " +
            (std::filesystem::exists(marker) ? std::string(e.what()) : "no " + marker) +
            "; build it with `t5xx build_corpus --data_dir=" + data_dir +
            "` (needs the Debian package " + kFreedictPackage + ")");
  }
  return std::make_shared<JsonLinesDataSource>(
      std::map<std::string, std::string>{{"train", info.train_file},
                                         {"validation", info.validation_file}},
      std::vector<std::string>{"en", "de"}, BadRecordPolicy{skip_bad_records});
}

}  // namespace

std::optional<std::string> RegisterDemoTasks(const std::string& data_dir,
                                             TaskRegistry& registry,
                                             bool skip_bad_records) {
  const std::string dir = DemoCorpusDir(data_dir);
  const std::string build_hint =
      "; build it with `t5xx build_corpus --data_dir=" + data_dir +
      "` (needs the Debian packages fortunes and dict-gcide)";
  if (!std::filesystem::exists(dir + "/corpus_info.json")) {
    return "the demo corpus for the demo tasks '" + std::string(kDemoTaskName) + "', '" +
           kDemoCachedTaskName + "', '" + kDemoLmTaskName + "' and '" + kFreedictTaskName +
           "' is missing: no " + dir +
           "/corpus_info.json" + build_hint;
  }
  CorpusInfo info;
  VocabularyPtr vocab;
  try {
    info = ReadCorpusInfo(dir);
    vocab = std::make_shared<SentencePieceVocabulary>(info.vocab_model_file,
                                                      kDemoExtraIds);
  } catch (const Error& e) {
    return std::string(e.what()) + build_hint;
  }
  auto source = std::make_shared<JsonLinesDataSource>(
      std::map<std::string, std::string>{
          {"train", info.TrainFilePattern()},
          {"validation", info.ValidationFilePattern()}},
      std::vector<std::string>{"text"}, BadRecordPolicy{skip_bad_records});
  OutputFeatures features{{"inputs", Feature{vocab, true, true}},
                          {"targets", Feature{vocab, true, true}}};
  const std::vector<Preprocessor> preprocessors = {
      RekeyPreprocessor({{"inputs", ""}, {"targets", "text"}}),
      TokenizePreprocessor(),
      SpanCorruptionPreprocessor(3.0, 0.15),
      AppendEosAfterTrimPreprocessor(),
  };
  const std::vector<std::string> step_names = {
      "seqio.preprocessors.rekey", "seqio.preprocessors.tokenize",
      "t5.data.preprocessors.span_corruption", "seqio.preprocessors.append_eos_after_trim"};
  if (!registry.Has(kDemoTaskName)) {
    registry.Add(std::make_shared<Task>(kDemoTaskName, source, preprocessors, features, 1000,
                                        nullptr, std::vector<MetricFn>{}, step_names));
  }
  if (!registry.Has(kDemoCachedTaskName)) {
    // The same steps; the placeholder sits after tokenize (index 2), as in
    // t5's c4_v220_span_corruption.
    registry.Add(std::make_shared<Task>(kDemoCachedTaskName, source, preprocessors, features,
                                        1000, nullptr, std::vector<MetricFn>{}, step_names,
                                        CacheStep{2, false}));
  }
  if (!registry.Has(kDemoLmTaskName)) {
    OutputFeatures lm_features{{"targets", Feature{vocab, true, true}}};
    std::vector<Preprocessor> lm = {
        RekeyPreprocessor({{"targets", "text"}}),
        TokenizePreprocessor(),
        FullLmPreprocessor(),
    };
    registry.Add(std::make_shared<Task>(
        kDemoLmTaskName, source, std::move(lm), lm_features, 1000, nullptr,
        std::vector<MetricFn>{},
        std::vector<std::string>{"seqio.preprocessors.rekey", "seqio.preprocessors.tokenize",
                                 "t5.data.preprocessors.full_lm"}));
  }
  if (!registry.Has(kFreedictTaskName)) {
    std::vector<Preprocessor> translate = {
        TranslatePreprocessor("en", "de"),
        TokenizePreprocessor(),
        AppendEosAfterTrimPreprocessor(),
    };
    registry.Add(std::make_shared<Task>(
        kFreedictTaskName, FreedictSource(data_dir, skip_bad_records), std::move(translate),
        features, 1000, nullptr,
        std::vector<MetricFn>{metric_fns::bleu(), metric_fns::sequence_accuracy()},
        std::vector<std::string>{"t5.data.preprocessors.translate",
                                 "seqio.preprocessors.tokenize",
                                 "seqio.preprocessors.append_eos_after_trim"}));
  }
  return std::nullopt;
}

}  // namespace t5xx::seqio
