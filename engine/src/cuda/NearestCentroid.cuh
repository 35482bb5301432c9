#pragma once
// Ranking rows against centroids on the device (IVF's coarse step, k-means' assignments, STEP's
// clusters): float bits that order like the values, a centroid's ranking key, a warp argmin.

#include "cuda/Select.cuh"

#include <cstdint>

namespace nearscape::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr std::uint64_t kNoKey = ~std::uint64_t(0);

/// The ranking score of centroid j: squared L2 up to the query's norm, or −dot.
__device__ __forceinline__ std::uint64_t centroidKey(const float* dots, const float* norms, bool l2,
                                                     int j) {
  const float s = l2 ? norms[j] - 2.0f * dots[j] : -dots[j];
  return (std::uint64_t(orderedBits(s)) << 32) | std::uint32_t(j);
}

/// One warp per row: the nearest centroid.
__global__ void argminKernel(const float* __restrict__ dots, const float* __restrict__ norms,
                             bool l2, std::int64_t rows, int k, std::int32_t* __restrict__ out) {
  const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows)
    return;
  const float* d = dots + row * k;
  std::uint64_t best = kNoKey;
  for (int j = lane; j < k; j += 32)
    best = min(best, centroidKey(d, norms, l2, j));
  for (int offset = 16; offset > 0; offset /= 2)
    best = min(best, __shfl_down_sync(kFullMask, best, offset));
  if (lane == 0)
    out[row] = std::int32_t(best & 0xffffffffu);
}

} // namespace
} // namespace nearscape::cuda
