// Background checkpoint saves: one worker thread per save, results and
// errors handed back to the training thread (see async_checkpointer.h).
#include "t5xx/checkpoints/async_checkpointer.h"

#include <chrono>
#include <iostream>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {

std::vector<ArrayRef> ArrayRefs(const std::vector<OwnedArray>& arrays) {
  std::vector<ArrayRef> refs;
  refs.reserve(arrays.size());
  for (const OwnedArray& a : arrays) {
    refs.push_back({a.path, a.dtype, a.shape, a.bytes.data(), a.store_inline, a.box, a.write});
  }
  return refs;
}

AsyncCheckpointer::AsyncCheckpointer(std::string model_dir, SaveOptions options,
                                     RetentionPolicy retention,
                                     std::function<void(WriteResult&)> after_commit)
    : model_dir_(std::move(model_dir)),
      options_(options),
      retention_(retention),
      after_commit_(std::move(after_commit)) {}

AsyncCheckpointer::~AsyncCheckpointer() {
  if (!worker_.joinable()) return;
  cancel_ = true;
  worker_.join();
  try {
    result_.get();
  } catch (const std::exception& e) {
    std::cerr << "error: background checkpoint save failed: " << e.what() << std::endl;
  }
}

void AsyncCheckpointer::Collect() {
  worker_.join();
  std::future<WriteResult> f = std::move(result_);
  pending_step_.reset();
  unreported_.push_back(f.get());  // rethrows the worker's error
}

void AsyncCheckpointer::Save(PendingCheckpoint checkpoint) {
  if (worker_.joinable()) Collect();
  std::promise<WriteResult> promise;
  result_ = promise.get_future();
  pending_step_ = checkpoint.step;
  checkpoint.sharded.cancel = &cancel_;
  worker_ = std::thread([this, c = std::move(checkpoint), p = std::move(promise)]() mutable {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      WriteResult r;
      r.step = c.step;
      for (const OwnedArray& a : c.arrays) r.bytes += a.bytes.size();
      r.dir = SaveCheckpoint(model_dir_, c.step, ArrayRefs(c.arrays), options_, c.extra_files,
                             c.sharded);
      c.arrays.clear();
      c.arrays.shrink_to_fit();  // free the copies before deleting old checkpoints
      // Only the process that commits (process 0 of a sharded save) prunes.
      r.committed = c.sharded.process_count <= 1 || c.sharded.process_index == 0;
      if (r.committed) r.deleted = ApplyRetention(model_dir_, retention_);
      if (r.committed && after_commit_) after_commit_(r);
      r.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      p.set_value(std::move(r));
    } catch (...) {
      p.set_exception(std::current_exception());
    }
  });
}

std::vector<WriteResult> AsyncCheckpointer::Wait() {
  if (worker_.joinable()) Collect();
  return std::exchange(unreported_, {});
}

std::vector<WriteResult> AsyncCheckpointer::Poll() {
  if (worker_.joinable() &&
      result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    Collect();
  }
  return std::exchange(unreported_, {});
}

}  // namespace t5xx::checkpoints
