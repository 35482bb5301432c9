// NN-Descent on the GPU after GNND (§4):
// fixed-size neighbour lists with a NEW flag; each iteration
//   1. samples up to S NEW (then marked OLD) and S OLD neighbours per node (§4.1: the nearest
//      ones, in list order),
//   2. adds reverse samples (v learns of u when u sampled v; S slots, first come first kept),
//   3. cross-matches each node's samples in shared memory (§4.2: NEW×NEW and NEW×OLD pairs, a
//      block per node, the candidates' vectors loaded once), proposing b to a and a to b where
//      the pair beats the list's current worst,
//   4. merges each node's proposals into its list (§4.3's selective update, lock-free: proposals
//      are appended to a per-node bucket of fixed size, then one warp per node sorts list and
//      bucket, drops repeated ids and keeps the best K).
// It stops when an iteration changes fewer than delta · n · K entries. The final lists get exact
// float64 distances (WarpRows.cuh), sorted with ties by id. Atomic appends make the GPU's result
// depend on timing: it is not bitwise reproducible, unlike the CPU's.
#include "cuda/Bitonic.cuh"
#include "cuda/Cublas.cuh"
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaKnn.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/DeviceKMeans.cuh"
#include "cuda/PhaseClock.cuh"
#include "cuda/Rerank.cuh"
#include "cuda/Resources.cuh"
#include "cuda/Select.cuh"
#include "cuda/Upload.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/NnDescentLoop.h"
#include "util/Hash.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nearscape::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr std::uint32_t kNew = 0x80000000u; ///< flag bit on a list entry's id
constexpr std::int32_t kNone = -1;
// S, the NEW and OLD samples (and reverse ones) a node takes per iteration, is 16, or 32 for lists
// of 32 or more where the join's shared memory allows: a join holds 4S candidates' vectors.
constexpr int kBucket = 64;      ///< proposals a node keeps per iteration
constexpr int kMergeSlots = 128; ///< ≥ kMaxList + kBucket, a power of two
constexpr int kJoinThreads = 128;
constexpr int kMergeWarps = 4;

struct Proposal {
  float dist;
  std::int32_t id;
};

/// The float32 distance the lists rank by, summed in dimension order with the same fused
/// multiply-adds as the join's register tiles: a pair's distance is bitwise the same whichever
/// kernel computed it and whichever end came first, so repeated ids sort next to each other.
__device__ __forceinline__ float workingDistance(const float* a, const float* b, int d, bool ip) {
  float s = 0;
  for (int t = 0; t < d; ++t) {
    if (ip) {
      s = fmaf(-a[t], b[t], s);
    } else {
      const float e = a[t] - b[t];
      s = fmaf(e, e, s);
    }
  }
  return s;
}

constexpr std::uint32_t kFromBucket = 0x40000000u; ///< merge-time mark of a proposal
constexpr std::uint32_t kIdBits = 0x3fffffffu;

/// Merge order: distance, then id, then list entries before proposals of the same id (so a
/// proposal repeating an entry is the copy dropped); empty slots (id −1, +inf) last.
__device__ __forceinline__ bool before(float da, std::int32_t ia, float db, std::int32_t ib) {
  const std::uint32_t a = std::uint32_t(ia), b = std::uint32_t(ib);
  if (da != db)
    return da < db;
  if ((a & kIdBits) != (b & kIdBits))
    return (a & kIdBits) < (b & kIdBits);
  return (a & kFromBucket) < (b & kFromBucket);
}

/// Warp bitonic sort of `slots` (power of two) entries in shared memory, in merge order.
__device__ void warpSort(float* dist, std::int32_t* id, int slots, int lane) {
  bitonicSort(
      slots, lane, 32, [&](int a, int b) { return before(dist[a], id[a], dist[b], id[b]); },
      [&](int a, int b) {
        swapAt(dist, a, b);
        swapAt(id, a, b);
      },
      [] { __syncwarp(); });
}

/// Starting proposals: K draws per node (never the node itself), merged like any others. With a
/// clustering, every other draw comes from the node's own cluster (when it has others); the rest
/// come from anywhere, without which the descent would stay inside the clusters.
__global__ void seedKernel(const float* __restrict__ x, std::int64_t n, int d, bool ip, int K,
                           std::uint64_t seed, const std::int32_t* __restrict__ clusterOf,
                           const std::int64_t* __restrict__ memberStart,
                           const std::int32_t* __restrict__ members, Proposal* __restrict__ bucket,
                           int* __restrict__ bucketCount) {
  const std::int64_t u = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (u >= n)
    return;
  for (int c = lane; c < K && c < kBucket; c += 32) {
    const std::uint64_t h = mixBits(seed ^ mixBits(std::uint64_t(u) * 64 + std::uint64_t(c)));
    std::int64_t v = (u + 1 + std::int64_t(h % std::uint64_t(n - 1))) % n;
    if (clusterOf && c % 2 == 0) { // every other draw stays global: edges across clusters
      const std::int64_t c0 = memberStart[clusterOf[u]], size = memberStart[clusterOf[u] + 1] - c0;
      const std::int64_t w =
          size > 1 ? members[c0 + std::int64_t(mixBits(h) % std::uint64_t(size))] : u;
      if (w != u)
        v = w;
    }
    bucket[u * kBucket + c] = {workingDistance(x + u * d, x + v * d, d, ip), std::int32_t(v)};
  }
  if (lane == 0)
    bucketCount[u] = min(K, kBucket);
}

constexpr int kSeedRows = 32;             ///< rows a seed block holds (and columns a tile)
constexpr int kSeedList = 32;             ///< seeds a row keeps at most (a lane each)
constexpr int kSeedOwnColumns = 2048;     ///< a larger cluster's rows see 2,048 of its members
constexpr int kSeedPartnerColumns = 1024; ///< members of the nearest other cluster seen
constexpr int kSeedThreads = 128;

/// For each cluster, the nearest other one with members (memberStart: count + 1 offsets) by
/// centroid (−1 when none): a warp per cluster.
__global__ void partnerKernel(const float* __restrict__ centroids, int count, int d,
                              const std::int64_t* __restrict__ memberStart,
                              std::int32_t* __restrict__ partner) {
  const int a = int((std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32);
  const int lane = threadIdx.x % 32;
  if (a >= count)
    return;
  // (distance, id) packed so that one min orders both; none: all bits set.
  std::uint64_t best = ~std::uint64_t(0);
  for (int b = lane; b < count; b += 32) {
    if (b == a || memberStart[b + 1] == memberStart[b]) // k-means keeps an emptied centroid
      continue;
    const float dist =
        workingDistance(centroids + std::int64_t(a) * d, centroids + std::int64_t(b) * d, d, false);
    best = min(best, (std::uint64_t(orderedBits(dist)) << 32) | std::uint32_t(b));
  }
  for (int off = 16; off > 0; off /= 2)
    best = min(best, __shfl_xor_sync(kFull, best, off));
  if (lane == 0)
    partner[a] = best == ~std::uint64_t(0) ? -1 : std::int32_t(best & 0xffffffffu);
}

/// The cluster seeds: each row's `L` nearest (working distance, ties by id) among the members of
/// its own k-means cluster and of the nearest other cluster — exact within those columns, a
/// brute-force kNN per cluster — as proposals. On data of high intrinsic dimension (blobs in
/// 128-d) the descent stalls short of its rows' own blob (recall 0.93 on blobs 1M); where k-means
/// split a blob in two, the nearest other cluster is its other half. Proposed once the descent has
/// converged, not as first lists: from exact in-cluster lists the descent never left the
/// clusters on manifold data (recall 0.89 against 0.995 from random members). A block takes 32
/// rows of one cluster and scores 32-column tiles (each thread 1 row × 8 columns, summed in
/// dimension order as workingDistance, so a pair's distance is bitwise the join's and a repeated
/// id sorts next to its copy); a warp keeps 8 rows' sorted lists in registers (an entry a lane)
/// and shifts each value of a tile that beats a row's L-th into place.
template <bool IP>
__global__ void __launch_bounds__(kSeedThreads)
    clusterSeedKernel(const float* __restrict__ x, int d, int L,
                      const ClusterBlock* __restrict__ blocks,
                      const std::int64_t* __restrict__ memberStart,
                      const std::int32_t* __restrict__ members,
                      const std::int32_t* __restrict__ partner, Proposal* __restrict__ bucket,
                      int* __restrict__ bucketCount) {
  constexpr int kRowsPerWarp = kSeedRows / (kSeedThreads / 32);
  __shared__ float qs[kSeedRows][kSeedRows + 1], cs[kSeedRows][kSeedRows + 1]; // [dim][row]
  __shared__ float tile[kSeedRows][kSeedRows + 1];                             // [row][column]
  __shared__ std::int32_t rowId[kSeedRows], colId[kSeedRows];
  const ClusterBlock block = blocks[blockIdx.x];
  const int rows = block.end - block.begin;
  const int t = threadIdx.x, lane = t % 32, w = t / 32;
  if (t < kSeedRows)
    rowId[t] = t < rows ? members[block.begin + t] : kNone;
  // The columns: the own cluster (when larger than kSeedOwnColumns, a slice of its members —
  // listed by row, so a sample of it, not the rows nearest these), then the nearest other
  // cluster's first members (again a sample where it is larger). Clusters hold about 1,000
  // items (n / 1,024, at most 4,096 clusters): the slices matter only beyond 4M items or where
  // k-means leaves a cluster far larger than the rest.
  const std::int64_t a0 = memberStart[block.cluster], a1 = memberStart[block.cluster + 1];
  std::int64_t w0 = a0, w1 = a1;
  if (a1 - a0 > kSeedOwnColumns) {
    w0 = std::int64_t(block.begin) - kSeedOwnColumns / 2;
    w0 = w0 < a0 ? a0 : w0 > a1 - kSeedOwnColumns ? a1 - kSeedOwnColumns : w0;
    w1 = w0 + kSeedOwnColumns;
  }
  const int other = partner ? partner[block.cluster] : -1;
  const std::int64_t p0 = other >= 0 ? memberStart[other] : 0;
  std::int64_t p1 = other >= 0 ? memberStart[other + 1] : 0;
  if (p1 - p0 > kSeedPartnerColumns)
    p1 = p0 + kSeedPartnerColumns;
  const std::int64_t own = w1 - w0, columns = own + (p1 - p0);
  const int r = lane, c8 = w * 8; // this thread's row and first column of a tile
  // Warp w's rows' lists, sorted: lane j holds entry j (j < L).
  float bestD[kRowsPerWarp];
  std::int32_t bestI[kRowsPerWarp];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    bestD[i] = INFINITY;
    bestI[i] = kNone;
  }

  for (std::int64_t c0 = 0; c0 < columns; c0 += kSeedRows) {
    __syncthreads(); // the last tile is merged
    if (t < kSeedRows) {
      const std::int64_t c = c0 + t;
      colId[t] = c < columns ? members[c < own ? w0 + c : p0 + (c - own)] : kNone;
    }
    __syncthreads();
    float acc[8] = {};
    for (int d0 = 0; d0 < d; d0 += kSeedRows) {
      for (int e = t; e < kSeedRows * kSeedRows; e += kSeedThreads) {
        const int row = e / kSeedRows, dim = e % kSeedRows;
        const bool inside = d0 + dim < d;
        qs[dim][row] =
            inside && rowId[row] != kNone ? x[std::int64_t(rowId[row]) * d + d0 + dim] : 0.0f;
        cs[dim][row] =
            inside && colId[row] != kNone ? x[std::int64_t(colId[row]) * d + d0 + dim] : 0.0f;
      }
      __syncthreads();
      const int dims = min(kSeedRows, d - d0);
      for (int s = 0; s < dims; ++s) {
        const float q = qs[s][r];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          if (IP) {
            acc[j] = fmaf(-q, cs[s][c8 + j], acc[j]);
          } else {
            const float e = q - cs[s][c8 + j];
            acc[j] = fmaf(e, e, acc[j]);
          }
        }
      }
      __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const std::int32_t c = colId[c8 + j];
      tile[r][c8 + j] = c == kNone || c == rowId[r] || rowId[r] == kNone ? INFINITY : acc[j];
    }
    __syncthreads();
    // Each value below its row's L-th goes into the list by a shift (few do after the first
    // tiles), nearest first, ties by id.
    const std::int32_t id = colId[lane];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int row = w * kRowsPerWarp + i;
      if (row >= rows)
        continue;
      const float v = tile[row][lane];
      float kth = __shfl_sync(kFull, bestD[i], L - 1);
      for (unsigned todo = __ballot_sync(kFull, v < kth); todo != 0; todo &= todo - 1) {
        const int from = __ffs(todo) - 1;
        const float nv = __shfl_sync(kFull, v, from);
        const std::int32_t nid = __shfl_sync(kFull, id, from);
        if (!(nv < kth))
          continue;
        const bool before =
            lane < L &&
            (bestD[i] < nv || (bestD[i] == nv && std::uint32_t(bestI[i]) < std::uint32_t(nid)));
        const int at = __popc(__ballot_sync(kFull, before));
        const float upD = __shfl_up_sync(kFull, bestD[i], 1);
        const std::int32_t upI = __shfl_up_sync(kFull, bestI[i], 1);
        if (lane == at) {
          bestD[i] = nv;
          bestI[i] = nid;
        } else if (lane > at && lane < L) {
          bestD[i] = upD;
          bestI[i] = upI;
        }
        kth = __shfl_sync(kFull, bestD[i], L - 1);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int row = w * kRowsPerWarp + i;
    if (row >= rows)
      continue;
    const std::int64_t u = rowId[row];
    const bool seeded = lane < L && bestI[i] != kNone;
    if (seeded)
      bucket[u * kBucket + lane] = {bestD[i], bestI[i]};
    const unsigned ballot = __ballot_sync(kFull, seeded);
    if (lane == 0)
      bucketCount[u] = __popc(ballot);
  }
}

/// GGM's start (GNND §5.1) for merging the graphs of rows [0, split) and [split, n): each node's
/// own graph (ids in its part) and K random draws from the other part, as proposals.
__global__ void warmSeedKernel(const float* __restrict__ x, std::int64_t n, int d, bool ip, int K,
                               std::uint64_t seed, const std::int32_t* __restrict__ initial,
                               int width, std::int64_t split,
                               const std::int32_t* __restrict__ clusterOf,
                               const std::int64_t* __restrict__ memberStart,
                               const std::int32_t* __restrict__ members,
                               Proposal* __restrict__ bucket, int* __restrict__ bucketCount) {
  const std::int64_t u = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (u >= n)
    return;
  const std::int64_t lo = u < split ? split : 0, hi = u < split ? n : split;
  for (int c = lane; c < width + K; c += 32) {
    std::int64_t v;
    if (c < width) {
      v = initial[u * width + c];
      if (v < 0 || v == u)
        continue;
    } else {
      const std::uint64_t h = mixBits(seed ^ mixBits(std::uint64_t(u) * 64 + std::uint64_t(c)));
      v = lo + std::int64_t(h % std::uint64_t(hi - lo));
      if (clusterOf && c % 2 == 0) {
        // From the node's own cluster, in the other part: members are listed by cluster and, in
        // a cluster, by row, so the other part's members are one run found by bisection.
        std::int64_t a = memberStart[clusterOf[u]], b = memberStart[clusterOf[u] + 1];
        std::int64_t first = a, last = b; // first member ≥ split
        while (first < last) {
          const std::int64_t mid = (first + last) / 2;
          if (members[mid] < split)
            first = mid + 1;
          else
            last = mid;
        }
        if (u < split)
          a = first;
        else
          b = first;
        if (b > a)
          v = members[a + std::int64_t(mixBits(h) % std::uint64_t(b - a))];
      }
    }
    const int slot = atomicAdd(&bucketCount[u], 1);
    if (slot < kBucket)
      bucket[u * kBucket + slot] = {workingDistance(x + u * d, x + v * d, d, ip), std::int32_t(v)};
  }
}

/// After the warm start's merge: entries from the node's own part were joined when its graph was
/// built, so they start OLD; only the other part's are NEW.
__global__ void ownPartOldKernel(std::int64_t n, int K, std::int64_t split,
                                 std::int32_t* __restrict__ listIds) {
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n * K)
    return;
  const std::int64_t u = e / K;
  const std::int32_t id = listIds[e];
  if (id == kNone)
    return;
  const std::int64_t v = std::int64_t(std::uint32_t(id) & ~kNew);
  if ((u < split) == (v < split))
    listIds[e] = std::int32_t(v);
}

/// One warp per node: list ∪ bucket, sorted, repeated ids dropped, the best K kept. Entries that
/// came from the bucket are NEW and counted as changes. The sort spans the next power of two
/// above list and proposals (late iterations bring few). A pair's working distance is the same
/// bitwise wherever it was computed (workingDistance), so an id listed twice sorts as adjacent
/// copies and only the first is kept.
__global__ void mergeKernel(std::int64_t n, int K, std::int32_t* __restrict__ listIds,
                            float* __restrict__ listDist, const Proposal* __restrict__ bucket,
                            int* __restrict__ bucketCount,
                            unsigned long long* __restrict__ changes) {
  __shared__ float dist[kMergeWarps][kMergeSlots];
  __shared__ std::int32_t id[kMergeWarps][kMergeSlots];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t u = std::int64_t(blockIdx.x) * kMergeWarps + w;
  if (u >= n)
    return;
  const int proposals = min(bucketCount[u], kBucket);
  if (proposals == 0)
    return;
  float* D = dist[w];
  std::int32_t* I = id[w];
  int slots = 32;
  while (slots < K + proposals)
    slots <<= 1;
  for (int s = lane; s < slots; s += 32) {
    if (s < K) {
      I[s] = listIds[u * K + s];
      D[s] = I[s] == kNone ? INFINITY : listDist[u * K + s];
    } else if (s < K + proposals) {
      const Proposal p = bucket[u * kBucket + (s - K)];
      I[s] = std::int32_t(std::uint32_t(p.id) | kNew | kFromBucket);
      D[s] = p.dist;
    } else {
      I[s] = kNone;
      D[s] = INFINITY;
    }
  }
  __syncwarp();
  warpSort(D, I, slots, lane);
  // An entry is kept when the one before it has another id; then the first K kept survive.
  int keptBefore = 0;
  unsigned long long changed = 0;
  for (int base = 0; base < slots && keptBefore < K; base += 32) {
    const int s = base + lane;
    const std::int32_t mine = I[s];
    const std::int32_t plain = mine == kNone ? kNone : std::int32_t(std::uint32_t(mine) & kIdBits);
    const bool keep = mine != kNone && !isinf(D[s]) &&
                      (s == 0 || std::int32_t(std::uint32_t(I[s - 1]) & kIdBits) != plain);
    const unsigned ballot = __ballot_sync(kFull, keep);
    const int rank = keptBefore + __popc(ballot & ((1u << lane) - 1));
    __syncwarp();
    if (keep && rank < K) {
      const bool fromBucket = (std::uint32_t(mine) & kFromBucket) != 0;
      listIds[u * K + rank] = std::int32_t(std::uint32_t(plain) | (std::uint32_t(mine) & kNew));
      listDist[u * K + rank] = D[s];
      changed += fromBucket ? 1 : 0;
    }
    keptBefore += __popc(ballot);
  }
  __syncwarp();
  for (int r = keptBefore + lane; r < K; r += 32) {
    listIds[u * K + r] = kNone;
    listDist[u * K + r] = INFINITY;
  }
  for (int off = 16; off > 0; off /= 2)
    changed += __shfl_xor_sync(kFull, changed, off);
  if (lane == 0) {
    bucketCount[u] = 0;
    if (changed)
      atomicAdd(changes, changed);
  }
}

/// One warp per node: its first S NEW entries (then marked OLD) and first S OLD ones, and the
/// reverse samples they imply.
template <int S>
__global__ void sampleKernel(std::int64_t n, int K, std::int32_t* __restrict__ listIds,
                             std::int32_t* __restrict__ samples, int* __restrict__ reverseCount,
                             std::int32_t* __restrict__ reverse) {
  const std::int64_t u = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (u >= n)
    return;
  // samples[u]: [0, S) NEW, [S, 2S) OLD (−1 where fewer); reverse[v]: [0, S) NEW, [S, 2S) OLD.
  int newTaken = 0, oldTaken = 0;
  for (int base = 0; base < K; base += 32) {
    const int c = base + lane;
    const std::int32_t e = c < K ? listIds[u * K + c] : kNone;
    const bool isNew = e != kNone && (std::uint32_t(e) & kNew);
    const bool isOld = e != kNone && !(std::uint32_t(e) & kNew);
    const unsigned nb = __ballot_sync(kFull, isNew), ob = __ballot_sync(kFull, isOld);
    const int nr = newTaken + __popc(nb & ((1u << lane) - 1));
    const int orank = oldTaken + __popc(ob & ((1u << lane) - 1));
    const std::int32_t v = std::int32_t(std::uint32_t(e) & ~kNew);
    if (isNew && nr < S) {
      samples[u * 2 * S + nr] = v;
      listIds[u * K + c] = v; // now OLD
      const int slot = atomicAdd(&reverseCount[2 * v], 1);
      if (slot < S)
        reverse[std::int64_t(v) * 2 * S + slot] = std::int32_t(u);
    }
    if (isOld && orank < S) {
      samples[u * 2 * S + S + orank] = v;
      const int slot = atomicAdd(&reverseCount[2 * v + 1], 1);
      if (slot < S)
        reverse[std::int64_t(v) * 2 * S + S + slot] = std::int32_t(u);
    }
    newTaken += __popc(nb);
    oldTaken += __popc(ob);
  }
  for (int c = min(newTaken, S) + lane; c < S; c += 32)
    samples[u * 2 * S + c] = kNone;
  for (int c = min(oldTaken, S) + lane; c < S; c += 32)
    samples[u * 2 * S + S + c] = kNone;
}

/// One block per node: its NEW ∪ reverse NEW and OLD ∪ reverse OLD candidates, their vectors
/// transposed in shared memory (dimension-major, rows of 4S + 1 floats: stores and reads without
/// bank conflicts), the 2S × 4S matrix of NEW × all distances computed in register tiles of
/// S/4 × S/4 (as a GEMM's micro-kernel: each shared read feeds S/4 pairs); NEW×NEW pairs (a < b)
/// and NEW×OLD pairs that beat an end's current worst are proposed to that end.
/// kCrossOnly (GGM, GNND §5.1: "only the distances between objects in different subsets"): in a
/// merge only cross-part entries are ever NEW, so a node's NEW and reverse NEW candidates all lie
/// in the other part — NEW×NEW pairs are skipped, and so are proposals within one part (rows
/// below `split` form one part).
template <int S, bool IP, bool kCrossOnly>
__global__ void __launch_bounds__(kJoinThreads)
    joinKernel(const float* __restrict__ x, std::int64_t n, int d, int K,
               const std::int32_t* __restrict__ samples, const int* __restrict__ reverseCount,
               const std::int32_t* __restrict__ reverse, const float* __restrict__ listDist,
               Proposal* __restrict__ bucket, int* __restrict__ bucketCount, std::int64_t split) {
  constexpr int kCand = 4 * S, kNewCount = 2 * S, kStride = kCand + 1, kTile = S / 4;
  static_assert(kJoinThreads == 128 && kNewCount == 8 * kTile && kCand == 16 * kTile,
                "8 × 16 threads cover the 2S × 4S matrix");
  extern __shared__ float vectors[]; // d × (4S + 1), dimension-major
  __shared__ std::int32_t cand[kCand];
  __shared__ float worst[kCand];
  const std::int64_t u = blockIdx.x;
  // Candidates: [0, 2S) NEW (own, then reverse), [2S, 4S) OLD (own, then reverse).
  for (int c = threadIdx.x; c < kCand; c += blockDim.x) {
    const int group = c / S; // 0 own NEW, 1 reverse NEW, 2 own OLD, 3 reverse OLD
    const int slot = c % S;
    std::int32_t v = kNone;
    if (group == 0)
      v = samples[u * 2 * S + slot];
    else if (group == 2)
      v = samples[u * 2 * S + S + slot];
    else {
      const int old = group == 3 ? 1 : 0;
      if (slot < min(reverseCount[2 * u + old], S))
        v = reverse[u * 2 * S + old * S + slot];
    }
    cand[c] = v;
    worst[c] = v == kNone ? -INFINITY : listDist[std::int64_t(v) * K + K - 1];
  }
  __syncthreads();
  // The valid NEW and OLD candidates moved to the front of their halves: late iterations hold
  // few NEW ones, and rows past them are skipped below (a node with none joins nothing).
  __shared__ int newCount;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    constexpr int kChunks = kNewCount / 32;
    for (int half = 0; half < 2; ++half) {
      std::int32_t id[kChunks];
      float w[kChunks];
#pragma unroll
      for (int q = 0; q < kChunks; ++q) {
        id[q] = cand[half * kNewCount + 32 * q + lane];
        w[q] = worst[half * kNewCount + 32 * q + lane];
      }
      __syncwarp();
      int count = 0;
#pragma unroll
      for (int q = 0; q < kChunks; ++q) {
        const bool valid = id[q] != kNone;
        const unsigned mask = __ballot_sync(kFull, valid);
        if (valid) {
          const int at = half * kNewCount + count + __popc(mask & ((1u << lane) - 1));
          cand[at] = id[q];
          worst[at] = w[q];
        }
        count += __popc(mask);
      }
      __syncwarp();
      for (int c = count + lane; c < kNewCount; c += 32) {
        cand[half * kNewCount + c] = kNone;
        worst[half * kNewCount + c] = -INFINITY;
      }
      if (half == 0 && lane == 0)
        newCount = count;
    }
  }
  __syncthreads();
  if (newCount == 0)
    return;
  // Each warp moves 4 rows × 128 dimensions per step: 16 loads in flight a lane.
  constexpr int kWarps = kJoinThreads / 32;
  for (int c0 = warp; c0 < kCand; c0 += 4 * kWarps)
    for (int t0 = 0; t0 < d; t0 += 128) {
      float v[4][4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int c = c0 + r * kWarps;
        const std::int32_t id = c < kCand ? cand[c] : kNone;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int t = t0 + lane + 32 * j;
          v[r][j] = id != kNone && t < d ? x[std::int64_t(id) * d + t] : 0.0f;
        }
      }
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int c = c0 + r * kWarps, t = t0 + lane + 32 * j;
          if (c < kCand && t < d)
            vectors[t * kStride + c] = v[r][j];
        }
    }
  __syncthreads();
  // Thread (ty, tx) scores rows ty·S/4 … (its NEW candidates, contiguous: a thread past the
  // valid ones has nothing to do) against columns tx + 16j.
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  if (ty * kTile >= newCount)
    return;
  // Columns tx + 16j: j < kTile/2 are NEW, the rest OLD.
  constexpr int jBegin = kCrossOnly ? kTile / 2 : 0;
  float acc[kTile][kTile];
#pragma unroll
  for (int i = 0; i < kTile; ++i)
#pragma unroll
    for (int j = jBegin; j < kTile; ++j)
      acc[i][j] = 0;
  for (int t = 0; t < d; ++t) {
    float a[kTile], b[kTile];
#pragma unroll
    for (int i = 0; i < kTile; ++i)
      a[i] = vectors[t * kStride + ty * kTile + i];
#pragma unroll
    for (int j = jBegin; j < kTile; ++j)
      b[j] = vectors[t * kStride + tx + 16 * j];
#pragma unroll
    for (int i = 0; i < kTile; ++i)
#pragma unroll
      for (int j = jBegin; j < kTile; ++j) {
        if constexpr (IP) {
          acc[i][j] = fmaf(-a[i], b[j], acc[i][j]);
        } else {
          const float e = a[i] - b[j];
          acc[i][j] = fmaf(e, e, acc[i][j]);
        }
      }
  }
#pragma unroll
  for (int i = 0; i < kTile; ++i)
#pragma unroll
    for (int j = jBegin; j < kTile; ++j) {
      const int ra = ty * kTile + i, rb = tx + 16 * j;
      if (rb < kNewCount && rb <= ra) // NEW×NEW once, as a < b
        continue;
      const std::int32_t ia = cand[ra], ib = cand[rb];
      if (ia == kNone || ib == kNone || ia == ib)
        continue;
      if (kCrossOnly && (ia < split) == (ib < split))
        continue;
      const float dist = acc[i][j];
      if (dist < worst[ra]) {
        const int slot = atomicAdd(&bucketCount[ia], 1);
        if (slot < kBucket)
          bucket[std::int64_t(ia) * kBucket + slot] = {dist, ib};
      }
      if (dist < worst[rb]) {
        const int slot = atomicAdd(&bucketCount[ib], 1);
        if (slot < kBucket)
          bucket[std::int64_t(ib) * kBucket + slot] = {dist, ia};
      }
    }
}

/// One warp per node: exact float64 distances of the list (raw data), sorted with ties by id,
/// the first k written out.
__global__ void finishKernel(const float* __restrict__ raw, std::int64_t n, int d, int metric,
                             int K, int k, const std::int32_t* __restrict__ listIds,
                             const float* __restrict__ listDist, std::int32_t* __restrict__ outIds,
                             float* __restrict__ outDist) {
  __shared__ double dist[kMergeWarps][kMergeSlots];
  __shared__ std::int32_t id[kMergeWarps][kMergeSlots];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t u = std::int64_t(blockIdx.x) * kMergeWarps + w;
  if (u >= n)
    return;
  double* D = dist[w];
  std::int32_t* I = id[w];
  int slots = 2;
  while (slots < K)
    slots <<= 1;
  // L2: the lists hold float32 sums of squares (relative error ≤ γ = (d + 4)u), sorted; entries
  // beyond k-th · (1 + γ)/(1 − γ) cannot reach the first k and are not re-checked.
  const double gamma = (d + 4) * 1.01 / double(1 << 24);
  const float kth = listDist[u * K + min(k, K) - 1];
  const double reach = metric == int(Metric::L2) && isfinite(kth)
                           ? double(kth) * (1 + gamma) / (1 - gamma) * (1 + 1e-7) + 1e-30
                           : INFINITY;
  scoreAndSort(
      slots, 0, 1, lane, 32, D, I,
      [&](int c) {
        const std::int32_t e = c < K ? listIds[u * K + c] : kNone;
        const std::int32_t v = e == kNone ? kNone : std::int32_t(std::uint32_t(e) & ~kNew);
        if (v == kNone || double(listDist[u * K + c]) > reach)
          return Scored{INFINITY, v};
        return Scored{warpExactDistance(raw + u * d, raw + std::int64_t(v) * d, d, metric, lane),
                      v};
      },
      [] { __syncwarp(); });
  // The first k distinct ids (a list never holds one twice; checked here once, as the result's
  // promise).
  int keptBefore = 0;
  for (int base = 0; base < slots && keptBefore < k; base += 32) {
    const int c = base + lane;
    bool keep = c < slots && I[c] != kNone && !isinf(D[c]);
    for (int t = 0; t < c && keep; ++t)
      keep = I[t] != I[c];
    const unsigned ballot = __ballot_sync(kFull, keep);
    const int rank = keptBefore + __popc(ballot & ((1u << lane) - 1));
    if (keep && rank < k) {
      outIds[u * k + rank] = I[c];
      outDist[u * k + rank] = float(D[c]);
    }
    keptBefore += __popc(ballot);
  }
  for (int r = keptBefore + lane; r < k; r += 32) {
    outIds[u * k + r] = kNone;
    outDist[u * k + r] = INFINITY;
  }
}

/// The first k entries of each list as they stand (no float64 re-check): a shard's ids for the
/// next merge.
__global__ void copyListsKernel(std::int64_t n, int K, int k,
                                const std::int32_t* __restrict__ listIds,
                                const float* __restrict__ listDist,
                                std::int32_t* __restrict__ outIds, float* __restrict__ outDist) {
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n * k)
    return;
  const std::int64_t u = e / k, c = e % k;
  const std::int32_t id = listIds[u * K + c];
  outIds[e] = id == kNone ? kNone : std::int32_t(std::uint32_t(id) & ~kNew);
  outDist[e] = listDist[u * K + c];
}

__global__ void normaliseKernel(const float* __restrict__ raw, std::int64_t n, int d,
                                float* __restrict__ out) {
  const std::int64_t u = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (u >= n)
    return;
  const double scale = warpCosineScale(raw + u * d, d, int(Metric::Cosine), lane);
  for (int t = lane; t < d; t += 32)
    out[u * d + t] = float(raw[u * d + t] * scale);
}

unsigned warpsToBlocks(std::int64_t warps, int warpsPerBlock) {
  return unsigned((warps + warpsPerBlock - 1) / warpsPerBlock);
}

} // namespace

std::vector<float> gnndCodebook(const MatrixView<float>& sample, Metric metric, int count,
                                const Context& context) {
  NEARSCAPE_EXPECTS(count >= 1 && count <= sample.rows, "more clusters than sample rows");
  const ResourceLease resources = leaseResources(context);
  const std::int64_t m = sample.rows;
  const int d = int(sample.cols);
  DeviceBuffer<float> rows = uploaded(sample.data, std::size_t(sample.size()));
  if (metric == Metric::Cosine) {
    DeviceBuffer<float> normalised{std::size_t(sample.size())};
    normaliseKernel<<<warpsToBlocks(m, 8), 256>>>(rows.get(), m, d, normalised.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    rows = std::move(normalised);
  }
  const cublasHandle_t cublas = resources->cublas();
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_TF32_TENSOR_OP_MATH));
  const Clustering km = cluster(cublas, rows.get(), m, d, count, context.seed, nullptr);
  std::vector<float> centroids(std::size_t(count) * std::size_t(d));
  copyToHost(centroids.data(), km.centroids.get(), sizeof(float) * centroids.size());
  return centroids;
}

KnnResult gnndGraph(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                    JobControl& job, const NnDescentParams& params,
                    const NnDescentProgress& progress, bool headStart, const GnndWarmStart& warm,
                    const GnndClusters& clusters) {
  const auto started = std::chrono::steady_clock::now();
  PhaseClock clock{"GNND", context};
  NEARSCAPE_EXPECTS(!warm.second || (warm.split == data.rows && warm.second->cols == data.cols),
                    "the second part must follow the first");
  const std::int64_t n = data.rows + (warm.second ? warm.second->rows : 0);
  const int d = int(data.cols);
  // Lists a little longer than k converge further; at least 16 when the data allows.
  const int asked = params.listSize > 0 ? params.listSize : std::min(2 * k, 32);
  const int K = int(std::min<std::int64_t>(n - 1, std::max(k, asked)));
  NEARSCAPE_GPU_LIMIT(k >= 1 && K <= 64, "the GPU NN-Descent takes k ≤ 64");
  NEARSCAPE_GPU_LIMIT(n < (std::int64_t(1) << 30),
                      "the GPU NN-Descent takes fewer than 2^30 items");
  auto joinBytes = [d](int s) { return sizeof(float) * std::size_t(4 * s + 1) * std::size_t(d); };
  NEARSCAPE_GPU_LIMIT(joinBytes(16) <= 200 * 1024, "the GPU NN-Descent takes d ≤ 800");
  // Samples of 16 or 32 (the join's instances): 32 for lists of 32 and more, unless asked for
  // fewer (params.sampleSize, rounded to one of the two).
  const bool wide = params.sampleSize > 0 ? params.sampleSize > 16 : K >= 32;
  const int S = wide && joinBytes(32) <= 200 * 1024 ? 32 : 16;
  const std::size_t joinShared = joinBytes(S);
  const ResourceLease resources = leaseResources(context);

  DeviceBuffer<float> raw{std::size_t(n) * std::size_t(d)};
  copyToDevice(raw.get(), data.data, sizeof(float) * std::size_t(data.rows * d));
  if (warm.second)
    copyToDevice(raw.get() + data.rows * d, warm.second->data,
                 sizeof(float) * std::size_t(warm.second->rows * d));
  DeviceBuffer<float> normalised{metric == Metric::Cosine ? std::size_t(n) * std::size_t(d) : 0};
  if (metric == Metric::Cosine) {
    normaliseKernel<<<warpsToBlocks(n, 8), 256>>>(raw.get(), n, d, normalised.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
  const float* x = metric == Metric::Cosine ? normalised.get() : raw.get();

  DeviceBuffer<std::int32_t> listIds{std::size_t(n) * std::size_t(K)};
  DeviceBuffer<float> listDist{std::size_t(n) * std::size_t(K)};
  DeviceBuffer<Proposal> bucket{std::size_t(n) * kBucket};
  DeviceBuffer<int> bucketCount{std::size_t(n)};
  DeviceBuffer<std::int32_t> samples{std::size_t(n) * 2 * std::size_t(S)};
  DeviceBuffer<std::int32_t> reverse{std::size_t(n) * 2 * std::size_t(S)};
  DeviceBuffer<int> reverseCount{std::size_t(n) * 2};
  DeviceBuffer<unsigned long long> changes{1};
  NEARSCAPE_CUDA_CHECK(cudaMemset(listIds.get(), 0xff, sizeof(std::int32_t) * std::size_t(n) * K));
  const auto sample = S == 32 ? sampleKernel<32> : sampleKernel<16>;
  const bool ip = metric != Metric::L2; // cosine ranks by −dot of normalised rows
  const bool cross = warm.initial != nullptr;
  const auto join =
      S == 32 ? (ip ? (cross ? joinKernel<32, true, true> : joinKernel<32, true, false>)
                    : (cross ? joinKernel<32, false, true> : joinKernel<32, false, false>))
              : (ip ? (cross ? joinKernel<16, true, true> : joinKernel<16, true, false>)
                    : (cross ? joinKernel<16, false, true> : joinKernel<16, false, false>));
  NEARSCAPE_CUDA_CHECK(
      cudaFuncSetAttribute(join, cudaFuncAttributeMaxDynamicSharedMemorySize, int(joinShared)));

  // The head start: a coarse k-means on the device (about 1,000 items a cluster); its members
  // listed cluster by cluster for the seeding.
  DeviceBuffer<std::int32_t> clusterOf, partner;
  ClusterOrder members;
  // A build's converged lists meet each item's nearest in its cluster and the nearest other one.
  const bool clusterSeeds = headStart && params.clusterSeeds && !warm.initial;
  clock.mark("upload");
  if (headStart) {
    clusterOf = DeviceBuffer<std::int32_t>(std::size_t(n));
    int count = clusters.count;
    Clustering km;
    if (clusters.labels) { // a merge of builds that shared the centroids: their rows' clusters
      copyToDevice(clusterOf.get(), clusters.labels, sizeof(std::int32_t) * std::size_t(data.rows));
      if (warm.second)
        copyToDevice(clusterOf.get() + data.rows, clusters.secondLabels,
                     sizeof(std::int32_t) * std::size_t(warm.second->rows));
    } else {
      const cublasHandle_t cublas = resources->cublas();
      NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_TF32_TENSOR_OP_MATH));
      if (clusters.centroids) {
        km.count = count;
        km.centroids = uploaded(clusters.centroids->data(), clusters.centroids->size());
        km.norms = DeviceBuffer<float>(std::size_t(count));
        km.refreshNorms(d, nullptr);
      } else {
        count = int(std::clamp<std::int64_t>(n / 1024, 1, 4096));
        km = cluster(cublas, x, n, d, count, context.seed, nullptr);
      }
      km.assign(cublas, x, n, d, clusterOf.get(), nullptr);
      if (clusters.labelsOut)
        copyToHost(clusters.labelsOut, clusterOf.get(), sizeof(std::int32_t) * std::size_t(n));
    }
    members = orderByCluster(nullptr, clusterOf.get(), n, d, count, nullptr);
    if (clusterSeeds && count > 1 && km.centroids.get()) {
      partner = DeviceBuffer<std::int32_t>(std::size_t(count));
      partnerKernel<<<warpsToBlocks(count, 8), 256>>>(km.centroids.get(), count, d,
                                                      members.offsets.get(), partner.get());
      NEARSCAPE_CUDA_CHECK_LAUNCH();
    }
  }
  clock.mark("head start");

  const unsigned warpBlocks = warpsToBlocks(n, 8), mergeBlocks = warpsToBlocks(n, kMergeWarps);
  if (warm.initial) {
    const std::int64_t width = warm.initial->cols;
    DeviceBuffer<std::int32_t> initial{std::size_t(n) * std::size_t(width)};
    copyToDevice(initial.get(), warm.initial->data, sizeof(std::int32_t) * std::size_t(n * width));
    if (warm.uploaded)
      warm.uploaded();
    NEARSCAPE_CUDA_CHECK(cudaMemset(bucketCount.get(), 0, sizeof(int) * std::size_t(n)));
    warmSeedKernel<<<warpBlocks, 256>>>(
        x, n, d, ip, K, mixBits(context.seed), initial.get(), int(width), warm.split,
        headStart ? clusterOf.get() : nullptr, members.offsets.get(), members.ids.get(),
        bucket.get(), bucketCount.get());
  } else {
    if (warm.uploaded)
      warm.uploaded();
    seedKernel<<<warpBlocks, 256>>>(x, n, d, ip, K, mixBits(context.seed),
                                    headStart ? clusterOf.get() : nullptr, members.offsets.get(),
                                    members.ids.get(), bucket.get(), bucketCount.get());
  }
  NEARSCAPE_CUDA_CHECK(cudaMemset(changes.get(), 0, sizeof(unsigned long long)));
  mergeKernel<<<mergeBlocks, kMergeWarps * 32>>>(n, K, listIds.get(), listDist.get(), bucket.get(),
                                                 bucketCount.get(), changes.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  if (warm.initial) {
    ownPartOldKernel<<<unsigned((n * K + 255) / 256), 256>>>(n, K, warm.split, listIds.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
  // A merge starts from finished lists and a head start into the other part: a few iterations
  // (NnDescentParams::mergeIterations) suffice.
  const int maxIterations =
      warm.initial ? std::min(params.maxIterations, params.mergeIterations) : params.maxIterations;
  // The cluster seeds' blocks: 32 rows of one cluster each.
  const std::vector<ClusterBlock> seedBlocks =
      clusterSeeds ? clusterBlocks(members.hostOffsets, kSeedRows) : std::vector<ClusterBlock>{};
  const DeviceBuffer<ClusterBlock> deviceSeedBlocks =
      clusterSeeds ? uploaded(seedBlocks.data(), seedBlocks.size()) : DeviceBuffer<ClusterBlock>{};
  bool seeded = false;
  // The bucket's proposals into the lists; returns how many entries they changed.
  const auto mergeBucket = [&]() -> std::int64_t {
    NEARSCAPE_CUDA_CHECK(cudaMemset(changes.get(), 0, sizeof(unsigned long long)));
    mergeKernel<<<mergeBlocks, kMergeWarps * 32>>>(n, K, listIds.get(), listDist.get(),
                                                   bucket.get(), bucketCount.get(), changes.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    unsigned long long changed = 0;
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(&changed, changes.get(), sizeof(changed), cudaMemcpyDeviceToHost));
    return std::int64_t(changed);
  };
  const auto iterate = [&](int iteration) -> std::int64_t {
    NEARSCAPE_CUDA_CHECK(cudaMemset(reverseCount.get(), 0, sizeof(int) * std::size_t(n) * 2));
    clock.mark("merge");
    sample<<<warpBlocks, 256>>>(n, K, listIds.get(), samples.get(), reverseCount.get(),
                                reverse.get());
    clock.mark("sample");
    join<<<unsigned(n), kJoinThreads, joinShared>>>(x, n, d, K, samples.get(), reverseCount.get(),
                                                    reverse.get(), listDist.get(), bucket.get(),
                                                    bucketCount.get(), warm.split);
    clock.mark("join");
    std::int64_t changed = mergeBucket();
    // Converged (or at the last iteration): the cluster seeds, once; what they improve counts as
    // changes, so the descent goes on to spread it.
    if (clusterSeeds && !seeded &&
        (double(changed) < params.delta * double(n * K) || iteration + 1 == maxIterations)) {
      seeded = true;
      const auto seeds = ip ? clusterSeedKernel<true> : clusterSeedKernel<false>;
      seeds<<<unsigned(seedBlocks.size()), kSeedThreads>>>(
          x, d, std::min(K, kSeedList), deviceSeedBlocks.get(), members.offsets.get(),
          members.ids.get(), partner.get(), bucket.get(), bucketCount.get());
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      changed += mergeBucket();
      clock.mark("cluster seeds");
    }
    return changed;
  };
  const int iteration =
      knn::runNnDescentLoop(maxIterations, n * K, params, job, progress, "GNND", iterate);
  clock.mark("merge");
  DeviceBuffer<std::int32_t> outIds{std::size_t(n) * std::size_t(k)};
  DeviceBuffer<float> outDist{std::size_t(n) * std::size_t(k)};
  if (params.exactFinish)
    finishKernel<<<mergeBlocks, kMergeWarps * 32>>>(raw.get(), n, d, int(metric), K, k,
                                                    listIds.get(), listDist.get(), outIds.get(),
                                                    outDist.get());
  else
    copyListsKernel<<<unsigned((n * k + 255) / 256), 256>>>(n, K, k, listIds.get(), listDist.get(),
                                                            outIds.get(), outDist.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  // Host buffers left uninitialised: the copies fill them (zero-filling 2 × 208 MB took about
  // 100 ms a merge of 5.2M rows).
  const std::size_t entries = std::size_t(n) * std::size_t(k);
  const std::shared_ptr<std::int32_t[]> ids(new std::int32_t[entries]);
  const std::shared_ptr<float[]> dists(new float[entries]);
  copyToHost(ids.get(), outIds.get(), sizeof(std::int32_t) * entries);
  copyToHost(dists.get(), outDist.get(), sizeof(float) * entries);
  clock.mark("finish");
  // A row the descent left short of k (tiny data, unlucky draws) gets its exact neighbours.
  std::vector<std::int64_t> shortRows;
  for (std::int64_t u = 0; u < n; ++u)
    if (ids[std::size_t(u * k + k - 1)] < 0)
      shortRows.push_back(u);
  if (!shortRows.empty()) {
    std::vector<float> joined; // both parts in one block, for the reference
    MatrixView<float> all = data;
    if (warm.second) {
      joined.assign(data.data, data.data + data.size());
      joined.insert(joined.end(), warm.second->data, warm.second->data + warm.second->size());
      all = {joined.data(), n, d};
    }
    const KnnResult exact =
        knnReference(all, all, k, metric, true, shortRows, effectiveThreads(context));
    for (std::size_t r = 0; r < shortRows.size(); ++r)
      for (int c = 0; c < k; ++c) {
        ids[std::size_t(shortRows[r] * k + c)] = exact.ids.row(std::int64_t(r))[c];
        dists[std::size_t(shortRows[r] * k + c)] = exact.distances.row(std::int64_t(r))[c];
      }
  }
  KnnResult result;
  result.ids = Matrix<std::int32_t>(ids.get(), n, k, ids);
  result.distances = Matrix<float>(dists.get(), n, k, dists);
  result.backend = Backend::Cuda;
  result.report.device = resources->properties().name;
  result.report.setMethod(warm.initial ? KnnMethod::GgmMerge : KnnMethod::Gnnd);
  result.report.iterations = iteration;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace nearscape::cuda
