// Preprocessors of gin-defined tasks (seqio.Task.preprocessors): each of
// seqio's PreprocessorRegistry entries as a gin configurable under its
// Python name (seqio.preprocessors.rekey, t5.data.preprocessors.
// span_corruption, ...), one parameter per argument, and how a bound one is
// built (its bindings become the registry's JSON keyword arguments); and
// seqio.CacheDatasetPlaceholder, the list's cache marker
// (seqio/dataset_providers.py).
#include <nlohmann/json.hpp>

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/seqio_gin/builders.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "t5xx/util/edit_distance.h"

namespace t5xx::seqio_gin {
namespace {

using gin::Value;

constexpr char kCachePlaceholder[] = "seqio.CacheDatasetPlaceholder";

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
                   gin::WhereShort(k) + ": preprocessor argument keys must be strings, got " +
                       k.ToGinString());
        o[k.AsString()] = ToJson(x);
      }
      return o;
    }
    default:
      throw Error(gin::WhereShort(v) + ": a preprocessor argument cannot be " + v.ToGinString());
  }
}

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
    case seqio::ArgType::kStringOrStringList: return P::kAny;
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
  using namespace gin::spec;
  registry.Register(
      {kCachePlaceholder,
       {Optional("required", T::kBool, B(false),
                 "True: the task must be read from its cache (use_cached=True)."),
        Optional("file_shuffle_buffer_size", T::kOptionalInt, None(),
                 "None only: t5xx shuffles all of a cache's files (seqio's default).")},
       "Where `t5xx cache_tasks` caches a task: the steps before it run once, into the "
       "cache; those after it on every read. Write @seqio.CacheDatasetPlaceholder() in "
       "seqio.Task.preprocessors."});
}

bool IsCachePlaceholder(const Value& v) {
  return v.kind() == Value::Kind::kReference && v.reference_name() == kCachePlaceholder;
}

seqio::PreprocessorListEntry PreprocessorListEntryOf(BuildContext& ctx, const Value& v,
                                                     const std::string& outer) {
  seqio::PreprocessorListEntry entry;
  if (!IsCachePlaceholder(v)) {
    entry.name = v.reference_name() + ", bound at " + gin::WhereShort(v);
    entry.signature = GinPreprocessors().Signature(v.reference_name());
    return entry;
  }
  T5XX_CHECK(v.reference_evaluated(),
             gin::WhereShort(v) + ": write @" + std::string(kCachePlaceholder) +
                 "() with parentheses: seqio needs an instance of the placeholder");
  const std::string s = gin::CallScope(outer, v);
  const Value buffer = ctx.config.Query(kCachePlaceholder, "file_shuffle_buffer_size", s);
  gin::Refuse(!buffer.is_none(), buffer,
              "t5xx shuffles all of a cache's files (seqio's default, None); remove the "
              "binding");
  entry.name = std::string(kCachePlaceholder) + ", bound at " + gin::WhereShort(v);
  entry.is_placeholder = true;
  entry.required = ctx.config.Query(kCachePlaceholder, "required", s).AsBool();
  return entry;
}

seqio::Preprocessor BuildPreprocessor(BuildContext& ctx, const Value& v,
                                      const std::string& outer) {
  const auto& reg = GinPreprocessors();
  T5XX_CHECK(v.kind() == Value::Kind::kReference,
             gin::WhereShort(v) +
                 ": expected a preprocessor such as @seqio.preprocessors.append_eos, got " +
                 v.ToGinString());
  const std::string& name = v.reference_name();
  if (!reg.Contains(name)) {
    std::string suggestion = ClosestName(name, reg.Names());
    throw Error(gin::WhereShort(v) + ": @" + name + " is not a preprocessor" +
                (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)"));
  }
  const std::string s = gin::CallScope(outer, v);
  nlohmann::json kwargs = nlohmann::json::object();
  for (const auto& arg : reg.Args(name)) {
    if (!arg.required && !ctx.config.IsBound(name, arg.name, s)) continue;
    const Value x = ctx.config.Query(name, arg.name, s);
    if (x.is_none() && !arg.nullable && !arg.required) continue;
    kwargs[arg.name] = ToJson(x);
  }
  return At(v, [&] { return reg.Create(name, kwargs); });
}

}  // namespace t5xx::seqio_gin
