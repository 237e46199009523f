// seqio.CacheDatasetPlaceholder's rules for a Task's preprocessors list:
// where the placeholder sits (CacheStep, task.h), what may come before it,
// and a data source that forbids caching.
//
// Behaviour source: seqio/dataset_providers.py (CacheDatasetPlaceholder;
// Task.__init__: at most one placeholder, the source's caching_permitted;
// Task._validate_preprocessors: no step taking sequence_length before it, a
// logged warning for one taking seed/seeds). Framework-free: no libtorch.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/data/sources/data_source.h"

namespace t5xx::seqio {

// One entry of a seqio Task's preprocessors list as written: a step, or
// seqio.CacheDatasetPlaceholder(required=...).
struct PreprocessorListEntry {
  // How messages name the entry, e.g. "t5.data.preprocessors.span_corruption,
  // bound at tasks.gin:7:5".
  std::string name;
  bool is_placeholder = false;
  bool required = false;            // the placeholder's `required`
  PreprocessorSignature signature;  // a step's Python signature traits
};

// The CacheStep of a task's list (nullopt: no placeholder): index = the
// number of steps before the placeholder, required = its `required`.
// Throws t5xx::Error naming the task and the entries (by position in the
// list and name) for a second placeholder, or for a step before the
// placeholder that takes sequence_length (lengths are only known when the
// task is read, after the cache was written: move the step after the
// placeholder). Writes one "t5xx: warning:" line to `warnings` for each step
// before it taking a seed (the cache freezes one draw of it, so every epoch
// read from the cache sees the same samples), as seqio logs.
std::optional<CacheStep> FindCacheStep(const std::string& task_name,
                                       const std::vector<PreprocessorListEntry>& entries,
                                       std::ostream& warnings);

// `source` with caching_permitted() = permitted (seqio's caching_permitted
// argument of its data sources); everything else is forwarded. permitted
// == source->caching_permitted() returns `source` itself. Throws
// t5xx::Error for a null source.
DataSourcePtr WithCachingPermitted(DataSourcePtr source, bool permitted);

}  // namespace t5xx::seqio
