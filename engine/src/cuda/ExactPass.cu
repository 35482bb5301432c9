// One pass of the exact GEMM path (ExactPass.cuh): GEMM tiles, the filter, the prune and the
// float64 re-check with its sort.
#include "cuda/CandidateLists.cuh"
#include "cuda/ExactPass.cuh"
#include "cuda/FusedTiles.cuh"
#include "cuda/Primitives.cuh"
#include "cuda/Rerank.cuh"
#include "cuda/Select.cuh"
#include "cuda/ShareExchange.cuh"
#include "cuda/Upload.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/ExactCommon.h"
#include "knn/GemmBound.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <future>
#include <optional>
#include <system_error>

namespace nearscape::cuda {
namespace {

constexpr int kPruneThreads = 256;
constexpr int kRerankThreads = 256;

/// The k-th smallest (k ≤ 32) of the warp's 32 values, ties by lane; every lane returns it.
__device__ inline float warpKth(float v, int k) {
  const int lane = threadIdx.x % 32;
  int rank = 0;
  for (int o = 0; o < 32; ++o) {
    const float w = __shfl_sync(0xffffffffu, v, o);
    rank += (w < v || (w == v && o < lane)) ? 1 : 0;
  }
  const unsigned at = __ballot_sync(0xffffffffu, rank == k - 1);
  return __shfl_sync(0xffffffffu, v, __ffs(at) - 1);
}

/// A row of a C tile is read by kFilterWarpsPerRow warps (128 columns each, interleaved): one
/// warp per row kept too few loads in flight to reach the memory's bandwidth.
constexpr int kFilterWarpsPerRow = 4;
constexpr int kFilterRowsPerBlock = 2;

/// Query rows of a C tile (bq × bb dots, rows ldc apart, ldc a multiple of 4): appends every
/// candidate whose lower estimate is at or below the row's threshold, and queues rows holding
/// more than `pruneAbove` for pruning. A row's first tile (no threshold yet, k ≤ 32) starts from
/// the k-th smallest of 32 lanes' best upper estimates — k distinct items, so an upper bound of
/// the true k-th (Dr. Top-k's delegates: one per lane) — instead of keeping the whole tile.
/// groupRows > 0 (a graph's diagonal): the rows are in groups of groupRows (the last, lastGroup,
/// also holds the rest) and a row's columns start at its own group's first row, bStart + its
/// group's offset.
__global__ void filterKernel(const float* __restrict__ C, int bq, int bb, int ldc,
                             const float* __restrict__ qNorms, const float* __restrict__ bNorms,
                             const std::int64_t* __restrict__ selfIds, std::int64_t bStart,
                             int metric, int k, RowState* __restrict__ states,
                             Candidate* __restrict__ lists, int capG, int pruneAbove,
                             int* __restrict__ pruneList, int* __restrict__ pruneCount,
                             float maxBaseNorm2, int groupRows = 0, int lastGroup = 0) {
  __shared__ float firstBound[kFilterRowsPerBlock][kFilterWarpsPerRow];
  __shared__ int rowCount[kFilterRowsPerBlock];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int local = warp / kFilterWarpsPerRow, part = warp % kFilterWarpsPerRow;
  const int row = blockIdx.x * kFilterRowsPerBlock + local;
  if (groupRows > 0) {
    const int shift = min(row / groupRows, lastGroup) * groupRows;
    bNorms += shift;
    bStart += shift;
  }
  const bool active = row < bq && !states[row].overflow;
  RowState st = active ? states[row] : RowState{};
  const float qn = active ? qNorms[row] : 0.0f;
  const float* c = C + std::int64_t(row) * ldc;
  Candidate* list = lists + std::int64_t(row) * capG;
  const std::int64_t self = active && selfIds ? selfIds[row] : -1;
  if (part == 0 && lane == 0)
    rowCount[local] = st.count;
  const bool first = active && st.threshold == INFINITY && k <= 32;
  if (first) {
    float best = INFINITY;
    for (int j = part * 32 + lane; j < bb; j += 32 * kFilterWarpsPerRow)
      if (bStart + j != self) {
        const float bn = __ldg(bNorms + j);
        best = fminf(best,
                     knn::approxDistance(Metric(metric), qn, bn, c[j]) + candidateMargin(st, bn));
      }
    const float bound = warpKth(best, k);
    if (lane == 0)
      firstBound[local][part] = bound;
  }
  __syncthreads();
  if (first)
    for (int p = 0; p < kFilterWarpsPerRow; ++p)
      st.threshold = fminf(st.threshold, firstBound[local][p]);
  const float t = st.threshold;
  // A pre-test of four values at once, conservative: the exact test below (a base norm's square
  // root, the metric's formula, the self check, a vote a value) ran for every value and made the
  // kernel instruction-bound (ncu, fashion-mnist: SM 69% busy, DRAM 31%). The lower estimate
  //   lower = approx(qn, bn, dot) − (coefA·√bn + coefB)
  // is at least R0 + R1·bn + D·dot − t when √bn ≤ (bn/s + s)/2 (AM-GM, any s > 0; here s is the
  // largest base norm, so the bound is tight for the longest rows and the margin small beside
  // the distances). A value whose estimate exceeds `slack` — far more than the few float
  // roundings of either formula — cannot pass the exact test; the warp skips four values at a
  // time when none of its lanes may pass.
  const float s = fmaxf(sqrtf(maxBaseNorm2), 1e-30f);
  const float halfA = 0.5f * st.coefA;
  const float dotCoef = metric == int(Metric::L2) ? -2.0f : -1.0f;
  const float fixed = (metric == int(Metric::L2)       ? qn
                       : metric == int(Metric::Cosine) ? 1.0f
                                                       : 0.0f) -
                      st.coefB - halfA * s;
  const float r0 = fixed - t;
  const float r1 = (metric == int(Metric::L2) ? 1.0f : 0.0f) - halfA / s;
  const float slack =
      0x1p-14f * (fabsf(qn) + maxBaseNorm2 + fabsf(t) + st.coefA * s + st.coefB + 1.0f);
  const bool alignedNorms = (reinterpret_cast<std::uintptr_t>(bNorms) & 15) == 0;
  if (active) {
    for (int j0 = part * 128; j0 < bb; j0 += 128 * kFilterWarpsPerRow) {
      const int j = j0 + 4 * lane;
      float v[4], bn[4];
      if (j + 3 < bb) {
        const float4 q4 = *reinterpret_cast<const float4*>(c + j);
        v[0] = q4.x, v[1] = q4.y, v[2] = q4.z, v[3] = q4.w;
        if (alignedNorms) {
          const float4 n4 = __ldg(reinterpret_cast<const float4*>(bNorms + j));
          bn[0] = n4.x, bn[1] = n4.y, bn[2] = n4.z, bn[3] = n4.w;
        } else {
          for (int e = 0; e < 4; ++e)
            bn[e] = __ldg(bNorms + j + e);
        }
      } else {
        for (int e = 0; e < 4; ++e) {
          v[e] = j + e < bb ? c[j + e] : 0.0f;
          bn[e] = j + e < bb ? __ldg(bNorms + j + e) : 0.0f;
        }
      }
      unsigned maybe = 0; // a bit a value
      for (int e = 0; e < 4; ++e)
        if (j + e < bb && fmaf(dotCoef, v[e], fmaf(r1, bn[e], r0)) <= slack)
          maybe |= 1u << e;
      if (!__any_sync(0xffffffffu, maybe != 0))
        continue;
      // The few values left are tested and appended by their own lanes (a shared-memory atomic
      // each): most of a warp's lanes have none, and a vote a value kept them all waiting.
      for (int e = 0; e < 4; ++e) {
        if (!(maybe >> e & 1u))
          continue;
        const float lower =
            knn::approxDistance(Metric(metric), qn, bn[e], v[e]) - candidateMargin(st, bn[e]);
        if (lower <= t && bStart + j + e != self) {
          const int pos = atomicAdd(&rowCount[local], 1);
          if (pos < capG)
            list[pos] = {lower, std::int32_t(bStart + j + e)};
        }
      }
    }
  }
  __syncthreads();
  if (active && part == 0 && lane == 0) {
    const int count = rowCount[local];
    states[row].threshold = t;
    if (count > capG) { // cannot happen while bb + cap ≤ capG; kept as a guard
      states[row].overflow = 1;
      states[row].count = 0;
      return;
    }
    states[row].count = count;
    if (count > pruneAbove)
      pruneList[atomicAdd(pruneCount, 1)] = row;
  }
}

/// A pruned row's state: its lowered threshold and survivors, or overflowed past `cap`.
__device__ inline void setPruned(RowState& state, float threshold, int written, int cap) {
  state.threshold = threshold;
  if (written > cap) {
    state.overflow = 1;
    state.count = 0;
  } else {
    state.count = written;
  }
}

/// One block per queued row: finds the k-th smallest upper estimate lower_c + 2·m_c (radix
/// select on the float's ordered bits), lowers the threshold to it and compacts the survivors.
__global__ void pruneKernel(RowState* __restrict__ states, Candidate* __restrict__ lists, int capG,
                            const float* __restrict__ baseNorms, const int* __restrict__ pruneList,
                            const int* __restrict__ pruneCount, int k, int cap) {
  __shared__ int written;
  const int queued = *pruneCount;
  for (int e = blockIdx.x; e < queued; e += gridDim.x) {
    const int row = pruneList[e];
    Candidate* list = lists + std::int64_t(row) * capG;
    const RowState st = states[row];
    const int count = st.count;
    // The k-th smallest upper estimate lower_c + 2·m_c, found on the float's ordered bits.
    const float kth = fromOrderedBits(blockRadixSelect<std::uint32_t>(count, k, [&](int i) {
      const Candidate& c = list[i];
      return orderedBits(c.lower + 2.0f * candidateMargin(st, baseNorms[c.id]));
    }));
    const float threshold = fminf(st.threshold, kth);
    if (threadIdx.x == 0)
      written = 0;
    __syncthreads();
    // In-place compaction, one block-sized chunk at a time: every item of a chunk is read before
    // any is written, and survivors land at positions already read.
    for (int base = 0; base < count; base += blockDim.x) {
      const int i = base + threadIdx.x;
      Candidate cnd{};
      const bool keep = i < count && (cnd = list[i]).lower <= threshold;
      __syncthreads();
      if (keep)
        list[atomicAdd(&written, 1)] = cnd;
      __syncthreads();
    }
    if (threadIdx.x == 0)
      setPruned(states[row], threshold, written, cap);
    __syncthreads();
  }
}

/// Candidates a lane holds in the warp prune: rows of up to 32× as many are pruned by a warp.
constexpr int kWarpPruneKeys = 16;
constexpr int kWarpPruneThreads = 256;

/// pruneKernel's work, a warp per queued row, the row's candidates in registers: one read of the
/// list and of its base norms instead of one per radix pass, and no block barriers (a row holds
/// a few dozen candidates; a block of 256 threads a row waited on its barriers). Rows holding
/// more are queued in `bigList` for pruneKernel.
__global__ void warpPruneKernel(RowState* __restrict__ states, Candidate* __restrict__ lists,
                                int capG, const float* __restrict__ baseNorms,
                                const int* __restrict__ pruneList,
                                const int* __restrict__ pruneCount, int k, int cap,
                                int* __restrict__ bigList, int* __restrict__ bigCount) {
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const int queued = *pruneCount;
  for (int e = blockIdx.x * warps + threadIdx.x / 32; e < queued; e += gridDim.x * warps) {
    const int row = pruneList[e];
    const RowState st = states[row];
    const int count = st.count;
    if (count > 32 * kWarpPruneKeys) {
      if (lane == 0)
        bigList[atomicAdd(bigCount, 1)] = row;
      continue;
    }
    Candidate* list = lists + std::int64_t(row) * capG;
    Candidate c[kWarpPruneKeys];
    std::uint32_t key[kWarpPruneKeys];
#pragma unroll
    for (int j = 0; j < kWarpPruneKeys; ++j) {
      const int i = j * 32 + lane;
      key[j] = ~0u; // past the list: never among the first k (count > k)
      if (i < count) {
        c[j] = list[i];
        key[j] = orderedBits(c[j].lower + 2.0f * candidateMargin(st, baseNorms[c[j].id]));
      }
    }
    const float threshold = fminf(st.threshold, fromOrderedBits(warpRadixSelect(key, k)));
    // Survivors in their order; every candidate is in registers, so writing in place is safe.
    int written = 0;
#pragma unroll
    for (int j = 0; j < kWarpPruneKeys; ++j) {
      const bool keep = j * 32 + lane < count && c[j].lower <= threshold;
      const unsigned mask = __ballot_sync(0xffffffffu, keep);
      if (keep)
        list[written + __popc(mask & ((1u << lane) - 1))] = c[j];
      written += __popc(mask);
    }
    if (lane == 0)
      setPruned(states[row], threshold, written, cap);
  }
}

/// One block per row: exact float64 distances of the candidates (a warp per candidate), a
/// bitonic sort by (distance, id) in shared memory, the first k written out.
__global__ void rerankKernel(const float* __restrict__ queries, const float* __restrict__ base,
                             int d, int metric, const RowState* __restrict__ states,
                             const Candidate* __restrict__ lists, int capG, int k, int sortSize,
                             std::int32_t* __restrict__ outIds, float* __restrict__ outDist,
                             double* __restrict__ outDist64 = nullptr) {
  extern __shared__ unsigned char shared[];
  double* dist = reinterpret_cast<double*>(shared);
  std::int32_t* ids = reinterpret_cast<std::int32_t*>(dist + sortSize);
  const int row = blockIdx.x;
  const RowState st = states[row];
  const int count = st.overflow ? 0 : st.count;
  const Candidate* list = lists + std::int64_t(row) * capG;
  const float* q = queries + std::int64_t(row) * d;
  const int lane = threadIdx.x % 32;
  // The row's own size: most rows hold a few dozen candidates of a cap of hundreds.
  scoreAndSort(
      min(sortSize, nextPowerOfTwo(max(count, k))), threadIdx.x / 32, blockDim.x / 32, threadIdx.x,
      blockDim.x, dist, ids,
      [&](int c) {
        if (c >= count)
          return Scored{INFINITY, kPadId};
        const std::int32_t id = list[c].id;
        return Scored{warpExactDistance(q, base + std::int64_t(id) * d, d, metric, lane), id};
      },
      [] { __syncthreads(); });
  for (int c = threadIdx.x; c < k; c += blockDim.x) {
    outIds[std::int64_t(row) * k + c] = ids[c];
    if (outDist64)
      outDist64[std::int64_t(row) * k + c] = dist[c];
    else
      outDist[std::int64_t(row) * k + c] = float(dist[c]);
  }
}

/// `largestCoefA` (may be null): raised to the largest coefA of the rows (zeroed before).
__global__ void initStatesKernel(RowState* states, const float* qNorms, int bq, int metric,
                                 float maxBaseNorm2, double dotRel, int d, double underflowQ,
                                 double underflowB, float* largestCoefA = nullptr) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= bq)
    return;
  // knn::gemmBoundTerms, with the GEMM's own dot error and each candidate's own base norm.
  // fp16 adds an absolute term: elements that underflow to subnormals are off by up to
  // `underflow` each, ≤ δ√d‖y‖ over a dot product.
  const double qn = sqrt(double(qNorms[i])), bnMax = sqrt(double(maxBaseNorm2));
  const double absolute =
      4.0 * (underflowQ * sqrt(double(d)) * bnMax + underflowB * sqrt(double(d)) * qn +
             double(d) * underflowQ * underflowB);
  const knn::BoundTerms t = knn::gemmBoundTerms(Metric(metric), dotRel, qn, bnMax);
  const double a = t.perBaseNorm, b = t.constant;
  states[i] = {INFINITY, float(a * (1 + 1e-6)), float((b + absolute) * (1 + 1e-6)), 0, 0};
  if (largestCoefA) // non-negative floats order as their bits
    atomicMax(reinterpret_cast<int*>(largestCoefA), __float_as_int(states[i].coefA));
}

/// What the host needs of the pass's row states: the overflowed rows (in any order) and the
/// candidates the others kept.
__global__ void summarizeStatesKernel(const RowState* states, int n, int* overflowRows,
                                      int* overflowCount, unsigned long long* candidates) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned kept = 0;
  if (row < n) {
    const RowState st = states[row];
    if (st.overflow)
      overflowRows[atomicAdd(overflowCount, 1)] = row;
    else
      kept = unsigned(st.count);
  }
  for (int offset = 16; offset > 0; offset /= 2) // a warp's rows: at most 32 · kMaxCap
    kept += __shfl_down_sync(0xffffffffu, kept, offset);
  if (threadIdx.x % 32 == 0 && kept > 0)
    atomicAdd(candidates, (unsigned long long)kept);
}

/// A warp a row: its candidates from the wide lists of a first tile into the pass's lists.
__global__ void copyListsKernel(const RowState* states, const Candidate* from, int capFrom,
                                Candidate* to, int capTo, int rows) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows)
    return;
  const RowState st = states[row];
  if (st.overflow)
    return;
  for (int i = threadIdx.x % 32; i < st.count && i < capTo; i += 32)
    to[std::int64_t(row) * capTo + i] = from[std::int64_t(row) * capFrom + i];
}

/// The re-check's shared memory for lists sorted `sortSize` wide, allowed to the kernel.
std::size_t rerankSharedBytes(int sortSize) {
  const std::size_t bytes = std::size_t(sortSize) * (sizeof(double) + sizeof(std::int32_t));
  if (bytes > 48 * 1024)
    NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(
        rerankKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  return bytes;
}

/// Prunes the rows queued in pruneList (of `states`/`lists`, capG apart): a warp a row, rows past
/// the warp's registers by pruneKernel after. `big`: room for as many rows as the queue; `bigCount`
/// one int.
void pruneRows(RowState* states, Candidate* lists, int capG, const float* baseNorms,
               const int* pruneList, const int* pruneCount, int k, int cap, std::int64_t rows,
               int* big, int* bigCount, cudaStream_t stream) {
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(bigCount, 0, sizeof(int), stream));
  const int warps = kWarpPruneThreads / 32;
  warpPruneKernel<<<unsigned(std::min<std::int64_t>((rows + warps - 1) / warps, 8192)),
                    kWarpPruneThreads, 0, stream>>>(states, lists, capG, baseNorms, pruneList,
                                                    pruneCount, k, cap, big, bigCount);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  pruneKernel<<<unsigned(std::min<std::int64_t>(rows, 4096)), kPruneThreads, 0, stream>>>(
      states, lists, capG, baseNorms, big, bigCount, k, cap);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

} // namespace

/// Exact search of the `nq` query rows in `q` against `base`; writes row i's result to
/// outIds/outDist row targets[i] (host). `selfIds` (device, may be null): the base id each query
/// may not return.
PassResult searchPass(const DeviceRows& q, std::int64_t nq, const std::int64_t* selfIds,
                      const DeviceRows& base, std::int64_t nb, int d, float maxBaseNorm2,
                      Metric metric, Precision precision, int k, Tiles tiles, Resources& resources,
                      const std::vector<std::int64_t>& targets, std::int64_t targetOffset,
                      std::int32_t* outIds, float* outDist, JobControl& job, double progressFrom,
                      double progressSpan, PhaseClock& clock) {
  const int bb = int(std::min<std::int64_t>(tiles.bb, nb));
  // The fused kernel sweeps the base after a first cuBLAS tile has given every row a threshold
  // (the delegates' k-th for k ≤ 32, the prune's after it for any k).
  const bool fused =
      tiles.fused && precision == Precision::Fp16 && knn::gpuFusedTiles(d, k) && nb > bb;
  const int bq =
      int(std::min<std::int64_t>(fused && tiles.fusedBq > 0 ? tiles.fusedBq : tiles.bq, nq));
  const int cap = fused ? fusedCap(k) : int(knn::candidateCap(k));
  const int capG = bb + cap;
  const int width = base.width;
  const int ldc = (bb + 3) / 4 * 4; // rows of C 16-byte aligned for the filter's vector loads
  DeviceBuffer<float> C{std::size_t(bq) * ldc};
  DeviceBuffer<RowState> states{std::size_t(bq)};
  DeviceBuffer<Candidate> lists{std::size_t(bq) * capG};
  DeviceBuffer<int> pruneList{std::size_t(bq)}, pruneCount{1}, bigList{std::size_t(bq)},
      bigCount{1};
  DeviceBuffer<std::int32_t> tileIds{std::size_t(bq) * k};
  DeviceBuffer<float> tileDist{std::size_t(bq) * k};
  const cudaStream_t stream = resources.stream();
  // A fused pass's first tile is the fused kernel's own GEMM: it never waits for cuBLAS's start.
  const cublasHandle_t cublas = fused ? nullptr : resources.cublas();
  if (cublas)
    NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(cublas, precision == Precision::SplitTf32
                                                         ? CUBLAS_TF32_TENSOR_OP_MATH
                                                         : CUBLAS_DEFAULT_MATH));
  const cublasComputeType_t compute =
      precision == Precision::SplitTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const bool half = precision == Precision::Fp16;
  const cudaDataType_t inType = half ? CUDA_R_16F : CUDA_R_32F;
  const void* basePacked = half ? static_cast<const void*>(base.half) : base.packed;
  const void* queryPacked = half ? static_cast<const void*>(q.half) : q.packed;
  const std::size_t elementBytes = half ? sizeof(__half) : sizeof(float);
  const float alpha = 1.0f / (q.scale * base.scale); // powers of two: exact
  const int sortSize = nextPowerOfTwo(cap);
  const std::size_t rerankShared = rerankSharedBytes(sortSize);

  const float zero = 0.0f;
  PassResult result;
  result.fused = fused;
  std::vector<RowState> hostStates(static_cast<std::size_t>(bq));
  std::vector<std::int32_t> hostIds(static_cast<std::size_t>(bq) * k);
  std::vector<float> hostDist(static_cast<std::size_t>(bq) * k);
  clock.mark("tile buffers");
  for (std::int64_t i0 = 0; i0 < nq; i0 += bq) {
    const int rows = int(std::min<std::int64_t>(bq, nq - i0));
    initStatesKernel<<<(rows + 255) / 256, 256, 0, stream>>>(
        states.get(), q.norms + i0, rows, int(metric), maxBaseNorm2, dotError(precision, d), d,
        q.underflow, base.underflow);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    clock.mark("row states");
    for (std::int64_t j0 = 0; j0 < nb;) {
      job.check();
      const bool viaGemm = !fused || j0 == 0;
      // A fused sweep as wide as the columns seen so far: its rows' thresholds stay fixed
      // during it, so each one starts from the k-th of twice as many columns as the last.
      const std::int64_t sweep = viaGemm ? bb : std::min(kFusedSweep, j0);
      const int cols = int(std::min<std::int64_t>(sweep, nb - j0));
      // After the last tile every row with more than k is pruned: the re-check reads each
      // candidate's row (3 KB at d = 784), so it pays to hand it only those within the bound.
      // Before the first fused sweep too, whose fixed thresholds should be the tightest known;
      // the sweeps lower them after themselves (FusedLists::k).
      const bool lastTile = j0 + cols >= nb;
      const int pruneAbove = lastTile || (fused && viaGemm) ? k : cap;
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int), stream));
      if (viaGemm) {
        if (fused) {
          fusedDots(q.half + i0 * width, rows, base.half, base.norms, j0, j0 + cols, d, alpha,
                    C.get(), ldc, stream);
        } else {
          // Row-major C (rows × cols) = Q · Bᵀ, i.e. column-major C (cols × rows) = B · Qᵀ.
          NEARSCAPE_CUBLAS_CHECK(cublasGemmEx(
              cublas, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, width, &alpha,
              static_cast<const char*>(basePacked) + j0 * width * elementBytes, inType, width,
              static_cast<const char*>(queryPacked) + i0 * width * elementBytes, inType, width,
              &zero, C.get(), CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT));
        }
        clock.mark("gemm");
        filterKernel<<<(rows + kFilterRowsPerBlock - 1) / kFilterRowsPerBlock,
                       kFilterRowsPerBlock * kFilterWarpsPerRow * 32, 0, stream>>>(
            C.get(), rows, cols, ldc, q.norms + i0, base.norms + j0,
            selfIds ? selfIds + i0 : nullptr, j0, int(metric), k, states.get(), lists.get(), capG,
            pruneAbove, pruneList.get(), pruneCount.get(), maxBaseNorm2);
        NEARSCAPE_CUDA_CHECK_LAUNCH();
        clock.mark("filter");
      } else {
        fusedCandidates(q.half + i0 * width, rows, q.norms + i0, selfIds ? selfIds + i0 : nullptr,
                        base.half, base.norms, maxBaseNorm2, j0, j0 + cols, d, alpha, metric,
                        FusedLists{states.get(), lists.get(), capG, pruneAbove, pruneList.get(),
                                   pruneCount.get(), k},
                        stream);
        clock.mark("fused tiles");
      }
      pruneRows(states.get(), lists.get(), capG, base.norms, pruneList.get(), pruneCount.get(), k,
                cap, rows, bigList.get(), bigCount.get(), stream);
      clock.mark("prune");
      job.progress(progressFrom + progressSpan *
                                      (double(i0) + double(rows) * double(j0 + cols) / double(nb)) /
                                      double(nq),
                   "exact kNN (GPU)");
      j0 += cols;
    }
    rerankKernel<<<rows, kRerankThreads, rerankShared, stream>>>(
        q.raw + i0 * d, base.raw, d, int(metric), states.get(), lists.get(), capG, k, sortSize,
        tileIds.get(), tileDist.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    clock.mark("rerank");
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostStates.data(), states.get(), sizeof(RowState) * rows,
                                    cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostIds.data(), tileIds.get(), sizeof(std::int32_t) * rows * k,
                                    cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostDist.data(), tileDist.get(), sizeof(float) * rows * k,
                                    cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
      if (hostStates[r].overflow)
        result.overflow.push_back(i0 + r);
      else
        result.candidates += hostStates[r].count;
    }
    // By every host thread: the output is fresh memory, its pages faulted in at first touch
    // (1M × 96 on one thread: 0.4 s).
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
      if (hostStates[r].overflow)
        continue;
      const std::int64_t target =
          targets.empty() ? targetOffset + i0 + r : targets[std::size_t(i0 + r)];
      std::memcpy(outIds + target * k, hostIds.data() + std::size_t(r) * k,
                  sizeof(std::int32_t) * k);
      std::memcpy(outDist + target * k, hostDist.data() + std::size_t(r) * k, sizeof(float) * k);
    }
    clock.mark("copy back");
  }
  return result;
}

std::int64_t pairGroupRows(Tiles tiles) {
  return std::max<std::int64_t>(128, tiles.bb / 128 * 128);
}

namespace {
/// The columns of the diagonal's first tile (a group's first quarter; its rows' first thresholds).
std::int64_t diagonalFirstColumns(std::int64_t group) {
  return std::min<std::int64_t>(group, std::max<std::int64_t>(group / 4, 256));
}

/// Groups whose first tiles go through one launch: about 32,768 rows (at groups of 8,192, their
/// dots and lists take 768 MB).
std::int64_t diagonalChunkGroups(std::int64_t group, std::int64_t groups) {
  return std::clamp<std::int64_t>(32768 / group, 1, std::max<std::int64_t>(groups, 1));
}

/// The most rows a launch of first tiles takes: the last chunk also holds the rows past the last
/// whole group.
std::int64_t diagonalChunkRows(std::int64_t group, std::int64_t n) {
  const std::int64_t groups = n / group;
  return std::min(n, diagonalChunkGroups(group, groups) * group + (n - groups * group));
}
/// A share's weight in the diagonal's split where a cheaper way is probed beside the first share
/// on its device (STEP's clusters), the others' being 1. Manifold 2M over two H200, the total
/// each share waited for the other at their rounds: split evenly, the second 14–31 ms; at 0.8
/// the first 25–29 ms; with a third to the first, the first 44–48 ms.
constexpr double kProbedShareWeight = 0.9;

/// The diagonal's groups before share `part`'s run (`part` = `parts`: all of them): even runs,
/// the first share's shorter where a probe runs beside it. The same for every share (the runs
/// must tile the diagonal), so it depends on nothing that changes during the run.
std::int64_t diagonalGroupsBefore(int part, int parts, std::int64_t groups, bool probeBeside) {
  if (part >= parts)
    return groups;
  if (!probeBeside)
    return groups * part / parts;
  const double total = kProbedShareWeight + double(parts - 1);
  const double before = part == 0 ? 0.0 : kProbedShareWeight + double(part - 1);
  return std::int64_t(double(groups) * before / total);
}
} // namespace

int pairsCapOf(Tiles tiles, int k) {
  return tiles.pairsCap > 0 ? tiles.pairsCap : fusedCap(k);
}

std::uint64_t pairsBytes(std::int64_t n, Tiles tiles, int k, bool share) {
  const std::int64_t group = pairGroupRows(tiles);
  const std::uint64_t rows = std::uint64_t(n), cap = std::uint64_t(pairsCapOf(tiles, k)),
                      first = std::uint64_t(diagonalFirstColumns(group)),
                      chunkRows = std::uint64_t(diagonalChunkRows(group, n));
  // A row's results: an id and a distance, float64 in a share (PairsSplit).
  const std::uint64_t result = share ? 12 : 8;
  return rows * (cap * sizeof(Candidate) + sizeof(RowState) + 2 * sizeof(int) + result * k + 8) +
         chunkRows * ((first + 4) * sizeof(float) + first * sizeof(Candidate));
}

PassResult pairsPass(const DeviceRows& rows, std::int64_t n, int d, float maxBaseNorm2,
                     Metric metric, int k, Tiles tiles, Resources& resources, std::int32_t* outIds,
                     float* outDist, JobControl& job, double progressFrom, double progressSpan,
                     PhaseClock& clock, const PairsSplit& split) {
  const cudaStream_t stream = resources.stream();
  const std::int64_t group = pairGroupRows(tiles), groups = n / group;
  const int cap = pairsCapOf(tiles, k);
  const float alpha = 1.0f / (rows.scale * rows.scale);
  DeviceBuffer<RowState> states{std::size_t(n)};
  DeviceBuffer<Candidate> lists{std::size_t(n) * std::size_t(cap)};
  DeviceBuffer<int> pruneList{std::size_t(n)}, pruneCount{1}, bigList{std::size_t(n)}, bigCount{1};
  DeviceBuffer<float> largestCoefA{1};
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(largestCoefA.get(), 0, sizeof(float), stream));
  initStatesKernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(
      states.get(), rows.norms, int(n), int(metric), maxBaseNorm2, dotError(Precision::Fp16, d), d,
      rows.underflow, rows.underflow, largestCoefA.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  auto prune = [&](RowState* st, Candidate* l, int capacity, std::int64_t queued) {
    pruneRows(st, l, capacity, rows.norms, pruneList.get(), pruneCount.get(), k, cap, queued,
              bigList.get(), bigCount.get(), stream);
  };
  // The results' pages are faulted in by host threads while the device works (the copy back
  // would take the faults: 30–40 ms at 1M × 10 on an H100 host).
  std::future<void> prefault;
  const bool keepOnDevice = split.deviceIds && split.deviceDist64;
  try {
    if (!keepOnDevice || split.part == 0)
      prefault = std::async(std::launch::async, [=] {
        touchPages(outIds, sizeof(std::int32_t) * std::size_t(n) * k);
        if (split.dist64)
          touchPages(split.dist64, sizeof(double) * std::size_t(n) * k);
        else
          touchPages(outDist, sizeof(float) * std::size_t(n) * k);
      });
  } catch (const std::system_error&) { // no thread to be had: the copy back takes the faults
  }
  const double pairs = double(groups) * double(groups + 1) / 2;
  double done = 0;
  std::optional<ThresholdExchange> exchange;
  if (split.exchange)
    exchange.emplace(*split.exchange, split.part, n);
  {
    // The diagonal: each group's rows against its own columns, both ways. Its first quarter as a
    // first tile (the sweep's dots, the filter's delegate thresholds), a few groups at a time,
    // then the fused sweeps over the rest, each as wide as the columns seen so far (as
    // searchPass's), pruned to k after each so that the bands start from the tightest
    // thresholds. Every launch takes all the groups it can: one group a launch (122 at 1M)
    // left most of the device idle in each (63 ms on manifold 1M).
    const std::int64_t first = diagonalFirstColumns(group);
    const int ldFirst = int((first + 3) / 4 * 4);
    const int capFirst = int(first); // a fresh row's list holds at most the tile's columns
    const std::int64_t chunkGroups = diagonalChunkGroups(group, groups);
    const std::int64_t chunkRowsMax = diagonalChunkRows(group, n);
    DeviceBuffer<float> C{std::size_t(chunkRowsMax) * std::size_t(ldFirst)};
    DeviceBuffer<Candidate> wide{std::size_t(chunkRowsMax) * std::size_t(capFirst)};
    DeviceBuffer<std::int64_t> selfIds{std::size_t(n)};
    fillIota(selfIds.get(), n, 0, stream); // each row's own id
    // A share with an exchange sweeps its own run of groups only; the others' rows get their
    // thresholds from them below (the exchange's first round).
    const bool probeBeside = split.exchange && split.exchange->probeBeside();
    const std::int64_t gBegin =
        split.exchange ? diagonalGroupsBefore(split.part, split.parts, groups, probeBeside) : 0;
    const std::int64_t gEnd =
        split.exchange ? diagonalGroupsBefore(split.part + 1, split.parts, groups, probeBeside)
                       : groups;
    const std::int64_t rowBegin = gBegin * group, rowEnd = gEnd == groups ? n : gEnd * group;
    for (std::int64_t g0 = gBegin; g0 < gEnd; g0 += chunkGroups) {
      job.check();
      const std::int64_t g1 = std::min(gEnd, g0 + chunkGroups);
      const std::int64_t r0 = g0 * group, r1 = g1 == groups ? n : g1 * group;
      const int here = int(r1 - r0);
      RowState* const st = states.get() + r0;
      const OwnGroups own{r0, group, n};
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int), stream));
      fusedDots(rows.half + r0 * d, here, rows.half, rows.norms, 0, first, d, alpha, C.get(),
                ldFirst, stream, own);
      clock.mark("diagonal dots");
      filterKernel<<<(here + kFilterRowsPerBlock - 1) / kFilterRowsPerBlock,
                     kFilterRowsPerBlock * kFilterWarpsPerRow * 32, 0, stream>>>(
          C.get(), here, int(first), ldFirst, rows.norms + r0, rows.norms + r0, selfIds.get() + r0,
          r0, int(metric), k, st, wide.get(), capFirst, k, pruneList.get(), pruneCount.get(),
          maxBaseNorm2, int(group), int(g1 - g0 - 1));
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      clock.mark("diagonal filter");
      prune(st, wide.get(), capFirst, here);
      clock.mark("diagonal prune");
      copyListsKernel<<<(here + 7) / 8, 256, 0, stream>>>(st, wide.get(), capFirst,
                                                          lists.get() + r0 * cap, cap, here);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      clock.mark("diagonal copy");
    }
    const std::int64_t longest = n - (groups - 1) * group; // the last group's
    RowState* const ownStates = states.get() + rowBegin;
    Candidate* const ownLists = lists.get() + rowBegin * cap;
    for (std::int64_t j0 = first; j0 < longest && rowEnd > rowBegin; j0 *= 2) {
      job.check();
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int), stream));
      fusedCandidates(rows.half + rowBegin * d, int(rowEnd - rowBegin), rows.norms + rowBegin,
                      selfIds.get() + rowBegin, rows.half, rows.norms, maxBaseNorm2, j0, 2 * j0, d,
                      alpha, metric,
                      FusedLists{ownStates, ownLists, cap, k, pruneList.get(), pruneCount.get(), k},
                      stream, OwnGroups{rowBegin, group, n});
      clock.mark("diagonal sweeps");
      prune(ownStates, ownLists, cap, rowEnd - rowBegin);
      clock.mark("diagonal prune");
    }
    done += double(groups);
  }
  // Bands of groups each twice as far as the last: a row's threshold, fixed during a band, is
  // the k-th of about as many columns as the band brings (as the one-sided sweeps double).
  if (exchange) {
    (*exchange)(states.get(), stream, job); // the diagonal's thresholds, each share's own rows
    clock.mark("exchange");
  }
  for (std::int64_t lo = 1; lo < groups; lo *= 2) {
    job.check();
    NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int), stream));
    fusedPairs(rows.half, rows.norms, n, maxBaseNorm2, group, int(lo), int(2 * lo), d, alpha,
               metric, largestCoefA.get(),
               FusedLists{states.get(), lists.get(), cap, k, pruneList.get(), pruneCount.get(), k},
               stream, split.part, split.parts);
    clock.mark("fused pairs");
    prune(states.get(), lists.get(), cap, n);
    clock.mark("prune");
    if (exchange && 2 * lo < groups) {
      (*exchange)(states.get(), stream, job);
      clock.mark("exchange");
    }
    for (std::int64_t delta = lo; delta < std::min(2 * lo, groups); ++delta)
      done += double(groups - delta);
    job.progress(progressFrom + progressSpan * done / pairs, "exact kNN (GPU)");
  }

  const int sortSize = nextPowerOfTwo(cap);
  const std::size_t rerankShared = rerankSharedBytes(sortSize);
  DeviceBuffer<std::int32_t> ids{std::size_t(n) * k};
  const bool float64 = split.dist64 || keepOnDevice;
  DeviceBuffer<float> dist{float64 ? 0 : std::size_t(n) * k};
  DeviceBuffer<double> dist64{float64 ? std::size_t(n) * k : 0};
  rerankKernel<<<unsigned(n), kRerankThreads, rerankShared, stream>>>(
      rows.raw, rows.raw, d, int(metric), states.get(), lists.get(), cap, k, sortSize, ids.get(),
      dist.get(), dist64.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  clock.mark("rerank");
  DeviceBuffer<unsigned long long> kept{1};
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int), stream));
  NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(kept.get(), 0, sizeof(unsigned long long), stream));
  summarizeStatesKernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(
      states.get(), int(n), pruneList.get(), pruneCount.get(), kept.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  if (prefault.valid())
    prefault.get();
  if (keepOnDevice) {
    *split.deviceIds = std::move(ids);
    *split.deviceDist64 = std::move(dist64);
  } else {
    copyToHost(outIds, ids.get(), sizeof(std::int32_t) * std::size_t(n) * k);
    if (split.dist64)
      copyToHost(split.dist64, dist64.get(), sizeof(double) * std::size_t(n) * k);
    else
      copyToHost(outDist, dist.get(), sizeof(float) * std::size_t(n) * k);
  }
  int overflowed = 0;
  unsigned long long candidates = 0;
  copyToHost(&overflowed, pruneCount.get(), sizeof(int));
  copyToHost(&candidates, kept.get(), sizeof(candidates));
  std::vector<int> overflowRows(static_cast<std::size_t>(overflowed));
  copyToHost(overflowRows.data(), pruneList.get(), sizeof(int) * std::size_t(overflowed));
  std::sort(overflowRows.begin(), overflowRows.end());
  PassResult result;
  result.fused = true;
  result.overflow.assign(overflowRows.begin(), overflowRows.end());
  result.candidates = std::int64_t(candidates);
  clock.mark("copy back");
  return result;
}

int fusedCap(int k) {
  return std::min(kMaxCap, 8 * int(knn::candidateCap(k)));
}

/// Device bytes of a search's tile buffers (C, candidate lists, results).
std::uint64_t tileBytes(Tiles t, int k) {
  const std::uint64_t bq = std::uint64_t(std::max(t.bq, t.fused ? t.fusedBq : 0)),
                      bb = std::uint64_t(t.bb);
  const std::uint64_t cap = t.fused ? std::uint64_t(fusedCap(k)) : knn::candidateCap(k);
  return bq * ((bb + 3) / 4 * 4) * sizeof(float) + bq * (bb + cap) * sizeof(Candidate) +
         bq * std::uint64_t(k) * 8 + bq * (sizeof(RowState) + 16);
}

} // namespace nearscape::cuda
