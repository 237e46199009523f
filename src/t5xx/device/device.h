// Where a run's tensors live: the device chosen by `--device` / gin's DEVICE
// (t5x has no such flag: JAX places arrays on its default backend, the first
// GPU when there is one, else the CPU; t5xx does the same by default and says
// which at start-up), one process per GPU under a launcher (LOCAL_RANK picks
// the GPU, as torchrun's convention), host-to-device copies through pinned
// memory, per-device random generators, the GPU's matmul precision and its
// memory counters. Everything that differs between the CPU and a CUDA build
// of libtorch is here (the build's CUDA headers are used only in device.cc,
// under T5XX_WITH_CUDA); callers write the same code for both.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>

namespace t5xx::device {

// Whether this libtorch was built with CUDA (a CUDA build runs on a machine
// without a GPU too; then CudaDeviceCount() is 0).
bool BuiltWithCuda();
// The number of CUDA devices this process sees (0 on a CPU build or without
// a GPU; CUDA_VISIBLE_DEVICES applies).
int64_t CudaDeviceCount();

// The device a spec names:
//   "auto" (also ""): cuda:<local_rank % count> when a GPU is visible, else cpu;
//   "cpu";
//   "cuda": cuda:<local_rank % count> (one process per GPU, torchrun's
//           LOCAL_RANK; local_rank 0 for a single process);
//   "cuda:N": that GPU.
// `what` names where the spec came from (e.g. "--device" or "DEVICE") for
// the error. Throws t5xx::Error naming `what` and the fix when the spec is
// none of these, when CUDA is asked for but this libtorch has no CUDA or no
// GPU is visible, or when N is not a visible GPU.
at::Device ResolveDevice(const std::string& spec, int local_rank, const std::string& what);

// Makes `device` this thread's current device (CUDA: cudaSetDevice, so that
// kernels, NCCL and the caching allocator use it); no-op for the CPU.
void SetCurrentDevice(at::Device device);

// One line for the start-up log: "cpu (2 threads)" or "cuda:0 (NVIDIA H200,
// 139.8 GiB, compute capability 9.0)".
std::string Describe(at::Device device);

// The device's name ("cpu", or the GPU's marketing name, e.g. "NVIDIA H200").
std::string DeviceName(at::Device device);

// Bytes of memory on `device`: the GPU's total, or nullopt for the CPU
// (see models::AvailableHostMemoryBytes for the host).
std::optional<int64_t> TotalDeviceMemoryBytes(at::Device device);

// Waits for the work queued on `device` (no-op for the CPU). Benchmarks and
// timings call it before reading a clock.
void Synchronize(at::Device device);

// `t` on `device`. A CPU tensor bound for a GPU is staged in pinned (page-
// locked) host memory and copied without blocking the host: the copy is
// queued on the device's current stream, so the kernels queued after it see
// the data, while the host goes on preparing the next batch (pinned staging
// buffers are returned to libtorch's caching host allocator only once the
// copy is done). Same device: `t` itself. Any other pair: a blocking copy.
at::Tensor ToDevice(const at::Tensor& t, at::Device device);

// A random generator for `device` seeded with `seed`: a fresh CPU generator
// (compat::MakeCpuGenerator), or a copy of the GPU's default Philox
// generator reseeded (seed set, offset 0). Equal seeds give equal streams on
// the same device; the CPU and a GPU draw different streams for one seed.
at::Generator MakeGenerator(uint64_t seed, at::Device device);

// The precision of float32 and bfloat16 matmuls on CUDA devices:
// allow_tf32 = true (t5xx's default, as JAX's default precision on the same
// GPU: float32 dots "may be computed with reduced-precision arithmetic
// internally (... TF32 on recent GPUs)", JAX's "Matmul precision" page)
// lets cuBLAS/cuDNN run float32 matmuls and convolutions on the TF32 tensor
// cores (inputs rounded to 10 mantissa bits, float32 accumulation); false
// keeps them in full float32 (JAX's precision='highest' / 'float32').
// bfloat16 matmuls always use the bf16 tensor cores and accumulate in
// float32 (as XLA's dot); allow_bf16_reduction = true also lets cuBLAS add
// split-K partial sums in bfloat16 (libtorch's own default; off here
// unless asked, e.g. by the GPU bench's switch). No effect on the CPU.
void SetCudaMatmulPrecision(bool allow_tf32, bool allow_bf16_reduction = false);

// The caching allocator's counters for a GPU (bytes): now and at the peak
// since the last ResetPeakMemory. nullopt for the CPU.
struct MemoryStats {
  int64_t allocated = 0;
  int64_t peak_allocated = 0;
  int64_t reserved = 0;
  int64_t peak_reserved = 0;
};
std::optional<MemoryStats> DeviceMemory(at::Device device);
void ResetPeakMemory(at::Device device);

// The dense (non-sparse) bfloat16 tensor-core peak of a GPU by its name, in
// FLOP/s, from the vendor's data sheets: H100/H200 SXM 989.4e12, H100 PCIe
// 756e12, A100 312e12, L40S 362.05e12, L4 121e12, RTX 4090 165.2e12 (its
// dense rate with float32 accumulation). 0 when the name is not known (then MFU is reported against a measured
// matmul peak instead).
double DenseBf16PeakFlops(const std::string& device_name);

}  // namespace t5xx::device
