// Basic Dataset combinators (see dataset.h).
#include "t5xx/data/dataset.h"

#include <cxxabi.h>

#include <cstdlib>
#include <deque>
#include <typeinfo>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {
std::string StageName(const Dataset& ds) {
  const char* mangled = typeid(ds).name();
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : mangled;
  std::free(d);
  return out;
}
}  // namespace

json Dataset::SaveState() const {
  throw Error("dataset stage " + StageName(*this) +
              " cannot save its position (no SaveState)");
}

void Dataset::RestoreState(const json&) {
  throw Error("dataset stage " + StageName(*this) +
              " cannot save its position (no RestoreState)");
}

json ExampleToJson(const Example& ex) {
  json j = json::object();
  for (const auto& [k, v] : ex) {
    if (const auto* s = std::get_if<std::string>(&v))
      j[k] = *s;
    else
      j[k] = std::get<Tokens>(v);
  }
  return j;
}

Example ExampleFromJson(const json& j) {
  Check(j.is_object(), "pipeline state: an example must be a JSON object, got " +
                           j.dump().substr(0, 80));
  Example ex;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_string())
      ex[it.key()] = it->get<std::string>();
    else if (it->is_array())
      ex[it.key()] = it->get<Tokens>();
    else
      throw Error("pipeline state: feature '" + it.key() +
                  "' must be a string or an array of ints");
  }
  return ex;
}

const json& StateField(const json& state, const char* field, const char* who) {
  Check(state.is_object() && state.contains(field),
        std::string(who) + ": saved state lacks field '" + field +
            "' (state from a different pipeline?)");
  return state.at(field);
}

json WrapRootState(json state) {
  return json{{"version", kPipelineStateVersion}, {"state", std::move(state)}};
}

json UnwrapRootState(const json& root) {
  Check(root.is_object() && root.contains("version") &&
            root["version"].is_number_integer(),
        "pipeline state: missing integer \"version\" field");
  const int v = root["version"].get<int>();
  Check(v <= kPipelineStateVersion,
        "pipeline state has version " + std::to_string(v) +
            ", newer than this build supports (" +
            std::to_string(kPipelineStateVersion) +
            "); restore it with a newer t5xx");
  Check(v >= 1, "pipeline state: invalid version " + std::to_string(v));
  return StateField(root, "state", "pipeline state");
}

json SavePipelineState(const Dataset& ds) { return WrapRootState(ds.SaveState()); }

void RestorePipelineState(Dataset& ds, const json& root) {
  ds.RestoreState(UnwrapRootState(root));
}

namespace {

class VectorDataset : public Dataset {
 public:
  explicit VectorDataset(std::vector<Example> examples)
      : examples_(std::move(examples)) {}
  std::optional<Example> Next() override {
    if (pos_ >= examples_.size()) return std::nullopt;
    return std::move(examples_[pos_++]);
  }
  json SaveState() const override { return {{"pos", pos_}}; }
  void RestoreState(const json& state) override {
    const size_t pos = StateField(state, "pos", "FromVector").get<size_t>();
    Check(pos <= examples_.size(),
          "FromVector: saved position " + std::to_string(pos) +
              " is past the end (" + std::to_string(examples_.size()) + ")");
    pos_ = pos;
  }

 private:
  std::vector<Example> examples_;
  size_t pos_ = 0;
};

class MapDataset : public Dataset {
 public:
  MapDataset(DatasetPtr input, std::function<Example(Example)> fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::optional<Example> Next() override {
    auto ex = input_->Next();
    if (!ex) return std::nullopt;
    return fn_(std::move(*ex));
  }
  json SaveState() const override { return {{"input", input_->SaveState()}}; }
  void RestoreState(const json& state) override {
    input_->RestoreState(StateField(state, "input", "Map"));
  }

 private:
  DatasetPtr input_;
  std::function<Example(Example)> fn_;
};

class FilterDataset : public Dataset {
 public:
  FilterDataset(DatasetPtr input, std::function<bool(const Example&)> pred)
      : input_(std::move(input)), pred_(std::move(pred)) {}
  std::optional<Example> Next() override {
    while (auto ex = input_->Next()) {
      if (pred_(*ex)) return ex;
    }
    return std::nullopt;
  }
  json SaveState() const override { return {{"input", input_->SaveState()}}; }
  void RestoreState(const json& state) override {
    input_->RestoreState(StateField(state, "input", "Filter"));
  }

 private:
  DatasetPtr input_;
  std::function<bool(const Example&)> pred_;
};

class FlatMapDataset : public Dataset {
 public:
  FlatMapDataset(DatasetPtr input,
                 std::function<std::vector<Example>(Example)> fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::optional<Example> Next() override {
    while (pending_.empty()) {
      auto ex = input_->Next();
      if (!ex) return std::nullopt;
      for (auto& out : fn_(std::move(*ex))) pending_.push_back(std::move(out));
    }
    Example out = std::move(pending_.front());
    pending_.pop_front();
    return out;
  }
  json SaveState() const override {
    json pending = json::array();
    for (const auto& ex : pending_) pending.push_back(ExampleToJson(ex));
    return {{"pending", std::move(pending)}, {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    pending_.clear();
    for (const auto& j : StateField(state, "pending", "FlatMap"))
      pending_.push_back(ExampleFromJson(j));
    input_->RestoreState(StateField(state, "input", "FlatMap"));
  }

 private:
  DatasetPtr input_;
  std::function<std::vector<Example>(Example)> fn_;
  std::deque<Example> pending_;
};

class RepeatDataset : public Dataset {
 public:
  RepeatDataset(std::function<DatasetPtr()> factory, int num_epochs)
      : factory_(std::move(factory)), num_epochs_(num_epochs) {}
  RepeatDataset(std::function<DatasetPtr(int64_t)> factory, int num_epochs)
      : indexed_factory_(std::move(factory)), num_epochs_(num_epochs) {}
  std::optional<Example> Next() override {
    while (true) {
      if (!current_) {
        if (num_epochs_ >= 0 && epoch_ >= num_epochs_) return std::nullopt;
        current_ = Make(epoch_);
        ++epoch_;
        yielded_this_epoch_ = false;
      }
      auto ex = current_->Next();
      if (ex) {
        yielded_this_epoch_ = true;
        return ex;
      }
      current_.reset();
      // An empty dataset repeated forever would spin: stop instead.
      if (!yielded_this_epoch_) return std::nullopt;
    }
  }
  json SaveState() const override {
    return {{"epoch", epoch_},
            {"yielded_this_epoch", yielded_this_epoch_},
            {"input", current_ ? current_->SaveState() : json(nullptr)}};
  }
  void RestoreState(const json& state) override {
    const int epoch = StateField(state, "epoch", "Repeat").get<int>();
    Check(epoch >= 0 && (num_epochs_ < 0 || epoch <= num_epochs_),
          "Repeat: saved epoch " + std::to_string(epoch) +
              " is outside [0, " + std::to_string(num_epochs_) + "]");
    Check(epoch_ == 0 && !current_,
          "Repeat: RestoreState needs a freshly constructed pipeline");
    const json& input = StateField(state, "input", "Repeat");
    yielded_this_epoch_ =
        StateField(state, "yielded_this_epoch", "Repeat").get<bool>();
    if (!indexed_factory_) {
      // A stateful factory counts epochs itself: replay the calls.
      const int calls = input.is_null() ? epoch : epoch - 1;
      for (int e = 0; e < calls; ++e) (void)factory_();
    }
    epoch_ = epoch;
    if (!input.is_null()) {
      Check(epoch >= 1, "Repeat: saved state has an input but epoch 0");
      current_ = Make(epoch - 1);
      current_->RestoreState(input);
    }
  }

 private:
  DatasetPtr Make(int64_t e) {
    DatasetPtr ds = indexed_factory_ ? indexed_factory_(e) : factory_();
    Check(ds != nullptr, "Repeat: factory returned a null dataset for epoch " +
                             std::to_string(e));
    return ds;
  }

  std::function<DatasetPtr()> factory_;
  std::function<DatasetPtr(int64_t)> indexed_factory_;
  int num_epochs_;
  int epoch_ = 0;
  bool yielded_this_epoch_ = false;
  DatasetPtr current_;
};

}  // namespace

DatasetPtr FromVector(std::vector<Example> examples) {
  return std::make_unique<VectorDataset>(std::move(examples));
}

DatasetPtr Map(DatasetPtr input, std::function<Example(Example)> fn) {
  Check(input != nullptr, "Map: input dataset is null");
  return std::make_unique<MapDataset>(std::move(input), std::move(fn));
}

DatasetPtr Filter(DatasetPtr input, std::function<bool(const Example&)> pred) {
  Check(input != nullptr, "Filter: input dataset is null");
  return std::make_unique<FilterDataset>(std::move(input), std::move(pred));
}

DatasetPtr FlatMap(DatasetPtr input,
                   std::function<std::vector<Example>(Example)> fn) {
  Check(input != nullptr, "FlatMap: input dataset is null");
  return std::make_unique<FlatMapDataset>(std::move(input), std::move(fn));
}

DatasetPtr Repeat(std::function<DatasetPtr()> factory, int num_epochs) {
  Check(num_epochs >= -1,
        "Repeat: num_epochs must be -1 (forever) or >= 0, got " +
            std::to_string(num_epochs));
  return std::make_unique<RepeatDataset>(std::move(factory), num_epochs);
}

DatasetPtr RepeatIndexed(std::function<DatasetPtr(int64_t epoch)> factory,
                         int num_epochs) {
  Check(num_epochs >= -1,
        "Repeat: num_epochs must be -1 (forever) or >= 0, got " +
            std::to_string(num_epochs));
  return std::make_unique<RepeatDataset>(std::move(factory), num_epochs);
}

std::vector<Example> Collect(Dataset& ds, size_t max_examples) {
  std::vector<Example> out;
  while (out.size() < max_examples) {
    auto ex = ds.Next();
    if (!ex) break;
    out.push_back(std::move(*ex));
  }
  return out;
}

}  // namespace t5xx::seqio
