// Lazy, pull-based streams of Examples — the tf.data.Dataset of t5xx.
//
// A Dataset yields Examples one at a time through Next(); std::nullopt marks
// the end. Preprocessors are functions Dataset -> Dataset (seqio's
// `ds -> ds` callables), so a Task is a chain of wrappers over a source.
// Deterministic: the same construction and seed give the same stream.
// Defined in dataset.cc (interface defaults, state helpers), dataset_ops.cc,
// parallel_map.cc, prefetch.cc and factory_datasets.cc. Framework-free: no
// libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "t5xx/data/pipeline/example.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

// A t5xx::Error raised while iterating a task, already prefixed with the
// task, the step and the example it came from (Task::GetDataset): later
// steps pass it on unchanged.
class DataStepError : public Error {
 public:
  using Error::Error;
};

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

// Applies fn to every example on `num_threads` threads (the calling thread
// and num_threads - 1 std::threads; 0 or 1: the calling thread alone).
// Inputs are pulled in order on the calling thread in chunks of
// 64 * num_threads examples; each chunk is split across the threads and the
// results are emitted in input order, so the output stream is identical for
// any thread count and equal to Map(input, fn) -- provided fn is a pure
// function of its argument (no shared mutable state, no dependence on call
// order; it is called concurrently from several threads). An exception
// thrown by fn on an example, or by the input, is rethrown from Next() in
// that example's place (after the outputs before it; the next Next()
// continues after it), as Map does; one not rethrown yet is not saved.
// SaveState stores {"index", "input_done", "pending": the chunk's not yet
// emitted outputs, "input"}, the same layout for every thread count, so a
// position saved with one count restores with another and continues
// identically without re-running fn; RestoreState also accepts Map's and
// MapIndexed's layouts. Throws t5xx::Error if num_threads < 0.
DatasetPtr ParallelMap(DatasetPtr input, std::function<Example(Example)> fn,
                       int num_threads);
// Sequential map with the example's 0-based index in the input stream (for
// per-example seeds); an example for which fn returns std::nullopt is
// dropped (its index is still used). State: {"index", "input"}.
DatasetPtr MapIndexed(
    DatasetPtr input,
    std::function<std::optional<Example>(Example, uint64_t index)> fn);

// As ParallelMap, but fn also receives the example's 0-based index in the
// input stream (assigned in input order on the calling thread, before the
// parallel work, and saved in the state), e.g. to seed per-example randomness.
DatasetPtr ParallelMapIndexed(DatasetPtr input,
                              std::function<Example(Example, uint64_t index)> fn,
                              int num_threads);

// The first n examples of input (tf.data take); n == -1 takes all. Throws
// t5xx::Error if n < -1. Stops pulling from input once n are emitted.
DatasetPtr Take(DatasetPtr input, int64_t n);

// Drops the first n examples of input, then yields the rest (tf.data skip);
// n == -1 skips all. The skipping happens on the first Next(). Throws
// t5xx::Error if n < -1.
DatasetPtr Skip(DatasetPtr input, int64_t n);

// The examples of input at 0-based positions p with p % num_shards ==
// index (tf.data shard; seqio's example-level sharding). num_shards == 1
// returns input itself. Throws t5xx::Error unless num_shards >= 1 and
// 0 <= index < num_shards.
DatasetPtr Shard(DatasetPtr input, int num_shards, int index);

// tf.data interleave over the datasets built by `factories` (in order):
// up to cycle_length inputs are open at once, visited round-robin, and
// block_length consecutive examples are taken from each before moving to the
// next slot. A slot is opened lazily (with the next unused factory) when the
// cycle reaches it empty; when its input ends the slot is closed and the
// cycle moves on, so the next factory fills that slot on a later visit. Ends
// when every factory has been opened and drained. Example with cycle_length
// 2, block_length 1 over [a0 a1 a2], [b0], [c0 c1]:
// a0 b0 a1 a2 c0 c1. Factories must be deterministic and callable more than
// once: RestoreState rebuilds each open slot by calling its factory again
// and restoring the saved state into it. Throws t5xx::Error if
// cycle_length < 1 or block_length < 1.
DatasetPtr Interleave(std::vector<std::function<DatasetPtr()>> factories,
                      int cycle_length, int block_length = 1);

// Reads `input` on its own thread up to buffer_size examples ahead of the
// consumer (tf.data prefetch): the stages before it run while the stages
// after it work on earlier examples. Examples cross threads in blocks of
// max(1, buffer_size / 2). The output stream is exactly input's; an
// exception thrown by input is rethrown from Next() unchanged (same type and
// message) once the examples read before it are consumed (and by every later
// Next() when buffer_size > 0: the thread stops at an error). The thread starts
// on the first Next(); the destructor stops and joins it (it waits only for
// a block being read, never for the consumer). SaveState waits until the
// thread has filled its buffer (or met the input's end or an error) and
// saves {"buffered": the examples read ahead and not yet emitted, "input":
// input's state}, so the saved bytes do not depend on the threads' timing;
// RestoreState (before the first Next()) emits the buffered ones first; a state without
// "buffered" is taken as input's own (a position saved before the stage was
// added to a pipeline). buffer_size == 0: no
// thread (input is read by Next() itself), with the same state layout, so a
// position saved with or without the thread restores into either. Neither
// input nor anything it calls may depend on the thread it runs on. Throws
// t5xx::Error if input is null. Defined in prefetch.cc.
DatasetPtr Prefetch(DatasetPtr input, size_t buffer_size);

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
