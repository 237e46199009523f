// t5x.utils.DatasetConfig: its configurable, with t5x's defaults, and how a
// train or train-eval dataset config is read from it.
#include "t5xx/catalog/t5_catalog.h"
#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

const char kDatasetConfig[] = "t5x.utils.DatasetConfig";

DatasetConfig ReadDatasetConfig(gin::Config& c, const std::string& scope,
                                bool allow_none_lengths) {
  DatasetConfig d;
  auto q = [&](const char* p) { return c.Query(kDatasetConfig, p, scope); };
  d.mixture_or_task_name = q("mixture_or_task_name").AsString();
  const gin::Value lengths = q("task_feature_lengths");  // outlives the loop
  if (lengths.is_none()) {
    T5XX_CHECK(allow_none_lengths,
               gin::Where(lengths) + " is None: only evaluation datasets (eval, "
               "infer_eval_dataset_cfg) measure their longest examples; give the lengths, "
               "e.g. {'inputs': 512, 'targets': 114}");
    d.lengths_from_data = true;
  } else {
    T5XX_CHECK(lengths.kind() == gin::Value::Kind::kDict,
               gin::Where(lengths) + " = " + lengths.ToGinString() +
                   ": expected a dict of lengths, e.g. {'inputs': 512, 'targets': 114}");
    for (const auto& [k, v] : lengths.AsDict()) {
      d.task_feature_lengths[k.AsString()] = v.AsInt();
    }
  }
  d.split = q("split").AsString();
  d.batch_size = gin::AtLeast(q("batch_size"), 1);
  d.shuffle = q("shuffle").AsBool();
  d.seed = gin::OptionalInt(q("seed"));
  // t5x seeds tf.data with it; t5xx derives every draw from it as a uint64.
  T5XX_CHECK(!d.seed || *d.seed >= 0,
             gin::Where(q("seed")) + " = " + std::to_string(*d.seed) + " must be >= 0 (or None)");
  d.pack = q("pack").AsBool();
  d.trim_output_features = q("trim_output_features").AsBool();
  q("use_custom_packing_ops").AsBool();  // no effect: one packer (documented)
  q("use_memory_cache").AsBool();        // no effect: streams are rebuilt
  d.use_cached = q("use_cached").AsBool();  // checked with the dataset (CheckDataset)
  const gin::Value module = q("module");
  // t5's catalog modules stand for t5xx's catalog (registered by
  // RegisterTasks); any other module is Python t5xx cannot import.
  gin::Refuse(!module.is_none() && !catalog::IsT5CatalogModule(module.AsString()), module,
              "t5xx has no Python modules besides t5's task catalog (t5.data.mixtures, "
              "t5.data.tasks); define the task in C++ or in gin (t5xx.seqio.register, "
              "docs/gin.md) and remove the module binding (MIXTURE_OR_TASK_MODULE = None)");
  return d;
}

void RegisterDatasetConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kDatasetConfig,
              {Required("mixture_or_task_name", T::kString),
               Required("task_feature_lengths", T::kOptionalDict),
               Required("split", T::kString),
               Required("batch_size", T::kInt),
               Required("shuffle", T::kBool),
               Required("seed", T::kOptionalInt),
               Optional("use_cached", T::kBool, B(false),
                        "Read each task's offline cache (USE_CACHED_TASKS; built by `t5xx "
                        "cache_tasks`, searched in --seqio_additional_cache_dirs / "
                        "--cache_dir)."),
               Optional("pack", T::kBool, B(false)),
               Optional("use_custom_packing_ops", T::kBool, B(false),
                        "No effect in t5xx: it has one packer (seqio's trim_and_pack), whose "
                        "output the custom ops equal."),
               Optional("module", T::kOptionalString, None()),
               Optional("use_memory_cache", T::kBool, B(true),
                        "No effect in t5xx: train-eval streams are rebuilt per evaluation."),
               Optional("trim_output_features", T::kBool, B(true),
                        "Cut each output feature to its task feature length after "
                        "preprocessing (seqio's default); False makes an over-long feature "
                        "an error.")},
              "Which seqio task/mixture to read and how to batch it."});
}

}  // namespace t5xx::run
