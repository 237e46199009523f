// Timing the work queued on a device, as opposed to the host's time queuing
// it: a DeviceMark is a point in a device's queue -- on a GPU a CUDA event
// (timing enabled) recorded on the current stream, so that the time between
// two marks is the GPU's time for the work queued between them (cudaEvent-
// ElapsedTime); on the CPU the host clock when the mark is made, since CPU
// ops run as they are called. Used by bench/gpu_train_bench.cc's per-phase
// times of a train step beside the host's enqueue time.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <memory>

namespace t5xx::device {

class DeviceMark {
 public:
  // A mark recorded now on `device` (its current stream for a GPU).
  static DeviceMark Record(at::Device device);

  // Milliseconds of device work between `earlier` and this mark (both on the
  // same device); waits for this mark's point of the queue to be reached.
  // Throws std::logic_error for marks of different devices.
  double MillisecondsSince(const DeviceMark& earlier) const;

  at::Device device() const { return device_; }
  // The host clock when the mark was recorded (the enqueue time on a GPU).
  std::chrono::steady_clock::time_point host_time() const { return host_time_; }

 private:
  at::Device device_ = at::kCPU;
  std::chrono::steady_clock::time_point host_time_;
  std::shared_ptr<void> event_;  // at::cuda::CUDAEvent on a GPU (device_timer.cc)
};

}  // namespace t5xx::device
