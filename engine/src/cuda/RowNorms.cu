// Squared row norms on the GPU: one warp per row, float64 accumulation of float32 squares,
// vectorised loads when rows are 16-byte aligned.
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaRuntime.h"
#include "cuda/DeviceBuffer.cuh"

namespace nearscape::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void rowNormsSquaredKernel(const float* __restrict__ data, std::int64_t n,
                                      std::int64_t d, float* __restrict__ out) {
  const std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n)
    return;
  const float* x = data + row * d;
  double sum = 0;
  if (d % 4 == 0) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (std::int64_t j = lane; j < d / 4; j += 32) {
      const float4 v = x4[j];
      sum += double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z + double(v.w) * v.w;
    }
  } else {
    for (std::int64_t j = lane; j < d; j += 32)
      sum += double(x[j]) * x[j];
  }
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0)
    out[row] = float(sum);
}

} // namespace

void rowNormsSquaredOnDevice(const float* deviceRows, std::int64_t n, std::int64_t d,
                             float* deviceOut) {
  if (n == 0)
    return;
  const unsigned blocks = unsigned((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rowNormsSquaredKernel<<<blocks, kWarpsPerBlock * 32>>>(deviceRows, n, d, deviceOut);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void rowNormsSquared(const float* hostData, std::int64_t n, std::int64_t d, float* hostOut,
                     int ordinal) {
  if (n == 0)
    return;
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(ordinal));
  DeviceBuffer<float> data{std::size_t(n * d)};
  DeviceBuffer<float> out{std::size_t(n)};
  NEARSCAPE_CUDA_CHECK(
      cudaMemcpy(data.get(), hostData, sizeof(float) * n * d, cudaMemcpyHostToDevice));
  rowNormsSquaredOnDevice(data.get(), n, d, out.get());
  NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostOut, out.get(), sizeof(float) * n, cudaMemcpyDeviceToHost));
}

} // namespace nearscape::cuda
