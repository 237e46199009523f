// The matmul peak timing/mfu divides by where no data-sheet peak is known
// (the CPU, a GPU device::DenseBf16PeakFlops does not list): the best rate
// of the matmul t5xx's layers run (models::MatmulIn) in the run's activation
// dtype, measured with a verdict on whether the machine was busy meanwhile
// (device/cpu_contention.h), and the identity of what was measured
// (machine, threads, libtorch, dtype and path, size), on which the cache of
// the best peak per machine is keyed (matmul_peak_cache.h).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

namespace t5xx::trainer {

// The size n of the n x n x n matmul the peak is measured with: 2048 on the
// CPU (about 0.1 s per call at 180 GFLOP/s), 8192 on a GPU.
int64_t PeakMatmulSize(at::Device device);

// What a measured peak is valid for.
struct MatmulPeakKey {
  std::string device;     // "cpu", or the GPU's name (device::DeviceName)
  std::string cpu_model;  // device::CpuInfo::model_name ("" unknown)
  std::string cpu_flags;  // device::CpuInfo::MatmulFlagsString, e.g. "avx2 fma"
  int threads = 1;        // intra-op threads (at::get_num_threads) on the CPU; 1 on a GPU
  std::string libtorch;   // compat::kTorchVersion, e.g. "1.13.0"
  // On the CPU the dtype and the code its matmuls run on: "float32 (oneDNN
  // sgemm)" (kernels/cpu/cpu_gemm.h's CpuGemmPath), "bfloat16 (native)" or
  // "bfloat16 (emulated, oneDNN sgemm)" (kernels/bf16_matmul.h's choice); the
  // dtype's name on a GPU.
  std::string dtype;
  int64_t n = 0;

  // One line naming every field, e.g. "device=cpu; cpu=AMD EPYC; flags=avx2
  // fma; threads=2; libtorch=1.13.0; dtype=float32; n=2048" (the cache's key).
  std::string ToString() const;
};

// The key of a peak measured now in this process for `dtype` on `device`
// with PeakMatmulSize(device).
MatmulPeakKey CurrentMatmulPeakKey(at::Device device, at::ScalarType dtype);

struct MatmulPeakMeasurement {
  double flops_per_s = 0;
  bool busy = false;  // the machine looked busy (CPU only; a GPU is not checked)
  std::string
      conditions;  // device::ContentionVerdict::reason (CPU); on a GPU that it is not checked
};

// The best rate (FLOP/s) of n x n @ n x n MatmulIn calls in `dtype` on
// `device` (2 n^3 FLOPs each), after one warm-up call, over at least
// `min_repeats` calls and `min_seconds` of timed calls, on all intra-op
// threads; on the CPU with the contention verdict of the timed span.
// Throws std::invalid_argument for n < 1, min_repeats < 1 or min_seconds < 0.
MatmulPeakMeasurement MeasureMatmulPeak(at::Device device, at::ScalarType dtype, int64_t n,
                                        int min_repeats = 5, double min_seconds = 0.3);

}  // namespace t5xx::trainer
