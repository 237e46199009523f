// The pieces of a gin-defined seqio Task, each declared (Register*) beside
// the code that builds it from a finalized gin::Config (Build*): data
// sources and vocabularies (sources.cc), preprocessors (preprocessors.cc),
// postprocessors and metrics (evaluation.cc). Internal to seqio_gin/; the
// tasks and mixtures that use them are in tasks.cc.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "t5xx/config/config.h"
#include "t5xx/config/reading.h"
#include "t5xx/config/registry.h"
#include "t5xx/data/dataset_providers/cache_placeholder.h"
#include "t5xx/data/dataset_providers/postprocessors.h"
#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/data/sources/data_source.h"
#include "t5xx/data/vocabularies/vocabulary.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio_gin {

// What building one config's tasks shares: the config, the options and the
// vocabularies built so far (one object per configurable and scope, as gin
// would call it once).
struct BuildContext {
  gin::Config& config;
  std::string data_dir;
  bool skip_bad_records = false;
  std::map<std::pair<std::string, std::string>, seqio::VocabularyPtr> vocabularies;
};

// Each Build* takes `v`, a reference to the configurable to build, and
// `outer`, the scope of the configurable holding `v` (gin nests scopes).
// Errors are t5xx::Error naming v's file:line.

// seqio.TextLineDataSource, seqio.TFExampleDataSource,
// t5xx.seqio.JsonLinesDataSource; the vocabularies seqio.SentencePiece-,
// Byte- and PassThroughVocabulary.
void RegisterSourceConfigurables(gin::Registry& registry);
seqio::DataSourcePtr BuildSource(BuildContext& ctx, const gin::Value& v, const std::string& outer);
seqio::VocabularyPtr BuildVocabulary(BuildContext& ctx, const gin::Value& v,
                                     const std::string& outer);

// Every preprocessor of `preprocessors`, under its Python name.
void RegisterPreprocessorConfigurables(gin::Registry& registry,
                                       const seqio::PreprocessorRegistry& preprocessors);
seqio::Preprocessor BuildPreprocessor(BuildContext& ctx, const gin::Value& v,
                                      const std::string& outer);
// A Task's preprocessors list as written, for seqio::FindCacheStep
// (cache_placeholder.h): `v` as a list entry, named "<configurable>, bound
// at <file:line:col>". A preprocessor carries its registry signature; the
// configurable seqio.CacheDatasetPlaceholder (registered by
// RegisterPreprocessorConfigurables; required=False,
// file_shuffle_buffer_size=None) is the placeholder. Throws t5xx::Error
// naming v's file:line for `@seqio.CacheDatasetPlaceholder` without "()"
// (seqio needs an instance) and a file_shuffle_buffer_size other than None
// (t5xx always shuffles a cache's files fully, seqio's default).
bool IsCachePlaceholder(const gin::Value& v);
seqio::PreprocessorListEntry PreprocessorListEntryOf(BuildContext& ctx, const gin::Value& v,
                                                     const std::string& outer);

// t5.data.postprocessors.* and t5.evaluation.metrics.*.
void RegisterEvaluationConfigurables(gin::Registry& registry);
// None gives nullptr (the decoded text).
seqio::PostprocessFn BuildPostprocessor(BuildContext& ctx, const gin::Value& v,
                                        const std::string& outer);
// A predict metric_fn (targets, predictions); a score metric_fn here is an
// error naming v's file:line.
seqio::MetricFn BuildMetric(BuildContext& ctx, const gin::Value& v, const std::string& outer);
// Whether v names a score metric_fn (targets, scores):
// t5.evaluation.metrics.rank_classification.
bool IsScoreMetric(const gin::Value& v);
seqio::ScoreMetricFn BuildScoreMetric(BuildContext& ctx, const gin::Value& v,
                                      const std::string& outer);

// Runs `build`, prefixing a t5xx::Error with WhereShort(v) (v's gin
// file:line), so a builder's error names the binding that caused it.
template <typename F>
auto At(const gin::Value& v, F&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const Error& e) {
    throw Error(gin::WhereShort(v) + ": " + e.what());
  }
}

}  // namespace t5xx::seqio_gin
