// Exact L2 kNN by sorted clusters on the GPU: STEP §4.1 with the GPU shape of the Faiss
// paper's tiles (§5.1). The base is clustered
// by k-means on the device and stored cluster by cluster; each cluster A keeps the other clusters
// sorted by ‖c_A − c_B‖ − r_B (r_B: B's bounding radius). A block takes up to 64 queries that share
// their nearest cluster A (ρ: their farthest distance from c_A) and scans clusters in that order,
// 64 × 64 tiles of float32 squared differences in shared memory, until a cluster's bound
// ‖c_A − c_B‖ − r_B − ρ (Lemma 1: no member is nearer to any of the block's queries) lies beyond
// every query's k-th. Each query row keeps, in shared memory, the candidates within the proven
// float32 bound of its k-th; the survivors are re-ranked in float64 by the same block. The sum of
// squared differences has a relative error of at most γ = (d + 4)u, so the threshold needs no
// norm-expansion cancellation margin: a handful of candidates a row.
#include "cuda/Cublas.cuh"
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaKnn.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/DeviceKMeans.cuh"
#include "cuda/NearestCentroid.cuh"
#include "cuda/PhaseClock.cuh"
#include "cuda/Resources.cuh"
#include "cuda/Upload.cuh"
#include "knn/ExactCommon.h"

#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace nearscape::cuda {
namespace {

constexpr int kRows = 64;          ///< query rows a block holds
constexpr int kCols = 64;          ///< base rows a tile scores against them
constexpr int kChunk = 32;         ///< dimensions staged in shared memory at a time
constexpr int kStride = kRows + 1; ///< shared row stride: transposed stores without bank conflicts
constexpr int kThreads = 128;      ///< 4 warps; each thread scores 8 rows × 4 columns of a tile
constexpr int kWarps = kThreads / 32;
constexpr int kMaxClusters = 4096; ///< the cluster-by-cluster order is clusters² entries
constexpr int kMembersPerCluster = 256;
/// A probe block of a search gives up past this many times the share its caller allows.
constexpr double kBlockSlack = 4;
/// Candidates a row holds: k, a tile's appends (kCols) and room for near ties.
constexpr int capFor(int k) {
  return k + kCols + 32 <= 128 ? 128 : 256;
}
static_assert(kStepMaxK + kCols + 32 <= 256, "a tile's appends must fit beside the k best");
static_assert(kRows == 8 * 8 && kCols == 16 * 4 && kThreads == 128, "the 8 × 4 register tile");

/// A block's queries: positions [begin, end) in cluster order, sharing their nearest cluster.
using QueryBlock = ClusterBlock;

struct ScanArgs {
  const float* base;               ///< n × d, cluster by cluster
  const std::int32_t* baseIds;     ///< original id of each base position
  const std::int64_t* baseOffsets; ///< clusters + 1
  const float* queries;            ///< nq × d, in the order of their nearest cluster
  const std::int32_t* queryIds;    ///< original row of each query position
  const float* centroids;          ///< clusters × d
  const std::int32_t* order;       ///< clusters × clusters: per A, the clusters by key
  const float* keys;               ///< the sorted keys ‖c_A − c_B‖ − r_B, rounded down
  const QueryBlock* blocks;
  const std::int32_t* blockList; ///< the blocks this launch scans
  int clusters, d, k;
  bool graph;           ///< queries are the base: skip a query's own position
  double gamma;         ///< relative error bound of a float32 squared distance
  float tiny;           ///< absolute bound of the underflowed terms
  std::int32_t* outIds; ///< nq × k, by original query row
  float* outDist;
  std::int32_t* overflowRows; ///< original rows whose near ties overflowed the buffer
  int* overflowCount;
  unsigned long long* scored;    ///< query–base pairs scored
  unsigned long long* rechecked; ///< candidates re-ranked in float64
  long long maxScoredPerRow;     ///< a probe gives up past this many base rows (−1: never)
  int* gaveUpRows;               ///< query rows of the probe blocks that gave up
};

/// Rounding up / down for the thresholds and bounds: float64 → float32 never shrinks a bound.
__device__ inline float upper(double v) {
  return __double2float_ru(v);
}

/// The k-th smallest of the `m` approximate distances of a row (m ≥ k), by a warp: the largest
/// value with fewer than k values below it.
__device__ float kthSmallest(const float* dist, int m, int k, int lane) {
  float best = -INFINITY;
  for (int i = lane; i < m; i += 32) {
    const float v = dist[i];
    int below = 0;
    for (int j = 0; j < m; ++j)
      below += dist[j] < v;
    if (below < k)
      best = fmaxf(best, v);
  }
  for (int off = 16; off > 0; off /= 2)
    best = fmaxf(best, __shfl_xor_sync(kFullMask, best, off));
  return best;
}

/// Keeps the row's candidates at or below `threshold`, in place (a warp); returns how many.
template <int kCap>
__device__ int keepBelow(float* dist, std::int32_t* pos, int m, float threshold, int lane) {
  float v[kCap / 32];
  std::int32_t p[kCap / 32];
#pragma unroll
  for (int s = 0; s < kCap / 32; ++s) {
    const int i = lane + 32 * s;
    v[s] = i < m ? dist[i] : INFINITY;
    p[s] = i < m ? pos[i] : 0;
  }
  __syncwarp();
  int written = 0;
#pragma unroll
  for (int s = 0; s < kCap / 32; ++s) {
    const bool keep = lane + 32 * s < m && v[s] <= threshold;
    const unsigned mask = __ballot_sync(kFullMask, keep);
    if (keep) {
      const int slot = written + __popc(mask & ((1u << lane) - 1));
      dist[slot] = v[s];
      pos[slot] = p[s];
    }
    written += __popc(mask);
  }
  __syncwarp();
  return written;
}

template <int kCap> __global__ void __launch_bounds__(kThreads) scanKernel(ScanArgs a) {
  extern __shared__ float shared[];
  float* qs = shared;                      // kChunk × kStride, transposed
  float* bs = qs + kChunk * kStride;       // kChunk × kStride, transposed
  float* candDist = bs + kChunk * kStride; // kRows × kCap
  auto* candPos = reinterpret_cast<std::int32_t*>(candDist + kRows * kCap);
  __shared__ int count[kRows];
  __shared__ float threshold[kRows]; // approximate distances above it are dropped
  __shared__ float limit[kRows];     // an upper bound of the exact k-th squared distance
  __shared__ bool overflow[kRows];
  __shared__ float rho, maxLimit;

  const QueryBlock blk = a.blocks[a.blockList[blockIdx.x]];
  const int rows = blk.end - blk.begin, d = a.d;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float* queries = a.queries + std::int64_t(blk.begin) * d;
  for (int r = threadIdx.x; r < kRows; r += kThreads) {
    count[r] = 0;
    threshold[r] = r < rows ? INFINITY : -INFINITY; // padding rows take nothing
    limit[r] = r < rows ? INFINITY : -INFINITY;
    overflow[r] = false;
  }
  if (threadIdx.x == 0)
    rho = 0;
  __syncthreads();
  // ρ: the farthest query of the block from its cluster's centre, in float64, rounded up.
  {
    const float* centre = a.centroids + std::int64_t(blk.cluster) * d;
    double far = 0;
    for (int r = warp; r < rows; r += kWarps) {
      double s = 0;
      for (int t = lane; t < d; t += 32) {
        const double e = double(queries[std::int64_t(r) * d + t]) - centre[t];
        s += e * e;
      }
      for (int off = 16; off > 0; off /= 2)
        s += __shfl_xor_sync(kFullMask, s, off);
      far = fmax(far, sqrt(s));
    }
    if (lane == 0) // non-negative floats order like their bits
      atomicMax(reinterpret_cast<int*>(&rho), __float_as_int(upper(far * (1 + 1e-12))));
  }

  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  const std::int32_t* order = a.order + std::int64_t(blk.cluster) * a.clusters;
  const float* keys = a.keys + std::int64_t(blk.cluster) * a.clusters;
  unsigned long long scored = 0;
  long long scoredPerRow = 0;
  for (int o = 0; o < a.clusters; ++o) {
    __syncthreads();
    if (warp == 0) {
      float m = fmaxf(limit[lane], limit[lane + 32]);
      for (int off = 16; off > 0; off /= 2)
        m = fmaxf(m, __shfl_xor_sync(kFullMask, m, off));
      if (lane == 0)
        maxLimit = m;
    }
    __syncthreads();
    // Clusters come in the order of their key, so the first one beyond every row's k-th ends
    // the scan (rounding: keys down, ρ and limits up).
    const double bound = double(keys[o]) - double(rho);
    if (!(keys[o] < INFINITY) || (bound > 0 && bound * bound > double(maxLimit)))
      break;
    const int cluster = order[o];
    const std::int64_t b0 = a.baseOffsets[cluster], b1 = a.baseOffsets[cluster + 1];
    // A probe stops as soon as its rows would score more than the share that pays: the data's
    // clusters do not prune, and the rest of the scan would only cost time.
    if (a.maxScoredPerRow >= 0 && scoredPerRow + (b1 - b0) > a.maxScoredPerRow) {
      if (threadIdx.x == 0)
        atomicAdd(a.gaveUpRows, rows);
      break;
    }
    scoredPerRow += b1 - b0;
    scored += std::uint64_t(b1 - b0) * std::uint64_t(rows);
    for (std::int64_t c0 = b0; c0 < b1; c0 += kCols) {
      const int cols = int((b1 - c0 < kCols ? b1 - c0 : kCols));
      float acc[8][4];
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          acc[i][j] = 0;
      for (int t0 = 0; t0 < d; t0 += kChunk) {
        const int t = t0 + lane;
        for (int r = warp; r < kRows; r += kWarps)
          qs[lane * kStride + r] = r < rows && t < d ? queries[std::int64_t(r) * d + t] : 0.0f;
        for (int c = warp; c < kCols; c += kWarps)
          bs[lane * kStride + c] = c < cols && t < d ? a.base[(c0 + c) * d + t] : 0.0f;
        __syncthreads();
#pragma unroll 4
        for (int s = 0; s < kChunk; ++s) {
          float qv[8], bv[4];
#pragma unroll
          for (int i = 0; i < 8; ++i)
            qv[i] = qs[s * kStride + ty + 8 * i];
#pragma unroll
          for (int j = 0; j < 4; ++j)
            bv[j] = bs[s * kStride + tx + 16 * j];
#pragma unroll
          for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const float e = qv[i] - bv[j];
              acc[i][j] = fmaf(e, e, acc[i][j]);
            }
        }
        __syncthreads();
      }
      // Appends: at most kCols a row, into room kept free by the compaction below.
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int r = ty + 8 * i;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int c = tx + 16 * j;
          const std::int64_t p = c0 + c;
          if (r >= rows || c >= cols || (a.graph && p == blk.begin + r))
            continue;
          const float v = acc[i][j];
          if (!(v < INFINITY)) { // float32 overflowed: the row goes to the fallback
            overflow[r] = true;
            continue;
          }
          if (v <= threshold[r]) {
            const int slot = atomicAdd(&count[r], 1);
            candDist[r * kCap + slot] = v;
            candPos[r * kCap + slot] = std::int32_t(p);
          }
        }
      }
      __syncthreads();
      // Rows short of room: keep those within the bound of their k-th.
      for (int r = warp; r < rows; r += kWarps) {
        const int m = count[r];
        if (m <= kCap - kCols)
          continue;
        if (overflow[r]) {
          if (lane == 0) {
            count[r] = 0;
            threshold[r] = limit[r] = -INFINITY;
          }
          continue;
        }
        const float kth = kthSmallest(candDist + r * kCap, m, a.k, lane);
        const float lim = upper(double(kth) / (1 - a.gamma) + a.tiny);
        const float thr = fminf(threshold[r], upper(double(lim) * (1 + a.gamma) + a.tiny));
        const int kept = keepBelow<kCap>(candDist + r * kCap, candPos + r * kCap, m, thr, lane);
        if (lane == 0) {
          if (kept > kCap - kCols) { // near ties beyond the buffer: the row goes to the fallback
            overflow[r] = true;
            count[r] = 0;
            threshold[r] = limit[r] = -INFINITY;
          } else {
            count[r] = kept;
            threshold[r] = thr;
            limit[r] = fminf(limit[r], lim);
          }
        }
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0)
    atomicAdd(a.scored, scored);

  // Re-rank: a warp per row; the survivors' float64 distances, ranked by (distance, id).
  double* exact = reinterpret_cast<double*>(shared) + warp * kCap; // reuses the staging tiles
  auto* ids = reinterpret_cast<std::int32_t*>(reinterpret_cast<double*>(shared) + kWarps * kCap) +
              warp * kCap;
  for (int r = warp; r < rows; r += kWarps) {
    const std::int32_t queryId = a.queryIds[blk.begin + r];
    if (overflow[r]) {
      if (lane == 0)
        a.overflowRows[atomicAdd(a.overflowCount, 1)] = queryId;
      continue;
    }
    float* dist = candDist + r * kCap;
    std::int32_t* pos = candPos + r * kCap;
    int m = count[r];
    const float kth = kthSmallest(dist, m, a.k, lane);
    const float thr =
        fminf(threshold[r], upper((double(kth) / (1 - a.gamma) + a.tiny) * (1 + a.gamma) + a.tiny));
    m = keepBelow<kCap>(dist, pos, m, thr, lane);
    if (lane == 0)
      atomicAdd(a.rechecked, (unsigned long long)m);
    const float* q = queries + std::int64_t(r) * d;
    for (int i = lane; i < m; i += 32) {
      const float* b = a.base + std::int64_t(pos[i]) * d;
      double s = 0;
      for (int t = 0; t < d; ++t) {
        const double e = double(q[t]) - double(b[t]);
        s += e * e;
      }
      exact[i] = s;
      ids[i] = a.baseIds[pos[i]];
    }
    __syncwarp();
    for (int i = lane; i < m; i += 32) {
      int rank = 0;
      for (int j = 0; j < m; ++j)
        rank += exact[j] < exact[i] || (exact[j] == exact[i] && ids[j] < ids[i]);
      if (rank < a.k) {
        a.outIds[std::int64_t(queryId) * a.k + rank] = ids[i];
        a.outDist[std::int64_t(queryId) * a.k + rank] = float(sqrt(exact[i]));
      }
    }
    __syncwarp();
  }
}

constexpr std::size_t scanShared(int cap) {
  return sizeof(float) * (2 * kChunk * kStride + kRows * cap) + sizeof(std::int32_t) * kRows * cap;
}
static_assert(sizeof(double) * kWarps * 256 + sizeof(std::int32_t) * kWarps * 256 <=
                  sizeof(float) * 2 * kChunk * kStride,
              "the re-rank's scratch fits in the staging tiles");

/// Bounding radii: each member's float64 distance to its centroid, the largest rounded up (a warp
/// per base row, in cluster order).
__global__ void radiusKernel(const float* __restrict__ sorted,
                             const std::int32_t* __restrict__ labels, std::int64_t n, int d,
                             const float* __restrict__ centroids, float* __restrict__ radius) {
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (i >= n)
    return;
  const int c = labels[i], lane = threadIdx.x % 32;
  double s = 0;
  for (int t = lane; t < d; t += 32) {
    const double e = double(sorted[i * d + t]) - centroids[std::int64_t(c) * d + t];
    s += e * e;
  }
  for (int off = 16; off > 0; off /= 2)
    s += __shfl_xor_sync(kFullMask, s, off);
  if (lane == 0)
    atomicMax(reinterpret_cast<int*>(radius + c), __float_as_int(upper(sqrt(s) * (1 + 1e-12))));
}

/// keys[A][B] = ‖c_A − c_B‖ − r_B in float64, rounded down; +∞ for an empty B (a block per A).
__global__ void keysKernel(const float* __restrict__ centroids, const float* __restrict__ radius,
                           const std::int64_t* __restrict__ offsets, int clusters, int d,
                           float* __restrict__ keys, std::int32_t* __restrict__ ids) {
  const int A = blockIdx.x;
  const float* ca = centroids + std::int64_t(A) * d;
  for (int B = threadIdx.x; B < clusters; B += blockDim.x) {
    const float* cb = centroids + std::int64_t(B) * d;
    double s = 0;
    for (int t = 0; t < d; ++t) {
      const double e = double(ca[t]) - cb[t];
      s += e * e;
    }
    const bool empty = offsets[B + 1] == offsets[B];
    keys[std::int64_t(A) * clusters + B] =
        empty ? INFINITY : __double2float_rd(sqrt(s) * (1 - 1e-12) - double(radius[B]));
    ids[std::int64_t(A) * clusters + B] = B;
  }
}

/// The clusters of a base of n rows: kMembersPerCluster members each, at most kMaxClusters.
int clustersFor(std::int64_t n) {
  return int(std::clamp<std::int64_t>(n / kMembersPerCluster, 1, kMaxClusters));
}

} // namespace

/// A non-blocking stream of STEP's own, its lease's cuBLAS handle bound to it while it lasts:
/// STEP beside other work on the same GPU (its probe beside the pairs split's first share) neither
/// waits for that work's queue nor holds it up, as the default stream's work, its copies and
/// cudaFree would (they serialised the probe with the share: docs/benchmarks.md, session 28).
/// Its buffers are made and freed in its order.
class OwnStream {
public:
  OwnStream(cublasHandle_t cublas, cudaStream_t home) : m_cublas(cublas), m_home(home) {
    NEARSCAPE_CUDA_CHECK(cudaGetDevice(&m_device));
    NEARSCAPE_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    const cublasStatus_t bound = cublasSetStream(cublas, m_stream);
    if (bound != CUBLAS_STATUS_SUCCESS) {
      cudaStreamDestroy(m_stream);
      NEARSCAPE_CUBLAS_CHECK(bound);
    }
  }
  /// After the buffers' frees (they are declared after it): its work done — a throw may have
  /// left a GEMM queued, and the handle goes back to the pool with its workspace — and the
  /// freed memory handed back (the GEMM path measures the free memory next, where STEP gave way).
  ~OwnStream() {
    settlePool(m_stream, m_device);
    cublasSetStream(m_cublas, m_home);
    cudaStreamDestroy(m_stream);
  }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  cudaStream_t get() const { return m_stream; }
  int device() const { return m_device; }

private:
  cublasHandle_t m_cublas;
  cudaStream_t m_home;
  int m_device = 0;
  cudaStream_t m_stream = nullptr;
};

/// settlePool() as it goes out of scope: declared before a call's stream-ordered buffers, it runs
/// after their frees.
struct SettledOnExit {
  cudaStream_t stream;
  int device;
  ~SettledOnExit() { settlePool(stream, device); }
};

struct DeviceClusters::State {
  MatrixView<float> base; ///< host, for the rows that fall back
  Context context;
  int clusters = 0, d = 0;
  std::optional<ResourceLease> resources; ///< its cuBLAS handle, for the object's life
  cublasHandle_t cublas = nullptr;        ///< resources' handle
  std::optional<OwnStream> stream;        ///< the handle's while the object lives
  Clustering km;
  ClusterOrder sorted;
  DeviceBuffer<float> keys;         ///< clusters × clusters, sorted per row
  DeviceBuffer<std::int32_t> order; ///< the clusters in that order
  double buildSeconds = 0;
};

DeviceClusters::DeviceClusters(const MatrixView<float>& base, const Context& context,
                               int clusterCount)
    : m_state(std::make_unique<State>()) {
  const auto started = std::chrono::steady_clock::now();
  PhaseClock clock{"STEP clusters", context};
  State& s = *m_state;
  s.base = base;
  s.context = context;
  s.d = int(base.cols);
  const std::int64_t n = base.rows;
  const int d = s.d;
  if (n >= std::numeric_limits<std::int32_t>::max() / 2)
    throw Unsupported("the GPU's cluster search takes fewer than 2^30 rows");
  s.resources.emplace(leaseResources(context));
  s.cublas = (*s.resources)->cublas();
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(s.cublas, CUBLAS_TF32_TENSOR_OP_MATH));
  s.stream.emplace(s.cublas, (*s.resources)->stream());
  const cudaStream_t stream = s.stream->get();
  s.clusters = int(std::min<std::int64_t>(
      clusterCount > 0 ? std::min(clusterCount, kMaxClusters) : clustersFor(n), n));
  const int clusters = s.clusters;
  {
    DeviceBuffer<float> raw = uploaded(base.data, std::size_t(n) * std::size_t(d), stream);
    clock.mark("upload");
    s.km = cluster(s.cublas, raw.get(), n, d, clusters, context.seed, stream);
    clock.mark("k-means");
    DeviceBuffer<std::int32_t> labels(std::size_t(n), stream);
    s.km.assign(s.cublas, raw.get(), n, d, labels.get(), stream);
    clock.mark("assign");
    s.sorted = orderByCluster(raw.get(), labels.get(), n, d, clusters, stream);
    clock.mark("order");
  }
  DeviceBuffer<float> radius(std::size_t(clusters), stream);
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(radius.get(), 0, sizeof(float) * clusters, stream));
  radiusKernel<<<unsigned((n * 32 + 255) / 256), 256, 0, stream>>>(
      s.sorted.rows.get(), s.sorted.labels.get(), n, d, s.km.centroids.get(), radius.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  // Per cluster A, every cluster B by ‖c_A − c_B‖ − r_B: one segmented sort.
  const std::size_t pairs = std::size_t(clusters) * std::size_t(clusters);
  DeviceBuffer<float> keys(pairs, stream);
  DeviceBuffer<std::int32_t> order(pairs, stream);
  s.keys = DeviceBuffer<float>(pairs, stream);
  s.order = DeviceBuffer<std::int32_t>(pairs, stream);
  keysKernel<<<unsigned(clusters), 256, 0, stream>>>(s.km.centroids.get(), radius.get(),
                                                     s.sorted.offsets.get(), clusters, d,
                                                     keys.get(), order.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  std::vector<int> segment(std::size_t(clusters) + 1);
  for (int c = 0; c <= clusters; ++c)
    segment[std::size_t(c)] = c * clusters;
  const DeviceBuffer<int> segments = uploaded(segment.data(), segment.size(), stream);
  std::size_t scratchBytes = 0;
  NEARSCAPE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
      nullptr, scratchBytes, keys.get(), s.keys.get(), order.get(), s.order.get(), int(pairs),
      clusters, segments.get(), segments.get() + 1, 0, int(sizeof(float) * 8), stream));
  const DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scratchBytes, 1), stream);
  NEARSCAPE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
      scratch.get(), scratchBytes, keys.get(), s.keys.get(), order.get(), s.order.get(), int(pairs),
      clusters, segments.get(), segments.get() + 1, 0, int(sizeof(float) * 8), stream));
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  clock.mark("radii, keys");
  s.buildSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

DeviceClusters::~DeviceClusters() = default;

double DeviceClusters::buildSeconds() const {
  return m_state->buildSeconds;
}

std::optional<KnnResult> DeviceClusters::search(const MatrixView<float>& queries, int k, bool graph,
                                                JobControl& job, double maxScoredShare) const {
  return search(queries, k, graph, job, maxScoredShare, false);
}

bool DeviceClusters::probePrunes(int k, JobControl& job, double maxScoredShare) const {
  return search(m_state->base, k, true, job, maxScoredShare, true).has_value();
}

std::optional<KnnResult> DeviceClusters::search(const MatrixView<float>& queries, int k, bool graph,
                                                JobControl& job, double maxScoredShare,
                                                bool probeOnly) const {
  const State& s = *m_state;
  const cudaStream_t stream = s.stream->get();
  const SettledOnExit settled{stream, s.stream->device()}; // a GEMM path may follow at once
  if (k > kStepMaxK)
    throw Unsupported("the GPU's cluster search takes k ≤ " + std::to_string(kStepMaxK));
  const auto started = std::chrono::steady_clock::now();
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(s.context.device));
  const std::int64_t n = s.base.rows, nq = graph ? n : queries.rows;
  const int d = s.d, clusters = s.clusters;
  if (nq >= std::numeric_limits<std::int32_t>::max() / 2)
    throw Unsupported("the GPU's cluster search takes fewer than 2^30 queries");

  // Queries in the order of their nearest cluster (the graph's queries: the base itself).
  ClusterOrder sortedQueries;
  if (!graph) {
    DeviceBuffer<float> raw = uploaded(queries.data, std::size_t(nq) * std::size_t(d), stream);
    DeviceBuffer<std::int32_t> labels(std::size_t(nq), stream);
    s.km.assign(s.cublas, raw.get(), nq, d, labels.get(), stream);
    sortedQueries = orderByCluster(raw.get(), labels.get(), nq, d, clusters, stream);
  }
  const ClusterOrder& qo = graph ? s.sorted : sortedQueries;
  const std::vector<QueryBlock> blocks = clusterBlocks(qo.hostOffsets, kRows);
  const DeviceBuffer<QueryBlock> deviceBlocks = uploaded(blocks.data(), blocks.size(), stream);
  DeviceBuffer<std::int32_t> outIds(std::size_t(nq) * std::size_t(k), stream);
  DeviceBuffer<float> outDist(std::size_t(nq) * std::size_t(k), stream);
  DeviceBuffer<std::int32_t> overflowRows(std::size_t(nq), stream);
  DeviceBuffer<int> overflowCount(1, stream), gaveUpRows(1, stream);
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(gaveUpRows.get(), 0, sizeof(int), stream));
  DeviceBuffer<unsigned long long> counters(2, stream); // pairs scored, candidates re-ranked
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(overflowCount.get(), 0, sizeof(int), stream));
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(counters.get(), 0, 2 * sizeof(unsigned long long), stream));
  const int cap = capFor(k);
  const auto kernel = cap == 128 ? scanKernel<128> : scanKernel<256>;
  NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(scanShared(cap))));

  ScanArgs args{};
  args.base = s.sorted.rows.get();
  args.baseIds = s.sorted.ids.get();
  args.baseOffsets = s.sorted.offsets.get();
  args.queries = qo.rows.get();
  args.queryIds = qo.ids.get();
  args.centroids = s.km.centroids.get();
  args.order = s.order.get();
  args.keys = s.keys.get();
  args.blocks = deviceBlocks.get();
  args.clusters = clusters;
  args.d = d;
  args.k = k;
  args.graph = graph;
  args.gamma = (d + 4) * knn::kUnitRoundoff * 1.01;
  args.tiny = float(d + 4) * std::numeric_limits<float>::denorm_min() * 4;
  args.outIds = outIds.get();
  args.outDist = outDist.get();
  args.overflowRows = overflowRows.get();
  args.overflowCount = overflowCount.get();
  args.scored = counters.get();
  args.rechecked = counters.get() + 1;
  args.gaveUpRows = gaveUpRows.get();

  // A probe — every 64th block, at least 8 — tells how well the clusters prune this data; where
  // each query scores more than `maxScoredShare` of the base, the GEMM path is the faster exact
  // search. (Every 16th block cost 0.9 s on manifold 1M before the GEMM path ran.)
  std::vector<std::int32_t> probe, rest;
  const std::size_t stride = std::clamp<std::size_t>(blocks.size() / 8, 1, 64);
  for (std::size_t b = 0; b < blocks.size(); ++b)
    (b % stride == 0 ? probe : rest).push_back(std::int32_t(b));
  auto scan = [&](const std::vector<std::int32_t>& list, double from, double span) {
    constexpr std::size_t kPerLaunch = 4096;
    const DeviceBuffer<std::int32_t> deviceList = uploaded(list.data(), list.size(), stream);
    for (std::size_t b0 = 0; b0 < list.size(); b0 += kPerLaunch) {
      job.check();
      args.blockList = deviceList.get() + b0;
      const auto count = unsigned(std::min(kPerLaunch, list.size() - b0));
      kernel<<<count, kThreads, scanShared(cap), stream>>>(args);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      job.progress(from + span * double(b0 + count) / double(list.size()),
                   "exact kNN (GPU clusters)");
    }
  };
  std::int64_t probeRows = 0;
  for (const auto b : probe)
    probeRows += blocks[std::size_t(b)].end - blocks[std::size_t(b)].begin;
  if (rest.empty()) { // nothing to probe before: the whole search
    args.maxScoredPerRow = -1;
    scan(probe, 0.0, 1.0);
  } else {
    // A probe block gives up once its rows would score more than kBlockSlack times the share:
    // the rows beside a cluster that k-means stretched over two blobs score a few times the
    // average (blobs of 640,000 × 32: 3 of 10 random sets went to the GEMM path when a block
    // gave up at the share itself). A probe alone gives up at the share (it is cheaper so).
    const double slack = probeOnly ? 1.0 : kBlockSlack;
    args.maxScoredPerRow =
        maxScoredShare >= 1 ? -1 : (long long)(slack * maxScoredShare * double(n));
    scan(probe, 0.0, 0.1);
    unsigned long long probeScored = 0;
    int probeGaveUpRows = 0;
    copyToHost(&probeScored, counters.get(), sizeof(probeScored), stream);
    copyToHost(&probeGaveUpRows, gaveUpRows.get(), sizeof(int), stream);
    const double budget = maxScoredShare * double(n) * double(std::max<std::int64_t>(1, probeRows));
    // A search stops where its rows would score more than the budget, a probe block that gave
    // up counted as if its rows scored the whole base (the rest of the search does not give up):
    // where the clusters do not prune nearly every block gives up; a block beside a cluster that
    // k-means stretched over two blobs may too, among a hundred that prune (blobs of 640,000 ×
    // 32: 1 of about 160 gave up, the rows' average 0.21 of the budget, and took the GEMM path
    // while any block that gave up stopped the search). A probe alone (a sample's, whose clusters
    // of 16 rows are noisier: k-means leaves more spanning two blobs) decides on the rows'
    // average, at most half the budget — where the clusters do not prune, near the budget.
    const double worst = double(probeScored) + double(probeGaveUpRows) * double(n);
    if (logs(s.context, LogLevel::Debug)) { // the heuristic's margin, for data near its line
      char line[200];
      std::snprintf(
          line, sizeof line,
          "STEP's %s: its rows scored %.4f of the budget (%.4f at worst; %s), %d rows' "
          "blocks gave up",
          probeOnly ? "sample probe" : "probe", double(probeScored) / budget, worst / budget,
          probeOnly ? "gives up past 0.5 on average" : "searches to 1 at worst", probeGaveUpRows);
      logMessage(s.context, LogLevel::Debug, line);
    }
    if (probeOnly ? double(probeScored) > 0.5 * budget : worst > budget)
      return std::nullopt;
    if (probeOnly)
      return KnnResult{};
    args.maxScoredPerRow = -1;
    scan(rest, 0.1, 0.9);
  }

  std::vector<std::int32_t> ids(static_cast<std::size_t>(nq) * std::size_t(k));
  std::vector<float> dists(ids.size());
  int overflowed = 0;
  unsigned long long counted[2] = {};
  copyToHost(ids.data(), outIds.get(), sizeof(std::int32_t) * ids.size(), stream);
  copyToHost(dists.data(), outDist.get(), sizeof(float) * dists.size(), stream);
  copyToHost(&overflowed, overflowCount.get(), sizeof(int), stream);
  copyToHost(counted, counters.get(), sizeof(counted), stream);
  std::vector<std::int32_t> fallback(static_cast<std::size_t>(overflowed));
  copyToHost(fallback.data(), overflowRows.get(), sizeof(std::int32_t) * fallback.size(), stream);
  // Rows with more near ties than the buffer holds: a direct exact scan on the CPU.
  const MatrixView<float>& q = graph ? s.base : queries;
  knn::directRows(
      q, std::vector<std::int64_t>(fallback.begin(), fallback.end()), s.base, Metric::L2, k,
      [&](std::int64_t i) { return graph ? i : std::int64_t(-1); }, ids.data(), dists.data(),
      effectiveThreads(s.context));
  job.check();

  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cuda;
  result.report.device = (*s.resources)->properties().name;
  result.report.setMethod(KnnMethod::Step);
  result.report.detail =
      std::to_string(clusters) + " clusters, " +
      std::to_string(std::int64_t(counted[0] / std::uint64_t(std::max<std::int64_t>(1, nq)))) +
      " of " + std::to_string(n) + " items scored a query";
  result.fallbackRows = overflowed;
  result.candidatesPerRow = nq > overflowed ? double(counted[1]) / double(nq - overflowed) : 0.0;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  job.progress(1.0, "done");
  return result;
}

namespace {

/// A graph's rows sampled one in kSampleStride decide, before the whole base is clustered, whether
/// its clusters can prune (the whole base's clusters and their probe cost 0.1 s of manifold 1M
/// on an H100, a tenth of the GEMM path, for nothing).
constexpr std::int64_t kSampleStride = 16;
/// Below this many rows the sample's own start costs about what it saves.
constexpr std::int64_t kSampleProbeMinRows = 500000;

/// Whether STEP may pay on the graph of `base`: the graph of every kSampleStride-th row, in as many
/// clusters as the whole base's (so they split the data's structure alike: fewer would merge
/// blobs that the whole base's clusters keep apart, and prune nothing), probed for the
/// k / kSampleStride nearest, rounded, at least 1 (about the whole base's k-th distance; for
/// k < 24 a little farther, so the sample errs towards giving up). A sample row then touches about
/// the clusters a whole row would, each holding kSampleStride times fewer rows: its share of the
/// sample scored stands for the whole row's share of the base. Where the sample passes, the whole
/// search still runs its own probe; where it gives up, the whole base's clusters are not built.
bool clustersMayPrune(const MatrixView<float>& base, int k, const Context& context, JobControl& job,
                      double maxScoredShare) {
  const std::int64_t n = base.rows, d = base.cols;
  if (n < kSampleProbeMinRows)
    return true;
  const std::int64_t m = n / kSampleStride;
  std::vector<float> sample(std::size_t(m * d));
#pragma omp parallel for num_threads(effectiveThreads(context)) schedule(static)
  for (std::int64_t i = 0; i < m; ++i)
    std::copy_n(base.row(i * kSampleStride), d, sample.data() + i * d);
  const MatrixView<float> rows{sample.data(), m, d};
  const DeviceClusters clusters(rows, context, clustersFor(n));
  JobControl quiet(job, [](double, const std::string&) {}); // the sample's progress is not shown
  const int sampleK = int(std::max<std::int64_t>(1, (k + kSampleStride / 2) / kSampleStride));
  return clusters.probePrunes(sampleK, quiet, maxScoredShare);
}

} // namespace

std::optional<KnnResult> stepSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                                    int k, bool excludeSelf, const Context& context,
                                    JobControl& job, double maxScoredShare) {
  const auto started = std::chrono::steady_clock::now();
  PhaseClock clock{"STEP", context};
  if (excludeSelf && maxScoredShare < 1 &&
      !clustersMayPrune(base, k, context, job, maxScoredShare)) {
    clock.mark("sample probe (gave up)");
    return std::nullopt;
  }
  clock.mark("sample probe");
  const DeviceClusters clusters(base, context);
  clock.mark("clusters");
  job.check();
  auto result = clusters.search(queries, k, excludeSelf, job, maxScoredShare);
  clock.mark(result ? "search" : "probe (gave up)");
  if (result)
    result->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace nearscape::cuda
