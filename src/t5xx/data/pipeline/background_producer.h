// BackgroundProducer<T>: a produce function run on its own thread into a
// bounded queue that one consumer reads in order -- the engine of the
// Prefetch dataset stage (dataset.h) and of BatchStream's read-ahead of
// train batches (run/datasets.h).
//
// Behaviour source: tf.data's Dataset.prefetch(buffer_size), which t5x's
// input pipelines end with, and its checkpointing (the prefetch buffer is
// saved with the iterator, so a restored iterator yields what the saved one
// would have yielded next). Framework-free: no libtorch.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace t5xx::seqio {

// One producer thread, one consumer. The thread starts on the consumer's
// first Next()/HasNext() (so RestoreState-style set-up can happen before),
// calls produce() while fewer than `depth` items are queued, and stops after
// produce() returns std::nullopt (the end) or throws. The consumer sees the
// items in production order, then the end (Next() returns std::nullopt, on
// every later call too) or the exception, rethrown unchanged (same type and
// message) by this and every later Next()/HasNext(). The destructor stops the
// thread and joins it: it never waits for the consumer, only for a produce()
// call already running to return.
template <typename T>
class BackgroundProducer {
 public:
  using ProduceFn = std::function<std::optional<T>()>;

  // depth: the most items produced ahead of the consumer (>= 1; 0 is taken
  // as 1).
  BackgroundProducer(ProduceFn produce, size_t depth)
      : produce_(std::move(produce)), depth_(depth == 0 ? 1 : depth) {}
  BackgroundProducer(const BackgroundProducer&) = delete;
  BackgroundProducer& operator=(const BackgroundProducer&) = delete;
  ~BackgroundProducer() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // The next item (blocks until it is produced), or std::nullopt at the end.
  // Rethrows produce()'s exception once the items before it are consumed.
  std::optional<T> Next() {
    std::unique_lock<std::mutex> lk(mu_);
    WaitForFront(lk);
    if (!queue_.empty()) {
      std::optional<T> out(std::move(queue_.front()));
      queue_.pop_front();
      lk.unlock();
      cv_.notify_all();
      return out;
    }
    if (error_) std::rethrow_exception(error_);
    return std::nullopt;
  }

  // Whether Next() will return an item (blocks until that is known).
  // Rethrows produce()'s exception when it is next.
  bool HasNext() {
    std::unique_lock<std::mutex> lk(mu_);
    WaitForFront(lk);
    if (!queue_.empty()) return true;
    if (error_) std::rethrow_exception(error_);
    return false;
  }

  // Calls fn(queued) while the producer is idle: not started, or finished,
  // or waiting with a full queue (at least `depth` items; this waits for the
  // producer to fill it). The producer is held until fn returns, so fn may
  // read the state produce() works on; `queued` holds the produced, not yet
  // consumed items, oldest first. As the queue is always full when fn runs,
  // what fn sees depends only on how many items were consumed, not on the
  // threads' timing (a saved position is the same bytes in every run).
  // Returns fn's result.
  template <typename F>
  auto WithProducerIdle(F&& fn) const {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] {
      return !started_ || ended_ || error_ || (!producing_ && queue_.size() >= depth_);
    });
    return fn(static_cast<const std::deque<T>&>(queue_));
  }

  // Queues `items` before anything produced (e.g. the saved queue of a
  // restored position); the producer then only fills the queue up to
  // `depth`. Only before the first Next()/HasNext(); returns false (and
  // queues nothing) afterwards.
  bool Prepend(std::vector<T> items) {
    std::lock_guard<std::mutex> lk(mu_);
    if (started_) return false;
    for (auto it = items.rbegin(); it != items.rend(); ++it) queue_.push_front(std::move(*it));
    return true;
  }

  // Whether the thread has been started (by a Next() or HasNext()).
  bool started() const {
    std::lock_guard<std::mutex> lk(mu_);
    return started_;
  }

 private:
  // Starts the thread if needed, then waits until the queue has an item or
  // the producer has finished. Called with mu_ held.
  void WaitForFront(std::unique_lock<std::mutex>& lk) {
    if (!started_) {
      started_ = true;
      thread_ = std::thread([this] { Run(); });
    }
    cv_.wait(lk, [&] { return !queue_.empty() || ended_ || error_; });
  }

  void Run() {
    std::unique_lock<std::mutex> lk(mu_);
    while (true) {
      cv_.wait(lk, [&] { return stop_ || queue_.size() < depth_; });
      if (stop_) return;
      producing_ = true;
      lk.unlock();
      std::optional<T> item;
      std::exception_ptr error;
      try {
        item = produce_();
      } catch (...) {
        error = std::current_exception();
      }
      lk.lock();
      producing_ = false;
      if (error) {
        error_ = error;
      } else if (!item) {
        ended_ = true;
      } else {
        queue_.push_back(std::move(*item));
      }
      cv_.notify_all();
      if (error_ || ended_) return;
    }
  }

  ProduceFn produce_;
  const size_t depth_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<T> queue_;          // produced, not yet consumed
  bool started_ = false;
  bool producing_ = false;       // produce() is running
  bool ended_ = false;           // produce() returned std::nullopt
  bool stop_ = false;            // the destructor asks the thread to stop
  std::exception_ptr error_;     // what produce() threw
  std::thread thread_;
};

}  // namespace t5xx::seqio
