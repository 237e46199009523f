// seqio Mixture: rate-weighted sampling over tasks, and get_mixture_or_task
// (see mixture.h).
#include "t5xx/data/dataset_providers/mixture.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {


// What follows "no mixture or task ..." in the errors for `name` in neither
// registry: "; did you mean [...]?" over both registries' names, then each
// registry's names.
std::string NotInEitherRegistry(const std::string& name, const TaskRegistry& tasks,
                                const MixtureRegistry& mixtures) {
  std::vector<std::string> names = tasks.Names();
  for (const auto& n : mixtures.Names()) names.push_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return ModuleImportHint(name) + DidYouMean(name, names) + "; registered mixtures: " +
         BracketedList(mixtures.Names(), kMaxListedNames) +
         "; registered tasks: " + BracketedList(tasks.Names(), kMaxListedNames);
}

std::vector<std::string> KeysOf(const OutputFeatures& of) {
  std::vector<std::string> out;
  for (const auto& kv : of) out.push_back(kv.first);
  return out;
}

void CheckRateNumber(double r, const std::string& what) {
  T5XX_CHECK(std::isfinite(r) && r >= 0,
        what + ": a mixing rate must be a finite number >= 0, got " +
            std::to_string(r));
}

// seqio's sample_from_datasets(stop_on_empty_dataset) with a counter-based
// RNG: draw k picks a live dataset with probability rate / live total.
class SampleDataset : public Dataset {
 public:
  SampleDataset(std::vector<DatasetPtr> inputs, std::vector<double> rates,
                uint64_t seed, bool stop_on_empty)
      : inputs_(std::move(inputs)), rates_(std::move(rates)),
        live_(inputs_.size(), true), seed_(seed), stop_(stop_on_empty) {}

  std::optional<Example> Next() override {
    while (!done_) {
      double total = 0;
      for (size_t i = 0; i < rates_.size(); ++i)
        if (live_[i]) total += rates_[i];
      if (total <= 0) break;
      StatelessRng rng(HashSeed(seed_, draw_++, seed_purpose::kMixtureSample));
      const double u = rng.Uniform01() * total;
      size_t pick = rates_.size();
      double acc = 0;
      for (size_t i = 0; i < rates_.size(); ++i) {
        if (!live_[i] || rates_[i] <= 0) continue;
        pick = i;  // the last eligible one absorbs rounding
        acc += rates_[i];
        if (u < acc) break;
      }
      auto ex = inputs_[pick]->Next();
      if (ex) return ex;
      if (stop_) break;
      live_[pick] = false;
      inputs_[pick].reset();
    }
    done_ = true;
    return std::nullopt;
  }
  nlohmann::json SaveState() const override {
    nlohmann::json inputs = nlohmann::json::array();
    for (size_t i = 0; i < inputs_.size(); ++i)
      inputs.push_back(inputs_[i] ? inputs_[i]->SaveState()
                                  : nlohmann::json(nullptr));
    std::vector<bool> live(live_.begin(), live_.end());
    return {{"draws", draw_}, {"done", done_}, {"live", live},
            {"inputs", std::move(inputs)}};
  }
  void RestoreState(const nlohmann::json& state) override {
    const auto& inputs = StateField(state, "inputs", "mixture sampling");
    const auto& live = StateField(state, "live", "mixture sampling");
    T5XX_CHECK(inputs.size() == inputs_.size() && live.size() == inputs_.size(),
          "mixture sampling: saved state has " + std::to_string(inputs.size()) +
              " inputs, this mixture has " + std::to_string(inputs_.size()));
    draw_ = StateCount(state, "draws", "mixture sampling");
    done_ = StateField(state, "done", "mixture sampling").get<bool>();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      live_[i] = live[i].get<bool>();
      if (inputs[i].is_null()) {
        inputs_[i].reset();
      } else {
        T5XX_CHECK(inputs_[i] != nullptr, "mixture sampling: input " +
                                         std::to_string(i) + " is gone");
        inputs_[i]->RestoreState(inputs[i]);
      }
    }
  }

 private:
  std::vector<DatasetPtr> inputs_;
  std::vector<double> rates_;
  std::vector<bool> live_;
  uint64_t seed_;
  bool stop_;
  uint64_t draw_ = 0;
  bool done_ = false;
};

}  // namespace

// ---------------------------------------------------------------------------

double MixtureRate::Of(const Task& task) const {
  if (const auto* fn = std::get_if<Fn>(&rate_)) {
    T5XX_CHECK(static_cast<bool>(*fn), "mixing rate function for task '" +
                                      task.name() + "' is empty");
    const double r = (*fn)(task);
    CheckRateNumber(r, "rate function for task '" + task.name() + "'");
    return r;
  }
  return std::get<double>(rate_);
}

double MixtureRate::Value(const std::string& what) const {
  T5XX_CHECK(!is_function(), what + ": expected a number as mixing rate, got a "
                               "function (only task entries may use one)");
  return std::get<double>(rate_);
}

// ---------------------------------------------------------------------------

Mixture::Mixture(std::string name, std::vector<MixtureEntry> entries,
                 std::optional<MixtureRate> default_rate, const TaskRegistry& tasks,
                 const MixtureRegistry& mixtures, bool stop_on_empty_dataset)
    : name_(std::move(name)), stop_on_empty_dataset_(stop_on_empty_dataset) {
  static const std::regex kName(R"(^[\w.:#]+$)");
  T5XX_CHECK(std::regex_match(name_, kName),
        "Mixture name '" + name_ + "' is invalid: use only letters, digits, "
        "'_', '.', ':' and '#'");
  T5XX_CHECK(!entries.empty(), "Mixture '" + name_ + "' has no tasks");
  if (default_rate && !default_rate->is_function())
    CheckRateNumber(default_rate->Value("default_rate"), "Mixture '" + name_ + "' default_rate");
  std::set<std::string> seen;
  for (auto& e : entries) {
    const std::string where = "Mixture '" + name_ + "', entry '" + e.name + "'";
    T5XX_CHECK(seen.insert(e.name).second, where + " is listed twice");
    T5XX_CHECK(e.rate.has_value() || default_rate.has_value(),
          where + " has no rate and the mixture has no default_rate");
    MixtureRate rate = e.rate ? *e.rate : *default_rate;
    if (!rate.is_function()) CheckRateNumber(rate.Value(where), where);
    if (mixtures.Has(e.name)) {
      subs_.push_back({mixtures.Get(e.name), rate.Value(where)});
    } else if (tasks.Has(e.name)) {
      own_tasks_.emplace(e.name, TaskEntry{tasks.Get(e.name), rate});
    } else {
      throw Error(where + ": no mixture or task of that name" +
                  NotInEitherRegistry(e.name, tasks, mixtures));
    }
  }
  std::map<std::string, TaskPtr> leaves;
  for (const auto& [n, te] : own_tasks_) leaves.emplace(n, te.task);
  for (const auto& s : subs_)
    for (const auto& t : s.mixture->tasks()) leaves.emplace(t->name(), t);
  for (auto& kv : leaves) leaf_tasks_.push_back(kv.second);  // sorted by name
  T5XX_CHECK(!leaf_tasks_.empty(), "Mixture '" + name_ + "' has no leaf tasks");
  const auto keys0 = KeysOf(leaf_tasks_[0]->output_features());
  for (const auto& t : leaf_tasks_) {
    const auto keys = KeysOf(t->output_features());
    T5XX_CHECK(keys == keys0,
          "Mixture '" + name_ + "': all tasks must have the same output "
          "features; task '" + leaf_tasks_[0]->name() + "' has " +
              BracketedList(keys0, kMaxListedNames) + " but task '" + t->name() + "' has " +
              BracketedList(keys, kMaxListedNames));
  }
}

const OutputFeatures& Mixture::output_features() const {
  return leaf_tasks_.front()->output_features();
}

std::vector<std::string> Mixture::sub_mixture_names() const {
  std::vector<std::string> out;
  for (const auto& s : subs_) out.push_back(s.mixture->name());
  return out;
}

bool Mixture::Contains(const std::string& task_name) const {
  for (const auto& t : leaf_tasks_)
    if (t->name() == task_name) return true;
  return false;
}

double Mixture::TotalRate() const {
  double total = 0;
  for (const auto& [n, te] : own_tasks_) total += te.rate.Of(*te.task);
  for (const auto& s : subs_) total += s.rate;
  return total;
}

double Mixture::GetRate(const Task& task) const {
  double value = 0;
  for (const auto& s : subs_) {
    if (!s.mixture->Contains(task.name())) continue;
    const double sub_total = s.mixture->TotalRate();
    if (sub_total > 0) value += s.rate * s.mixture->GetRate(task) / sub_total;
  }
  auto it = own_tasks_.find(task.name());
  if (it != own_tasks_.end()) value += it->second.rate.Of(*it->second.task);
  return value;
}

DatasetPtr Mixture::GetDataset(const FeatureLengths& sequence_length,
                               const std::string& split, bool shuffle,
                               std::optional<uint64_t> seed,
                               const ShardInfo& shard_info, int num_epochs,
                               std::optional<bool> stop_on_empty_dataset,
                               bool copy_pretokenized,
                               bool trim_output_features, bool use_cached) const {
  std::vector<TaskPtr> usable;
  for (const auto& t : leaf_tasks_) {
    const auto splits = t->splits();
    if (std::find(splits.begin(), splits.end(), split) != splits.end())
      usable.push_back(t);
  }
  if (usable.empty()) {
    std::vector<std::string> names;
    for (const auto& t : leaf_tasks_) names.push_back(t->name());
    throw Error("Mixture '" + name_ + "': no task has a '" + split +
                "' split (tasks: " + BracketedList(names, kMaxListedNames) + ")");
  }
  std::set<std::string> keep;
  for (const auto& kv : output_features()) {
    keep.insert(kv.first);
    if (copy_pretokenized) keep.insert(kv.first + "_pretokenized");
  }
  std::vector<double> rates;
  double total = 0;
  for (const auto& t : usable) {
    rates.push_back(GetRate(*t));
    total += rates.back();
  }
  T5XX_CHECK(total > 0, "Mixture '" + name_ + "': the tasks having split '" +
                       split + "' all have mixing rate 0");
  std::vector<DatasetPtr> datasets;
  for (const auto& t : usable) {
    DatasetPtr ds = t->GetDataset(sequence_length, split, shuffle,
                                  seed.value_or(0), shard_info, num_epochs,
                                  trim_output_features, use_cached);
    datasets.push_back(Map(std::move(ds), [keep](Example ex) {
      for (auto it = ex.begin(); it != ex.end();)
        it = keep.count(it->first) ? std::next(it) : ex.erase(it);
      return ex;
    }));
  }
  const uint64_t sample_seed = seed ? *seed : (shuffle ? 0 : 42);
  return std::make_unique<SampleDataset>(std::move(datasets), std::move(rates),
                                         sample_seed,
                                         stop_on_empty_dataset.value_or(stop_on_empty_dataset_));
}

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------

DatasetPtr Mixture::GetDataset(const FeatureLengths& sequence_length,
                               const DatasetRequest& request) const {
  return GetDataset(sequence_length, request.split, request.shuffle, request.seed,
                    request.shard_info, request.num_epochs, std::nullopt,
                    /*copy_pretokenized=*/false, request.trim_output_features,
                    request.use_cached);
}

DatasetProviderPtr GetMixtureOrTask(const std::string& name,
                                    const TaskRegistry& tasks,
                                    const MixtureRegistry& mixtures) {
  if (mixtures.Has(name)) return mixtures.Get(name);
  if (tasks.Has(name)) return tasks.Get(name);
  throw Error("no mixture or task named '" + name + "'" +
              NotInEitherRegistry(name, tasks, mixtures));
}

BatchIterator GetMixtureOrTaskDataset(
    const std::string& mixture_or_task_name,
    const FeatureLengths& task_feature_lengths,
    const FeatureConverter& feature_converter, const std::string& split,
    bool shuffle, int num_epochs, const ShardInfo& shard_info, uint64_t seed,
    int64_t batch_size, const TaskRegistry& registry,
    const MixtureRegistry& mixtures, bool trim_output_features, bool use_cached) {
  const DatasetProviderPtr provider =
      GetMixtureOrTask(mixture_or_task_name, registry, mixtures);
  const DatasetRequest request{split,      shuffle,    seed,
                               shard_info, num_epochs, trim_output_features,
                               use_cached};
  return GetProviderBatches(*provider, task_feature_lengths, feature_converter,
                            request, batch_size);
}

}  // namespace t5xx::seqio
