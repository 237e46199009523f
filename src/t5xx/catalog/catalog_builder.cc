// See catalog_builder.h.
#include "t5xx/catalog/catalog_builder.h"

#include <memory>
#include <optional>

#include "t5xx/data/preprocessors/task_sentinels.h"
#include "t5xx/data/tfds/tfds_data_source.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/util/error.h"
#include "t5xx/storage/remote_copy.h"

namespace t5xx::catalog::internal {
namespace {

// A vocabulary whose file has no local copy: registering t5's catalog must
// not need every vocabulary (Python registers tasks without reading their
// files either); using one says which file to copy where.
class MissingVocabulary : public seqio::Vocabulary {
 public:
  explicit MissingVocabulary(std::string message) : message_(std::move(message)) {}
  int32_t eos_id() const override { Fail(); }
  int32_t unk_id() const override { Fail(); }
  int32_t vocab_size() const override { Fail(); }
  int32_t base_vocab_size() const override { Fail(); }
  int32_t extra_ids() const override { Fail(); }
  std::vector<int32_t> Encode(const std::string&) const override { Fail(); }
  std::string Decode(const std::vector<int32_t>&) const override { Fail(); }

 private:
  [[noreturn]] void Fail() const { throw Error(message_); }
  std::string message_;
};

// Python's str.strip(): ASCII whitespace at both ends.
std::string Strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// seqio's _wrap_postprocess_fn_remove_sentinel: when the decoded text
// begins with the sentinels decoded, they are removed and the rest
// stripped; then `inner` (none: the text itself).
seqio::PostprocessFn WithoutSentinels(seqio::VocabularyPtr vocab, seqio::PostprocessFn inner,
                                      int num_sentinels) {
  return [vocab, inner, num_sentinels](const std::string& decoded, const seqio::Example& ex,
                                       bool is_target) -> seqio::PostprocessedValue {
    std::vector<int32_t> ids;
    for (int i = 0; i < num_sentinels; ++i) ids.push_back(vocab->vocab_size() - 1 - i);
    const std::string sentinels = vocab->Decode(ids);
    std::string label = decoded;
    if (label.rfind(sentinels, 0) == 0) label = Strip(label.substr(sentinels.size()));
    if (inner) return inner(label, ex, is_target);
    return label;
  };
}

}  // namespace

CatalogBuilder::CatalogBuilder(seqio::TaskRegistry& tasks, const T5CatalogOptions& options)
    : tasks_(tasks), options_(options) {
  seqio::RegisterSeqioPreprocessors(preprocessors_);
  seqio::VocabularyPtr vocab = Vocabulary(kDefaultSpmPath, kDefaultExtraIds);
  default_features_ = {{"inputs", seqio::Feature{vocab, /*add_eos=*/true, /*required=*/false}},
                       {"targets", seqio::Feature{vocab, /*add_eos=*/true, /*required=*/true}}};
}

seqio::VocabularyPtr CatalogBuilder::Vocabulary(const std::string& gs_path, int extra_ids) {
  const std::string key = gs_path + "#" + std::to_string(extra_ids);
  if (auto it = vocabularies_.find(key); it != vocabularies_.end()) return it->second;
  seqio::VocabularyPtr v;
  std::optional<std::string> local;
  std::string why;
  try {
    local = ReadableCopy(gs_path, options_.data_dir);
    if (!local) why = MissingRemoteCopyMessage(gs_path, options_.data_dir, "the vocabulary of t5's tasks");
  } catch (const Error& e) {
    // (Offline, or the bucket refused: the tasks that need it say so on use.)
    why = std::string("the vocabulary of t5's tasks, ") + e.what();
  }
  if (local) {
    v = std::make_shared<seqio::SentencePieceVocabulary>(*local, extra_ids);
  } else {
    v = std::make_shared<MissingVocabulary>(why);
  }
  vocabularies_[key] = v;
  return v;
}

void CatalogBuilder::AddTask(const TaskSpec& spec, int num_sentinels) {
  try {
    std::map<std::string, std::string> splits;
    for (const std::string& s : spec.splits) splits[s] = s;
    seqio::DataSourcePtr source = std::make_shared<seqio::TfdsDataSource>(
        spec.tfds_name, /*tfds_data_dir=*/"", splits, /*caching_permitted=*/true,
        seqio::BadRecordPolicy{options_.skip_bad_records});
    std::vector<seqio::NamedPreprocessor> steps;
    std::optional<seqio::CacheStep> cache_step;
    for (const Step& step : spec.steps) {
      if (step.name == kPlaceholder) {
        cache_step = seqio::CacheStep{steps.size(), false};
        continue;
      }
      steps.push_back({step.name, preprocessors_.Create(step.name, step.kwargs),
                       preprocessors_.Signature(step.name)});
    }
    std::string name = spec.name;
    seqio::PostprocessFn postprocess_fn = spec.postprocess_fn;
    if (num_sentinels > 0) {
      // seqio.experimental.add_task_with_sentinels: the steps after the
      // placeholder get the sentinels, and the postprocess_fn first removes
      // the sentinels the decoded text begins with.
      name = seqio::SentinelTaskName(spec.name, num_sentinels);
      steps = seqio::AddSentinelSteps(std::move(steps), num_sentinels);
      postprocess_fn = WithoutSentinels(spec.output_features.at("targets").vocabulary,
                                        spec.postprocess_fn, num_sentinels);
    }
    std::vector<seqio::Preprocessor> preprocessors;
    std::vector<std::string> names;
    for (seqio::NamedPreprocessor& s : steps) {
      preprocessors.push_back(std::move(s.preprocessor));
      names.push_back(s.name + " (t5.data.tasks)");
    }
    tasks_.Add(std::make_shared<seqio::Task>(name, source, std::move(preprocessors),
                                             spec.output_features, 1000, postprocess_fn,
                                             spec.metric_fns, std::move(names), cache_step));
    specs_[spec.name] = spec;
  } catch (const Error& e) {
    throw Error("t5's task catalog, task '" + spec.name + "': " + e.what());
  }
}

void CatalogBuilder::AddTaskWithSentinels(const std::string& name, int num_sentinels) {
  auto it = specs_.find(name);
  T5XX_CHECK(it != specs_.end(), "t5's task catalog: no task '" + name + "' to add sentinels to");
  AddTask(it->second, num_sentinels);
}

}  // namespace t5xx::catalog::internal
