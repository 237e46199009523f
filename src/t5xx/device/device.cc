// Where a run's tensors live -- the implementation of device.h. The CUDA
// calls are compiled only in a CUDA build of libtorch (T5XX_WITH_CUDA, set
// by CMakeLists.txt when libtorch has its torch_cuda target).
#include "t5xx/device/device.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include "t5xx/util/error.h"
#include "t5xx/util/torch_compat.h"

#if T5XX_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace t5xx::device {
namespace {

std::string Gib(double bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return out.str();
}

[[noreturn]] void NoGpu(const std::string& spec, const std::string& what) {
  if (!BuiltWithCuda()) {
    throw Error(what + " = '" + spec +
                "' asks for a GPU, but this t5xx is built against a libtorch without CUDA "
                "(e.g. Debian's libtorch-dev); rebuild against a CUDA libtorch (docs/gpu.md, "
                "\"Building against libtorch 2.x and CUDA\") or use " +
                what + "=cpu");
  }
  throw Error(what + " = '" + spec +
              "' asks for a GPU, but none is visible to this process (CUDA_VISIBLE_DEVICES, "
              "driver); use " + what + "=cpu or run on a machine with an NVIDIA GPU");
}

}  // namespace

bool BuiltWithCuda() {
#if T5XX_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int64_t CudaDeviceCount() {
#if T5XX_WITH_CUDA
  return at::hasCUDA() ? static_cast<int64_t>(c10::cuda::device_count()) : 0;
#else
  return 0;
#endif
}

at::Device ResolveDevice(const std::string& spec_in, int local_rank, const std::string& what) {
  std::string spec = spec_in;
  std::transform(spec.begin(), spec.end(), spec.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const int64_t count = CudaDeviceCount();
  const int64_t rank = std::max(local_rank, 0);
  if (spec.empty() || spec == "auto") {
    if (count == 0) return at::Device(at::kCPU);
    return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(rank % count));
  }
  if (spec == "cpu") return at::Device(at::kCPU);
  if (spec == "cuda" || spec == "gpu") {
    if (count == 0) NoGpu(spec_in, what);
    return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(rank % count));
  }
  if (spec.rfind("cuda:", 0) == 0) {
    const std::string index = spec.substr(5);
    const bool digits = !index.empty() && index.size() <= 4 &&
                        std::all_of(index.begin(), index.end(),
                                    [](unsigned char c) { return std::isdigit(c) != 0; });
    if (digits) {
      if (count == 0) NoGpu(spec_in, what);
      const int64_t n = std::stoll(index);
      T5XX_CHECK(n < count, what + " = '" + spec_in + "': this process sees " +
                                std::to_string(count) + " GPU" + (count == 1 ? "" : "s") +
                                " (cuda:0" + (count > 1 ? "..cuda:" + std::to_string(count - 1) : "") +
                                "); pick one of them or check CUDA_VISIBLE_DEVICES");
      return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(n));
    }
  }
  throw Error(what + " = '" + spec_in +
              "' is not a device; use auto (a GPU when there is one, else the CPU), cpu, cuda "
              "(the GPU of this process's LOCAL_RANK) or cuda:N");
}

void SetCurrentDevice(at::Device device) {
#if T5XX_WITH_CUDA
  if (device.is_cuda()) c10::cuda::set_device(device.index());
#else
  (void)device;
#endif
}

std::string DeviceName(at::Device device) {
#if T5XX_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index())->name;
#endif
  return device.str();
}

std::optional<int64_t> TotalDeviceMemoryBytes(at::Device device) {
#if T5XX_WITH_CUDA
  if (device.is_cuda()) {
    return static_cast<int64_t>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
  }
#endif
  (void)device;
  return std::nullopt;
}

std::string Describe(at::Device device) {
  std::ostringstream out;
  out << device.str() << " (";
#if T5XX_WITH_CUDA
  if (device.is_cuda()) {
    const auto* p = at::cuda::getDeviceProperties(device.index());
    out << p->name << ", " << Gib(static_cast<double>(p->totalGlobalMem))
        << ", compute capability " << p->major << "." << p->minor << ")";
    return out.str();
  }
#endif
  out << at::get_num_threads() << " thread" << (at::get_num_threads() == 1 ? "" : "s") << ")";
  return out.str();
}

void Synchronize(at::Device device) {
#if T5XX_WITH_CUDA
  if (device.is_cuda()) {
    const c10::DeviceIndex current = c10::cuda::current_device();
    if (current != device.index()) c10::cuda::set_device(device.index());
    c10::cuda::device_synchronize();
    if (current != device.index()) c10::cuda::set_device(current);
  }
#else
  (void)device;
#endif
}

at::Tensor ToDevice(const at::Tensor& t, at::Device device) {
  if (!t.defined() || t.device() == device) return t;
  if (t.is_cpu() && device.is_cuda()) {
    const at::Tensor pinned = t.is_pinned() ? t : t.contiguous().pin_memory();
    return pinned.to(device, /*non_blocking=*/true);
  }
  return t.to(device);
}

at::Generator MakeGenerator(uint64_t seed, at::Device device) {
  if (device.is_cpu()) return compat::MakeCpuGenerator(seed);
  at::Generator base = at::globalContext().defaultGenerator(device);
  at::Generator g;
  {
    std::lock_guard<std::mutex> lock(base.mutex());
    g = base.clone();
  }
  g.set_current_seed(seed);
  return g;
}

void SetCudaMatmulPrecision(bool allow_tf32, bool allow_bf16_reduction) {
  compat::SetCudaMatmulPrecision(allow_tf32, allow_bf16_reduction);
}

std::optional<MemoryStats> DeviceMemory(at::Device device) {
#if T5XX_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    const size_t all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    MemoryStats m;
    m.allocated = stats.allocated_bytes[all].current;
    m.peak_allocated = stats.allocated_bytes[all].peak;
    m.reserved = stats.reserved_bytes[all].current;
    m.peak_reserved = stats.reserved_bytes[all].peak;
    return m;
  }
#endif
  (void)device;
  return std::nullopt;
}

void ResetPeakMemory(at::Device device) {
#if T5XX_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

double DenseBf16PeakFlops(const std::string& name) {
  // Longest names first, so that "H100 PCIe" is not taken for "H100".
  static const std::vector<std::pair<std::string, double>> kPeaks = {
      {"H100 PCIe", 756e12}, {"H100 NVL", 835e12}, {"GH200", 989.4e12}, {"H200", 989.4e12},
      {"H100", 989.4e12},    {"H800", 989.4e12},   {"A100", 312e12},    {"A800", 312e12},
      {"L40S", 362.05e12},   {"L4", 121e12},       {"RTX 4090", 165.2e12},
  };
  for (const auto& [key, peak] : kPeaks) {
    if (name.find(key) != std::string::npos) return peak;
  }
  return 0.0;
}

}  // namespace t5xx::device
