// Exact kNN on CUDA. Candidates: cuBLAS GEMM tiles in float16 (scaled, rounded to nearest) or
// 3xTF32 (Faiss paper §3 tiling; reduced precision allowed for candidates only) with the norm
// expansion; each query row keeps every candidate whose proven rounding bound reaches its k-th
// (threshold filtering in the spirit of Dr. Top-k's delegate filtering: most of a tile never
// leaves the filter kernel); survivors are re-checked in float64 on the GPU. Rows whose bound
// keeps too many candidates are recomputed on the CPU. The same bound logic as the CPU backend
// (knn/ExactCommon.h, knn/CandidateRow.h).
#include "cuda/Bitonic.cuh"
#include "cuda/CudaApi.h"
#include "cuda/CudaCheck.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/PhaseClock.cuh"
#include "cuda/Upload.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/ExactCommon.h"

#include <cuda_fp16.h>

#include "cuda/Cublas.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <string>

namespace nearscape::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kPruneThreads = 256;
constexpr int kRerankThreads = 256;
constexpr int kMaxCap = 8192; // candidates kept per row after a prune: k ≤ 2048

struct Candidate {
  float lower; // approximate distance minus its rounding bound: the true one is not below it
  std::int32_t id;
};

/// Per query row. A candidate j's approximate distance a_j lies within
/// m_j = coefA·‖b_j‖ + coefB of the true one (its own base norm, not the largest: fashion-
/// mnist's largest centred norm is 1.8× the median), so j is kept while a_j − m_j ≤ threshold,
/// and a threshold is the k-th smallest a_c + m_c of k distinct candidates.
struct RowState {
  float threshold; // candidates whose lower estimate lies above it are dropped
  float coefA;
  float coefB;
  int count;    // candidates held
  int overflow; // 1: too many candidates within their bounds; recomputed on the CPU
};

__device__ inline float approxDistanceDevice(int metric, float qn, float bn, float dot) {
  return metric == int(Metric::L2) ? qn + bn - 2.0f * dot
                                   : (metric == int(Metric::InnerProduct) ? -dot : 1.0f - dot);
}

__device__ inline float candidateMargin(const RowState& st, float baseNorm2) {
  return st.coefA * sqrtf(baseNorm2) + st.coefB;
}

/// TF32 keeps the top 10 mantissa bits; rounding to nearest makes x − hi exact in float32.
__device__ inline float tf32High(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

/// How rows are packed for the GEMM: float32; [hi, lo, hi] / [hi, hi, lo] for 3xTF32; or
/// float16, scaled by a power of two and rounded to nearest.
enum PackMode { kPackFloat = 0, kPackSplit = 1, kPackHalf = 2 };

/// One warp per row: transform(raw) (centre, copy or normalise) and ‖transform‖² (in float64,
/// from the unrounded values). kPackSplit writes the row 3·d wide as [hi, lo, hi] (base role) or
/// [hi, hi, lo] (query role), so that one TF32 GEMM over 3·d sums hi·hi + lo·hi + hi·lo:
/// float32-grade dots at tensor-core speed ("3xTF32"; the dropped lo·lo term is below 2^-21
/// relative). kPackHalf writes fp16(scale·v): the tensor cores then multiply exactly and
/// accumulate in float32, twice TF32's rate with the same 11-bit significand.
__global__ void packKernel(const float* __restrict__ raw, std::int64_t n, int d,
                           const float* __restrict__ mean, int metric, int mode, int queryRole,
                           float scale, float* __restrict__ packed, __half* __restrict__ half,
                           float* __restrict__ norms) {
  const std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n)
    return;
  const float* x = raw + row * d;
  const double cosine = warpCosineScale(x, d, metric, lane);
  double s = 0;
  for (int j = lane; j < d; j += 32) {
    const float v = packedValue(x, j, mean, metric, cosine);
    if (mode == kPackHalf) {
      half[row * d + j] = __float2half_rn(v * scale);
    } else if (mode == kPackSplit) {
      float* o = packed + row * 3 * d;
      const float hi = tf32High(v), lo = v - hi;
      o[j] = hi;
      o[d + j] = queryRole ? hi : lo;
      o[2 * d + j] = queryRole ? lo : hi;
    } else {
      packed[row * d + j] = v;
    }
    s += double(v) * v;
  }
  s = warpSum(s);
  if (lane == 0)
    norms[row] = float(s);
}

/// The largest |packed value| of n rows, as float bits (non-negative floats order as unsigned).
__global__ void maxAbsKernel(const float* __restrict__ raw, std::int64_t n, int d,
                             const float* __restrict__ mean, int metric,
                             unsigned* __restrict__ maxBits) {
  const std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n)
    return;
  const float* x = raw + row * d;
  const double cosine = warpCosineScale(x, d, metric, lane);
  float m = 0;
  for (int j = lane; j < d; j += 32)
    m = fmaxf(m, fabsf(packedValue(x, j, mean, metric, cosine)));
  for (int off = 16; off > 0; off /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (lane == 0)
    atomicMax(maxBits, __float_as_uint(m));
}

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
__global__ void filterKernel(const float* __restrict__ C, int bq, int bb, int ldc,
                             const float* __restrict__ qNorms, const float* __restrict__ bNorms,
                             const std::int64_t* __restrict__ selfIds, std::int64_t bStart,
                             int metric, int k, RowState* __restrict__ states,
                             Candidate* __restrict__ lists, int capG, int pruneAbove,
                             int* __restrict__ pruneList, int* __restrict__ pruneCount) {
  __shared__ float firstBound[kFilterRowsPerBlock][kFilterWarpsPerRow];
  __shared__ int rowCount[kFilterRowsPerBlock];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int local = warp / kFilterWarpsPerRow, part = warp % kFilterWarpsPerRow;
  const int row = blockIdx.x * kFilterRowsPerBlock + local;
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
        best = fminf(best, approxDistanceDevice(metric, qn, bn, c[j]) + candidateMargin(st, bn));
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
  if (active) {
    for (int j0 = part * 128; j0 < bb; j0 += 128 * kFilterWarpsPerRow) {
      const int j = j0 + 4 * lane;
      float v[4];
      if (j + 3 < bb) {
        const float4 q4 = *reinterpret_cast<const float4*>(c + j);
        v[0] = q4.x, v[1] = q4.y, v[2] = q4.z, v[3] = q4.w;
      } else {
        for (int e = 0; e < 4; ++e)
          v[e] = j + e < bb ? c[j + e] : 0.0f;
      }
      for (int e = 0; e < 4; ++e) {
        bool pass = false;
        float lower = 0;
        if (j + e < bb) {
          const float bn = __ldg(bNorms + j + e);
          lower = approxDistanceDevice(metric, qn, bn, v[e]) - candidateMargin(st, bn);
          pass = lower <= t && bStart + j + e != self;
        }
        const unsigned mask = __ballot_sync(0xffffffffu, pass);
        if (mask == 0)
          continue;
        int at = 0;
        if (lane == 0)
          at = atomicAdd(&rowCount[local], __popc(mask));
        at = __shfl_sync(0xffffffffu, at, 0);
        const int pos = at + __popc(mask & ((1u << lane) - 1));
        if (pass && pos < capG)
          list[pos] = {lower, std::int32_t(bStart + j + e)};
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

/// Column means of n rows in float64 (L2 centres the data: smaller norms, a tighter bound).
__global__ void columnSumKernel(const float* __restrict__ raw, std::int64_t n, int d,
                                int rowsPerBlock, double* __restrict__ sums) {
  const std::int64_t begin = std::int64_t(blockIdx.y) * rowsPerBlock;
  const std::int64_t end = begin + rowsPerBlock < n ? begin + rowsPerBlock : n;
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < d; j += gridDim.x * blockDim.x) {
    double s = 0;
    for (std::int64_t i = begin; i < end; ++i)
      s += raw[i * d + j];
    atomicAdd(sums + j, s);
  }
}

__global__ void divideKernel(const double* __restrict__ sums, int d, double n,
                             float* __restrict__ mean) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < d)
    mean[j] = float(sums[j] / n);
}

__device__ inline unsigned orderedKey(float f) {
  const unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/// One block per queued row: finds the k-th smallest upper estimate lower_c + 2·m_c (radix
/// select on the float's ordered bits), lowers the threshold to it and compacts the survivors.
__global__ void pruneKernel(RowState* __restrict__ states, Candidate* __restrict__ lists, int capG,
                            const float* __restrict__ baseNorms, const int* __restrict__ pruneList,
                            const int* __restrict__ pruneCount, int k, int cap) {
  __shared__ unsigned histogram[256];
  __shared__ unsigned prefix, prefixMask;
  __shared__ int remaining, written;
  const int queued = *pruneCount;
  for (int e = blockIdx.x; e < queued; e += gridDim.x) {
    const int row = pruneList[e];
    Candidate* list = lists + std::int64_t(row) * capG;
    const RowState st = states[row];
    const int count = st.count;
    auto upper = [&](const Candidate& c) {
      return c.lower + 2.0f * candidateMargin(st, baseNorms[c.id]);
    };
    if (threadIdx.x == 0) {
      prefix = 0;
      prefixMask = 0;
      remaining = k; // rank (1-based) of the wanted key among those matching the prefix
    }
    __syncthreads();
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int b = threadIdx.x; b < 256; b += blockDim.x)
        histogram[b] = 0;
      __syncthreads();
      for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const unsigned key = orderedKey(upper(list[i]));
        if ((key & prefixMask) == prefix)
          atomicAdd(&histogram[(key >> shift) & 0xffu], 1u);
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        int r = remaining;
        unsigned b = 0;
        while (b < 255 && int(histogram[b]) < r) {
          r -= int(histogram[b]);
          ++b;
        }
        remaining = r;
        prefix |= b << shift;
        prefixMask |= 0xffu << shift;
      }
      __syncthreads();
    }
    // prefix is now the k-th smallest key: back to a float.
    const unsigned key = prefix;
    const float kth = __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
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
    if (threadIdx.x == 0) {
      states[row].threshold = threshold;
      if (written > cap) {
        states[row].overflow = 1;
        states[row].count = 0;
      } else {
        states[row].count = written;
      }
    }
    __syncthreads();
  }
}

/// One block per row: exact float64 distances of the candidates (a warp per candidate), a
/// bitonic sort by (distance, id) in shared memory, the first k written out.
__global__ void rerankKernel(const float* __restrict__ queries, const float* __restrict__ base,
                             int d, int metric, const RowState* __restrict__ states,
                             const Candidate* __restrict__ lists, int capG, int k, int sortSize,
                             std::int32_t* __restrict__ outIds, float* __restrict__ outDist) {
  extern __shared__ unsigned char shared[];
  double* dist = reinterpret_cast<double*>(shared);
  std::int32_t* ids = reinterpret_cast<std::int32_t*>(dist + sortSize);
  const int row = blockIdx.x;
  const RowState st = states[row];
  const int count = st.overflow ? 0 : st.count;
  const Candidate* list = lists + std::int64_t(row) * capG;
  const float* q = queries + std::int64_t(row) * d;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int c = warp; c < sortSize; c += warps) {
    if (c >= count) {
      if (lane == 0) {
        dist[c] = INFINITY;
        ids[c] = 0x7fffffff;
      }
      continue;
    }
    const std::int32_t id = list[c].id;
    const double v = warpExactDistance(q, base + std::int64_t(id) * d, d, metric, lane);
    if (lane == 0) {
      dist[c] = v;
      ids[c] = id;
    }
  }
  __syncthreads();
  bitonicSort(
      sortSize, threadIdx.x, blockDim.x,
      [&](int a, int b) { return dist[a] < dist[b] || (dist[a] == dist[b] && ids[a] < ids[b]); },
      [&](int a, int b) {
        swapAt(dist, a, b);
        swapAt(ids, a, b);
      },
      [] { __syncthreads(); });
  for (int c = threadIdx.x; c < k; c += blockDim.x) {
    outIds[std::int64_t(row) * k + c] = ids[c];
    outDist[std::int64_t(row) * k + c] = float(dist[c]);
  }
}

__global__ void initStatesKernel(RowState* states, const float* qNorms, int bq, int metric,
                                 float maxBaseNorm2, double dotRel, int d, double underflowQ,
                                 double underflowB) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= bq)
    return;
  // knn::errorBound's terms (ExactCommon.cpp: doubled for safety), with the GEMM's own dot
  // error taken against this candidate's norm. fp16 adds an absolute term: elements that
  // underflow to subnormals are off by up to `underflow` each, ≤ δ√d‖y‖ over a dot product.
  const double u = 1.0 / (1 << 24);
  const double qn = sqrt(double(qNorms[i])), bnMax = sqrt(double(maxBaseNorm2));
  const double absolute =
      4.0 * (underflowQ * sqrt(double(d)) * bnMax + underflowB * sqrt(double(d)) * qn +
             double(d) * underflowQ * underflowB);
  double a, b;
  if (metric == int(Metric::L2)) {
    a = 2.0 * dotRel * qn * 2.0;
    b = 2.0 * 8.0 * u * (qn + bnMax) * (qn + bnMax);
  } else if (metric == int(Metric::InnerProduct)) {
    a = 2.0 * (dotRel + 4.0 * u) * qn;
    b = 0;
  } else {
    a = 0;
    b = 2.0 * (dotRel + 16.0 * u);
  }
  states[i] = {INFINITY, float(a * (1 + 1e-6)), float((b + absolute) * (1 + 1e-6)), 0, 0};
}

/// How candidates are computed: plain float32, float16 (scaled), or 3xTF32 (see packKernel).
enum class Precision { Fp32, Fp16, SplitTf32 };

/// Relative error of one GEMM dot product against ‖x‖‖y‖. Tensor cores may accumulate with
/// truncation, so 2u per addition. fp16 inputs are rounded to nearest by packKernel (2^-11
/// each) and multiplied exactly; 3xTF32 drops lo·lo and rounds its splits.
double dotError(Precision p, int d) {
  const double u = knn::kUnitRoundoff;
  switch (p) {
  case Precision::Fp32:
    return d * u;
  case Precision::Fp16:
    return 2.0 * d * u + 1.0 / 1024 + 1.0 / (1 << 20);
  case Precision::SplitTf32:
    return 2.0 * 3 * d * u + 4.0 / (1 << 21);
  }
  return 1;
}

/// Thrown when data cannot be scaled into float16's range (|values| beyond 2^±40).
struct OutsideHalfRange {};

/// Rows on the device: raw (the exact re-check reads them) and packed for the GEMM. Either owns
/// its buffers or views another's (rows [offset, offset + n) of it).
struct DeviceRows {
  DeviceBuffer<float> rawOwned, packedOwned, normsOwned;
  DeviceBuffer<__half> halfOwned;
  const float* raw = nullptr;
  const float* packed = nullptr; // Fp32 and SplitTf32
  const __half* half = nullptr;  // Fp16: fp16(scale · value)
  const float* norms = nullptr;
  int width = 0;
  float scale = 1;      // a power of two
  double underflow = 0; // Fp16: the largest error of a value that underflows, unscaled

  DeviceRows view(std::int64_t offset, int d) const {
    DeviceRows v = shallow();
    v.raw = raw + offset * d;
    v.packed = packed ? packed + offset * width : nullptr;
    v.half = half ? half + offset * width : nullptr;
    v.norms = norms + offset;
    return v;
  }

private:
  DeviceRows shallow() const {
    DeviceRows v;
    v.width = width;
    v.scale = scale;
    v.underflow = underflow;
    return v;
  }
};

/// Uploads `n` raw rows (host, contiguous or gathered by `rows`) to the device.
void uploadRaw(const MatrixView<float>& m, std::int64_t begin, std::int64_t n,
               const std::vector<std::int64_t>* rows, DeviceRows& out) {
  const int d = int(m.cols);
  out.rawOwned = DeviceBuffer<float>(std::size_t(n) * d);
  out.raw = out.rawOwned.get();
  if (rows) {
    std::vector<float> gathered(static_cast<std::size_t>(n * d));
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(gathered.data() + i * d, m.row((*rows)[i]), sizeof(float) * d);
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.rawOwned.get(), gathered.data(), sizeof(float) * n * d,
                                    cudaMemcpyHostToDevice));
  } else {
    copyToDevice(out.rawOwned.get(), m.row(begin), sizeof(float) * n * d);
  }
}

/// Packs the `n` raw rows of `rows` on the device for `precision` in `queryRole`.
void packRows(DeviceRows& rows, std::int64_t n, int d, const float* deviceMean, Metric metric,
              Precision precision, bool queryRole) {
  const unsigned blocks = unsigned((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rows.width = precision == Precision::SplitTf32 ? 3 * d : d;
  rows.packedOwned = DeviceBuffer<float>();
  rows.halfOwned = DeviceBuffer<__half>();
  rows.packed = nullptr;
  rows.half = nullptr;
  rows.scale = 1;
  rows.underflow = 0;
  if (precision == Precision::Fp16) {
    // The largest value goes to [2^14, 2^15]: far from float16's overflow (65,504), and only
    // values 2^28 times smaller reach its subnormals.
    DeviceBuffer<unsigned> maxBits{1};
    NEARSCAPE_CUDA_CHECK(cudaMemset(maxBits.get(), 0, sizeof(unsigned)));
    maxAbsKernel<<<blocks, kWarpsPerBlock * 32>>>(rows.raw, n, d, deviceMean, int(metric),
                                                  maxBits.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    unsigned bits = 0;
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(&bits, maxBits.get(), sizeof(bits), cudaMemcpyDeviceToHost));
    float maxAbs;
    std::memcpy(&maxAbs, &bits, sizeof(maxAbs));
    if (maxAbs > 0) {
      // Beyond 2^±40 the product of two scales (the GEMM's alpha) could leave float's range.
      if (!(maxAbs >= std::ldexp(1.0f, -40) && maxAbs <= std::ldexp(1.0f, 40)))
        throw OutsideHalfRange{};
      rows.scale = std::ldexp(1.0f, 14 - std::ilogb(maxAbs));
    }
    rows.underflow = std::ldexp(1.0, -25) / rows.scale;
    rows.halfOwned = DeviceBuffer<__half>(std::size_t(n) * d);
    rows.half = rows.halfOwned.get();
  } else {
    rows.packedOwned = DeviceBuffer<float>(std::size_t(n) * rows.width);
    rows.packed = rows.packedOwned.get();
  }
  rows.normsOwned = DeviceBuffer<float>(std::size_t(n));
  rows.norms = rows.normsOwned.get();
  const int mode = precision == Precision::Fp16        ? kPackHalf
                   : precision == Precision::SplitTf32 ? kPackSplit
                                                       : kPackFloat;
  packKernel<<<blocks, kWarpsPerBlock * 32>>>(rows.raw, n, d, deviceMean, int(metric), mode,
                                              queryRole ? 1 : 0, rows.scale, rows.packedOwned.get(),
                                              rows.halfOwned.get(), rows.normsOwned.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

struct Tiles {
  int bq;
  int bb;
};

/// What one pass over a set of query rows produced.
struct PassResult {
  std::vector<std::int64_t> overflow; ///< local query rows whose margin kept too many candidates
  std::int64_t candidates = 0;        ///< candidates re-checked, summed over the other rows
};

/// Exact search of the `nq` query rows in `q` against `base`; writes row i's result to
/// outIds/outDist row targets[i] (host). `selfIds` (device, may be null): the base id each query
/// may not return.
PassResult searchPass(const DeviceRows& q, std::int64_t nq, const std::int64_t* selfIds,
                      const DeviceRows& base, std::int64_t nb, int d, float maxBaseNorm2,
                      Metric metric, Precision precision, int k, Tiles tiles,
                      const CublasHandle& cublas, const std::vector<std::int64_t>& targets,
                      std::int64_t targetOffset, std::int32_t* outIds, float* outDist,
                      JobControl& job, double progressFrom, double progressSpan,
                      PhaseClock& clock) {
  const int cap = int(knn::candidateCap(k));
  const int bq = int(std::min<std::int64_t>(tiles.bq, nq));
  const int bb = int(std::min<std::int64_t>(tiles.bb, nb));
  const int capG = bb + cap;
  const int width = base.width;
  const int ldc = (bb + 3) / 4 * 4; // rows of C 16-byte aligned for the filter's vector loads
  DeviceBuffer<float> C{std::size_t(bq) * ldc};
  DeviceBuffer<RowState> states{std::size_t(bq)};
  DeviceBuffer<Candidate> lists{std::size_t(bq) * capG};
  DeviceBuffer<int> pruneList{std::size_t(bq)}, pruneCount{1};
  DeviceBuffer<std::int32_t> tileIds{std::size_t(bq) * k};
  DeviceBuffer<float> tileDist{std::size_t(bq) * k};
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(cublas.get(), precision == Precision::SplitTf32
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
  int sortSize = 1;
  while (sortSize < cap)
    sortSize *= 2;
  const std::size_t rerankShared = std::size_t(sortSize) * (sizeof(double) + sizeof(std::int32_t));
  if (rerankShared > 48 * 1024)
    NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(
        rerankKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(rerankShared)));

  const float zero = 0.0f;
  PassResult result;
  std::vector<RowState> hostStates(static_cast<std::size_t>(bq));
  std::vector<std::int32_t> hostIds(static_cast<std::size_t>(bq) * k);
  std::vector<float> hostDist(static_cast<std::size_t>(bq) * k);
  for (std::int64_t i0 = 0; i0 < nq; i0 += bq) {
    const int rows = int(std::min<std::int64_t>(bq, nq - i0));
    initStatesKernel<<<(rows + 255) / 256, 256>>>(states.get(), q.norms + i0, rows, int(metric),
                                                  maxBaseNorm2, dotError(precision, d), d,
                                                  q.underflow, base.underflow);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    for (std::int64_t j0 = 0; j0 < nb; j0 += bb) {
      job.check();
      const int cols = int(std::min<std::int64_t>(bb, nb - j0));
      // Row-major C (rows × cols) = Q · Bᵀ, i.e. column-major C (cols × rows) = B · Qᵀ.
      NEARSCAPE_CUBLAS_CHECK(cublasGemmEx(
          cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, width, &alpha,
          static_cast<const char*>(basePacked) + j0 * width * elementBytes, inType, width,
          static_cast<const char*>(queryPacked) + i0 * width * elementBytes, inType, width, &zero,
          C.get(), CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT));
      clock.mark("gemm");
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int)));
      // After the last tile every row with more than k is pruned: the re-check reads each
      // candidate's row (3 KB at d = 784), so it pays to hand it only those within the bound.
      const bool lastTile = j0 + bb >= nb;
      filterKernel<<<(rows + kFilterRowsPerBlock - 1) / kFilterRowsPerBlock,
                     kFilterRowsPerBlock * kFilterWarpsPerRow * 32>>>(
          C.get(), rows, cols, ldc, q.norms + i0, base.norms + j0, selfIds ? selfIds + i0 : nullptr,
          j0, int(metric), k, states.get(), lists.get(), capG, lastTile ? k : cap, pruneList.get(),
          pruneCount.get());
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      clock.mark("filter");
      pruneKernel<<<std::min(rows, 4096), kPruneThreads>>>(
          states.get(), lists.get(), capG, base.norms, pruneList.get(), pruneCount.get(), k, cap);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      clock.mark("prune");
      job.progress(progressFrom + progressSpan *
                                      (double(i0) + double(rows) * double(j0 + cols) / double(nb)) /
                                      double(nq),
                   "exact kNN (GPU)");
    }
    rerankKernel<<<rows, kRerankThreads, rerankShared>>>(q.raw + i0 * d, base.raw, d, int(metric),
                                                         states.get(), lists.get(), capG, k,
                                                         sortSize, tileIds.get(), tileDist.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    clock.mark("rerank");
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostStates.data(), states.get(), sizeof(RowState) * rows,
                                    cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostIds.data(), tileIds.get(), sizeof(std::int32_t) * rows * k,
                                    cudaMemcpyDeviceToHost));
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostDist.data(), tileDist.get(), sizeof(float) * rows * k,
                                    cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
      if (hostStates[r].overflow) {
        result.overflow.push_back(i0 + r);
        continue;
      }
      result.candidates += hostStates[r].count;
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

constexpr std::int64_t kNoSelf = std::numeric_limits<std::int64_t>::min();

/// How one device run sits inside a larger search (a streamed chunk) or stands alone.
struct RunOptions {
  bool sameRows = false;             ///< the queries are the base's rows: packed once
  std::int64_t selfOffset = kNoSelf; ///< query i may not return base row i + selfOffset
  const float* deviceBase = nullptr; ///< the base's raw rows, already on the device
  double progressFrom = 0, progressSpan = 1;

  /// The base row query i may not return, or −1.
  std::int64_t selfOf(std::int64_t i, std::int64_t nb) const {
    if (selfOffset == kNoSelf)
      return -1;
    const std::int64_t s = i + selfOffset;
    return s >= 0 && s < nb ? s : -1;
  }
};

KnnResult runOnDevice(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, const RunOptions& options, const Context& context,
                      JobControl& job, const ExactKnnParams& params, Tiles tiles) {
  const auto started = std::chrono::steady_clock::now();
  PhaseClock clock{"exact"};
  const int device = context.device;
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(device));
  clock.mark("set device");
  const std::int64_t nq = queries.rows, nb = base.rows;
  const int d = int(base.cols);
  const int threads = effectiveThreads(context);
  CublasHandle cublas;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(nq * k));
  std::vector<float> dists(static_cast<std::size_t>(nq * k));
  std::int64_t candidates = 0;

  // The base goes up once; it is packed again on the device when the precision changes.
  DeviceRows deviceBase;
  if (options.deviceBase)
    deviceBase.raw = options.deviceBase;
  else
    uploadRaw(base, 0, nb, nullptr, deviceBase);
  clock.mark("upload");
  DeviceBuffer<float> mean{std::size_t(d)};
  if (metric == Metric::L2) {
    DeviceBuffer<double> sums{std::size_t(d)};
    NEARSCAPE_CUDA_CHECK(cudaMemset(sums.get(), 0, sizeof(double) * d));
    const int rowsPerBlock = 512;
    const dim3 grid(unsigned((d + 127) / 128), unsigned((nb + rowsPerBlock - 1) / rowsPerBlock));
    columnSumKernel<<<grid, 128>>>(deviceBase.raw, nb, d, rowsPerBlock, sums.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    divideKernel<<<(d + 127) / 128, 128>>>(sums.get(), d, double(nb), mean.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
  clock.mark("mean");
  float maxBaseNorm2 = 0;
  auto packBase = [&](Precision p) {
    packRows(deviceBase, nb, d, mean.get(), metric, p, false);
    std::vector<float> norms(static_cast<std::size_t>(nb));
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(norms.data(), deviceBase.norms, sizeof(float) * nb, cudaMemcpyDeviceToHost));
    maxBaseNorm2 = *std::max_element(norms.begin(), norms.end());
    clock.mark("pack base");
  };
  // A pass over query rows [begin, end), or over `rows` when given; returns the overflowed rows.
  auto pass = [&](Precision p, std::int64_t begin, std::int64_t end,
                  const std::vector<std::int64_t>* rows, double from, double span) {
    const std::int64_t n = rows ? std::int64_t(rows->size()) : end - begin;
    DeviceRows q;
    if (options.sameRows && !rows && p != Precision::SplitTf32) {
      q = deviceBase.view(begin, d); // the graph's queries are the base, packed alike
    } else {
      if (options.sameRows && !rows) {
        q.raw = deviceBase.raw + begin * d;
      } else {
        uploadRaw(queries, begin, n, rows, q);
      }
      packRows(q, n, d, mean.get(), metric, p, true);
    }
    DeviceBuffer<std::int64_t> selfIds;
    if (options.selfOffset != kNoSelf) {
      std::vector<std::int64_t> self(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        self[i] = options.selfOf(rows ? (*rows)[i] : begin + i, nb);
      selfIds = DeviceBuffer<std::int64_t>(std::size_t(n));
      NEARSCAPE_CUDA_CHECK(
          cudaMemcpy(selfIds.get(), self.data(), sizeof(std::int64_t) * n, cudaMemcpyHostToDevice));
    }
    clock.mark("queries");
    const PassResult r = searchPass(
        q, n, selfIds.get(), deviceBase, nb, d, maxBaseNorm2, metric, p, k, tiles, cublas,
        rows ? *rows : std::vector<std::int64_t>{}, begin, ids.data(), dists.data(), job,
        options.progressFrom + options.progressSpan * from, options.progressSpan * span, clock);
    candidates += r.candidates;
    std::vector<std::int64_t> overflow;
    for (const auto local : r.overflow)
      overflow.push_back(rows ? (*rows)[std::size_t(local)] : begin + local);
    return overflow;
  };

  std::vector<std::int64_t> remaining;
  std::string how;
  if (!params.reducedPrecision) {
    packBase(Precision::Fp32);
    remaining = pass(Precision::Fp32, 0, nq, nullptr, 0.0, 1.0);
    how = "float32 candidates";
  } else {
    // One float16 pass is about 16× cheaper than float32 (tensor cores at twice TF32's rate,
    // half the bytes) but its bound is loose: on data of high intrinsic dimension (many
    // near-equal distances) most rows would overflow. A probe of the first rows decides; rows
    // that still overflow are redone with 3xTF32.
    try {
      packBase(Precision::Fp16);
      const std::int64_t probe =
          std::min<std::int64_t>(nq, std::clamp<std::int64_t>(nq / 16, 64, 2048));
      remaining = pass(Precision::Fp16, 0, probe, nullptr, 0.0, 0.05);
      const bool halfWorks = remaining.size() * 50 <= std::size_t(probe); // ≤ 2% overflow
      if (halfWorks) {
        if (probe < nq) {
          const auto more = pass(Precision::Fp16, probe, nq, nullptr, 0.05, 0.9);
          remaining.insert(remaining.end(), more.begin(), more.end());
        }
        how = "float16 candidates";
        if (!remaining.empty()) {
          how += "; 3xTF32 for " + std::to_string(remaining.size()) + " rows";
          packBase(Precision::SplitTf32);
          const auto redo = remaining;
          remaining = pass(Precision::SplitTf32, 0, 0, &redo, 0.95, 0.05);
        }
      } else {
        packBase(Precision::SplitTf32);
        auto again = remaining;
        remaining = probe < nq ? pass(Precision::SplitTf32, probe, nq, nullptr, 0.05, 0.9)
                               : std::vector<std::int64_t>{};
        if (!again.empty()) {
          const auto more = pass(Precision::SplitTf32, 0, 0, &again, 0.95, 0.05);
          remaining.insert(remaining.end(), more.begin(), more.end());
        }
        how = "3xTF32 candidates";
      }
    } catch (const OutsideHalfRange&) {
      packBase(Precision::SplitTf32);
      remaining = pass(Precision::SplitTf32, 0, nq, nullptr, 0.0, 1.0);
      how = "3xTF32 candidates (values beyond float16's range)";
    }
  }

  // Rows whose bound kept too many candidates even so: a direct exact scan on the CPU.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::size_t r = 0; r < remaining.size(); ++r) {
    const std::int64_t i = remaining[r];
    knn::directRow(queries.row(i), base, metric, k, options.selfOf(i, nb), ids.data() + i * k,
                   dists.data() + i * k);
  }
  job.check();
  clock.mark("cpu rows");

  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device);
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cuda;
  result.report.device = prop.name;
  result.report.method = "exact";
  result.report.precision = how;
  result.fallbackRows = std::int64_t(remaining.size());
  result.candidatesPerRow =
      nq > result.fallbackRows ? double(candidates) / double(nq - result.fallbackRows) : 0.0;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  clock.mark("finish");
  job.progress(options.progressFrom + options.progressSpan, "exact kNN (GPU)");
  return result;
}

/// Device bytes of a search's tile buffers (C, candidate lists, results).
std::uint64_t tileBytes(Tiles t, int k) {
  const std::uint64_t bq = std::uint64_t(t.bq), bb = std::uint64_t(t.bb);
  return bq * ((bb + 3) / 4 * 4) * sizeof(float) +
         bq * (bb + knn::candidateCap(k)) * sizeof(Candidate) + bq * std::uint64_t(k) * 8 +
         bq * (sizeof(RowState) + 16);
}

/// Device bytes a resident row may take: raw, packed (3xTF32: 12 bytes a value at worst), norm.
std::uint64_t rowBytes(int d) {
  return 16ull * std::uint64_t(d) + 8;
}

/// The device memory a search may use: the budget when one is set, within what is free.
std::uint64_t deviceBudget(const Context& context) {
  std::size_t free = 0, total = 0;
  NEARSCAPE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::uint64_t usable = std::uint64_t(free) / 10 * 9;
  return context.memoryBudget > 0 ? std::min<std::uint64_t>(context.memoryBudget, usable) : usable;
}

/// Merges a chunk's exact top-k (base ids from `idOffset`) into the running top-k of the same
/// rows: both sorted by (distance, id), the chunks disjoint.
void mergeChunk(const KnnResult& part, std::int64_t rowOffset, std::int64_t idOffset, int k,
                std::vector<std::int32_t>& ids, std::vector<float>& dists) {
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < part.ids.rows(); ++r) {
    std::int32_t* id = ids.data() + (rowOffset + r) * k;
    float* dist = dists.data() + (rowOffset + r) * k;
    const std::int32_t* pid = part.ids.row(r);
    const float* pdist = part.distances.row(r);
    std::vector<std::int32_t> mid(static_cast<std::size_t>(k));
    std::vector<float> mdist(static_cast<std::size_t>(k));
    int a = 0, b = 0;
    for (int c = 0; c < k; ++c) {
      const std::int32_t bid = std::int32_t(pid[b] + idOffset);
      const bool takeA = id[a] >= 0 && (dist[a] < pdist[b] || (dist[a] == pdist[b] && id[a] < bid));
      mid[c] = takeA ? id[a] : bid;
      mdist[c] = takeA ? dist[a++] : pdist[b++];
    }
    std::copy(mid.begin(), mid.end(), id);
    std::copy(mdist.begin(), mdist.end(), dist);
  }
}

/// Data beyond the device's memory or the budget: the base goes up in chunks from host memory,
/// the next chunk's copy (its own host thread and stream) overlapping the current chunk's work;
/// each block of queries is searched against each chunk exactly, and the chunks' top-k are
/// merged (ties by id). Chunks hold at least 2(k + 1) rows, so every chunk yields k results.
KnnResult streamOnDevice(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                         Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                         const ExactKnnParams& params, std::uint64_t budget) {
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t nq = queries.rows, nb = base.rows;
  const int d = int(base.cols);
  Tiles tiles{8192, 8192};
  while (tileBytes(tiles, k) > budget / 4 && tiles.bq > 256)
    tiles = {tiles.bq / 2, tiles.bb / 2};
  const std::uint64_t left = budget > tileBytes(tiles, k) ? budget - tileBytes(tiles, k) : 0;
  // A third for a block of queries (raw and packed), two thirds for two raw chunks and one
  // packed.
  const std::int64_t blockRows = std::int64_t(left / 3 / rowBytes(d));
  const std::int64_t chunkRows = std::int64_t(left / 3 * 2 / (rowBytes(d) + 8ull * d));
  if (blockRows < 1 || chunkRows < 2 * (std::int64_t(k) + 1))
    throw DeviceOutOfMemory("the GPU memory budget (" + std::to_string(budget) +
                            " bytes) holds too few rows to stream the base in chunks");
  const std::int64_t chunks = (nb + chunkRows - 1) / chunkRows;
  const std::int64_t blocks = (nq + blockRows - 1) / blockRows;
  auto chunkAt = [&](std::int64_t c) { return nb * c / chunks; };
  auto blockAt = [&](std::int64_t b) { return nq * b / blocks; };
  auto rows = [&](const MatrixView<float>& m, std::int64_t a, std::int64_t b) {
    return MatrixView<float>{m.row(a), b - a, m.cols};
  };

  const std::int64_t largest = (nb + chunks - 1) / chunks + 1;
  DeviceBuffer<float> raw[2] = {DeviceBuffer<float>(std::size_t(largest) * d),
                                DeviceBuffer<float>(std::size_t(largest) * d)};
  std::int64_t holds[2] = {-1, -1}; // the chunk each buffer holds
  auto upload = [&](std::int64_t c) {
    const int slot = int(c % 2);
    if (holds[slot] == c)
      return;
    holds[slot] = -1;
    NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
    copyToDevice(raw[slot].get(), base.row(chunkAt(c)),
                 sizeof(float) * std::size_t(chunkAt(c + 1) - chunkAt(c)) * std::size_t(d));
    holds[slot] = c;
  };

  std::vector<std::int32_t> ids(static_cast<std::size_t>(nq * k), -1);
  std::vector<float> dists(ids.size(), std::numeric_limits<float>::infinity());
  RunReport report; // the first chunk's: device, method, precision
  std::int64_t fallbackRows = 0;
  double candidates = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t q0 = blockAt(b), q1 = blockAt(b + 1);
    upload(0);
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::future<void> next;
      if (c + 1 < chunks)
        next = std::async(std::launch::async, upload, c + 1);
      const std::int64_t c0 = chunkAt(c), c1 = chunkAt(c + 1);
      RunOptions options;
      options.deviceBase = raw[c % 2].get();
      options.sameRows = excludeSelf && q0 == c0 && q1 == c1;
      options.selfOffset = excludeSelf ? q0 - c0 : kNoSelf;
      options.progressFrom = double(b * chunks + c) / double(blocks * chunks);
      options.progressSpan = 1.0 / double(blocks * chunks);
      const KnnResult part = runOnDevice(rows(queries, q0, q1), rows(base, c0, c1), k, metric,
                                         options, context, job, params, tiles);
      mergeChunk(part, q0, c0, k, ids, dists);
      fallbackRows += part.fallbackRows;
      candidates += part.candidatesPerRow * double(q1 - q0);
      if (report.device.empty())
        report = part.report;
      if (next.valid())
        next.get();
    }
  }
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cuda;
  result.report = report;
  result.report.streamedChunks = int(chunks);
  if (blocks > 1)
    result.report.detail = std::to_string(blocks) + " query blocks";
  result.fallbackRows = fallbackRows;
  result.candidatesPerRow = candidates / double(nq); // summed over the chunks
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace

KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params) {
  if (int(knn::candidateCap(k)) > kMaxCap)
    throw Unsupported("the GPU exact search takes k ≤ " + std::to_string(kMaxCap / 4) + " for now");
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  // Large tiles: fewer, larger GEMMs, and a first tile's threshold drawn from more columns
  // (H200, fashion-mnist graph: 8,192² 0.052 s, 4,096 × 16,384 0.056 s, 4,096² 0.085 s).
  Tiles tiles{params.queryTile > 0 ? int(params.queryTile) : 8192,
              params.baseTile > 0 ? int(params.baseTile) : 8192};
  const int d = int(base.cols);
  const std::uint64_t needed = std::uint64_t(base.rows) * rowBytes(d) +
                               (excludeSelf ? 0 : std::uint64_t(queries.rows) * rowBytes(d)) +
                               tileBytes(tiles, k);
  if (needed > deviceBudget(context))
    return streamOnDevice(queries, base, k, metric, excludeSelf, context, job, params,
                          deviceBudget(context));
  RunOptions options;
  options.sameRows = excludeSelf;
  options.selfOffset = excludeSelf ? 0 : kNoSelf;
  // Out of device memory all the same (other users of the GPU): smaller query tiles, then the
  // base streamed within half of what is free; the caller falls back to the CPU after.
  for (;;) {
    try {
      return runOnDevice(queries, base, k, metric, options, context, job, params, tiles);
    } catch (const DeviceOutOfMemory&) {
      cudaGetLastError();
      if (tiles.bq <= 256)
        break;
      tiles.bq /= 4;
    }
  }
  return streamOnDevice(queries, base, k, metric, excludeSelf, context, job, params,
                        deviceBudget(context) / 2);
}

} // namespace nearscape::cuda
