// WorkerGroup, the persistent threads of a parallel dataset stage (see
// worker_group.h).
#include "t5xx/data/pipeline/worker_group.h"

#include <atomic>

namespace t5xx::seqio {

WorkerGroup::WorkerGroup(size_t num_workers) : num_workers_(num_workers) {}

WorkerGroup::~WorkerGroup() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerGroup::Run(const std::function<void()>& job) {
  if (threads_.empty()) {
    for (size_t w = 0; w < num_workers_; ++w) threads_.emplace_back([this] { Loop(); });
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    job_ = &job;
    running_ = threads_.size();
    ++generation_;
  }
  start_cv_.notify_all();
  job();
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return running_ == 0; });
  job_ = nullptr;
}

void WorkerGroup::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n <= 1 || num_workers_ == 0) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  const std::function<void()> job = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  Run(job);
}

void WorkerGroup::Loop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    start_cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const std::function<void()>* job = job_;
    lk.unlock();
    (*job)();
    lk.lock();
    if (--running_ == 0) done_cv_.notify_one();
  }
}

}  // namespace t5xx::seqio
