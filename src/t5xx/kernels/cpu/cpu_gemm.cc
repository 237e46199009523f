#include "t5xx/kernels/cpu/cpu_gemm.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "t5xx/util/error.h"

#if T5XX_WITH_ONEDNN_GEMM
#include <oneapi/dnnl/dnnl.h>
#endif

namespace t5xx::device {
namespace {

std::atomic<long long> g_onednn_calls{0};
std::atomic<long long> g_blas_calls{0};

constexpr const char* kEnv = "T5XX_CPU_GEMM";

// Parses T5XX_CPU_GEMM; nullptr error on success, else what is wrong.
CpuGemmBackend ParseBackend(const char** error) {
  *error = nullptr;
  const CpuGemmBackend fallback =
      CpuGemmForwarderBuilt() ? CpuGemmBackend::kOneDnn : CpuGemmBackend::kBlas;
  const char* value = std::getenv(kEnv);
  if (value == nullptr || *value == '\0') return fallback;
  if (std::strcmp(value, "blas") == 0) return CpuGemmBackend::kBlas;
  if (std::strcmp(value, "onednn") == 0) {
    if (!CpuGemmForwarderBuilt()) {
      *error = "this t5xx was built without oneDNN (install Debian's libdnnl-dev and rebuild)";
    }
    return CpuGemmBackend::kOneDnn;
  }
  *error = "unknown value";
  return fallback;
}

}  // namespace

bool CpuGemmForwarderBuilt() { return T5XX_WITH_ONEDNN_GEMM != 0; }

CpuGemmBackend CpuGemmBackendFromEnv() {
  const char* error = nullptr;
  const CpuGemmBackend backend = ParseBackend(&error);
  T5XX_CHECK(error == nullptr, std::string(kEnv) + "='" + std::getenv(kEnv) + "': " + error +
                                   "; use T5XX_CPU_GEMM=onednn (oneDNN's sgemm, the default "
                                   "when built with oneDNN) or T5XX_CPU_GEMM=blas (the "
                                   "system BLAS), or unset it");
  return backend;
}

CpuGemmBackend ActiveCpuGemmBackend() {
  // Read once; ConfigureCpuRuntime has already refused a bad value in the
  // t5xx binary and the benchmarks (an unchecked bad value means the default).
  static const CpuGemmBackend backend = [] {
    const char* error = nullptr;
    const CpuGemmBackend parsed = ParseBackend(&error);
    if (error == nullptr) return parsed;
    return CpuGemmForwarderBuilt() ? CpuGemmBackend::kOneDnn : CpuGemmBackend::kBlas;
  }();
  return backend;
}

CpuGemmCalls GetCpuGemmCalls() {
  return {g_onednn_calls.load(std::memory_order_relaxed),
          g_blas_calls.load(std::memory_order_relaxed)};
}

}  // namespace t5xx::device

#if T5XX_WITH_ONEDNN_GEMM

namespace {

using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*,
                         const float*, const float*, const int*, const float*, const int*,
                         const float*, float*, const int*);

// The system BLAS's sgemm_: the next definition after this executable's.
SgemmFn SystemSgemm() {
  static const SgemmFn fn = reinterpret_cast<SgemmFn>(dlsym(RTLD_NEXT, "sgemm_"));
  if (fn == nullptr) {
    std::fprintf(stderr,
                 "t5xx: error: T5XX_CPU_GEMM=blas (or a call oneDNN refused) needs the "
                 "system BLAS's sgemm_, and none is loaded; unset T5XX_CPU_GEMM\n");
    std::abort();
  }
  return fn;
}

}  // namespace

// Fortran BLAS sgemm (column-major): C = alpha * op(A) * op(B) + beta * C,
// op(A) m x k, op(B) k x n, C m x n. See cpu_gemm.h for why t5xx defines it.
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const float* alpha, const float* a, const int* lda,
                       const float* b, const int* ldb, const float* beta, float* c,
                       const int* ldc) {
  if (t5xx::device::ActiveCpuGemmBackend() == t5xx::device::CpuGemmBackend::kOneDnn) {
    // Column-major C (m x n, ldc) is row-major C^T (n x m, ldc), and
    // C^T = op(B)^T op(A)^T where column-major B read row-major is B^T.
    const dnnl_status_t status = dnnl_sgemm(*transb, *transa, *n, *m, *k, *alpha, b, *ldb, a,
                                            *lda, *beta, c, *ldc);
    if (status == dnnl_success) {
      t5xx::device::g_onednn_calls.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Arguments oneDNN refuses go to the BLAS, which reports them as BLAS does.
  }
  t5xx::device::g_blas_calls.fetch_add(1, std::memory_order_relaxed);
  SystemSgemm()(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

#endif  // T5XX_WITH_ONEDNN_GEMM

namespace t5xx::device {

std::string CpuGemmPath() {
#if T5XX_WITH_ONEDNN_GEMM
  // libtorch calls sgemm_ through its PLT; it reaches this forwarder when the
  // global lookup finds this executable's definition first.
  if (dlsym(RTLD_DEFAULT, "sgemm_") != reinterpret_cast<void*>(&sgemm_)) return "libtorch's BLAS";
  return ActiveCpuGemmBackend() == CpuGemmBackend::kOneDnn ? "oneDNN sgemm" : "system BLAS sgemm";
#else
  return "libtorch's BLAS";
#endif
}

std::string CpuGemmDescription() {
  CpuGemmBackendFromEnv();  // refuses a bad T5XX_CPU_GEMM
  const std::string path = CpuGemmPath();
  std::ostringstream out;
  out << "float32 matmuls: " << path;
#if T5XX_WITH_ONEDNN_GEMM
  if (path == "oneDNN sgemm") {
    const dnnl_version_t* v = dnnl_version();
    out << " (oneDNN " << v->major << "." << v->minor << "." << v->patch << ")";
  } else if (path == "libtorch's BLAS") {
    out << " (the sgemm_ forwarder is not in the dynamic symbol table)";
  } else {
    out << " (T5XX_CPU_GEMM=blas)";
  }
#else
  out << " (built without oneDNN)";
#endif
  return out.str();
}

}  // namespace t5xx::device
