// CAGRA's graph optimisation (Ootomo et al. 2024, §3.2) on the device. Rank-based pruning: one
// block per node, its kNN list in a shared-memory hash (id → smallest rank), the K² two-hop
// lookups spread over the block's threads, then the unique neighbours ranked by (detours, rank).
// Reverse edges: every kept x → y keyed (y, rank) and stably radix-sorted, so each y's sources
// come by (rank, x). Merge: one thread per node. The same rules, ties and duplicate handling as
// index::optimiseSearchGraph's CPU path, so both return the same graph.
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaIndex.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/Resources.cuh"
#include "cuda/Upload.cuh"

#include "nearscape/core/Error.h"

#include <cub/device/device_radix_sort.cuh>

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

constexpr int kRankBits = 9; ///< ranks < 512 (degree ≤ 256)
constexpr std::uint64_t kNoKey = (std::uint64_t(1) << (31 + kRankBits)) - 1;

/// Kept edge t = x · degree + r (to y) as the key (y, r) with source x; no edge: kNoKey, last.
__global__ void reverseKeysKernel(const std::int32_t* __restrict__ pruned, std::int64_t n,
                                  int degree, std::uint64_t* __restrict__ keys,
                                  std::int32_t* __restrict__ sources) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * degree)
    return;
  const std::int32_t y = pruned[t];
  const std::int64_t x = t / degree;
  keys[t] = y >= 0 ? (std::uint64_t(y) << kRankBits) | std::uint64_t(t - x * degree) : kNoKey;
  sources[t] = std::int32_t(x);
}

__device__ std::int64_t firstAtLeast(const std::uint64_t* keys, std::int64_t count,
                                     std::uint64_t key) {
  std::int64_t lo = 0, hi = count;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (keys[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// Appends `id` to row y's `size` entries unless it is nothing, y itself, the row is full or
/// the id is there already.
__device__ void addEdge(std::int32_t* row, int& size, int degree, std::int64_t y, std::int32_t id) {
  if (id < 0 || id == y || size == degree)
    return;
  for (int j = 0; j < size; ++j)
    if (row[j] == id)
      return;
  row[size++] = id;
}

/// Row y: its first degree/2 kept edges, then its reverse edges by (rank, source), then the rest
/// of the kept ones; −1 pads.
__global__ void mergeKernel(const std::int32_t* __restrict__ pruned,
                            const std::uint64_t* __restrict__ keys,
                            const std::int32_t* __restrict__ sources, std::int64_t n, int degree,
                            std::int32_t* __restrict__ out) {
  const std::int64_t y = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (y >= n)
    return;
  const std::int64_t edges = n * degree;
  const std::int64_t begin = firstAtLeast(keys, edges, std::uint64_t(y) << kRankBits);
  const std::int64_t end = firstAtLeast(keys, edges, std::uint64_t(y + 1) << kRankBits);
  const std::int32_t* kept = pruned + y * degree;
  std::int32_t* row = out + y * degree;
  const int half = degree / 2;
  int size = 0;
  for (int j = 0; j < half; ++j)
    addEdge(row, size, degree, y, kept[j]);
  for (std::int64_t e = begin; e < end && size < degree; ++e)
    addEdge(row, size, degree, y, sources[e]);
  for (int j = half; j < degree && size < degree; ++j)
    addEdge(row, size, degree, y, kept[j]);
  for (int j = size; j < degree; ++j)
    row[j] = -1;
}

/// The pruned lists (n × degree, −1 padded) on the device.
DeviceBuffer<std::int32_t> prunedOnDevice(const MatrixView<std::int32_t>& knn, int degree,
                                          const Resources& resources) {
  const std::int64_t n = knn.rows;
  const int K = int(knn.cols);
  NEARSCAPE_EXPECTS(K >= 1 && K <= 1024 && degree >= 1, "pruning takes 1 ≤ K ≤ 1024 neighbours");
  unsigned tableSize = 1;
  while (tableSize < unsigned(2 * K))
    tableSize *= 2;
  const std::size_t sharedBytes = (2 * std::size_t(tableSize) + 3 * std::size_t(K)) * 4;
  const DeviceBuffer<std::int32_t> lists = uploaded(knn.data, std::size_t(n) * std::size_t(K));
  DeviceBuffer<std::int32_t> pruned{std::size_t(n) * std::size_t(degree)};
  NEARSCAPE_CUDA_CHECK(cudaMemset(pruned.get(), 0xff, pruned.size() * sizeof(std::int32_t)));
  const int blocks =
      int(std::min<std::int64_t>(n, std::int64_t(resources.properties().multiProcessorCount) * 16));
  pruneKernel<<<unsigned(blocks), kThreads, sharedBytes>>>(lists.get(), n, K, degree, tableSize,
                                                           pruned.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  return pruned;
}

std::vector<std::int32_t> downloaded(const DeviceBuffer<std::int32_t>& rows) {
  std::vector<std::int32_t> out(rows.size());
  NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.data(), rows.get(), out.size() * sizeof(std::int32_t),
                                  cudaMemcpyDeviceToHost));
  return out;
}

} // namespace

std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                         const Context& context) {
  const ResourceLease resources = leaseResources(context);
  return downloaded(prunedOnDevice(knn, degree, *resources));
}

std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                              const Context& context) {
  NEARSCAPE_EXPECTS(degree <= (1 << kRankBits) / 2, "the search graph takes degree ≤ 256");
  NEARSCAPE_EXPECTS(knn.rows < (std::int64_t(1) << 31), "the search graph takes < 2^31 rows");
  const ResourceLease resources = leaseResources(context);
  const std::int64_t n = knn.rows, edges = n * degree;
  const DeviceBuffer<std::int32_t> pruned = prunedOnDevice(knn, degree, *resources);
  DeviceBuffer<std::uint64_t> keys{std::size_t(edges)}, sortedKeys{std::size_t(edges)};
  DeviceBuffer<std::int32_t> sources{std::size_t(edges)}, sortedSources{std::size_t(edges)};
  constexpr int kBlock = 256;
  reverseKeysKernel<<<unsigned((edges + kBlock - 1) / kBlock), kBlock>>>(pruned.get(), n, degree,
                                                                         keys.get(), sources.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  // Stable: sources of one (y, rank) stay in x order.
  std::size_t scratchBytes = 0;
  NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, scratchBytes, keys.get(), sortedKeys.get(), sources.get(), sortedSources.get(),
      edges, 0, 31 + kRankBits));
  const DeviceBuffer<unsigned char> scratch{std::max<std::size_t>(scratchBytes, 1)};
  NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      scratch.get(), scratchBytes, keys.get(), sortedKeys.get(), sources.get(), sortedSources.get(),
      edges, 0, 31 + kRankBits));
  DeviceBuffer<std::int32_t> merged{std::size_t(edges)};
  mergeKernel<<<unsigned((n + kBlock - 1) / kBlock), kBlock>>>(
      pruned.get(), sortedKeys.get(), sortedSources.get(), n, degree, merged.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  return downloaded(merged);
}

} // namespace nearscape::cuda
