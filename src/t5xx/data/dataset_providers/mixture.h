// seqio Mixture, MixtureRegistry and get_mixture_or_task
// (seqio/dataset_providers.py: Mixture, MixtureRegistry, get_mixture_or_task,
// get_dataset).
//
// A Mixture samples examples from the datasets of its leaf Tasks in
// proportion to their effective mixing rates. Entries name Tasks or other
// Mixtures (nested); names are resolved against the registries when the
// Mixture is constructed, as seqio does. Sampling is deterministic: draw k
// picks a task from a counter-based RNG keyed by HashSeed(sample_seed, k).
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "t5xx/data/dataset_providers/dataset_provider.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"

namespace t5xx::seqio {

// A mixing rate: a number, or a function of the Task (seqio's `rate(task)`
// callables, e.g. a rate by number of examples). A function rate is allowed
// only for Task entries, not for sub-Mixture entries (seqio would evaluate it
// on TaskRegistry.get(mixture_name), which fails).
class MixtureRate {
 public:
  using Fn = std::function<double(const Task&)>;
  MixtureRate(double value) : rate_(value) {}  // NOLINT(runtime/explicit)
  MixtureRate(Fn fn) : rate_(std::move(fn)) {}  // NOLINT(runtime/explicit)
  // Any callable double(const Task&) (lambdas), so entries read {"t", fn}.
  template <typename F,
            typename = std::enable_if_t<
                std::is_invocable_r_v<double, F, const Task&> &&
                !std::is_arithmetic_v<std::decay_t<F>> &&
                !std::is_same_v<std::decay_t<F>, Fn>>>
  MixtureRate(F f) : rate_(Fn(std::move(f))) {}  // NOLINT(runtime/explicit)

  bool is_function() const { return std::holds_alternative<Fn>(rate_); }
  // The rate for `task` (the number, or fn(task)).
  double Of(const Task& task) const;
  // The number; throws t5xx::Error if this is a function rate.
  double Value(const std::string& what) const;

 private:
  std::variant<double, Fn> rate_;
};

// One Mixture entry: a Task or Mixture name and its rate. Without a rate the
// Mixture's default_rate applies (seqio: a bare name).
struct MixtureEntry {
  MixtureEntry(std::string name) : name(std::move(name)) {}  // NOLINT
  MixtureEntry(const char* name) : name(name) {}             // NOLINT
  MixtureEntry(std::string name, MixtureRate rate)
      : name(std::move(name)), rate(std::move(rate)) {}
  std::string name;
  std::optional<MixtureRate> rate;
};

class Mixture;
using MixturePtr = std::shared_ptr<const Mixture>;
// Name -> Mixture (seqio.MixtureRegistry); see provider_registry.h.
using MixtureRegistry = ProviderRegistry<Mixture>;

class Mixture : public DatasetProvider {
 public:
  // ProviderRegistry's words for a Mixture.
  static constexpr char kKind[] = "mixture";
  static constexpr char kRegistryName[] = "MixtureRegistry";

  // seqio Mixture(name, tasks, default_rate). Each entry's name is looked up
  // first in `mixtures` (a sub-mixture), then in `tasks` (a leaf task), as
  // seqio's constructor does. Throws t5xx::Error when:
  //  * the name is empty or has characters outside [\w.:#];
  //  * entries is empty, or an entry name repeats;
  //  * an entry has no rate and default_rate is not given (default_rate is
  //    a number or, as in seqio, a function of the task such as
  //    seqio.mixing_rate_num_examples, mixing_rates.h);
  //  * a rate number is negative or not finite, or a sub-mixture's rate is a
  //    function;
  //  * a name is neither a registered mixture nor task ("did you mean" the
  //    nearest names of both registries);
  //  * the leaf tasks do not all have the same output feature keys (naming
  //    the first task and the mismatching one with both key lists).
  // Function rates of tasks are evaluated lazily (GetRate / TotalRate).
  // stop_on_empty_dataset: seqio's sample_fn, whose default is
  // functools.partial(tf.data.Dataset.sample_from_datasets,
  // stop_on_empty_dataset=True); see GetDataset.
  Mixture(std::string name, std::vector<MixtureEntry> entries,
          std::optional<MixtureRate> default_rate = std::nullopt,
          const TaskRegistry& tasks = TaskRegistry::Global(),
          const MixtureRegistry& mixtures = MixtureRegistry::Global(),
          bool stop_on_empty_dataset = true);

  const std::string& name() const override { return name_; }

  // seqio Mixture.tasks: all leaf tasks (recursively through sub-mixtures),
  // deduplicated by name and sorted by name.
  std::vector<TaskPtr> tasks() const override { return leaf_tasks_; }
  // The leaf tasks' shared output features (those of the first task).
  const OutputFeatures& output_features() const override;
  // Names of the sub-mixtures given directly as entries.
  std::vector<std::string> sub_mixture_names() const;

  // seqio Mixture.total_rate: the sum of the entries' own rates (a
  // sub-mixture counts with its entry rate; a function rate is evaluated on
  // its task).
  double TotalRate() const;
  double total_rate() const { return TotalRate(); }

  // seqio Mixture.get_rate: the effective rate of `task` =
  //   (its own entry rate, if an entry names it directly)
  //   + sum over direct sub-mixtures m whose tasks() contain it of
  //       rate(m) * m.GetRate(task) / m.TotalRate().
  // 0 for a task the mixture does not contain.
  double GetRate(const Task& task) const;
  double get_rate(const Task& task) const { return GetRate(task); }

  // seqio Mixture.get_dataset. For each leaf task having `split` (the others
  // are skipped; none having it is an error listing the tasks):
  //   task->GetDataset(sequence_length, split, shuffle, seed.value_or(0),
  //                    shard_info, num_epochs)
  // restricted to the output feature keys (plus "<key>_pretokenized" when
  // copy_pretokenized), then sampled by GetRate. Draw k picks task i with
  // probability rate_i / sum(rates of the live tasks), using
  // StatelessRng(HashSeed(sample_seed, k, purpose)); sample_seed = *seed,
  // else 42 when !shuffle (seqio), else 0 (seqio would use a random seed;
  // t5xx stays deterministic).
  // num_epochs: -1 (default; seqio's None) repeats every task forever.
  // stop_on_empty_dataset (unset: the mixture's own, from its constructor):
  // true (seqio's default sample_fn) ends the mixture as soon as a drawn
  // task has run dry; false drops the empty task and keeps sampling the
  // others with renormalised rates until all are empty (seqio issue #513).
  // trim_output_features and use_cached (seqio's: read each task's offline
  // cache) are passed to every task's GetDataset.
  // Throws t5xx::Error if no task has the split, all rates of the usable
  // tasks are 0, or a task's GetDataset throws.
  DatasetPtr GetDataset(const FeatureLengths& sequence_length,
                        const std::string& split = "train", bool shuffle = true,
                        std::optional<uint64_t> seed = std::nullopt,
                        const ShardInfo& shard_info = {}, int num_epochs = -1,
                        std::optional<bool> stop_on_empty_dataset = std::nullopt,
                        bool copy_pretokenized = false,
                        bool trim_output_features = true,
                        bool use_cached = false) const;
  // DatasetProvider: the GetDataset above with request's arguments
  // (use_cached included), the mixture's own stop_on_empty_dataset and no
  // pretokenized copies.
  DatasetPtr GetDataset(const FeatureLengths& sequence_length,
                        const DatasetRequest& request) const override;
  bool stop_on_empty_dataset() const { return stop_on_empty_dataset_; }

 private:
  struct TaskEntry {
    TaskPtr task;
    MixtureRate rate;
  };
  struct SubEntry {
    MixturePtr mixture;
    double rate;
  };
  bool Contains(const std::string& task_name) const;

  std::string name_;
  std::map<std::string, TaskEntry> own_tasks_;  // by name
  std::vector<SubEntry> subs_;                  // in entry order
  std::vector<TaskPtr> leaf_tasks_;             // sorted by name
  bool stop_on_empty_dataset_ = true;
};

// seqio.get_mixture_or_task: the mixture named `name` when `mixtures` holds
// it (preferred when both registries do), else the task of `tasks`. Throws
// t5xx::Error for a name in neither registry ("did you mean" over both, then
// the registered mixtures and tasks).
DatasetProviderPtr GetMixtureOrTask(
    const std::string& name, const TaskRegistry& tasks = TaskRegistry::Global(),
    const MixtureRegistry& mixtures = MixtureRegistry::Global());

// GetDataset (task.h) accepting mixture names too: when `mixtures` holds
// `mixture_or_task_name` (preferred when both registries hold it, as seqio's
// get_mixture_or_task), the mixture's GetDataset(task_feature_lengths, split,
// shuffle, seed, shard_info, num_epochs, its own stop_on_empty_dataset,
// trim_output_features, use_cached) feeds the converter; otherwise this is
// GetDataset(..., registry, trim_output_features) with use_cached. Then
// converter -> BatchIterator with
// drop_remainder. Throws t5xx::Error for a name in neither registry ("did you
// mean" over both), bad lengths, or batch_size < 1.
BatchIterator GetMixtureOrTaskDataset(
    const std::string& mixture_or_task_name,
    const FeatureLengths& task_feature_lengths,
    const FeatureConverter& feature_converter,
    const std::string& split = "train", bool shuffle = false,
    int num_epochs = 1, const ShardInfo& shard_info = {}, uint64_t seed = 0,
    int64_t batch_size = 1,
    const TaskRegistry& registry = TaskRegistry::Global(),
    const MixtureRegistry& mixtures = MixtureRegistry::Global(),
    bool trim_output_features = true, bool use_cached = false);

}  // namespace t5xx::seqio
