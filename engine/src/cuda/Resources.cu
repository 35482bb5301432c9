// The per-device pool of Resources (Resources.cuh).
#include "cuda/Resources.cuh"

#include "cuda/CudaRuntime.h"
#include "cuda/Upload.cuh"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace nearscape::cuda {
namespace {

/// Scratch memory an idle pool entry may keep.
constexpr std::size_t kIdleScratchBytes = std::size_t(64) << 20;

struct Pool {
  std::mutex mutex;
  std::map<int, std::vector<std::unique_ptr<Resources>>> idle; // by device
};

Pool& pool() {
  static Pool* p = new Pool; // never destroyed: leases may end during the program's exit
  return *p;
}

} // namespace

Resources::Resources(int device) : m_device(device) {
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(device));
  NEARSCAPE_CUDA_CHECK(cudaGetDeviceProperties(&m_properties, device));
  NEARSCAPE_CUDA_CHECK(cudaStreamCreate(&m_stream));
}

cublasHandle_t Resources::cublas() {
  if (!m_cublas) {
    auto handle = std::make_unique<CublasHandle>();
    NEARSCAPE_CUBLAS_CHECK(cublasSetStream(handle->get(), m_stream));
    m_cublas = std::move(handle);
  }
  return m_cublas->get();
}

void Resources::resetMathMode() {
  if (m_cublas)
    cublasSetMathMode(m_cublas->get(), CUBLAS_DEFAULT_MATH);
}

Resources::~Resources() {
  cudaSetDevice(m_device);
  m_scratch = DeviceBuffer<unsigned char>();
  m_cublas.reset();
  cudaStreamDestroy(m_stream);
}

void* Resources::scratch(std::size_t bytes) {
  if (m_scratch.size() < bytes) {
    m_scratch = DeviceBuffer<unsigned char>(); // the old block goes first: room for the new one
    m_scratch = DeviceBuffer<unsigned char>(bytes);
  }
  return m_scratch.get();
}

void Resources::trimScratch(std::size_t keepBytes) {
  if (m_scratch.size() > keepBytes)
    m_scratch = DeviceBuffer<unsigned char>();
}

void Resources::makeCurrent() const {
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(m_device));
}

ResourceLease::ResourceLease(std::unique_ptr<Resources> resources)
    : m_resources(std::move(resources)) {}

ResourceLease::ResourceLease(ResourceLease&& other) noexcept = default;

ResourceLease::~ResourceLease() {
  if (!m_resources)
    return;
  // A call that failed may have left work queued: it ends here, not in the next lease.
  if (cudaStreamSynchronize(m_resources->stream()) != cudaSuccess) {
    cudaGetLastError();
    return; // the entry is dropped (its destructor frees what it can)
  }
  m_resources->trimScratch(kIdleScratchBytes);
  m_resources->resetMathMode();
  Pool& p = pool();
  const std::lock_guard lock(p.mutex);
  p.idle[m_resources->device()].push_back(std::move(m_resources));
}

ResourceLease leaseResources(int device) {
  std::unique_ptr<Resources> resources;
  {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    auto& idle = p.idle[device];
    if (!idle.empty()) {
      resources = std::move(idle.back());
      idle.pop_back();
    }
  }
  if (resources)
    resources->makeCurrent();
  else
    resources = std::make_unique<Resources>(device);
  return ResourceLease(std::move(resources));
}

void warmUp(const Context& context, const std::atomic<bool>& float16Gemm) {
  LogLaps lap(context, "device warm-up:"); // at the log's debug level
  const ResourceLease resources = leaseResources(context);
  lap("context and resources");
  // The first step of a search, its data's upload, needs the pinned staging set. Made before
  // cuBLAS's start, not beside it: pinning memory while cuBLAS loads its kernels waited on the
  // driver, and the upload with it (H100: 45–60 ms → 60–170 ms).
  try {
    prepareCopies();
  } catch (const Error&) {
    // Pinned memory short: a large copy meets it again and reports it; cuBLAS still starts.
  }
  lap("pinned staging");
  constexpr int kSide = 64;
  auto* m = static_cast<float*>(resources->scratch(3 * kSide * kSide * sizeof(float)));
  NEARSCAPE_CUDA_CHECK(
      cudaMemsetAsync(m, 0, 3 * kSide * kSide * sizeof(float), resources->stream()));
  const float one = 1, zero = 0;
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(resources->cublas(), CUBLAS_TF32_TENSOR_OP_MATH));
  NEARSCAPE_CUBLAS_CHECK(cublasSgemm(resources->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, kSide, kSide,
                                     kSide, &one, m, kSide, m + kSide * kSide, kSide, &zero,
                                     m + 2 * kSide * kSide, kSide));
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(resources->stream()));
  lap("first SGEMM");
  if (!float16Gemm.load())
    return; // the work takes the fused kernel: this GEMM would only delay the program's end
  // The exact path's first tile: a float16 GEMM of its usual shape (8,192 base rows, d = 128),
  // whose kernels cuBLAS loads on first use — 40–60 ms on an H100 host, off the search's path
  // here (the whole start measured: devices 100 ms, context 100 ms, first SGEMM 90–110 ms).
  constexpr int kRows = 8192, kQueries = 1024, kDim = 128;
  DeviceBuffer<__half> half{std::size_t(kRows + kQueries) * kDim};
  DeviceBuffer<float> out{std::size_t(kRows) * kQueries};
  NEARSCAPE_CUDA_CHECK(
      cudaMemsetAsync(half.get(), 0, sizeof(__half) * half.size(), resources->stream()));
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(resources->cublas(), CUBLAS_DEFAULT_MATH));
  NEARSCAPE_CUBLAS_CHECK(cublasGemmEx(
      resources->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, kRows, kQueries, kDim, &one, half.get(),
      CUDA_R_16F, kDim, half.get() + std::size_t(kRows) * kDim, CUDA_R_16F, kDim, &zero, out.get(),
      CUDA_R_32F, kRows, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(resources->stream()));
  lap("first float16 GEMM");
}

} // namespace nearscape::cuda
