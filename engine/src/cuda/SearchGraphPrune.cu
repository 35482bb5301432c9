// CAGRA's rank-based pruning (Ootomo et al. 2024, §3.2) on the device: one block per node, its kNN
// list in a shared-memory hash (id → smallest rank), the K² two-hop lookups spread over the
// block's threads, then the unique neighbours ranked by (detours, rank). The same rule, ties and
// duplicate handling as index::pruneByDetoursCpu, so both return the same graph.
#include "cuda/CudaApi.h"
#include "cuda/CudaCheck.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/Resources.cuh"
#include "cuda/Upload.cuh"

#include "nearscape/core/Error.h"

#include <climits>
#include <cstdint>

namespace nearscape::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kEmpty = -1;

__device__ unsigned slotOf(std::int32_t id, unsigned mask) {
  return (unsigned(id) * 2654435761u) & mask;
}

/// Node x's list in `keys`/`ranks` (open addressing); the smallest rank of an id listed twice.
__device__ void insert(std::int32_t* keys, int* ranks, unsigned mask, std::int32_t id, int rank) {
  for (unsigned s = slotOf(id, mask);; s = (s + 1) & mask) {
    const std::int32_t was = atomicCAS(&keys[s], kEmpty, id);
    if (was == kEmpty || was == id) {
      atomicMin(&ranks[s], rank);
      return;
    }
  }
}

/// The rank of `id` in node x's list, or −1.
__device__ int lookup(const std::int32_t* keys, const int* ranks, unsigned mask, std::int32_t id) {
  for (unsigned s = slotOf(id, mask);; s = (s + 1) & mask) {
    if (keys[s] == id)
      return ranks[s];
    if (keys[s] == kEmpty)
      return -1;
  }
}

__global__ void pruneKernel(const std::int32_t* __restrict__ knn, std::int64_t n, int K, int degree,
                            unsigned tableSize, std::int32_t* __restrict__ out) {
  extern __shared__ int shared[];
  std::int32_t* keys = shared;            // tableSize
  int* ranks = keys + tableSize;          // tableSize
  std::int32_t* list = ranks + tableSize; // K
  int* detours = list + K;                // K
  int* unique = detours + K;              // K: ranks of the distinct neighbours
  __shared__ int uniqueCount;
  const unsigned mask = tableSize - 1;
  for (std::int64_t x = blockIdx.x; x < n; x += gridDim.x) {
    for (unsigned s = threadIdx.x; s < tableSize; s += blockDim.x) {
      keys[s] = kEmpty;
      ranks[s] = INT_MAX;
    }
    if (threadIdx.x == 0)
      uniqueCount = 0;
    for (int j = threadIdx.x; j < K; j += blockDim.x) {
      list[j] = knn[x * K + j];
      detours[j] = 0;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < K; j += blockDim.x)
      if (list[j] >= 0 && list[j] != x)
        insert(keys, ranks, mask, list[j], j);
    __syncthreads();
    // Edge x → y_r has a detour through y_i when y_r is in y_i's list at rank p, i, p < r.
    for (int t = threadIdx.x; t < K * K; t += blockDim.x) {
      const int i = t / K, p = t - i * K;
      const std::int32_t y = list[i];
      if (y < 0 || y == x)
        continue;
      const std::int32_t v = knn[std::int64_t(y) * K + p];
      if (v < 0)
        continue;
      const int r = lookup(keys, ranks, mask, v);
      if (r > max(i, p))
        atomicAdd(&detours[r], 1);
    }
    for (unsigned s = threadIdx.x; s < tableSize; s += blockDim.x)
      if (keys[s] != kEmpty)
        unique[atomicAdd(&uniqueCount, 1)] = ranks[s];
    __syncthreads();
    // Each distinct neighbour's place in the (detours, rank) order.
    const int count = uniqueCount;
    for (int u = threadIdx.x; u < count; u += blockDim.x) {
      const int r = unique[u], dr = detours[r];
      int place = 0;
      for (int w = 0; w < count; ++w) {
        const int rw = unique[w], dw = detours[rw];
        place += dw < dr || (dw == dr && rw < r);
      }
      if (place < degree)
        out[x * degree + place] = list[r];
    }
    __syncthreads();
  }
}

} // namespace

std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                         const Context& context) {
  const std::int64_t n = knn.rows;
  const int K = int(knn.cols);
  NEARSCAPE_EXPECTS(K >= 1 && K <= 1024 && degree >= 1, "pruning takes 1 ≤ K ≤ 1024 neighbours");
  const ResourceLease resources = leaseResources(context);
  unsigned tableSize = 1;
  while (tableSize < unsigned(2 * K))
    tableSize *= 2;
  const std::size_t sharedBytes = (2 * std::size_t(tableSize) + 3 * std::size_t(K)) * 4;
  const DeviceBuffer<std::int32_t> lists = uploaded(knn.data, std::size_t(n) * std::size_t(K));
  DeviceBuffer<std::int32_t> pruned{std::size_t(n) * std::size_t(degree)};
  NEARSCAPE_CUDA_CHECK(cudaMemset(pruned.get(), 0xff, pruned.size() * sizeof(std::int32_t)));
  const int blocks = int(
      std::min<std::int64_t>(n, std::int64_t(resources->properties().multiProcessorCount) * 16));
  pruneKernel<<<unsigned(blocks), kThreads, sharedBytes>>>(lists.get(), n, K, degree, tableSize,
                                                           pruned.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  std::vector<std::int32_t> out(pruned.size());
  NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.data(), pruned.get(), out.size() * sizeof(std::int32_t),
                                  cudaMemcpyDeviceToHost));
  return out;
}

} // namespace nearscape::cuda
