// `t5xx data show` and `t5xx data stats`: look at a registered task's (or
// mixture's) examples (seqio's "inspect the dataset" workflow) without training.
//
//   t5xx data show --task=NAME [--split=train] [--n=5] [--seed=0]
//                  [--lengths=inputs=128,targets=32]
//                  [--feature_converter=EncDecFeatureConverter --pack=true]
//   t5xx data stats --task=NAME [--split=validation] [--max_examples=1000]
//                  [--lengths=...] [--feature_converter=... --pack=true]
//   t5xx data score --task=NAME --predictions=FILE [--split=validation]
//                  [--lengths=...]
// Without --lengths, the lengths are those of a --gin_file run config's
// TASK_FEATURE_LENGTHS macro when it sets them (as train reads them), and
// the task from its MIXTURE_OR_TASK_NAME when --task is not given.
// score rates one prediction per line of FILE against the split's examples
// in order with the task's postprocess_fn and metric_fns (seqio's Evaluator
// for one task) and prints the metrics as JSON; FILE must have exactly one
// line per example.
// --use_cached=true reads each task's offline cache (seqio's use_cached;
// `t5xx cache_tasks` writes it) from the directories of --cache_dir=DIR
// (repeatable) and --seqio_additional_cache_dirs=a,b instead of running the
// steps before its seqio.CacheDatasetPlaceholder.
// --skip_bad_records=true makes file sources skip malformed JSON lines and
// bad TFRecords (counting them) instead of failing on the first; stats reports
// the count as "skipped_records", show prints it on stderr.
// Both take the gin flags (--gin_file, --gin.X, --gin_bindings) to define
// tasks and mixtures in gin (t5xx.seqio.register; docs/gin.md); every binding
// must then be read.
//
// show prints one JSON object per example: token features as ids with the
// decoded text beside them ("<feature>_text"), strings as they are. Without
// --feature_converter it shows the task's output (after its preprocessors);
// with one, the model features (packed when --pack=true).
// stats counts examples, empty examples (no text: every string feature ""
// and every token feature only PAD or EOS ids, e.g. a blank line of a text
// file), and non-padding tokens per feature (seqio's stats.<split>.json
// excludes PAD and EOS; here only PAD is excluded), and, with a converter,
// the padding fraction of the model features.
// Output is JSON; strings that are not UTF-8 are written with U+FFFD in place
// of each invalid sequence (DumpJson, util/json_text.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/array_json.h"
#include "t5xx/cli/cache_dir_flags.h"
#include "t5xx/cli/commands.h"
#include "t5xx/cli/task_flags.h"
#include "t5xx/config/flags.h"
#include "t5xx/config/reading.h"
#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/demo_tasks.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"
#include "t5xx/util/json_text.h"

namespace t5xx::cli {
namespace {

// "inputs=128,targets=32" -> {inputs: 128, targets: 32}.
seqio::FeatureLengths ParseLengths(const std::string& text) {
  seqio::FeatureLengths out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    T5XX_CHECK(eq != std::string::npos && eq > 0,
          "t5xx data: --lengths expects name=length pairs such as inputs=128,targets=32; got '" +
              item + "'");
    T5XX_CHECK(!out.count(item.substr(0, eq)),
               "t5xx data: --lengths names '" + item.substr(0, eq) + "' twice; give each once");
    out[item.substr(0, eq)] = ParseIntFlag("t5xx data", "lengths", item.substr(eq + 1), 1);
  }
  return out;
}

std::unique_ptr<seqio::FeatureConverter> MakeConverter(const std::string& name, bool pack) {
  if (name == "EncDecFeatureConverter") return std::make_unique<seqio::EncDecFeatureConverter>(pack);
  if (name == "LMFeatureConverter") return std::make_unique<seqio::LMFeatureConverter>(pack);
  if (name == "PrefixLMFeatureConverter") {
    return std::make_unique<seqio::PrefixLMFeatureConverter>(pack);
  }
  if (name == "DecoderFeatureConverter") {
    return std::make_unique<seqio::DecoderFeatureConverter>(pack);
  }
  if (name == "PassThroughFeatureConverter") {
    return std::make_unique<seqio::PassThroughFeatureConverter>(pack);
  }
  throw Error("t5xx data: unknown --feature_converter '" + name +
              "' (known: EncDecFeatureConverter, LMFeatureConverter, PrefixLMFeatureConverter, "
              "DecoderFeatureConverter, PassThroughFeatureConverter)");
}

// The task vocabulary that decodes `feature` (task or model feature name).
seqio::VocabularyPtr VocabularyFor(const seqio::OutputFeatures& of, const std::string& feature) {
  auto find = [&](const std::string& k) -> seqio::VocabularyPtr {
    auto it = of.find(k);
    return it == of.end() ? nullptr : it->second.vocabulary;
  };
  if (auto v = find(feature)) return v;
  if (feature.rfind("encoder_input_tokens", 0) == 0) return find("inputs");
  if (feature == "decoder_target_tokens" || feature == "decoder_input_tokens") {
    return find("targets");
  }
  return nullptr;
}

struct DataRequest {
  std::string name;  // task or mixture
  seqio::OutputFeatures output_features;
  seqio::DatasetPtr dataset;
  std::unique_ptr<seqio::FeatureConverter> converter;
  seqio::FeatureLengths lengths;
  std::vector<seqio::DataSourcePtr> sources;  // of the task or the mixture's tasks

  int64_t skipped_records() const {
    int64_t n = 0;
    for (const auto& s : sources) n += s->skipped_records();
    return n;
  }
};

// The task feature lengths of a run config (its TASK_FEATURE_LENGTHS macro,
// as t5x's run files set them), when it sets them; empty otherwise.
seqio::FeatureLengths ConfigLengths(const gin::Config* config) {
  seqio::FeatureLengths out;
  if (config == nullptr) return out;
  const std::optional<gin::Value> v = config->MacroValue("TASK_FEATURE_LENGTHS");
  if (v && v->kind() == gin::Value::Kind::kRequired) {
    std::cerr << "t5xx: note: the config's TASK_FEATURE_LENGTHS is %gin.REQUIRED and unset: "
                 "examples are not trimmed (pass --lengths=inputs=128,targets=32 or "
                 "--gin.TASK_FEATURE_LENGTHS to see what train would read)"
              << std::endl;
  }
  if (!v || v->kind() != gin::Value::Kind::kDict) return out;
  for (const auto& [k, len] : v->AsDict()) {
    T5XX_CHECK(k.kind() == gin::Value::Kind::kString && len.kind() == gin::Value::Kind::kInt &&
                   len.AsInt() > 0,
               gin::WhereShort(*v) + ": TASK_FEATURE_LENGTHS = " + v->ToGinString() +
                   " is not a dict of feature names to positive lengths; fix it or pass "
                   "--lengths=inputs=128,targets=32");
    out[k.AsString()] = len.AsInt();
  }
  return out;
}

DataRequest Open(std::map<std::string, std::string>& f, const std::string& default_split,
                 const std::optional<std::string>& demo_problem, const gin::Config* config) {
  if (!f.count("task") && config != nullptr) {
    // A run config's task, as train would read it (--task overrides).
    const std::optional<gin::Value> v = config->MacroValue("MIXTURE_OR_TASK_NAME");
    if (v && v->kind() == gin::Value::Kind::kString) {
      f["task"] = v->AsString();
      std::cerr << "t5xx: note: using the config's MIXTURE_OR_TASK_NAME (--task=" << f["task"]
                << "; pass --task to override)" << std::endl;
    }
  }
  T5XX_CHECK(f.count("task"), "t5xx data: --task=NAME is required (e.g. --task=" +
                             std::string(seqio::kDemoTaskName) +
                             "), unless a --gin_file sets MIXTURE_OR_TASK_NAME");
  if (seqio::IsDemoTaskName(f["task"]) && demo_problem) throw Error(*demo_problem);
  DataRequest r;
  if (f.count("lengths")) {
    r.lengths = ParseLengths(f["lengths"]);
  } else if (!(r.lengths = ConfigLengths(config)).empty()) {
    // A run config's lengths, as train would use them (--lengths overrides).
    std::string shown;
    for (const auto& [k, n] : r.lengths) shown += (shown.empty() ? "" : ",") + k + "=" + std::to_string(n);
    std::cerr << "t5xx: note: using the config's TASK_FEATURE_LENGTHS (--lengths=" << shown
              << "; pass --lengths to override)" << std::endl;
  }
  const std::string split = f.count("split") ? f["split"] : default_split;
  const uint64_t seed = f.count("seed") ? ParseIntFlag("t5xx data", "seed", f["seed"], 0) : 0;
  r.name = f["task"];
  const seqio::DatasetProviderPtr provider = seqio::GetMixtureOrTask(r.name);
  r.output_features = provider->output_features();
  for (const auto& t : provider->tasks()) r.sources.push_back(t->source());
  seqio::DatasetRequest request;
  request.split = split;
  request.seed = seed;
  request.use_cached = f.count("use_cached") && ParseBoolFlag("t5xx data", "use_cached", f["use_cached"]);
  if (request.use_cached) {  // the caches' problems before any example is read
    for (const auto& t : provider->tasks()) {
      const auto splits = t->splits();
      if (std::find(splits.begin(), splits.end(), split) != splits.end())
        t->CheckCacheUse(split, true);
    }
  }
  r.dataset = provider->GetDataset(r.lengths, request);
  if (f.count("feature_converter")) {
    T5XX_CHECK(!r.lengths.empty(), "t5xx data: --feature_converter needs --lengths (the task "
                              "feature lengths, e.g. --lengths=inputs=128,targets=32)");
    const bool pack = f.count("pack") && ParseBoolFlag("t5xx data", "pack", f["pack"]);
    r.converter = MakeConverter(f["feature_converter"], pack);
    r.dataset = (*r.converter)(std::move(r.dataset), r.lengths, r.name);
  } else {
    T5XX_CHECK(!f.count("pack"), "t5xx data: --pack needs --feature_converter");
  }
  return r;
}

}  // namespace

int DataCommandImpl(const std::vector<std::string>& args);

int DataCommand(const std::vector<std::string>& args) {
  try {
    return DataCommandImpl(args);
  } catch (const Error& e) {
    const std::string msg = e.what();
    bool has_lengths = false;
    for (const auto& a : args) has_lengths = has_lengths || a.rfind("--lengths", 0) == 0;
    if (!has_lengths && msg.find("sequence_length") != std::string::npos) {
      throw Error(msg + " (pass the task feature lengths, e.g. --lengths=inputs=128,targets=32)");
    }
    throw;
  }
}

namespace {

// `data show`: the first --n examples as JSON lines, token features with
// their decoded text beside them.
int Show(std::map<std::string, std::string>& f, const std::optional<std::string>& demo_problem,
         const gin::Config* config) {
  const int64_t n = f.count("n") ? ParseIntFlag("t5xx data", "n", f["n"], 1) : 5;
  DataRequest r = Open(f, "train", demo_problem, config);
  for (int64_t i = 0; i < n; ++i) {
    auto ex = r.dataset->Next();
    if (!ex) break;
    nlohmann::json j;
    for (const auto& [k, v] : *ex) {
      if (const auto* s = std::get_if<std::string>(&v)) {
        j[k] = *s;
        continue;
      }
      if (const auto* a = std::get_if<seqio::Array>(&v)) {
        j[k] = seqio::ArrayToNestedJson(*a);
        continue;
      }
      const auto& ids = std::get<seqio::Tokens>(v);
      j[k] = ids;
      if (auto vocab = VocabularyFor(r.output_features, k)) j[k + "_text"] = vocab->Decode(ids);
    }
    std::cout << DumpJson(j) << "\n";
  }
  if (r.skipped_records() > 0) {
    std::cerr << "[data] skipped " << r.skipped_records() << " bad record(s)\n";
  }
  return 0;
}

// `data score`: the task's metric_fns over --predictions (one per example),
// as seqio's Evaluator.
int Score(std::map<std::string, std::string>& f, const std::optional<std::string>& demo_problem,
          const gin::Config* config) {
  T5XX_CHECK(f.count("predictions"),
        "t5xx data score: --predictions=FILE is required (one prediction per line)");
  T5XX_CHECK(!f.count("feature_converter"),
        "t5xx data score: --feature_converter does not apply (predictions are scored "
        "against the task's examples)");
  std::vector<std::string> predictions;
  try {
    predictions = seqio::ReadPredictionsFile(f["predictions"]);
  } catch (const Error& e) {
    throw Error(std::string("t5xx data score: --predictions: ") + e.what());
  }
  DataRequest r = Open(f, "validation", demo_problem, config);
  T5XX_CHECK(!seqio::MixtureRegistry::Global().Has(r.name),
        "t5xx data score: '" + r.name + "' is a mixture; score each of its tasks "
        "(seqio evaluates tasks, not mixtures)");
  const std::string split = f.count("split") ? f["split"] : "validation";
  const seqio::TaskPtr task = seqio::TaskRegistry::Global().Get(r.name);
  T5XX_CHECK(!task->predict_metric_fns().empty() || task->score_metric_fns().empty(),
             "t5xx data score: task '" + r.name + "' has only score metric_fns, which need the "
             "model's log-likelihoods, not predictions; `t5xx eval` computes them");
  std::vector<seqio::Example> examples;
  while (auto ex = r.dataset->Next()) {
    examples.push_back(std::move(*ex));
    T5XX_CHECK(examples.size() <= predictions.size(),
          "t5xx data score: '" + f["predictions"] + "' has " +
              std::to_string(predictions.size()) + " lines but split '" + split + "' of task '" +
              r.name + "' has more examples (at least " + std::to_string(examples.size()) +
              "); give one prediction per example");
  }
  T5XX_CHECK(examples.size() == predictions.size(),
        "t5xx data score: '" + f["predictions"] + "' has " + std::to_string(predictions.size()) +
            " lines but split '" + split + "' of task '" + r.name + "' has " +
            std::to_string(examples.size()) + " examples; give one prediction per example");
  const auto metrics = seqio::EvaluatePredictions(*task, examples, predictions);
  if (!task->score_metric_fns().empty()) {
    std::cerr << "t5xx data score: task '" << r.name << "' also has "
              << task->score_metric_fns().size()
              << " score metric_fn(s), which need the model's log-likelihoods, not "
                 "predictions; `t5xx eval` computes them"
              << std::endl;
  }
  nlohmann::json j;
  j["task"] = r.name;
  j["examples"] = examples.size();
  for (const auto& [k, v] : metrics) j[k] = v;
  std::cout << DumpJson(j, 2) << std::endl;
  return 0;
}

// `data stats`: examples, empty examples, tokens and (converted) padding of
// up to --max_examples examples.
int Stats(std::map<std::string, std::string>& f, const std::optional<std::string>& demo_problem,
          const gin::Config* config) {
  const int64_t max_examples =
      f.count("max_examples") ? ParseIntFlag("t5xx data", "max_examples", f["max_examples"], 1) : 1000;
  DataRequest r = Open(f, "validation", demo_problem, config);
  int64_t examples = 0, empty_examples = 0;
  std::map<std::string, int64_t> tokens, positions;
  while (examples < max_examples) {
    auto ex = r.dataset->Next();
    if (!ex) break;
    ++examples;
    // Empty: no text in any string feature or counted token feature (a
    // blank line of a text file, even after append_eos); docs/gin.md.
    bool empty = true;
    for (const auto& [k, v] : *ex) {
      if (const auto* s = std::get_if<std::string>(&v)) {
        empty = empty && s->empty();
        continue;
      }
      // Token features only (not positions, segment ids, weights, or the
      // shifted decoder inputs, which repeat the targets).
      const seqio::VocabularyPtr vocab = VocabularyFor(r.output_features, k);
      if (!vocab || k == "decoder_input_tokens") continue;
      const auto& t = std::get<seqio::Tokens>(v);
      for (int32_t id : t) {
        tokens[k] += id != 0;
        empty = empty && (id == 0 || id == vocab->eos_id());
      }
      positions[k] += static_cast<int64_t>(t.size());
    }
    empty_examples += empty;
  }
  nlohmann::json j;
  j["task"] = r.name;
  j["examples"] = examples;
  j["empty_examples"] = empty_examples;
  j["skipped_records"] = r.skipped_records();
  for (const auto& [k, n] : tokens) {
    j[k + "_tokens"] = n;
    if (r.converter && positions[k] > 0) {
      j[k + "_padding_fraction"] = 1.0 - static_cast<double>(n) / positions[k];
    }
  }
  std::cout << DumpJson(j, 2) << std::endl;
  return 0;
}

}  // namespace

int DataCommandImpl(const std::vector<std::string>& args) {
  T5XX_CHECK(!args.empty() && (args[0] == "show" || args[0] == "stats" || args[0] == "score"),
        "t5xx data: expected a subcommand, `show`, `stats` or `score` (see t5xx --help)");
  const std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::vector<std::string> common = {"task", "split", "seed", "lengths",
                                           "feature_converter", "pack", "data_dir",
                                           "skip_bad_records", "use_cached", "module_import"};
  std::vector<std::string> known = common;
  known.push_back(sub == "show" ? "n" : sub == "stats" ? "max_examples" : "predictions");
  // Tasks defined in gin files (--gin_file, --gin.X, --gin_bindings).
  run::LoadedTrainConfig gin = TakeGinTaskFlags(&rest);
  TakeCacheDirFlags(rest, "data " + sub);  // seqio's global cache directories
  auto f = ParseFlags(rest, known, "data " + sub);
  const std::optional<std::string> demo_problem = RegisterFlagTasks(gin, f, "data " + sub);
  if (sub == "show") return Show(f, demo_problem, gin.config.get());
  if (sub == "score") return Score(f, demo_problem, gin.config.get());
  return Stats(f, demo_problem, gin.config.get());
}

}  // namespace t5xx::cli
