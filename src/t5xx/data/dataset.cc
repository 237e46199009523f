// Basic Dataset combinators (see dataset.h).
#include "t5xx/data/dataset.h"

#include <deque>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

class VectorDataset : public Dataset {
 public:
  explicit VectorDataset(std::vector<Example> examples)
      : examples_(std::move(examples)) {}
  std::optional<Example> Next() override {
    if (pos_ >= examples_.size()) return std::nullopt;
    return std::move(examples_[pos_++]);
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

 private:
  DatasetPtr input_;
  std::function<std::vector<Example>(Example)> fn_;
  std::deque<Example> pending_;
};

class RepeatDataset : public Dataset {
 public:
  RepeatDataset(std::function<DatasetPtr()> factory, int num_epochs)
      : factory_(std::move(factory)), num_epochs_(num_epochs) {}
  std::optional<Example> Next() override {
    while (true) {
      if (!current_) {
        if (num_epochs_ >= 0 && epoch_ >= num_epochs_) return std::nullopt;
        current_ = factory_();
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

 private:
  std::function<DatasetPtr()> factory_;
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
