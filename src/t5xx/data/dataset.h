// Lazy, pull-based streams of Examples — the tf.data.Dataset of t5xx.
//
// A Dataset yields Examples one at a time through Next(); std::nullopt marks
// the end. Preprocessors are functions Dataset -> Dataset (seqio's
// `ds -> ds` callables), so a Task is a chain of wrappers over a source.
// Deterministic: the same construction and seed give the same stream.
// Framework-free: no libtorch.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "t5xx/data/example.h"

namespace t5xx::seqio {

class Dataset {
 public:
  virtual ~Dataset() = default;
  // Returns the next example, or std::nullopt at the end of the stream.
  virtual std::optional<Example> Next() = 0;
};

using DatasetPtr = std::unique_ptr<Dataset>;

// A dataset over an in-memory vector (tests, FunctionDataSource).
DatasetPtr FromVector(std::vector<Example> examples);

// Applies fn to every example (seqio's map_over_dataset).
DatasetPtr Map(DatasetPtr input, std::function<Example(Example)> fn);

// Keeps examples for which pred is true.
DatasetPtr Filter(DatasetPtr input, std::function<bool(const Example&)> pred);

// Maps each example to zero or more examples (tf.data flat_map).
DatasetPtr FlatMap(DatasetPtr input,
                   std::function<std::vector<Example>(Example)> fn);

// Repeats a dataset produced by `factory` num_epochs times (-1 = forever).
DatasetPtr Repeat(std::function<DatasetPtr()> factory, int num_epochs);

// Drains a dataset into a vector (tests, small validation sets).
std::vector<Example> Collect(Dataset& ds, size_t max_examples = SIZE_MAX);

}  // namespace t5xx::seqio
