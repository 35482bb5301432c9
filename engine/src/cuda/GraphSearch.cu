// The graph index's search on the GPU, after SONG (§IV):
// one warp per query; its candidate pool (SONG's bounded priority queue and top-k list, kept as
// one sorted array as CAGRA does), its visited set (SONG §IV.B's open-addressing hash in shared
// memory) and the query live in shared memory. Each step expands the best unexpanded node: its
// neighbours are filtered through the hash, their distances computed by teams of lanes, sorted
// with a warp bitonic network and merged into the pool in one parallel merge (SONG's "selected
// insertion": only candidates better than the pool's worst get in). When the hash fills, it is
// rebuilt from the pool (SONG's "visited deletion": a node that left the pool can never re-enter
// it, since the pool's worst only improves). Up to 64 queries a call, a block per query instead
// expands several nodes at once (graphSearchWideKernel below).
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaIndex.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/Upload.cuh"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>

namespace nearscape::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr std::uint32_t kExpanded = 0x80000000u; ///< flag bit on a pool entry's id
constexpr std::uint32_t kNoId = 0x7fffffffu;     ///< an empty pool slot
constexpr std::uint32_t kFree = 0xffffffffu;     ///< an empty hash slot
constexpr int kWarps = 4;                        ///< queries per block

struct Entry {
  float score;
  std::uint32_t id; // with kExpanded
};

__device__ __forceinline__ bool lessThan(float as, std::uint32_t ai, float bs, std::uint32_t bi) {
  ai &= ~kExpanded, bi &= ~kExpanded;
  return as < bs || (as == bs && ai < bi);
}

/// True when `id` was not in the table (and is now).
__device__ __forceinline__ bool hashInsert(std::uint32_t* table, int bits, std::uint32_t id) {
  const std::uint32_t mask = (1u << bits) - 1;
  std::uint32_t h = (id * 2654435761u) >> (32 - bits);
  for (std::uint32_t probe = 0; probe <= mask; ++probe, h = (h + 1) & mask) {
    const std::uint32_t prev = atomicCAS(table + h, kFree, id);
    if (prev == kFree)
      return true;
    if (prev == id)
      return false;
  }
  return false;
}

/// Per-warp shared memory: query (dPad floats), two pools of ef, the hash, the chunk.
struct WarpMemory {
  float* query;
  Entry* pool;
  Entry* spare;
  std::uint32_t* table;
  Entry* chunk;
};

__host__ __device__ inline std::size_t warpBytes(int dPad, int ef, int hashBits) {
  return std::size_t(dPad) * 4 + 2 * std::size_t(ef) * 8 + (std::size_t(1) << hashBits) * 4 +
         32 * 8;
}

template <int TEAM>
__device__ __forceinline__ void
scoreChunk(const float* __restrict__ x, int d, bool vec4, bool innerProduct,
           const std::int32_t* __restrict__ global, const WarpMemory& m, int count, int lane) {
  constexpr int kTeams = 32 / TEAM;
  for (int base = 0; base < count; base += kTeams) {
    const int c = base + lane / TEAM;
    const int t = lane % TEAM;
    float partial = 0;
    if (c < count) {
      const std::uint32_t id = m.chunk[c].id;
      const float* row =
          x + std::size_t(global ? std::uint32_t(__ldg(global + id)) : id) * std::size_t(d);
      if (vec4) {
        const float4* r4 = reinterpret_cast<const float4*>(row);
        const float4* q4 = reinterpret_cast<const float4*>(m.query);
        for (int i = t; i < d / 4; i += TEAM) {
          const float4 a = __ldg(r4 + i), b = q4[i];
          partial += innerProduct ? a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w
                                  : (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) +
                                        (a.z - b.z) * (a.z - b.z) + (a.w - b.w) * (a.w - b.w);
        }
      } else {
        for (int i = t; i < d; i += TEAM) {
          const float a = __ldg(row + i), b = m.query[i];
          partial += innerProduct ? a * b : (a - b) * (a - b);
        }
      }
    }
#pragma unroll
    for (int off = TEAM / 2; off > 0; off /= 2)
      partial += __shfl_xor_sync(kFull, partial, off);
    if (c < count && t == 0)
      m.chunk[c].score = innerProduct ? -partial : partial;
  }
  __syncwarp();
}

/// Sorts one (score, id) per lane ascending across the warp (bitonic network).
__device__ __forceinline__ void warpSort(float& s, std::uint32_t& id, int lane) {
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1)
#pragma unroll
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      const float os = __shfl_xor_sync(kFull, s, stride);
      const std::uint32_t oi = __shfl_xor_sync(kFull, id, stride);
      const bool up = size == 32 || (lane & size) == 0;
      const bool wantMin = ((lane & stride) == 0) == up;
      const bool take = wantMin ? lessThan(os, oi, s, id) : lessThan(s, id, os, oi);
      if (take)
        s = os, id = oi;
    }
}

/// How many of the sorted entries[0, count) come before `e`.
__device__ __forceinline__ int countBefore(const Entry* entries, int count, const Entry& e) {
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (lessThan(entries[mid].score, entries[mid].id, e.score, e.id))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// The first `newSize` of the union of the sorted runs a[0, na) and b[0, nb) (no entry in both)
/// into `out`, each entry placed by its rank in the other run; threads first, first + stride, …
/// share the work (a warp's lanes, or a block's threads).
__device__ __forceinline__ void mergeSorted(const Entry* a, int na, const Entry* b, int nb,
                                            Entry* out, int newSize, int first, int stride) {
  for (int i = first; i < na; i += stride) {
    const int at = i + countBefore(b, nb, a[i]);
    if (at < newSize)
      out[at] = a[i];
  }
  for (int j = first; j < nb; j += stride) {
    const int at = j + countBefore(a, na, b[j]);
    if (at < newSize)
      out[at] = b[j];
  }
}

/// Merges the chunk's `count` new entries (already in m.chunk, any order) into the pool.
__device__ __forceinline__ void mergeChunk(WarpMemory& m, int& size, int ef, int count, int lane) {
  // Selected insertion: only entries better than a full pool's worst.
  Entry mine = lane < count ? m.chunk[lane] : Entry{INFINITY, kNoId};
  if (size == ef && !lessThan(mine.score, mine.id, m.pool[ef - 1].score, m.pool[ef - 1].id))
    mine = Entry{INFINITY, kNoId};
  const unsigned keep = __ballot_sync(kFull, mine.id != kNoId);
  const int kept = __popc(keep);
  if (kept == 0)
    return;
  warpSort(mine.score, mine.id, lane);
  __syncwarp();
  m.chunk[lane] = mine; // sorted; the first `kept` are real
  __syncwarp();
  const int newSize = min(ef, size + kept);
  mergeSorted(m.pool, size, m.chunk, kept, m.spare, newSize, lane, 32);
  __syncwarp();
  Entry* t = m.pool;
  m.pool = m.spare;
  m.spare = t;
  size = newSize;
}

/// Everything a walk of one layer needs besides the warp's memory.
struct Layer {
  const std::int32_t* graph; ///< rows of `stride` edges, in the layer's ids
  int stride, useDegree;
  const std::int32_t* global; ///< layer id → row of x (nullptr: the same)
};

/// Best-first expansion until no pool entry is unexpanded (the pool holds the layer's ids; the
/// hash holds rows of x, so what one layer visited the other does not score again).
template <int TEAM>
__device__ void walkLayer(const float* __restrict__ x, int d, bool vec4, bool innerProduct,
                          const Layer& layer, WarpMemory& m, int& size, int& visited, int ef,
                          int hashBits, int lane) {
  const int resetAt = (1 << hashBits) / 2;
  for (;;) {
    int found = -1; // the best unexpanded entry
    for (int base = 0; base < size && found < 0; base += 32) {
      const int i = base + lane;
      const unsigned open = __ballot_sync(kFull, i < size && !(m.pool[i].id & kExpanded));
      if (open)
        found = base + __ffs(open) - 1;
    }
    if (found < 0)
      return;
    const std::uint32_t node = m.pool[found].id;
    __syncwarp();
    if (lane == 0)
      m.pool[found].id = node | kExpanded;
    if (visited > resetAt) { // visited deletion: keep only what the pool holds
      __syncwarp();
      for (int i = lane; i < (1 << hashBits); i += 32)
        m.table[i] = kFree;
      __syncwarp();
      for (int i = lane; i < size; i += 32) {
        const std::uint32_t id = m.pool[i].id & ~kExpanded;
        hashInsert(m.table, hashBits, layer.global ? std::uint32_t(layer.global[id]) : id);
      }
      visited = size;
    }
    __syncwarp();
    const std::int32_t* edges = layer.graph + std::size_t(node) * std::size_t(layer.stride);
    for (int c = 0; c < layer.useDegree; c += 32) {
      const int j = c + lane;
      const std::int32_t nb = j < layer.useDegree ? __ldg(edges + j) : -1;
      const bool fresh =
          nb >= 0 &&
          hashInsert(m.table, hashBits,
                     layer.global ? std::uint32_t(__ldg(layer.global + nb)) : std::uint32_t(nb));
      const unsigned mask = __ballot_sync(kFull, fresh);
      if (fresh)
        m.chunk[__popc(mask & ((1u << lane) - 1))] = Entry{0, std::uint32_t(nb)};
      __syncwarp();
      const int count = __popc(mask);
      visited += count;
      scoreChunk<TEAM>(x, d, vec4, innerProduct, layer.global, m, count, lane);
      mergeChunk(m, size, ef, count, lane);
    }
  }
}

template <int TEAM>
__global__ void __launch_bounds__(kWarps * 32)
    graphSearchKernel(const float* __restrict__ x, int d, int dPad,
                      const std::int32_t* __restrict__ graph, int graphDegree, int useDegree,
                      const std::int32_t* __restrict__ sample,
                      const std::int32_t* __restrict__ upper, int entryCount,
                      const float* __restrict__ queries, std::int64_t nq, int ef, int k,
                      int hashBits, bool innerProduct, std::int32_t* __restrict__ outIds,
                      float* __restrict__ outScores) {
  extern __shared__ __align__(16) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t q = std::int64_t(blockIdx.x) * kWarps + warp;
  if (q >= nq)
    return; // the whole warp leaves together
  unsigned char* mine = shared + std::size_t(warp) * warpBytes(dPad, ef, hashBits);
  WarpMemory m;
  m.query = reinterpret_cast<float*>(mine);
  m.pool = reinterpret_cast<Entry*>(mine + std::size_t(dPad) * 4);
  m.spare = m.pool + ef;
  m.table = reinterpret_cast<std::uint32_t*>(m.spare + ef);
  m.chunk = reinterpret_cast<Entry*>(m.table + (1 << hashBits));
  const bool vec4 = d % 4 == 0;
  for (int i = lane; i < dPad; i += 32)
    m.query[i] = i < d ? queries[q * d + i] : 0.0f;
  for (int i = lane; i < (1 << hashBits); i += 32)
    m.table[i] = kFree;
  __syncwarp();
  int size = 0, visited = 0;

  // The upper layer's entries (sample-local ids 0 … entryCount − 1).
  for (int c = 0; c < entryCount; c += 32) {
    const int e = c + lane;
    const bool fresh = e < entryCount && hashInsert(m.table, hashBits, std::uint32_t(sample[e]));
    const unsigned mask = __ballot_sync(kFull, fresh);
    if (fresh)
      m.chunk[__popc(mask & ((1u << lane) - 1))] = Entry{0, std::uint32_t(e)};
    __syncwarp();
    const int count = __popc(mask);
    visited += count;
    scoreChunk<TEAM>(x, d, vec4, innerProduct, sample, m, count, lane);
    mergeChunk(m, size, ef, count, lane);
  }
  walkLayer<TEAM>(x, d, vec4, innerProduct, Layer{upper, graphDegree, graphDegree, sample}, m, size,
                  visited, ef, hashBits, lane);
  // Into the full graph: the pool's sample-local ids become rows, all to be expanded again.
  for (int i = lane; i < size; i += 32)
    m.pool[i].id = std::uint32_t(sample[m.pool[i].id & ~kExpanded]);
  __syncwarp();
  walkLayer<TEAM>(x, d, vec4, innerProduct, Layer{graph, graphDegree, useDegree, nullptr}, m, size,
                  visited, ef, hashBits, lane);
  for (int j = lane; j < k; j += 32) {
    const bool has = j < size;
    outIds[q * k + j] = has ? std::int32_t(m.pool[j].id & ~kExpanded) : -1;
    outScores[q * k + j] = has ? m.pool[j].score : INFINITY;
  }
}

// A few queries (a click, a batch-1 call) leave all but a few warps of the GPU idle, and one
// warp expands one node at a time. For them, a block per query expands its kWideWarps best
// unexpanded nodes at once, a warp each (CAGRA's search width): the hash filters and the scoring
// of the nodes' neighbours run in parallel, then the block sorts everything it scored and merges
// it into the pool in one parallel pass.
constexpr int kWideWarps = 8; // H100, 1M × 128: p50 0.19 ms at 8, 0.21 at 4 and at 16 (ef 16)
/// Queries up to which a search takes the block-per-query kernel.
constexpr std::int64_t kWideBelow = 64;

/// Sorts st[0, cap) ascending by (score, id), cap a power of two (block-wide bitonic network).
__device__ void blockSort(Entry* st, int cap) {
  for (int size = 2; size <= cap; size <<= 1)
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < cap / 2; i += blockDim.x) {
        const int lo = 2 * i - (i & (stride - 1)); // the pair (lo, lo + stride)
        const int hi = lo + stride;
        const bool up = (lo & size) == 0;
        const Entry a = st[lo], b = st[hi];
        if (lessThan(b.score, b.id, a.score, a.id) == up) {
          st[lo] = b;
          st[hi] = a;
        }
      }
      __syncthreads();
    }
}

/// Merges the `count` scored entries of st into the pool (SONG's selected insertion: only entries
/// better than a full pool's worst), block-wide, through `gathered` (room for `count` rounded up
/// to a power of two, at least 32).
__device__ void blockMerge(Entry*& pool, Entry*& spare, int& size, int ef, const Entry* st,
                           int count, Entry* gathered) {
  const int lane = threadIdx.x % 32;
  const bool full = size == ef;
  const Entry worst = full ? pool[ef - 1] : Entry{INFINITY, kNoId};
  __shared__ int kept;
  if (threadIdx.x == 0)
    kept = 0;
  __syncthreads();
  // Only the entries that can enter are gathered (in any order), so that the sort spans them
  // alone: once the pool is full, most of a round's candidates are worse than its worst.
  for (int base = 0; base < count; base += blockDim.x) {
    const int i = base + threadIdx.x;
    const bool keep =
        i < count && (!full || lessThan(st[i].score, st[i].id, worst.score, worst.id));
    const unsigned mask = __ballot_sync(kFull, keep);
    int at = 0;
    if (lane == 0 && mask)
      at = atomicAdd(&kept, __popc(mask));
    at = __shfl_sync(kFull, at, 0);
    if (keep)
      gathered[at + __popc(mask & ((1u << lane) - 1))] = st[i];
  }
  __syncthreads();
  const int n = kept;
  if (n == 0)
    return; // nothing enters: the pool stays as it is
  int span = 32;
  while (span < n)
    span *= 2;
  for (int i = n + threadIdx.x; i < span; i += blockDim.x)
    gathered[i] = Entry{INFINITY, kNoId};
  __syncthreads();
  if (span == 32) { // one warp's network, without the block's barriers
    if (threadIdx.x < 32) {
      Entry e = gathered[lane];
      warpSort(e.score, e.id, lane);
      gathered[lane] = e;
    }
    __syncthreads();
  } else {
    blockSort(gathered, span);
  }
  st = gathered;
  const int newSize = min(ef, size + n);
  mergeSorted(pool, size, st, n, spare, newSize, int(threadIdx.x), int(blockDim.x));
  __syncthreads();
  Entry* t = pool;
  pool = spare;
  spare = t;
  size = newSize;
}

/// The block's shared state besides its arrays.
struct WideState {
  std::uint32_t nodes[kWideWarps];
  int expanding, staged, visited;
};

/// Scores the candidates a warp found (`fresh` per lane, id `id`) into st at a block-wide slot.
template <int TEAM>
__device__ __forceinline__ void stageFresh(const float* __restrict__ x, int d, bool vec4,
                                           bool innerProduct, const std::int32_t* global,
                                           float* query, Entry* st, WideState& w, bool fresh,
                                           std::uint32_t id, int lane) {
  const unsigned mask = __ballot_sync(kFull, fresh);
  const int count = __popc(mask);
  if (count == 0)
    return;
  int at = 0;
  if (lane == 0)
    at = atomicAdd(&w.staged, count);
  at = __shfl_sync(kFull, at, 0);
  if (fresh)
    st[at + __popc(mask & ((1u << lane) - 1))] = Entry{0, id};
  __syncwarp();
  WarpMemory m{};
  m.query = query;
  m.chunk = st + at;
  scoreChunk<TEAM>(x, d, vec4, innerProduct, global, m, count, lane);
}

/// walkLayer's block-per-query form: each round the block's warps expand the pool's best
/// unexpanded nodes, a node a warp, and the block merges what they scored.
template <int TEAM>
__device__ void walkLayerWide(const float* __restrict__ x, int d, bool vec4, bool innerProduct,
                              const Layer& layer, float* query, Entry*& pool, Entry*& spare,
                              int& size, std::uint32_t* table, int hashBits, Entry* st, int cap,
                              int ef, WideState& w) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int resetAt = (1 << hashBits) / 2;
  for (;;) {
    if (warp == 0) {
      if (w.visited > resetAt) { // visited deletion: keep only what the pool holds
        for (int i = lane; i < (1 << hashBits); i += 32)
          table[i] = kFree;
        __syncwarp();
        for (int i = lane; i < size; i += 32) {
          const std::uint32_t id = pool[i].id & ~kExpanded;
          hashInsert(table, hashBits, layer.global ? std::uint32_t(layer.global[id]) : id);
        }
        __syncwarp();
        if (lane == 0)
          w.visited = size;
      }
      int got = 0; // the best unexpanded entries, in the pool's order
      for (int base = 0; base < size && got < kWideWarps; base += 32) {
        const int i = base + lane;
        unsigned open = __ballot_sync(kFull, i < size && !(pool[i].id & kExpanded));
        while (open && got < kWideWarps) {
          const int at = base + __ffs(open) - 1;
          if (lane == 0) {
            w.nodes[got] = pool[at].id;
            pool[at].id |= kExpanded;
          }
          ++got;
          open &= open - 1;
        }
      }
      if (lane == 0) {
        w.expanding = got;
        w.staged = 0;
      }
    }
    __syncthreads();
    const int expanding = w.expanding;
    if (expanding == 0)
      return;
    if (warp < expanding) {
      const std::int32_t* edges =
          layer.graph + std::size_t(w.nodes[warp]) * std::size_t(layer.stride);
      for (int c = 0; c < layer.useDegree; c += 32) {
        const int j = c + lane;
        const std::int32_t nb = j < layer.useDegree ? __ldg(edges + j) : -1;
        const bool fresh =
            nb >= 0 &&
            hashInsert(table, hashBits,
                       layer.global ? std::uint32_t(__ldg(layer.global + nb)) : std::uint32_t(nb));
        stageFresh<TEAM>(x, d, vec4, innerProduct, layer.global, query, st, w, fresh,
                         std::uint32_t(nb), lane);
      }
    }
    __syncthreads();
    const int staged = w.staged;
    if (threadIdx.x == 0)
      w.visited += staged;
    blockMerge(pool, spare, size, ef, st, staged, st + cap);
  }
}

template <int TEAM>
__global__ void __launch_bounds__(kWideWarps * 32)
    graphSearchWideKernel(const float* __restrict__ x, int d, int dPad,
                          const std::int32_t* __restrict__ graph, int graphDegree, int useDegree,
                          const std::int32_t* __restrict__ sample,
                          const std::int32_t* __restrict__ upper, int entryCount,
                          const float* __restrict__ queries, int ef, int k, int hashBits, int cap,
                          bool innerProduct, std::int32_t* __restrict__ outIds,
                          float* __restrict__ outScores) {
  extern __shared__ __align__(16) unsigned char shared[];
  __shared__ WideState w;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t q = blockIdx.x;
  float* query = reinterpret_cast<float*>(shared);
  Entry* pool = reinterpret_cast<Entry*>(shared + std::size_t(dPad) * 4);
  Entry* spare = pool + ef;
  auto* table = reinterpret_cast<std::uint32_t*>(spare + ef);
  Entry* st = reinterpret_cast<Entry*>(table + (1 << hashBits));
  const bool vec4 = d % 4 == 0;
  for (int i = threadIdx.x; i < dPad; i += blockDim.x)
    query[i] = i < d ? queries[q * d + i] : 0.0f;
  for (int i = threadIdx.x; i < (1 << hashBits); i += blockDim.x)
    table[i] = kFree;
  if (threadIdx.x == 0)
    w.staged = 0;
  __syncthreads();
  int size = 0;

  // The upper layer's entries (sample-local ids 0 … entryCount − 1), split over the warps.
  for (int c = warp * 32; c < entryCount; c += kWideWarps * 32) {
    const int e = c + lane;
    const bool fresh = e < entryCount && hashInsert(table, hashBits, std::uint32_t(sample[e]));
    stageFresh<TEAM>(x, d, vec4, innerProduct, sample, query, st, w, fresh, std::uint32_t(e), lane);
  }
  __syncthreads();
  const int entered = w.staged;
  if (threadIdx.x == 0)
    w.visited = entered;
  blockMerge(pool, spare, size, ef, st, entered, st + cap);
  walkLayerWide<TEAM>(x, d, vec4, innerProduct, Layer{upper, graphDegree, graphDegree, sample},
                      query, pool, spare, size, table, hashBits, st, cap, ef, w);
  // Into the full graph: the pool's sample-local ids become rows, all to be expanded again.
  for (int i = threadIdx.x; i < size; i += blockDim.x)
    pool[i].id = std::uint32_t(sample[pool[i].id & ~kExpanded]);
  __syncthreads();
  walkLayerWide<TEAM>(x, d, vec4, innerProduct, Layer{graph, graphDegree, useDegree, nullptr},
                      query, pool, spare, size, table, hashBits, st, cap, ef, w);
  for (int j = threadIdx.x; j < k; j += blockDim.x) {
    const bool has = j < size;
    outIds[q * k + j] = has ? std::int32_t(pool[j].id & ~kExpanded) : -1;
    outScores[q * k + j] = has ? pool[j].score : INFINITY;
  }
}

} // namespace

struct DeviceGraphSearch::State {
  int device = 0;
  std::int64_t n = 0;
  int d = 0, degree = 0, sampleCount = 0;
  bool innerProduct = false;
  DeviceBuffer<float> x;
  DeviceBuffer<std::int32_t> graph, sample, upper;
  // A search's buffers, kept between searches (batch-1 latency pays no allocation).
  std::mutex mutex;
  DeviceBuffer<float> queries, outScores;
  DeviceBuffer<std::int32_t> outIds;
  /// Pinned host memory for calls of a few queries, mapped into the device's address space: the
  /// kernel reads the queries and writes its lists there itself, so a batch-1 call is one launch
  /// and one wait (copies of a few hundred bytes each cost a round trip).
  struct Pinned {
    void* data = nullptr;
    void* device = nullptr; ///< the same memory, as the device addresses it
    std::size_t bytes = 0;
    ~Pinned() {
      if (data)
        cudaFreeHost(data);
    }
    void reserve(std::size_t want) {
      if (bytes >= want)
        return;
      if (data)
        cudaFreeHost(data);
      data = device = nullptr;
      bytes = 0;
      NEARSCAPE_CUDA_ALLOC(cudaHostAlloc(&data, want, cudaHostAllocMapped));
      NEARSCAPE_CUDA_CHECK(cudaHostGetDevicePointer(&device, data, 0));
      bytes = want;
    }
  } pinned;
  /// Dynamic shared memory each kernel was last allowed (set again only to grow it).
  std::size_t warpShared = 0, wideShared = 0;
  int sharedOptIn = 0; ///< the device's largest dynamic shared memory a block
};

DeviceGraphSearch::DeviceGraphSearch(const MatrixView<float>& vectors, const std::int32_t* graph,
                                     int degree, const std::int32_t* sample,
                                     const std::int32_t* upper, int count, Metric metric,
                                     const Context& context)
    : m_state(std::make_unique<State>()) {
  State& s = *m_state;
  NEARSCAPE_GPU_LIMIT(vectors.cols <= 4096, "the GPU graph search holds queries of at most 4096 "
                                            "dimensions in shared memory");
  s.device = context.device;
  s.n = vectors.rows;
  s.d = int(vectors.cols);
  s.degree = degree;
  s.sampleCount = count;
  s.innerProduct = metric != Metric::L2;
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(s.device));
  NEARSCAPE_CUDA_CHECK(
      cudaDeviceGetAttribute(&s.sharedOptIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, s.device));
  s.x = DeviceBuffer<float>(vectors.size());
  s.graph = DeviceBuffer<std::int32_t>(std::size_t(s.n) * std::size_t(degree));
  s.sample = DeviceBuffer<std::int32_t>(std::size_t(count));
  s.upper = DeviceBuffer<std::int32_t>(std::size_t(count) * std::size_t(degree));
  copyToDevice(s.x.get(), vectors.data, vectors.size() * 4);
  NEARSCAPE_CUDA_CHECK(
      cudaMemcpy(s.graph.get(), graph, s.graph.size() * 4, cudaMemcpyHostToDevice));
  NEARSCAPE_CUDA_CHECK(
      cudaMemcpy(s.sample.get(), sample, s.sample.size() * 4, cudaMemcpyHostToDevice));
  NEARSCAPE_CUDA_CHECK(
      cudaMemcpy(s.upper.get(), upper, s.upper.size() * 4, cudaMemcpyHostToDevice));
}

DeviceGraphSearch::~DeviceGraphSearch() = default;

std::uint64_t DeviceGraphSearch::bytes() const {
  const State& s = *m_state;
  return (s.x.size() + s.graph.size() + s.sample.size() + s.upper.size()) * 4;
}

namespace {

/// The block-per-query kernel's launch: its template, shared memory, hash and staging sizes.
struct WideLaunch {
  void (*kernel)(const float*, int, int, const std::int32_t*, int, int, const std::int32_t*,
                 const std::int32_t*, int, const float*, int, int, int, int, bool, std::int32_t*,
                 float*);
  std::size_t sharedBytes;
  int hashBits, cap;
};

/// Nothing where the block's shared memory exceeds what `device` gives a block (large d, ef and
/// degree on a GPU of less shared memory): the warp kernel then searches.
std::optional<WideLaunch> wideLaunch(int sharedOptIn, std::size_t& allowed, int dPad, int ef,
                                     int useDegree, int graphDegree, int entries, int team) {
  WideLaunch w{};
  // A round stages up to a node's edges a warp (the upper layer: its whole degree), and the
  // first round the entries.
  const int staged = std::max(entries, kWideWarps * std::max(useDegree, graphDegree));
  w.cap = 32;
  while (w.cap < staged)
    w.cap *= 2;
  // Room for a round's inserts beyond the deletion point: at most three quarters full.
  w.hashBits = 9;
  while ((1 << w.hashBits) < 4 * ef + 4 * staged)
    ++w.hashBits;
  w.sharedBytes = std::size_t(dPad) * 4 + 2 * std::size_t(ef) * 8 +
                  (std::size_t(1) << w.hashBits) * 4 + 2 * std::size_t(w.cap) * 8;
  if (w.sharedBytes + sizeof(WideState) + 64 > std::size_t(sharedOptIn))
    return std::nullopt;
  w.kernel = team == 4    ? graphSearchWideKernel<4>
             : team == 8  ? graphSearchWideKernel<8>
             : team == 16 ? graphSearchWideKernel<16>
                          : graphSearchWideKernel<32>;
  if (w.sharedBytes > allowed) {
    NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(w.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(w.sharedBytes)));
    allowed = w.sharedBytes;
  }
  return w;
}

} // namespace

void DeviceGraphSearch::search(const MatrixView<float>& queries, int k, int ef, int degree,
                               int entries, std::int32_t* ids, float* scores,
                               JobControl& job) const {
  State& s = *m_state; // its buffers change; the index does not
  NEARSCAPE_GPU_LIMIT(k >= 1 && k <= ef && ef <= kMaxQueue, "ef must lie in [k, 512] on the GPU");
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(s.device));
  const int dPad = (s.d + 3) / 4 * 4;
  // A hash four times the pool (at least 512 slots) keeps probes short between rebuilds.
  int hashBits = 9;
  while ((1 << hashBits) < 4 * ef)
    ++hashBits;
  const std::size_t sharedBytes = kWarps * warpBytes(dPad, ef, hashBits);
  const int team = s.d <= 64 ? 4 : s.d <= 256 ? 8 : s.d <= 1024 ? 16 : 32;
  auto kernel = team == 4    ? graphSearchKernel<4>
                : team == 8  ? graphSearchKernel<8>
                : team == 16 ? graphSearchKernel<16>
                             : graphSearchKernel<32>;
  const std::int64_t batch = 1 << 16; // queries per launch, between cancellation checks
  const std::int64_t rows = std::min<std::int64_t>(batch, queries.rows);
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.queries.size() < std::size_t(rows) * std::size_t(s.d))
    s.queries = DeviceBuffer<float>(std::size_t(rows) * std::size_t(s.d));
  if (s.outIds.size() < std::size_t(rows) * std::size_t(k)) {
    s.outIds = DeviceBuffer<std::int32_t>(std::size_t(rows) * std::size_t(k));
    s.outScores = DeviceBuffer<float>(std::size_t(rows) * std::size_t(k));
  }
  const DeviceBuffer<float>& q = s.queries;
  std::int32_t* outIds = s.outIds.get();
  float* outScores = s.outScores.get();
  // A few queries a call: a block each (chosen for the whole call, so that a query's answer does
  // not depend on the batch it falls in).
  const std::optional<WideLaunch> wide =
      queries.rows <= kWideBelow
          ? wideLaunch(s.sharedOptIn, s.wideShared, dPad, ef, std::min(degree, s.degree), s.degree,
                       std::min(entries, s.sampleCount), team)
          : std::nullopt;
  if (!wide && sharedBytes > s.warpShared) {
    NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(sharedBytes)));
    s.warpShared = sharedBytes;
  }
  // A few queries: read and answered in mapped pinned memory, one wait.
  const bool viaPinned = queries.rows <= kWideBelow;
  const std::size_t queryBytes = std::size_t(rows) * std::size_t(s.d) * 4;
  const std::size_t listBytes = std::size_t(rows) * std::size_t(k) * 4;
  if (viaPinned)
    s.pinned.reserve(queryBytes + 2 * listBytes);
  auto* pinnedQueries = static_cast<unsigned char*>(s.pinned.data);
  for (std::int64_t b0 = 0; b0 < queries.rows; b0 += batch) {
    job.check();
    const std::int64_t nq = std::min(batch, queries.rows - b0);
    // The mapped memory as the device addresses it.
    auto* mapped = static_cast<unsigned char*>(s.pinned.device);
    const float* inQueries = viaPinned ? reinterpret_cast<const float*>(mapped) : q.get();
    std::int32_t* toIds = viaPinned ? reinterpret_cast<std::int32_t*>(mapped + queryBytes) : outIds;
    float* toScores =
        viaPinned ? reinterpret_cast<float*>(mapped + queryBytes + listBytes) : outScores;
    if (viaPinned) {
      std::memcpy(pinnedQueries, queries.row(b0), queryBytes);
    } else {
      NEARSCAPE_CUDA_CHECK(
          cudaMemcpy(q.get(), queries.row(b0), std::size_t(nq) * s.d * 4, cudaMemcpyHostToDevice));
    }
    if (wide) {
      wide->kernel<<<unsigned(nq), kWideWarps * 32, wide->sharedBytes>>>(
          s.x.get(), s.d, dPad, s.graph.get(), s.degree, std::min(degree, s.degree), s.sample.get(),
          s.upper.get(), std::min(entries, s.sampleCount), inQueries, ef, k, wide->hashBits,
          wide->cap, s.innerProduct, toIds, toScores);
    } else {
      const unsigned blocks = unsigned((nq + kWarps - 1) / kWarps);
      kernel<<<blocks, kWarps * 32, sharedBytes>>>(
          s.x.get(), s.d, dPad, s.graph.get(), s.degree, std::min(degree, s.degree), s.sample.get(),
          s.upper.get(), std::min(entries, s.sampleCount), inQueries, nq, ef, k, hashBits,
          s.innerProduct, toIds, toScores);
    }
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    if (viaPinned) {
      // One batch (rows = nq), answered in place.
      NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      std::memcpy(ids, pinnedQueries + queryBytes, listBytes);
      std::memcpy(scores, pinnedQueries + queryBytes + listBytes, listBytes);
      continue;
    }
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpyAsync(ids + b0 * k, outIds, std::size_t(nq) * k * 4, cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(scores + b0 * k, outScores, std::size_t(nq) * k * 4,
                                         cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
}

} // namespace nearscape::cuda
