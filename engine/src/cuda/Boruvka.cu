// The minimum spanning forest on the GPU by Borůvka's rounds: every component picks its lightest
// outgoing edge (an atomicMin over a 64-bit key), the picks hook components together, pointer
// jumping flattens the hooks, and the labels are refreshed. Edges are ordered by
// (weight, canonical entry), the canonical entry of {a, b} being the CSR entry in row min(a, b):
// with rows sorted by target (graphFromEdges makes them so) that is Kruskal's (weight, a, b)
// order, so both backends return the same forest, ties included. A strict total order also means
// the only cycles the picks can form are two components picking the same edge.
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaGraph.h"
#include "cuda/DeviceBuffer.cuh"

#include "nearscape/core/Error.h"

#include <cstdint>
#include <limits>
#include <utility>

namespace nearscape::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr std::uint64_t kNone = ~std::uint64_t(0);
constexpr int kThreads = 256;

unsigned blocksFor(std::int64_t items, int perBlock = kThreads) {
  return unsigned((items + perBlock - 1) / perBlock);
}

/// First entry of row `row` whose target is ≥ `value` (rows sorted by target).
__device__ std::int64_t lowerBound(const std::int32_t* targets, std::int64_t lo, std::int64_t hi,
                                   std::int32_t value) {
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (targets[mid] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// The row holding CSR entry `e`.
__device__ std::int32_t rowOf(const std::int64_t* offsets, std::int64_t n, std::int64_t e) {
  std::int64_t lo = 0, hi = n; // largest row with offsets[row] ≤ e
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (offsets[mid] <= e)
      lo = mid;
    else
      hi = mid;
  }
  return std::int32_t(lo);
}

/// Per entry, the canonical entry of its edge (its twin in the smaller end's row). One warp per
/// row; a binary search finds the twin, a scan of the row catches rows that are not sorted.
__global__ void canonicalEntries(const std::int64_t* offsets, const std::int32_t* targets,
                                 std::int64_t n, std::uint32_t* canonical) {
  const std::int64_t v = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (v >= n)
    return;
  for (std::int64_t e = offsets[v] + lane; e < offsets[v + 1]; e += 32) {
    const std::int32_t t = targets[e];
    if (t > v) {
      canonical[e] = std::uint32_t(e);
      continue;
    }
    std::int64_t twin = lowerBound(targets, offsets[t], offsets[t + 1], std::int32_t(v));
    if (twin >= offsets[t + 1] || targets[twin] != v)
      for (twin = offsets[t]; targets[twin] != v; ++twin) {
      }
    canonical[e] = std::uint32_t(twin);
  }
}

/// Each live row's lightest edge leaving its component, folded into its component's pick.
/// A row with none is dead for good: components only grow.
__global__ void lightestOutgoing(const std::int64_t* offsets, const std::int32_t* targets,
                                 const float* weights, const std::uint32_t* canonical,
                                 std::int64_t n, const std::int32_t* component, std::uint8_t* live,
                                 unsigned long long* pick) {
  const std::int64_t v = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (v >= n || !live[v])
    return;
  const std::int32_t mine = component[v];
  unsigned long long best = kNone;
  for (std::int64_t e = offsets[v] + lane; e < offsets[v + 1]; e += 32) {
    if (component[targets[e]] == mine)
      continue;
    const std::uint32_t c = canonical[e];
    // Weights are ≥ 0, so their bit patterns order like the values.
    const unsigned long long key =
        (static_cast<unsigned long long>(__float_as_uint(weights[c])) << 32) | c;
    best = key < best ? key : best;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned long long other = __shfl_down_sync(kFull, best, offset);
    best = other < best ? other : best;
  }
  if (lane == 0) {
    if (best == kNone)
      live[v] = 0;
    else
      atomicMin(pick + mine, best);
  }
}

/// Each component (labelled by its root) hooks onto the component at the far end of its pick.
__global__ void hook(const std::int64_t* offsets, const std::int32_t* targets, std::int64_t n,
                     const std::int32_t* component, const unsigned long long* pick,
                     std::int32_t* successor, int* hooked) {
  const std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n || component[c] != c)
    return;
  if (pick[c] == kNone) {
    successor[c] = std::int32_t(c);
    return;
  }
  const std::int64_t e = std::int64_t(pick[c] & 0xffffffffull);
  const std::int32_t a = component[rowOf(offsets, n, e)], b = component[targets[e]];
  successor[c] = a == c ? b : a;
  atomicAdd(hooked, 1);
}

/// Two components that picked the same edge point at each other: the smaller becomes the root.
/// Every other hook adds its pick to the forest.
__global__ void breakPairsAndEmit(std::int64_t n, const std::int32_t* component,
                                  const unsigned long long* pick, std::int32_t* successor,
                                  std::uint32_t* forest, unsigned* forestSize) {
  const std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n || component[c] != c || pick[c] == kNone)
    return;
  const std::int32_t s = successor[c];
  if (successor[s] == c && c < s) {
    successor[c] = std::int32_t(c);
    return;
  }
  forest[atomicAdd(forestSize, 1u)] = std::uint32_t(pick[c] & 0xffffffffull);
}

/// One step of pointer jumping, double-buffered (next = successor of successor): each step
/// reads only the last step's values, so the result cannot depend on thread timing.
__global__ void jumpOnce(std::int64_t n, const std::int32_t* component,
                         const std::int32_t* successor, std::int32_t* next, int* changed) {
  const std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n || component[c] != c)
    return;
  const std::int32_t s = successor[c], up = successor[s];
  next[c] = up;
  if (up != s)
    *changed = 1;
}

__global__ void relabel(std::int64_t n, std::int32_t* component, const std::int32_t* successor,
                        unsigned long long* pick) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  component[v] = successor[component[v]];
  pick[v] = kNone;
}

__global__ void iota(std::int64_t n, std::int32_t* out) {
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < n)
    out[v] = std::int32_t(v);
}

__global__ void forestEdges(const std::int64_t* offsets, const std::int32_t* targets,
                            const float* weights, std::int64_t n, const std::uint32_t* forest,
                            unsigned count, WeightedEdge* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  const std::int64_t e = forest[i];
  out[i] = WeightedEdge{rowOf(offsets, n, e), targets[e], weights[e]};
}

template <typename T> DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> device{host.size()};
  if (!host.empty())
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(device.get(), host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  return device;
}

} // namespace

DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context, JobControl& job) {
  const std::int64_t n = graph.nodes;
  const std::int64_t entries = std::int64_t(graph.targets.size());
  NEARSCAPE_GPU_LIMIT(entries < std::int64_t(std::numeric_limits<std::uint32_t>::max()),
                      "the GPU spanning forest takes fewer than 2^32 edge entries");
  DeviceForest result;
  if (n == 0)
    return result;
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  cudaEvent_t start, stop;
  NEARSCAPE_CUDA_CHECK(cudaEventCreate(&start));
  NEARSCAPE_CUDA_CHECK(cudaEventCreate(&stop));
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } events{start, stop};

  const DeviceBuffer<std::int64_t> offsets = upload(graph.offsets);
  const DeviceBuffer<std::int32_t> targets = upload(graph.targets);
  const DeviceBuffer<float> weights = upload(graph.weights);
  DeviceBuffer<std::uint32_t> canonical{std::size_t(entries)};
  DeviceBuffer<std::int32_t> component{std::size_t(n)}, successor{std::size_t(n)},
      jumped{std::size_t(n)};
  DeviceBuffer<std::uint8_t> live{std::size_t(n)};
  DeviceBuffer<unsigned long long> pick{std::size_t(n)};
  DeviceBuffer<std::uint32_t> forest{std::size_t(n)};
  DeviceBuffer<unsigned> forestSize{1};
  DeviceBuffer<int> hooked{1};

  NEARSCAPE_CUDA_CHECK(cudaEventRecord(start));
  const unsigned warpBlocks = blocksFor(n * 32);
  canonicalEntries<<<warpBlocks, kThreads>>>(offsets.get(), targets.get(), n, canonical.get());
  iota<<<blocksFor(n), kThreads>>>(n, component.get());
  NEARSCAPE_CUDA_CHECK(cudaMemset(live.get(), 1, std::size_t(n)));
  NEARSCAPE_CUDA_CHECK(cudaMemset(pick.get(), 0xff, sizeof(unsigned long long) * n));
  NEARSCAPE_CUDA_CHECK(cudaMemset(forestSize.get(), 0, sizeof(unsigned)));
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  for (int round = 0;; ++round) {
    job.check();
    NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(hooked.get(), 0, sizeof(int)));
    lightestOutgoing<<<warpBlocks, kThreads>>>(offsets.get(), targets.get(), weights.get(),
                                               canonical.get(), n, component.get(), live.get(),
                                               pick.get());
    hook<<<blocksFor(n), kThreads>>>(offsets.get(), targets.get(), n, component.get(), pick.get(),
                                     successor.get(), hooked.get());
    int hookedHost = 0;
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(&hookedHost, hooked.get(), sizeof(int), cudaMemcpyDeviceToHost));
    if (hookedHost == 0)
      break;
    breakPairsAndEmit<<<blocksFor(n), kThreads>>>(n, component.get(), pick.get(), successor.get(),
                                                  forest.get(), forestSize.get());
    // Pointer jumping until every component points at its hook tree's root (log depth steps).
    for (int changedHost = 1; changedHost;) {
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(hooked.get(), 0, sizeof(int)));
      jumpOnce<<<blocksFor(n), kThreads>>>(n, component.get(), successor.get(), jumped.get(),
                                           hooked.get());
      NEARSCAPE_CUDA_CHECK(
          cudaMemcpy(&changedHost, hooked.get(), sizeof(int), cudaMemcpyDeviceToHost));
      std::swap(successor, jumped);
    }
    relabel<<<blocksFor(n), kThreads>>>(n, component.get(), successor.get(), pick.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    job.progress(std::min(0.9, 0.2 * (round + 1)),
                 "MST: Borůvka round " + std::to_string(round + 1));
  }
  unsigned count = 0;
  NEARSCAPE_CUDA_CHECK(
      cudaMemcpy(&count, forestSize.get(), sizeof(unsigned), cudaMemcpyDeviceToHost));
  DeviceBuffer<WeightedEdge> edges{std::size_t(count)};
  if (count > 0)
    forestEdges<<<blocksFor(count), kThreads>>>(offsets.get(), targets.get(), weights.get(), n,
                                                forest.get(), count, edges.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  NEARSCAPE_CUDA_CHECK(cudaEventRecord(stop));
  NEARSCAPE_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  NEARSCAPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  result.deviceSeconds = ms / 1000.0;
  result.edges.resize(count);
  if (count > 0)
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(result.edges.data(), edges.get(), sizeof(WeightedEdge) * count,
                                    cudaMemcpyDeviceToHost));
  return result;
}

} // namespace nearscape::cuda
