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
  // a small JSON object with this stage's own position and counters plus
  // {"input": input->SaveState()} for wrapped stages -- never examples: a
  // stage that buffers saves where its buffered unit started and how many
  // of its outputs it emitted (kPipelineStateVersion below). Stages that
  // buffer record their input's state once per unit (block, window, chunk);
  // the rest build it only when called. RestoreState must be
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

// Maps each example to zero or more examples (tf.data flat_map). State
// (version 2): {"input": the input's state before the example whose outputs
// are being emitted, "skip": its outputs emitted}.
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
// SaveState stores {"index", "input": the index and the input's state where
// the chunk being emitted started, "skip": its outputs emitted,
// "input_done"}, the same layout for every thread count, so a position
// saved with one count restores with another and continues identically
// (the chunk's fn calls are made again); RestoreState also accepts Map's and
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
// a block being read, never for the consumer). SaveState saves {"input":
// the input's state before the block the consumer is taking from (the
// thread records it with each block), "skip": the block's examples taken},
// without waiting for the thread; RestoreState (before the first Next())
// restores the input there and takes "skip" examples again (at most 1024,
// or this stage's block if larger); a state without
// "skip" is taken as input's own (a position saved before the stage was
// added to a pipeline). buffer_size == 0: no thread (input is read by
// Next() itself), with the same state layout, so a position saved with or
// without the thread restores into either. Neither
// input nor anything it calls may depend on the thread it runs on. Throws
// t5xx::Error if input is null. Defined in prefetch.cc.
DatasetPtr Prefetch(DatasetPtr input, size_t buffer_size);

// Appends input's next examples to *out until it holds n (the stages that
// read a unit at a time: a shuffle window, a packing block, a parallel
// map's chunk). Returns false when the input ended first. An exception of
// the input propagates, the examples read before it kept in *out.
bool ReadUpTo(Dataset& input, size_t n, std::vector<Example>* out);

// Drains a dataset into a vector (tests, small validation sets).
std::vector<Example> Collect(Dataset& ds, size_t max_examples = SIZE_MAX);

// ---------------------------------------------------------------------------
// State helpers.

// Version of the root state format written by WrapRootState. Version 2
// (compact positions): a stage that buffers (a shuffle window, packing
// blocks, a parallel map's chunk, a flat map's outputs, prefetch blocks,
// batches read ahead) saves where its oldest unemitted unit started (its
// input's state and counters then) and "skip", the outputs of that unit
// already emitted, never the examples themselves; restoring replays that
// unit (a bounded amount of work) and drops "skip" outputs. A position is
// then a few integers per stage (well under 1 KB for a task). Version 1
// states held the buffered examples and are refused (UnwrapRootState).
inline constexpr int kPipelineStateVersion = 2;

// {"version": kPipelineStateVersion, "state": state}.
nlohmann::json WrapRootState(nlohmann::json state);
// Returns root["state"]; throws t5xx::Error when "version" is missing, not an
// integer, or newer than kPipelineStateVersion.
nlohmann::json UnwrapRootState(const nlohmann::json& root);
// The stored form of a root state (what a checkpoint's t5xx_train_ds file
// holds): every chain of stages nested through "input" becomes
// {"stages": [outermost stage without "input", ..., innermost]} (a
// mixture's inputs and an interleave's slots are chains of their own), so
// the file stays a few levels deep however many preprocessors a task has
// and drops the "input" keys. A stage whose "input" is not an object (null)
// keeps it and ends its chain. UnflattenState is the inverse and leaves a
// nested state as it is; it throws t5xx::Error for a "stages" that is not a
// non-empty array of objects.
nlohmann::json FlattenState(const nlohmann::json& state);
nlohmann::json UnflattenState(const nlohmann::json& stored);

// Root state of a whole pipeline (WrapRootState(ds.SaveState())) and back.
nlohmann::json SavePipelineState(const Dataset& ds);
void RestorePipelineState(Dataset& ds, const nlohmann::json& root);

// A buffering stage's record of its input's state where a unit starts:
// input.SaveState(), or null when the input cannot save its position --
// then *saveable becomes false and later calls return null without asking
// (no exception per unit); the stage's own SaveState calls
// input.SaveState() again to throw that error.
nlohmann::json InputStateOrNull(const Dataset& input, bool* saveable);

// Restoring a compact position (version 2): calls ds.Next() `skip` times
// and drops what it returns -- the outputs the saved run had emitted since
// the restored start; an error among them is dropped as well (the saved run
// had passed it). Throws t5xx::Error "<who>: the saved position skips
// <skip> outputs, more than the <max_skip> of one unit (the state is
// damaged)" (a file read back is untrusted: a huge skip over data repeated
// forever would never end), and "<who>: the saved position is <skip>
// outputs past its start but the data ends after <n> (did the data or the
// configuration change?)".
void SkipOutputs(Dataset& ds, uint64_t skip, uint64_t max_skip, const char* who);

// Example <-> JSON object (string features as JSON strings, token features as
// arrays of ints).
nlohmann::json ExampleToJson(const Example& ex);
Example ExampleFromJson(const nlohmann::json& j);
// The state of a nested input; throws t5xx::Error naming `who` if missing.
const nlohmann::json& StateField(const nlohmann::json& state,
                                 const char* field, const char* who);
// A count or index field of a saved state (a non-negative integer). Throws
// t5xx::Error naming `who` and the field when it is missing, negative or
// not an integer below 2^63 ("... is -5, not a count (an integer in
// [0, 2^63)); the state is damaged").
uint64_t StateCount(const nlohmann::json& state, const char* field, const char* who);

}  // namespace t5xx::seqio
