// Small device operations (Primitives.cuh).
#include "cuda/CudaCheck.cuh"
#include "cuda/Primitives.cuh"

namespace nearscape::cuda {
namespace {

template <typename T> __global__ void iotaKernel(T* out, std::int64_t n, std::int64_t first) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = T(first + i);
}

template <typename T>
void launchIota(T* out, std::int64_t n, std::int64_t first, cudaStream_t stream) {
  if (n <= 0)
    return;
  constexpr int kThreads = 256;
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  iotaKernel<<<unsigned(blocks < 4096 ? blocks : 4096), kThreads, 0, stream>>>(out, n, first);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

} // namespace

void fillIota(std::int32_t* out, std::int64_t n, cudaStream_t stream) {
  launchIota(out, n, 0, stream);
}

void fillIota(std::int64_t* out, std::int64_t n, std::int64_t first, cudaStream_t stream) {
  launchIota(out, n, first, stream);
}

} // namespace nearscape::cuda
