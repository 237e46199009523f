// Which library runs libtorch's float32 CPU matmuls.
//
// Why: Debian's libtorch sends every float32 matmul (at::mm, bmm, addmm,
// linear, and the same calls in autograd's backward) to the Fortran BLAS
// symbol `sgemm_`, which Debian resolves to OpenBLAS 0.3.21. Two faults were
// measured with it on 2-core machines (issue 16):
//  * on a machine shared with a busy multi-threaded process, OpenBLAS's
//    worker threads wait for each other in sched_yield loops (seen in gdb:
//    exec_blas' level-3 sync), and each yield hands the core to the
//    competitor: T5.1.1 tiny kept 0.19-0.38 of its alone throughput beside two
//    busy threads at nice 10 and 0.02-0.03 beside two at nice 0;
//  * OpenBLAS 0.3.21 has no kernels for newer CPUs' AVX-512 (it ran its AVX2
//    kernels on an AVX-512 AMD EPYC): T5.1.1 tiny and small trained 1.6x
//    faster with oneDNN's sgemm on that machine.
// oneDNN (libdnnl, which Debian's libtorch already links for its bf16 and
// convolution kernels) has a JIT sgemm for AVX2, AVX-512 and AMX machines and
// waits at OpenMP barriers as libtorch's own parallel regions do.
//
// How: when t5xx is built with oneDNN (CMake finds Debian's libdnnl-dev), the
// t5xx_device library defines `sgemm_` itself. An executable's definition
// comes first in the dynamic linker's symbol lookup, so libtorch's calls land
// here; this forwards them to dnnl_sgemm (the column-major Fortran call is
// the row-major product of the transposes: C^T = op(B)^T op(A)^T) or, with
// T5XX_CPU_GEMM=blas, to the next `sgemm_` in lookup order (the system BLAS).
// A libtorch that carries its own BLAS inside (PyTorch's wheels link MKL
// statically) never calls this symbol; CpuGemmDescription says so.
//
// Results: oneDNN and OpenBLAS round differently (both accumulate in float32;
// the order of the k-sums differs), so t5xx's parity goldens hold to the same
// tolerances with either; each is deterministic for a fixed thread count.
#pragma once

#include <string>

namespace t5xx::device {

enum class CpuGemmBackend {
  kOneDnn,  // dnnl_sgemm
  kBlas,    // the system BLAS's sgemm_ (OpenBLAS on Debian)
};

// Whether this build carries the sgemm_ forwarder (built with oneDNN).
bool CpuGemmForwarderBuilt();

// The backend T5XX_CPU_GEMM asks for: "onednn" (the default when built with
// oneDNN) or "blas" (the default otherwise). Throws t5xx::Error naming
// T5XX_CPU_GEMM and its accepted values for any other value, or for "onednn"
// in a build without oneDNN.
CpuGemmBackend CpuGemmBackendFromEnv();

// The backend this process uses, read from T5XX_CPU_GEMM once and kept (a
// bad value counts as the default here; ConfigureCpuRuntime refuses it at
// start-up through CpuGemmDescription). kBlas in a build without oneDNN.
CpuGemmBackend ActiveCpuGemmBackend();

// Checks T5XX_CPU_GEMM (throws as CpuGemmBackendFromEnv) and returns a
// one-line description for logs: "float32 matmuls: " + CpuGemmPath() and
// where it came from, e.g. "float32 matmuls: oneDNN sgemm (oneDNN 2.6.3)".
std::string CpuGemmDescription();

// Which code runs libtorch's float32 matmuls in this process: "oneDNN
// sgemm", "system BLAS sgemm" (T5XX_CPU_GEMM=blas), or "libtorch's BLAS" (the
// forwarder is not built or libtorch does not call it). A bad T5XX_CPU_GEMM
// counts as its default here (CpuGemmDescription throws for it). The matmul
// peak cache keys on it (trainer/matmul_peak.h).
std::string CpuGemmPath();

// How many sgemm_ calls the forwarder has served with each backend since
// start-up (for tests and benchmarks).
struct CpuGemmCalls {
  long long onednn = 0;
  long long blas = 0;
};
CpuGemmCalls GetCpuGemmCalls();

}  // namespace t5xx::device
