// Saving checkpoints in the background: the caller hands over copies of the
// arrays (the only part that blocks training), and a worker thread
// compresses, writes and commits them (SaveCheckpoint), then applies the
// retention policy. One save at a time: a new save first waits for the
// previous one. A failed background save is never silent: its error is
// rethrown by the next Save, Poll or Wait. t5x's counterpart is its
// asynchronous Orbax manager (t5x/checkpoints.py, "async saves ... awaited
// before eval"); t5x's legacy checkpointer blocks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "t5xx/checkpoints/t5x/checkpoints.h"

namespace t5xx::checkpoints {

// An array the checkpointer owns (a copy taken off the training buffers).
struct OwnedArray {
  std::string path;  // as ArrayRef::path
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // C-order, little-endian
  bool store_inline = false;
  std::optional<Box> box;  // as ArrayRef::box: `bytes` hold this part
  bool write = true;       // as ArrayRef::write
};

// Views of `arrays` as SaveCheckpoint takes them (pointing into them: they
// must outlive the views).
std::vector<ArrayRef> ArrayRefs(const std::vector<OwnedArray>& arrays);

// Everything one checkpoint holds.
struct PendingCheckpoint {
  int64_t step = 0;
  std::vector<OwnedArray> arrays;
  std::vector<ExtraFile> extra_files;
  // Several processes writing this checkpoint (checkpoints.h); the
  // default: one.
  ShardedSave sharded;
};

// What a finished background save did.
struct WriteResult {
  int64_t step = 0;
  std::string dir;       // the committed checkpoint_<step>
  // false: this process wrote its part of a sharded save, which process 0
  // commits (`dir` may not exist yet).
  bool committed = true;
  double seconds = 0;    // compressing, writing and committing
  uint64_t bytes = 0;    // uncompressed array bytes
  std::vector<std::string> deleted;  // by the retention policy (process 0 only)
  std::string note;  // what after_commit adds to the report (e.g. the upload)
};

class AsyncCheckpointer {
 public:
  // `after_commit` (optional) runs on the worker thread after each save
  // this process committed and its retention, with the result (e.g.
  // BucketModelDir::Publish), whose `note` it may set; its error fails the
  // save like a write error. Its time counts in `seconds`.
  AsyncCheckpointer(std::string model_dir, SaveOptions options, RetentionPolicy retention,
                    std::function<void(WriteResult&)> after_commit = nullptr);
  // Waits for a save in flight; an error it ended with is printed to stderr
  // (call Wait() first to handle it). Process 0 of a sharded save stops
  // waiting for the other processes' parts (they may be dead: the run is
  // ending) and commits only if they are all there already.
  ~AsyncCheckpointer();
  AsyncCheckpointer(const AsyncCheckpointer&) = delete;
  AsyncCheckpointer& operator=(const AsyncCheckpointer&) = delete;

  // Waits for the previous save (rethrowing its t5xx::Error; its result is
  // then returned by the next Poll or Wait), then starts writing
  // `checkpoint` in the background.
  void Save(PendingCheckpoint checkpoint);
  // Blocks until no save is in flight; returns the results of the saves
  // that finished and were not returned yet, oldest first. Rethrows a
  // failed save's error.
  std::vector<WriteResult> Wait();
  // Non-blocking: the results of the saves that finished since the last
  // call (none while one is still writing). Rethrows a failed save's error.
  std::vector<WriteResult> Poll();
  // The step of the save in flight or finished but not yet returned.
  std::optional<int64_t> pending_step() const { return pending_step_; }

 private:
  void Collect();
  std::string model_dir_;
  SaveOptions options_;
  RetentionPolicy retention_;
  std::function<void(WriteResult&)> after_commit_;
  std::thread worker_;
  std::future<WriteResult> result_;
  std::optional<int64_t> pending_step_;
  std::vector<WriteResult> unreported_;
  std::atomic<bool> cancel_{false};  // set by the destructor
};

}  // namespace t5xx::checkpoints
