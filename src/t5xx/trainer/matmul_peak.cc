// See matmul_peak.h.
#include "t5xx/trainer/matmul_peak.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "t5xx/device/cpu_contention.h"
#include "t5xx/device/device.h"
#include "t5xx/kernels/bf16_matmul.h"
#include "t5xx/kernels/cpu/cpu_gemm.h"
#include "t5xx/kernels/cpu/cpu_info.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::trainer {

int64_t PeakMatmulSize(at::Device device) { return device.is_cpu() ? 2048 : 8192; }

std::string MatmulPeakKey::ToString() const {
  std::ostringstream out;
  out << "device=" << device << "; cpu=" << cpu_model << "; flags=" << cpu_flags
      << "; threads=" << threads << "; libtorch=" << libtorch << "; dtype=" << dtype << "; n=" << n;
  return out.str();
}

MatmulPeakKey CurrentMatmulPeakKey(at::Device device, at::ScalarType dtype) {
  MatmulPeakKey k;
  const device::CpuInfo& cpu = device::HostCpuInfo();
  k.device = device.is_cpu() ? "cpu" : device::DeviceName(device);
  k.cpu_model = cpu.model_name;
  k.cpu_flags = cpu.MatmulFlagsString();
  k.threads = device.is_cpu() ? at::get_num_threads() : 1;
  k.libtorch = compat::kTorchVersion;
  k.dtype = dtype == at::kFloat      ? "float32"
            : dtype == at::kBFloat16 ? "bfloat16"
                                     : c10::toString(dtype);
  if (device.is_cpu()) {
    // The float32 path runs on cpu_gemm.h's sgemm (oneDNN or the system BLAS).
    if (dtype == at::kBFloat16 && models::NativeCpuBf16Matmul()) {
      k.dtype += " (native)";
    } else if (dtype == at::kBFloat16) {
      k.dtype += " (emulated, " + device::CpuGemmPath() + ")";
    } else {
      k.dtype += " (" + device::CpuGemmPath() + ")";
    }
  }
  k.n = PeakMatmulSize(device);
  return k;
}

MatmulPeakMeasurement MeasureMatmulPeak(at::Device device, at::ScalarType dtype, int64_t n,
                                        int min_repeats, double min_seconds) {
  if (n < 1 || min_repeats < 1 || min_seconds < 0) {
    throw std::invalid_argument(
        "MeasureMatmulPeak: n and min_repeats must be >= 1, "
        "min_seconds >= 0");
  }
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  at::Tensor c;
  auto run = [&] {
    c = models::MatmulIn(a, b, dtype);
    device::Synchronize(device);  // asynchronous devices: wait for the result
  };
  run();  // warm-up (and, for bfloat16 on the CPU, bf16_matmul.h's probe)
  const device::CpuClocks before = device::ReadCpuClocks();
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int i = 0; i < min_repeats || total < min_seconds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, std::max(s, 1e-12));
    total += s;
  }
  MatmulPeakMeasurement m;
  m.flops_per_s =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best;
  if (device.is_cpu()) {
    const device::ContentionVerdict v = device::JudgeContention(device::CpuUseBetween(
        before, device::ReadCpuClocks(), at::get_num_threads(), device::AffinityCoreCount()));
    m.busy = v.busy;
    m.conditions = v.reason;
  } else {
    m.conditions = "a GPU's load is not checked";
  }
  return m;
}

}  // namespace t5xx::trainer
