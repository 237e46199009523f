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
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "t5xx/data/example.h"

namespace t5xx::seqio {

class Dataset {
 public:
  virtual ~Dataset() = default;
  // Returns the next example, or std::nullopt at the end of the stream.
  virtual std::optional<Example> Next() = 0;

  // Position save/restore (checkpointable input pipelines). SaveState returns
  // a small JSON object with this stage's own position, counters and buffered
  // examples plus {"input": input->SaveState()} for wrapped stages; it is
  // built only when called (no cost on the Next() path). RestoreState must be
  // called on a freshly constructed identical pipeline (same construction
  // arguments and seeds) before its first Next(); afterwards the stream
  // continues exactly where the saved one stopped. The defaults throw
  // t5xx::Error("<stage> cannot save its position").
  virtual nlohmann::json SaveState() const;
  virtual void RestoreState(const nlohmann::json& state);
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
// On RestoreState the stateful factory is called once per epoch already
// started (its results are discarded but the last), so a factory that counts
// epochs internally rebuilds the right epoch; prefer the indexed overload.
DatasetPtr Repeat(std::function<DatasetPtr()> factory, int num_epochs);
// As above; factory(e) builds epoch e (0-based).
DatasetPtr RepeatIndexed(std::function<DatasetPtr(int64_t epoch)> factory,
                         int num_epochs);

// Drains a dataset into a vector (tests, small validation sets).
std::vector<Example> Collect(Dataset& ds, size_t max_examples = SIZE_MAX);

// ---------------------------------------------------------------------------
// State helpers.

// Version of the root state format written by WrapRootState.
inline constexpr int kPipelineStateVersion = 1;

// {"version": kPipelineStateVersion, "state": state}.
nlohmann::json WrapRootState(nlohmann::json state);
// Returns root["state"]; throws t5xx::Error when "version" is missing, not an
// integer, or newer than kPipelineStateVersion.
nlohmann::json UnwrapRootState(const nlohmann::json& root);
// Root state of a whole pipeline (WrapRootState(ds.SaveState())) and back.
nlohmann::json SavePipelineState(const Dataset& ds);
void RestorePipelineState(Dataset& ds, const nlohmann::json& root);

// Example <-> JSON object (string features as JSON strings, token features as
// arrays of ints).
nlohmann::json ExampleToJson(const Example& ex);
Example ExampleFromJson(const nlohmann::json& j);
// The state of a nested input; throws t5xx::Error naming `who` if missing.
const nlohmann::json& StateField(const nlohmann::json& state,
                                 const char* field, const char* who);

}  // namespace t5xx::seqio
