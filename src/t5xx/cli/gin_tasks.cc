#include "t5xx/cli/gin_tasks.h"

#include "t5xx/data/demo_tasks.h"

#include <climits>
#include <iostream>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/byte_vocabulary.h"
#include "t5xx/data/json_lines_source.h"
#include "t5xx/data/passthrough_vocabulary.h"
#include "t5xx/data/sentencepiece_vocabulary.h"
#include "t5xx/data/text_line_source.h"
#include "t5xx/data/tfrecord_source.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/utf8.h"

namespace t5xx::cli {
namespace {

using gin::Value;

constexpr char kTask[] = "seqio.Task";
constexpr char kMixture[] = "seqio.Mixture";
constexpr char kSampleFromDatasets[] = "tf.data.Dataset.sample_from_datasets";
constexpr char kFeature[] = "seqio.Feature";
constexpr char kRegister[] = "t5xx.seqio.register";
constexpr char kTextLine[] = "seqio.TextLineDataSource";
constexpr char kTFExample[] = "seqio.TFExampleDataSource";
constexpr char kJsonLines[] = "t5xx.seqio.JsonLinesDataSource";
constexpr char kSpm[] = "seqio.SentencePieceVocabulary";
constexpr char kByte[] = "seqio.ByteVocabulary";
constexpr char kPassThrough[] = "seqio.PassThroughVocabulary";
constexpr char kStringToFloat[] = "t5.data.postprocessors.string_to_float";
constexpr char kLowerText[] = "t5.data.postprocessors.lower_text";
constexpr char kLabelToId[] = "t5.data.postprocessors.string_label_to_class_id";
constexpr char kQa[] = "t5.data.postprocessors.qa";
constexpr char kAccuracy[] = "t5.evaluation.metrics.accuracy";
constexpr char kSequenceAccuracy[] = "t5.evaluation.metrics.sequence_accuracy";
constexpr char kF1Invalid[] = "t5.evaluation.metrics.f1_score_with_invalid";
constexpr char kMeanF1[] = "t5.evaluation.metrics.mean_multiclass_f1";
constexpr char kSquad[] = "t5.evaluation.metrics.squad";

std::string Where(const Value& v) {
  std::string loc = v.location().ToString();
  if (loc.empty()) loc = v.description();
  return loc.empty() ? "gin" : loc;
}

// `v` must be a reference to one of `kinds`; returns its name.
const std::string& ExpectOneOf(const Value& v, const std::vector<std::string>& kinds,
                               const std::string& what) {
  std::string list;
  for (const auto& k : kinds) list += (list.empty() ? "@" : ", @") + k + "()";
  T5XX_CHECK(v.kind() == Value::Kind::kReference,
        Where(v) + ": expected " + what + " (" + list + "), got " + v.ToGinString());
  for (const auto& k : kinds) {
    if (v.reference_name() == k) return v.reference_name();
  }
  throw Error(Where(v) + ": @" + v.reference_name() + " is not " + what + "; t5xx knows " + list);
}

nlohmann::json ToJson(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNone: return nullptr;
    case Value::Kind::kBool: return v.AsBool();
    case Value::Kind::kInt: return v.AsInt();
    case Value::Kind::kFloat: return v.AsFloat();
    case Value::Kind::kString: return v.AsString();
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& x : v.AsList()) a.push_back(ToJson(x));
      return a;
    }
    case Value::Kind::kDict: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& [k, x] : v.AsDict()) {
        T5XX_CHECK(k.kind() == Value::Kind::kString,
              Where(k) + ": preprocessor argument keys must be strings, got " + k.ToGinString());
        o[k.AsString()] = ToJson(x);
      }
      return o;
    }
    default:
      throw Error(Where(v) + ": a preprocessor argument cannot be " + v.ToGinString());
  }
}

// An int parameter that C++ holds as int32: in [minimum, 2^31 - 1], or a
// t5xx::Error naming the binding (never a silent wrap-around).
int32_t Int32(const Value& v, int64_t minimum) {
  const int64_t n = v.AsInt();
  T5XX_CHECK(n >= minimum && n <= INT32_MAX, Where(v) + ": " + v.description() + " must be in [" +
                                                 std::to_string(minimum) + ", 2147483647], got " +
                                                 std::to_string(n));
  return static_cast<int32_t>(n);
}

std::map<std::string, std::string> SplitMap(const Value& v) {
  std::map<std::string, std::string> out;
  for (const auto& [k, p] : v.AsDict()) out[k.AsString()] = p.AsString();
  return out;
}

std::vector<std::string> StringList(const Value& v) {
  std::vector<std::string> out;
  if (v.is_none()) return out;
  for (const auto& x : v.AsList()) out.push_back(x.AsString());
  return out;
}

// t5xx.seqio.JsonLinesDataSource: one JSON object per line; string fields
// are text, arrays of integers are token ids.
class TokenJsonLinesSource : public seqio::FileDataSource {
 public:
  TokenJsonLinesSource(std::map<std::string, std::string> splits, std::vector<std::string> fields,
                       seqio::BadRecordPolicy bad_records)
      : FileDataSource(kJsonLines, std::move(splits)),
        fields_(std::move(fields)),
        bad_records_(std::move(bad_records)) {}

  int64_t skipped_records() const override { return bad_records_.skipped->load(); }

 protected:
  seqio::DatasetPtr ReadPlan(seqio::FileReadPlan plan) const override {
    std::vector<std::string> fields = fields_;
    return seqio::ReadLinesDataset(
        std::move(plan),
        [fields](const std::string& path, int64_t line_number,
                 const std::string& line) -> std::optional<seqio::Example> {
          if (line.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
          const std::string where = path + ":" + std::to_string(line_number);
          nlohmann::json j;
          std::string parse_error;
          T5XX_CHECK(ParseJsonKeepingBytes(line, &j, &parse_error),
                     where + ": malformed JSON line: " + parse_error);
          T5XX_CHECK(j.is_object(), where + ": malformed JSON line: expected one JSON object, "
                                            "got a JSON " + std::string(j.type_name()));
          seqio::Example ex;
          auto convert = [&](const std::string& k, const nlohmann::json& x, bool requested) {
            if (x.is_string()) {
              ex[k] = x.get<std::string>();
              return;
            }
            if (x.is_array()) {
              seqio::Tokens ids;
              bool ok = true;
              for (const auto& e : x) {
                if (!e.is_number_integer() || e.get<int64_t>() < INT32_MIN ||
                    e.get<int64_t>() > INT32_MAX) {
                  ok = false;
                  break;
                }
                ids.push_back(static_cast<int32_t>(e.get<int64_t>()));
              }
              if (ok) {
                ex[k] = std::move(ids);
                return;
              }
            }
            // Never dropped silently: a task reading it would fail later
            // with "no feature" and no file:line.
            T5XX_CHECK(false, where + ": field '" + k + "' is " + std::string(TruncateUtf8(DumpJson(x), 40)) +
                                  ", neither a string nor an array of int32 token ids" +
                                  (requested ? std::string()
                                             : "; list the fields the task reads in "
                                               "t5xx.seqio.JsonLinesDataSource.fields to "
                                               "ignore the others"));
          };
          if (fields.empty()) {
            for (const auto& [k, x] : j.items()) convert(k, x, false);
          } else {
            for (const auto& k : fields) {
              auto it = j.find(k);
              T5XX_CHECK(it != j.end(), where + ": missing field '" + k + "'");
              convert(k, *it, true);
            }
          }
          return ex;
        },
        bad_records_);
  }

 private:
  std::vector<std::string> fields_;
  seqio::BadRecordPolicy bad_records_;
};

class Builder {
 public:
  Builder(gin::Config& c, std::string data_dir, bool skip_bad_records)
      : c_(c), data_dir_(std::move(data_dir)), skip_bad_records_(skip_bad_records) {}

  // `outer`: the scope of the configurable holding `v` (gin nests scopes).
  seqio::DataSourcePtr Source(const Value& v, const std::string& outer) {
    const std::string& kind = ExpectOneOf(v, {kTextLine, kTFExample, kJsonLines}, "a data source");
    const std::string s = gin::NestedScope(outer, v.reference_scope());
    try {
      const Value splits = c_.Query(kind, "split_to_filepattern", s);
      if (kind == kTextLine) {
        return std::make_shared<seqio::TextLineDataSource>(
            SplitMap(splits), Int32(c_.Query(kind, "skip_header_lines", s), 0));
      }
      const Value skip = c_.Query(kind, "skip_bad_records", s);
      seqio::BadRecordPolicy policy;
      policy.skip = skip.is_none() ? skip_bad_records_ : skip.AsBool();
      if (kind == kTFExample) {
        return std::make_shared<seqio::TFExampleDataSource>(
            SplitMap(splits), StringList(c_.Query(kind, "feature_keys", s)), policy);
      }
      return std::make_shared<TokenJsonLinesSource>(
          SplitMap(splits), StringList(c_.Query(kind, "fields", s)), policy);
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
  }

  seqio::VocabularyPtr Vocabulary(const Value& v, const std::string& outer) {
    const std::string& kind = ExpectOneOf(v, {kSpm, kByte, kPassThrough}, "a vocabulary");
    const std::string s = gin::NestedScope(outer, v.reference_scope());
    auto key = std::make_pair(kind, s);
    if (auto it = vocabs_.find(key); it != vocabs_.end()) return it->second;
    seqio::VocabularyPtr out;
    try {
      if (kind == kSpm) {
        std::string file = c_.Query(kind, "sentencepiece_model_file", s).AsString();
        namespace fs = std::filesystem;
        if (fs::path(file).is_relative() && !fs::exists(file) && !data_dir_.empty() &&
            fs::exists(fs::path(data_dir_) / file)) {
          file = (fs::path(data_dir_) / file).string();
        }
        out = std::make_shared<seqio::SentencePieceVocabulary>(
            file, Int32(c_.Query(kind, "extra_ids", s), 0));
      } else if (kind == kByte) {
        out = std::make_shared<seqio::ByteVocabulary>(
            Int32(c_.Query(kind, "extra_ids", s), 0));
      } else {
        const int64_t size = c_.Query(kind, "size", s).AsInt();
        const Value eos = c_.Query(kind, "eos_id", s);
        T5XX_CHECK(size >= 1 && size <= INT32_MAX, "size must be in [1, 2^31), got " + std::to_string(size));
        out = std::make_shared<seqio::PassThroughVocabulary>(
            static_cast<int32_t>(size), eos.is_none() ? -1 : static_cast<int32_t>(eos.AsInt()));
      }
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
    vocabs_[key] = out;
    return out;
  }

  seqio::Preprocessor Preprocessor(const Value& v, const std::string& outer) {
    const auto& reg = GinPreprocessors();
    T5XX_CHECK(v.kind() == Value::Kind::kReference,
          Where(v) + ": expected a preprocessor such as @seqio.preprocessors.append_eos, got " +
              v.ToGinString());
    const std::string& name = v.reference_name();
    if (!reg.Contains(name)) {
      std::string suggestion = seqio::ClosestName(name, reg.Names());
      throw Error(Where(v) + ": @" + name + " is not a preprocessor" +
                  (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)"));
    }
    const std::string s = gin::NestedScope(outer, v.reference_scope());
    nlohmann::json kwargs = nlohmann::json::object();
    for (const auto& arg : reg.Args(name)) {
      if (!arg.required && !c_.IsBound(name, arg.name, s)) continue;
      const Value x = c_.Query(name, arg.name, s);
      if (x.is_none() && !arg.nullable && !arg.required) continue;
      kwargs[arg.name] = ToJson(x);
    }
    try {
      return reg.Create(name, kwargs);
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
  }

  seqio::PostprocessFn Postprocessor(const Value& v, const std::string& outer) {
    if (v.is_none()) return nullptr;
    const std::string& kind =
        ExpectOneOf(v, {kStringToFloat, kLowerText, kLabelToId, kQa}, "a postprocess_fn");
    const std::string s = gin::NestedScope(outer, v.reference_scope());
    try {
      if (kind == kStringToFloat) {
        return seqio::postprocessors::string_to_float(c_.Query(kind, "default", s).AsFloat());
      }
      if (kind == kLowerText) return seqio::postprocessors::lower_text();
      if (kind == kQa) return seqio::postprocessors::qa();
      return seqio::postprocessors::string_label_to_class_id(
          StringList(c_.Query(kind, "label_classes", s)), c_.Query(kind, "default", s).AsInt());
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
  }

  seqio::MetricFn Metric(const Value& v, const std::string& outer) {
    const std::string& kind = ExpectOneOf(
        v, {kAccuracy, kSequenceAccuracy, kF1Invalid, kMeanF1, kSquad}, "a metric_fn");
    try {
      if (kind == kAccuracy) return seqio::metric_fns::accuracy();
      if (kind == kSequenceAccuracy) return seqio::metric_fns::sequence_accuracy();
      if (kind == kF1Invalid) return seqio::metric_fns::f1_score_with_invalid();
      if (kind == kSquad) return seqio::metric_fns::squad();
      const int64_t n = Int32(c_.Query(kind, "num_classes", gin::NestedScope(outer, v.reference_scope())), 1);
      T5XX_CHECK(n >= 1 && n <= INT32_MAX,
            "mean_multiclass_f1.num_classes must be at least 1, got " + std::to_string(n));
      return seqio::metric_fns::mean_multiclass_f1(static_cast<int>(n));
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
  }

  seqio::TaskPtr Task(const Value& v) {
    ExpectOneOf(v, {kTask}, "a task");
    const std::string& s = v.reference_scope();
    const std::string name = c_.Query(kTask, "name", s).AsString();
    seqio::DataSourcePtr source = Source(c_.Query(kTask, "source", s), s);
    std::vector<seqio::Preprocessor> steps;
    std::vector<std::string> step_names;  // errors name each step so
    const Value pre = c_.Query(kTask, "preprocessors", s);
    for (const auto& p : pre.AsList()) {
      steps.push_back(Preprocessor(p, s));
      step_names.push_back(p.reference_name() + ", bound at " + Where(p));
    }
    seqio::OutputFeatures features;
    const Value of = c_.Query(kTask, "output_features", s);
    for (const auto& [k, fv] : of.AsDict()) {
      ExpectOneOf(fv, {kFeature}, "an output feature");
      const std::string fs = gin::NestedScope(s, fv.reference_scope());
      seqio::Feature f;
      f.vocabulary = Vocabulary(c_.Query(kFeature, "vocabulary", fs), fs);
      f.add_eos = c_.Query(kFeature, "add_eos", fs).AsBool();
      f.required = c_.Query(kFeature, "required", fs).AsBool();
      features[k.AsString()] = f;
    }
    const Value sbs = c_.Query(kTask, "shuffle_buffer_size", s);
    seqio::PostprocessFn post = Postprocessor(c_.Query(kTask, "postprocess_fn", s), s);
    std::vector<seqio::MetricFn> metric_fns;
    const Value mfs = c_.Query(kTask, "metric_fns", s);
    for (const auto& m : mfs.AsList()) metric_fns.push_back(Metric(m, s));
    try {
      return std::make_shared<seqio::Task>(name, std::move(source), std::move(steps),
                                           std::move(features), sbs.is_none() ? 0 : sbs.AsInt(),
                                           std::move(post), std::move(metric_fns),
                                           std::move(step_names));
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
  }

  seqio::MixturePtr Mixture(const Value& v, const seqio::TaskRegistry& tasks,
                            const seqio::MixtureRegistry& mixtures) {
    ExpectOneOf(v, {kMixture}, "a mixture");
    const std::string& s = v.reference_scope();
    const std::string name = c_.Query(kMixture, "name", s).AsString();
    std::vector<seqio::MixtureEntry> entries;
    const Value list = c_.Query(kMixture, "tasks", s);
    for (const auto& e : list.AsList()) {
      if (e.kind() == Value::Kind::kString) {
        entries.emplace_back(e.AsString());
        continue;
      }
      T5XX_CHECK((e.kind() == Value::Kind::kTuple || e.kind() == Value::Kind::kList) &&
                e.AsList().size() == 2,
            Where(e) + ": a mixture entry is a name or a (name, rate) tuple, got " +
                e.ToGinString());
      entries.emplace_back(e.AsList()[0].AsString(), seqio::MixtureRate(e.AsList()[1].AsFloat()));
    }
    const Value dr = c_.Query(kMixture, "default_rate", s);
    std::optional<double> default_rate;
    if (!dr.is_none()) default_rate = dr.AsFloat();
    // seqio's sample_fn: None = sample_from_datasets(stop_on_empty_dataset=True).
    bool stop_on_empty = true;
    const Value sample_fn = c_.Query(kMixture, "sample_fn", s);
    if (!sample_fn.is_none()) {
      ExpectOneOf(sample_fn, {kSampleFromDatasets}, "a sample_fn");
      stop_on_empty = c_.Query(kSampleFromDatasets, "stop_on_empty_dataset",
                               gin::NestedScope(s, sample_fn.reference_scope()))
                          .AsBool();
    }
    try {
      return std::make_shared<seqio::Mixture>(name, std::move(entries), default_rate, tasks,
                                              mixtures, stop_on_empty);
    } catch (const Error& e) {
      throw Error(Where(v) + ": " + e.what());
    }
  }

 private:
  gin::Config& c_;
  std::string data_dir_;
  bool skip_bad_records_;
  std::map<std::pair<std::string, std::string>, seqio::VocabularyPtr> vocabs_;
};

gin::ParamType ToParamType(const seqio::ArgSpec& a) {
  using P = gin::ParamType;
  // Optional arguments accept None (= the preprocessor's default).
  const bool opt = a.nullable || !a.required;
  switch (a.type) {
    case seqio::ArgType::kBool: return opt ? P::kOptionalBool : P::kBool;
    case seqio::ArgType::kInt: return opt ? P::kOptionalInt : P::kInt;
    case seqio::ArgType::kNumber: return opt ? P::kOptionalFloat : P::kFloat;
    case seqio::ArgType::kString: return opt ? P::kOptionalString : P::kString;
    case seqio::ArgType::kStringList: return opt ? P::kOptionalList : P::kList;
    case seqio::ArgType::kStringMap: return opt ? P::kOptionalDict : P::kDict;
  }
  return P::kAny;
}

}  // namespace

const seqio::PreprocessorRegistry& GinPreprocessors() {
  static const seqio::PreprocessorRegistry* registry = [] {
    auto* r = new seqio::PreprocessorRegistry();
    seqio::RegisterSeqioPreprocessors(*r);
    return r;
  }();
  return *registry;
}

void RegisterPreprocessorConfigurables(gin::Registry& registry,
                                       const seqio::PreprocessorRegistry& preprocessors) {
  for (const auto& name : preprocessors.Names()) {
    gin::ConfigurableSpec spec;
    spec.name = name;
    spec.doc = "A seqio preprocessor for gin-defined tasks (seqio.Task.preprocessors).";
    for (const auto& a : preprocessors.Args(name)) {
      gin::ParamSpec p;
      p.name = a.name;
      p.type = ToParamType(a);
      p.required = a.required;
      p.default_value = Value::None();
      spec.params.push_back(std::move(p));
    }
    registry.Register(std::move(spec));
  }
}

GinTaskNames RegisterGinTasks(gin::Config& config, const std::string& data_dir,
                              seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures,
                              bool skip_bad_records) {
  GinTaskNames out;
  Builder b(config, data_dir, skip_bad_records);
  if (config.IsBound(kRegister, "tasks")) {
    const Value list = config.Query(kRegister, "tasks");
    for (const auto& v : list.AsList()) {
      seqio::TaskPtr t = b.Task(v);
      T5XX_CHECK(t->name() != seqio::kDemoTaskName && t->name() != seqio::kDemoLmTaskName,
            Where(v) + ": the task name '" + t->name() +
                "' is t5xx's demo task; give the gin task another name");
      T5XX_CHECK(!tasks.Has(t->name()) && !mixtures.Has(t->name()),
            Where(v) + ": a task or mixture named '" + t->name() + "' is already registered");
      tasks.Add(t);
      out.tasks.push_back(t->name());
    }
  }
  if (config.IsBound(kRegister, "mixtures")) {
    const Value list = config.Query(kRegister, "mixtures");
    for (const auto& v : list.AsList()) {
      seqio::MixturePtr m = b.Mixture(v, tasks, mixtures);
      T5XX_CHECK(!tasks.Has(m->name()) && !mixtures.Has(m->name()),
            Where(v) + ": a task or mixture named '" + m->name() + "' is already registered");
      mixtures.Add(m);
      out.mixtures.push_back(m->name());
    }
  }
  return out;
}

void RequireAllBindingsRead(const gin::Config& config, const std::string& command) {
  std::vector<std::string> unused = config.UnusedBindings();
  std::string list;
  for (const auto& u : unused) list += (list.empty() ? "" : "; ") + u;
  T5XX_CHECK(unused.empty(), "these gin bindings are never read by `t5xx " + command +
                            "` (t5x would ignore them silently): " + list +
                            "; remove them or fix their names");
  // Bindings of configurables this run never calls (a stock model file's
  // Adafactor settings when OPTIMIZER is AdamW): gin ignores them; say so.
  std::string ignored;
  for (const auto& u : config.IgnoredConfigurables()) ignored += (ignored.empty() ? "" : "; ") + u;
  if (!ignored.empty()) {
    std::cerr << "t5xx: note: bindings of configurables `t5xx " << command
              << "` does not use are ignored, as gin does: " << ignored << std::endl;
  }
}

}  // namespace t5xx::cli
