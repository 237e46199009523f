// Timing the work queued on a device -- the implementation of
// device_timer.h. CUDA events only in a CUDA build (T5XX_WITH_CUDA).
#include "t5xx/device/device_timer.h"

#include <stdexcept>

#if T5XX_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <cuda_runtime_api.h>
#endif

namespace t5xx::device {

DeviceMark DeviceMark::Record(at::Device device) {
  DeviceMark m;
  m.device_ = device;
#if T5XX_WITH_CUDA
  if (device.is_cuda()) {
    auto event = std::make_shared<at::cuda::CUDAEvent>(cudaEventDefault);  // timing on
    event->record();  // the current stream of the current device
    m.event_ = event;
  }
#endif
  m.host_time_ = std::chrono::steady_clock::now();
  return m;
}

double DeviceMark::MillisecondsSince(const DeviceMark& earlier) const {
  if (earlier.device_ != device_) {
    throw std::logic_error("DeviceMark::MillisecondsSince: marks of " + earlier.device_.str() +
                           " and " + device_.str());
  }
#if T5XX_WITH_CUDA
  if (device_.is_cuda()) {
    auto* end = static_cast<at::cuda::CUDAEvent*>(event_.get());
    auto* start = static_cast<at::cuda::CUDAEvent*>(earlier.event_.get());
    end->synchronize();
    return static_cast<double>(start->elapsed_time(*end));
  }
#endif
  return std::chrono::duration<double, std::milli>(host_time_ - earlier.host_time_).count();
}

}  // namespace t5xx::device
