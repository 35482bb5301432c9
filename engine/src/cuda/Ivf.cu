// IVF-Flat on the GPU (the Faiss paper's IVF, §7, without compression). The coarse step is a
// cuBLAS GEMM of queries against centroids and, per query, the nprobe smallest scores by a block
// radix select over 64-bit keys (score bits, list id): exactly nprobe, ties to the smaller list,
// as on the CPU. The scan gives each query a block: teams of lanes score the vectors of the probed
// lists against the query in shared memory and append those better than the current k-th to a
// shared buffer, which a bitonic sort trims back to the k best when it fills.
// Queries are scanned in the order of their nearest list, so that blocks running together read
// the same lists and most list reads hit L2 instead of memory (a query-major scan is otherwise
// bound by memory bandwidth). k-means' assignments use the same GEMM and a warp argmin per row.
#include "cuda/Bitonic.cuh"
#include "cuda/Cublas.cuh"
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaIndex.h"
#include "cuda/CudaKMeans.h"
#include "cuda/CudaRuntime.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/NearestCentroid.cuh"
#include "cuda/Primitives.cuh"
#include "cuda/Resources.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>

namespace nearscape::cuda {
namespace {

constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
constexpr int kSelectThreads = 256;
constexpr int kScanThreads = 128;
constexpr int kTeam = 8;     ///< lanes that score one vector together
constexpr int kPerTeam = 4;  ///< vectors each team scores between barriers
constexpr int kBuffer = 512; ///< candidates a scanning block holds: ≥ kMaxK + a round's worth
constexpr std::int64_t kReorderFrom = 256; ///< smaller batches are scanned in query order…
constexpr int kMergeSlots = 4096; ///< …and split a block per list when nprobe·k fits here
static_assert(DeviceIvfFlat::kMaxK + kScanThreads / kTeam * kPerTeam <= kBuffer,
              "a round's appends must fit beside the k best");
constexpr std::size_t kTileBytes = std::size_t(256) << 20; ///< the score tile's budget

/// One block per row: the `count` smallest keys (radix select, 8 digits of 8 bits), written in
/// no particular order.
__global__ void selectKernel(const float* __restrict__ dots, const float* __restrict__ norms,
                             bool l2, int k, int count, std::int32_t* __restrict__ out) {
  __shared__ unsigned written;
  const float* d = dots + std::int64_t(blockIdx.x) * k;
  if (threadIdx.x == 0)
    written = 0;
  const std::uint64_t kth = blockRadixSelect<std::uint64_t>(
      k, count, [&](int j) { return centroidKey(d, norms, l2, j); });
  // Keys are distinct (the centroid is in the low bits), so exactly count are ≤ the kth.
  for (int j = threadIdx.x; j < k; j += blockDim.x)
    if (centroidKey(d, norms, l2, j) <= kth)
      out[std::int64_t(blockIdx.x) * count + atomicAdd(&written, 1u)] = j;
}

/// Sorts keys[0, size) ascending (size a power of two), the whole block.
__device__ void sortKeys(std::uint64_t* keys, int size) {
  bitonicSort(
      size, threadIdx.x, blockDim.x, [&](int a, int b) { return keys[a] < keys[b]; },
      [&](int a, int b) { swapAt(keys, a, b); }, [] { __syncthreads(); });
}

/// `parts` blocks per query (the `order[blockIdx.x / parts]`-th): block part p scans the query's
/// probes [p·per, (p + 1)·per) and keeps their k best (score, id) keys in output row
/// query · parts + p. One part per query for large batches; one list per block for small ones,
/// whose parts mergeParts then combines (a single query's lists scanned side by side). Teams of
/// kTeam lanes score one vector each (a team reads a vector's 128-byte lines whole: coalesced),
/// kPerTeam vectors per team between barriers.
__global__ void scanKernel(const std::int32_t* __restrict__ order, int parts, int per,
                           const float* __restrict__ queries, int d,
                           const std::int32_t* __restrict__ probes, int nprobe,
                           const std::int64_t* __restrict__ offsets,
                           const std::int32_t* __restrict__ ids, const float* __restrict__ vectors,
                           bool l2, int k, std::int32_t* __restrict__ outIds,
                           float* __restrict__ outScores) {
  extern __shared__ unsigned char shared[];
  auto* buffer = reinterpret_cast<std::uint64_t*>(shared);
  auto* query = reinterpret_cast<float*>(buffer + kBuffer);
  __shared__ int held;
  __shared__ std::uint64_t limit; // the k-th best key once k are held; candidates must beat it
  const std::int64_t qi = order[blockIdx.x / parts];
  const int part = int(blockIdx.x % parts);
  const std::int64_t row = qi * parts + part;
  for (int t = threadIdx.x; t < d; t += blockDim.x)
    query[t] = queries[qi * d + t];
  for (int t = threadIdx.x; t < kBuffer; t += blockDim.x)
    buffer[t] = kEmpty;
  if (threadIdx.x == 0) {
    held = 0;
    limit = kEmpty;
  }
  __syncthreads();
  // Sorts the held keys (the rest of the buffer is empty) and keeps the k best.
  auto trim = [&] {
    int size = 2;
    while (size < held)
      size <<= 1;
    sortKeys(buffer, size);
    if (threadIdx.x == 0) {
      held = min(held, k);
      if (held == k)
        limit = buffer[k - 1];
    }
    for (int t = k + threadIdx.x; t < size; t += blockDim.x)
      buffer[t] = kEmpty;
    __syncthreads();
  };
  const int team = threadIdx.x / kTeam, lane = threadIdx.x % kTeam;
  const int teams = blockDim.x / kTeam, perRound = teams * kPerTeam;
  const bool vector4 = d % 4 == 0;
  const unsigned teamMask = ((1u << kTeam) - 1) << (threadIdx.x % 32 / kTeam * kTeam);
  for (int p = part * per; p < min(nprobe, (part + 1) * per); ++p) {
    const std::int32_t list = probes[qi * nprobe + p];
    const std::int64_t r0 = offsets[list], r1 = offsets[list + 1];
    for (std::int64_t start = r0; start < r1; start += perRound) {
      if (held + perRound > kBuffer) // uniform: every thread read `held` after a barrier
        trim();
      for (int m = 0; m < kPerTeam; ++m) {
        const std::int64_t r = start + m * teams + team;
        float s = 0;
        if (r < r1) {
          if (vector4) {
            const float4* x4 = reinterpret_cast<const float4*>(vectors + r * d);
            const float4* q4 = reinterpret_cast<const float4*>(query);
            for (int c = lane; c < d / 4; c += kTeam) {
              const float4 a = x4[c], b = q4[c];
              if (l2) {
                const float e0 = a.x - b.x, e1 = a.y - b.y, e2 = a.z - b.z, e3 = a.w - b.w;
                s += e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3;
              } else {
                s -= a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
              }
            }
          } else {
            const float* x = vectors + r * d;
            for (int c = lane; c < d; c += kTeam)
              s += l2 ? (x[c] - query[c]) * (x[c] - query[c]) : -x[c] * query[c];
          }
        }
        for (int offset = kTeam / 2; offset > 0; offset /= 2)
          s += __shfl_xor_sync(teamMask, s, offset, kTeam);
        if (lane == 0 && r < r1) {
          const std::uint64_t key = (std::uint64_t(orderedBits(s)) << 32) | std::uint32_t(ids[r]);
          if (key < limit)
            buffer[atomicAdd(&held, 1)] = key;
        }
      }
      __syncthreads();
    }
  }
  trim();
  for (int t = threadIdx.x; t < k; t += blockDim.x) {
    const std::uint64_t key = buffer[t];
    outIds[row * k + t] = key == kEmpty ? -1 : std::int32_t(key & 0xffffffffu);
    outScores[row * k + t] = key == kEmpty ? std::numeric_limits<float>::infinity()
                                           : fromOrderedBits(std::uint32_t(key >> 32));
  }
}

/// One block per query: the k best of its `parts` × k partial results.
__global__ void mergeParts(int parts, int k, int slots, const std::int32_t* __restrict__ partIds,
                           const float* __restrict__ partScores, std::int32_t* __restrict__ outIds,
                           float* __restrict__ outScores) {
  extern __shared__ std::uint64_t keys[]; // slots (a power of two ≥ parts · k)
  const std::int64_t q = blockIdx.x, first = q * parts * k;
  for (int t = threadIdx.x; t < slots; t += blockDim.x) {
    const std::int32_t id = t < parts * k ? partIds[first + t] : -1;
    keys[t] = id < 0
                  ? kEmpty
                  : (std::uint64_t(orderedBits(partScores[first + t])) << 32) | std::uint32_t(id);
  }
  __syncthreads();
  sortKeys(keys, slots);
  for (int t = threadIdx.x; t < k; t += blockDim.x) {
    const std::uint64_t key = keys[t];
    outIds[q * k + t] = key == kEmpty ? -1 : std::int32_t(key & 0xffffffffu);
    outScores[q * k + t] = key == kEmpty ? std::numeric_limits<float>::infinity()
                                         : fromOrderedBits(std::uint32_t(key >> 32));
  }
}

std::size_t scanSharedBytes(int d) {
  return sizeof(std::uint64_t) * kBuffer + sizeof(float) * std::size_t(d);
}

template <typename T> void copyIn(DeviceBuffer<T>& device, const T* host, std::size_t count) {
  if (count > 0)
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(device.get(), host, sizeof(T) * count, cudaMemcpyHostToDevice));
}

/// Centroids on the device with their squared norms, and the GEMM that scores rows against them.
struct Centroids {
  DeviceBuffer<float> rows, norms;
  int count = 0, d = 0;
  bool l2 = true;

  Centroids(const MatrixView<float>& c, bool useL2)
      : rows(std::size_t(c.rows * c.cols)), norms(std::size_t(c.rows)), count(int(c.rows)),
        d(int(c.cols)), l2(useL2) {
    copyIn(rows, c.data, std::size_t(c.rows * c.cols));
    rowNormsSquaredOnDevice(rows.get(), c.rows, d, norms.get());
  }

  /// Rows a score tile holds within its budget.
  std::int64_t tileRows() const {
    return std::max<std::int64_t>(
        1, std::min<std::int64_t>(16384, std::int64_t(kTileBytes / (4 * std::size_t(count)))));
  }

  /// dots (rows × count, row-major) = x (rows × d, device, row-major) · centroidsᵀ.
  void score(cublasHandle_t cublas, const float* x, std::int64_t n, float* dots) const {
    const float one = 1.0f, zero = 0.0f;
    NEARSCAPE_CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, count, int(n), d, &one,
                                       rows.get(), d, x, d, &zero, dots, count));
  }

  /// The `wanted` nearest centroids of each of n rows (device, n × wanted).
  void nearest(const float* dots, std::int64_t n, int wanted, std::int32_t* out) const {
    if (wanted == 1)
      argminKernel<<<unsigned((n * 32 + 255) / 256), 256>>>(dots, norms.get(), l2, n, count, out);
    else
      selectKernel<<<unsigned(n), kSelectThreads>>>(dots, norms.get(), l2, count, wanted, out);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
};

} // namespace

std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                           const MatrixView<float>& centroids, int count,
                                           Metric metric, const Context& context) {
  const ResourceLease resources = leaseResources(context);
  const cublasHandle_t cublas = resources->cublas(); // default math: float32 ranks
  const Centroids c(centroids, metric == Metric::L2);
  const std::int64_t tile = c.tileRows(), d = data.cols;
  DeviceBuffer<float> rows{std::size_t(std::min(tile, data.rows) * d)};
  DeviceBuffer<float> dots{std::size_t(std::min(tile, data.rows)) * std::size_t(c.count)};
  DeviceBuffer<std::int32_t> chosen{std::size_t(std::min(tile, data.rows)) * std::size_t(count)};
  std::vector<std::int32_t> out(std::size_t(data.rows) * std::size_t(count));
  for (std::int64_t r0 = 0; r0 < data.rows; r0 += tile) {
    const std::int64_t n = std::min(tile, data.rows - r0);
    copyIn(rows, data.row(r0), std::size_t(n * d));
    c.score(cublas, rows.get(), n, dots.get());
    c.nearest(dots.get(), n, count, chosen.get());
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.data() + r0 * count, chosen.get(),
                                    sizeof(std::int32_t) * std::size_t(n * count),
                                    cudaMemcpyDeviceToHost));
  }
  return out;
}

/// A search's device buffers, kept between searches and grown when a search needs more.
struct Workspace {
  std::int64_t rows = 0; ///< queries the row buffers hold
  DeviceBuffer<float> queries, dots, scores;
  DeviceBuffer<std::int32_t> probes, ids, nearest, nearestSorted, iota, order, partIds;
  DeviceBuffer<float> partScores;
  DeviceBuffer<unsigned char> sortScratch;
  std::size_t sortBytes = 0;

  void ensure(std::int64_t n, int d, int lists, int nprobe, int k) {
    if (n > rows) {
      queries = DeviceBuffer<float>(std::size_t(n) * std::size_t(d));
      dots = DeviceBuffer<float>(std::size_t(n) * std::size_t(lists));
      nearest = DeviceBuffer<std::int32_t>(std::size_t(n));
      nearestSorted = DeviceBuffer<std::int32_t>(std::size_t(n));
      iota = DeviceBuffer<std::int32_t>(std::size_t(n));
      order = DeviceBuffer<std::int32_t>(std::size_t(n));
      sortBytes = 0;
      cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, nearest.get(), nearestSorted.get(),
                                      iota.get(), order.get(), int(n));
      sortScratch = DeviceBuffer<unsigned char>(std::max<std::size_t>(sortBytes, 1));
      fillIota(iota.get(), n);
      rows = n;
    }
    if (probes.size() < std::size_t(rows) * std::size_t(nprobe))
      probes = DeviceBuffer<std::int32_t>(std::size_t(rows) * std::size_t(nprobe));
    if (ids.size() < std::size_t(rows) * std::size_t(k)) {
      ids = DeviceBuffer<std::int32_t>(std::size_t(rows) * std::size_t(k));
      scores = DeviceBuffer<float>(std::size_t(rows) * std::size_t(k));
    }
    // Small batches split a query's lists over blocks: a part per list.
    const std::size_t parts = std::size_t(kReorderFrom) * std::size_t(nprobe) * std::size_t(k);
    if (nprobe * k <= kMergeSlots && partIds.size() < parts) {
      partIds = DeviceBuffer<std::int32_t>(parts);
      partScores = DeviceBuffer<float>(parts);
    }
  }
};

struct DeviceIvfFlat::State {
  Centroids centroids;
  DeviceBuffer<std::int64_t> offsets;
  DeviceBuffer<std::int32_t> ids;
  DeviceBuffer<float> vectors;
  ResourceLease resources; ///< its cuBLAS handle, for the object's life
  std::int64_t n = 0;
  int d = 0;
  std::mutex mutex; ///< one search at a time uses the workspace
  Workspace work;
};

DeviceIvfFlat::DeviceIvfFlat(const MatrixView<float>& centroids, const std::int64_t* offsets,
                             const std::int32_t* ids, const MatrixView<float>& vectors,
                             Metric metric, const Context& context)
    : m_device(context.device) {
  ResourceLease resources = leaseResources(context);
  m_state.reset(new State{Centroids(centroids, metric == Metric::L2),
                          DeviceBuffer<std::int64_t>(std::size_t(centroids.rows) + 1),
                          DeviceBuffer<std::int32_t>(std::size_t(vectors.rows)),
                          DeviceBuffer<float>(std::size_t(vectors.rows * vectors.cols)),
                          std::move(resources),
                          vectors.rows,
                          int(vectors.cols),
                          {},
                          {}});
  NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(scanKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(scanSharedBytes(int(vectors.cols)))));
  copyIn(m_state->offsets, offsets, std::size_t(centroids.rows) + 1);
  copyIn(m_state->ids, ids, std::size_t(vectors.rows));
  copyIn(m_state->vectors, vectors.data, std::size_t(vectors.rows * vectors.cols));
}

DeviceIvfFlat::~DeviceIvfFlat() = default;

std::uint64_t DeviceIvfFlat::bytes() const {
  const State& s = *m_state;
  return std::uint64_t(s.centroids.rows.size() + s.centroids.norms.size() + s.vectors.size()) * 4 +
         s.ids.size() * 4 + s.offsets.size() * 8;
}

void DeviceIvfFlat::search(const MatrixView<float>& queries, int k, int nprobe, std::int32_t* ids,
                           float* scores, JobControl& job) const {
  NEARSCAPE_GPU_LIMIT(k >= 1 && k <= kMaxK,
                      "the GPU IVF search takes k ≤ " + std::to_string(kMaxK));
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(m_device));
  State& s = *m_state; // the workspace changes; the index does not
  nprobe = std::clamp(nprobe, 1, s.centroids.count);
  const std::int64_t tile = s.centroids.tileRows(), d = s.d;
  const std::lock_guard<std::mutex> lock(s.mutex);
  Workspace& w = s.work;
  w.ensure(tile, int(d), s.centroids.count, nprobe, k); // a whole tile at once: no regrowth later
  const int listBits = 32 - __builtin_clz(unsigned(std::max(1, s.centroids.count)));
  const std::size_t shared = scanSharedBytes(int(d));
  for (std::int64_t q0 = 0; q0 < queries.rows; q0 += tile) {
    job.check();
    const std::int64_t n = std::min(tile, queries.rows - q0);
    copyIn(w.queries, queries.row(q0), std::size_t(n * d));
    s.centroids.score(s.resources->cublas(), w.queries.get(), n, w.dots.get());
    s.centroids.nearest(w.dots.get(), n, nprobe, w.probes.get());
    // A batch large enough to share lists is scanned in the order of each query's nearest list.
    const bool reorder = n >= kReorderFrom;
    if (reorder && nprobe > 1)
      s.centroids.nearest(w.dots.get(), n, 1, w.nearest.get());
    if (reorder)
      NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
          w.sortScratch.get(), w.sortBytes, nprobe > 1 ? w.nearest.get() : w.probes.get(),
          w.nearestSorted.get(), w.iota.get(), w.order.get(), int(n), 0, listBits));
    // A small batch (batch-1 latency) scans each query's lists side by side, a block per list.
    const bool split = !reorder && nprobe > 1 && nprobe * k <= kMergeSlots;
    const int parts = split ? nprobe : 1;
    scanKernel<<<unsigned(n * parts), kScanThreads, shared>>>(
        reorder ? w.order.get() : w.iota.get(), parts, split ? 1 : nprobe, w.queries.get(), int(d),
        w.probes.get(), nprobe, s.offsets.get(), s.ids.get(), s.vectors.get(), s.centroids.l2, k,
        split ? w.partIds.get() : w.ids.get(), split ? w.partScores.get() : w.scores.get());
    if (split) {
      int slots = 2;
      while (slots < nprobe * k)
        slots <<= 1;
      mergeParts<<<unsigned(n), kScanThreads, sizeof(std::uint64_t) * slots>>>(
          nprobe, k, slots, w.partIds.get(), w.partScores.get(), w.ids.get(), w.scores.get());
    }
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(ids + q0 * k, w.ids.get(),
                                         sizeof(std::int32_t) * std::size_t(n * k),
                                         cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(scores + q0 * k, w.scores.get(),
                                         sizeof(float) * std::size_t(n * k),
                                         cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
}

} // namespace nearscape::cuda
