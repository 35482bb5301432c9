// Exact kNN on CUDA. Candidates: cuBLAS GEMM tiles in TF32 (Faiss paper §3 tiling; reduced
// precision allowed for candidates only) with the norm expansion; each query row keeps every
// candidate within twice the proven rounding bound of its k-th (threshold filtering in the spirit
// of Dr. Top-k's delegate filtering: most of a tile never leaves the filter kernel); survivors are
// re-checked in float64 on the GPU. Rows whose bound keeps too many candidates are recomputed on
// the CPU. The same bound logic as the CPU backend (knn/ExactCommon.h, knn/CandidateRow.h).
#include "cuda/CudaApi.h"
#include "cuda/Bitonic.cuh"
#include "cuda/CudaCheck.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/Upload.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/ExactCommon.h"

#include "cuda/Cublas.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace nearscape::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kPruneThreads = 256;
constexpr int kRerankThreads = 256;
constexpr int kMaxCap = 8192; // candidates kept per row after a prune: k ≤ 2048

struct Candidate {
  float approx;
  std::int32_t id;
};

struct RowState {
  float threshold; // approximate distances above it are dropped
  float margin;    // 2E: twice the rounding bound of this row
  int count;       // candidates held
  int overflow;    // 1: too many candidates within the margin; recomputed on the CPU
};

__device__ inline float approxDistanceDevice(int metric, float qn, float bn, float dot) {
  return metric == int(Metric::L2) ? qn + bn - 2.0f * dot
                                   : (metric == int(Metric::InnerProduct) ? -dot : 1.0f - dot);
}

/// TF32 keeps the top 10 mantissa bits; rounding to nearest makes x − hi exact in float32.
__device__ inline float tf32High(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

/// One warp per row: transform(raw) (centre, copy or normalise) and ‖transform‖². With `split`
/// the row is written 3·d wide as [hi, lo, hi] (base role) or [hi, hi, lo] (query role), so that
/// one TF32 GEMM over 3·d sums hi·hi + lo·hi + hi·lo: float32-grade dots at tensor-core speed
/// ("3xTF32"; the dropped lo·lo term is below 2^-21 relative).
__global__ void packKernel(const float* __restrict__ raw, std::int64_t n, int d,
                           const float* __restrict__ mean, int metric, int split, int queryRole,
                           float* __restrict__ packed, float* __restrict__ norms) {
  const std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n)
    return;
  const float* x = raw + row * d;
  const int width = split ? 3 * d : d;
  float* o = packed + row * width;
  const double scale = warpCosineScale(x, d, metric, lane);
  double s = 0;
  for (int j = lane; j < d; j += 32) {
    const float v = packedValue(x, j, mean, metric, scale);
    if (split) {
      const float hi = tf32High(v), lo = v - hi;
      o[j] = hi;
      o[d + j] = queryRole ? hi : lo;
      o[2 * d + j] = queryRole ? lo : hi;
    } else {
      o[j] = v;
    }
    s += double(v) * v;
  }
  s = warpSum(s);
  if (lane == 0)
    norms[row] = float(s);
}

/// One warp per query row of a C tile (bq × bb dots): appends every approximate distance at or
/// below the row's threshold; rows holding more than `cap` are queued for pruning.
__global__ void filterKernel(const float* __restrict__ C, int bq, int bb,
                             const float* __restrict__ qNorms, const float* __restrict__ bNorms,
                             const std::int64_t* __restrict__ selfIds, std::int64_t bStart,
                             int metric,
                             RowState* __restrict__ states, Candidate* __restrict__ lists, int capG,
                             int cap, int* __restrict__ pruneList, int* __restrict__ pruneCount) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= bq)
    return;
  RowState st = states[row];
  if (st.overflow)
    return;
  const float t = st.threshold;
  const float qn = qNorms[row];
  const float* c = C + std::int64_t(row) * bb;
  Candidate* list = lists + std::int64_t(row) * capG;
  int count = st.count;
  const std::int64_t self = selfIds ? selfIds[row] : -1;
  for (int j0 = 0; j0 < bb; j0 += 32) {
    const int j = j0 + lane;
    bool pass = false;
    float a = 0;
    if (j < bb) {
      a = approxDistanceDevice(metric, qn, bNorms[j], c[j]);
      pass = a <= t && bStart + j != self;
    }
    const unsigned mask = __ballot_sync(0xffffffffu, pass);
    const int pos = count + __popc(mask & ((1u << lane) - 1));
    if (pass && pos < capG)
      list[pos] = {a, std::int32_t(bStart + j)};
    count += __popc(mask);
  }
  if (lane == 0) {
    if (count > capG) { // cannot happen while bb + cap ≤ capG; kept as a guard
      states[row].overflow = 1;
      states[row].count = 0;
      return;
    }
    states[row].count = count;
    if (count > cap)
      pruneList[atomicAdd(pruneCount, 1)] = row;
  }
}

__device__ inline unsigned orderedKey(float f) {
  const unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/// One block per queued row: finds the k-th smallest approximate distance (radix select on the
/// float's ordered bits), lowers the threshold to k-th + margin and compacts the survivors.
__global__ void pruneKernel(RowState* __restrict__ states, Candidate* __restrict__ lists, int capG,
                            const int* __restrict__ pruneList, const int* __restrict__ pruneCount,
                            int k, int cap) {
  __shared__ unsigned histogram[256];
  __shared__ unsigned prefix, prefixMask;
  __shared__ int remaining, written;
  const int queued = *pruneCount;
  for (int e = blockIdx.x; e < queued; e += gridDim.x) {
    const int row = pruneList[e];
    Candidate* list = lists + std::int64_t(row) * capG;
    const int count = states[row].count;
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
        const unsigned key = orderedKey(list[i].approx);
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
    const float threshold = fminf(states[row].threshold, kth + states[row].margin);
    if (threadIdx.x == 0)
      written = 0;
    __syncthreads();
    // In-place compaction, one block-sized chunk at a time: every item of a chunk is read before
    // any is written, and survivors land at positions already read.
    for (int base = 0; base < count; base += blockDim.x) {
      const int i = base + threadIdx.x;
      Candidate cnd{};
      const bool keep = i < count && (cnd = list[i]).approx <= threshold;
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
                                 float maxBaseNorm2, double dotRel) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= bq)
    return;
  // The bound of knn::errorBound (ExactCommon.cpp) with the GEMM's own dot-product error.
  const double u = 1.0 / (1 << 24);
  const double qn = sqrt(double(qNorms[i])), bn = sqrt(double(maxBaseNorm2));
  double e;
  if (metric == int(Metric::L2))
    e = 2.0 * (dotRel * qn * bn * 2.0 + 8.0 * u * (qn + bn) * (qn + bn));
  else if (metric == int(Metric::InnerProduct))
    e = 2.0 * (dotRel * qn * bn + 4.0 * u * qn * bn);
  else
    e = 2.0 * (dotRel + 16.0 * u);
  states[i] = {INFINITY, float(2.0 * e), 0, 0};
}

/// How candidates are computed: plain float32, one TF32 pass, or 3xTF32 (see packKernel).
enum class Precision { Fp32, Tf32, SplitTf32 };

/// Relative error of one GEMM dot product against ‖x‖‖y‖. Tensor cores may accumulate with
/// truncation, so 2u per addition; TF32 inputs may be truncated, so 2^-10 per input.
double dotError(Precision p, int d) {
  const double u = knn::kUnitRoundoff;
  switch (p) {
  case Precision::Fp32:
    return d * u;
  case Precision::Tf32:
    return 2.0 * d * u + 2.0 / 1024;
  case Precision::SplitTf32:
    return 2.0 * 3 * d * u + 4.0 / (1 << 21);
  }
  return 1;
}

/// Rows on the device: raw (the exact re-check reads them) and packed for the GEMM. Either owns
/// its buffers or views another's (rows [offset, offset + n) of it).
struct DeviceRows {
  DeviceBuffer<float> rawOwned, packedOwned, normsOwned;
  const float* raw = nullptr;
  const float* packed = nullptr;
  const float* norms = nullptr;
  int width = 0;

  DeviceRows view(std::int64_t offset, int d) const {
    DeviceRows v;
    v.raw = raw + offset * d;
    v.packed = packed + offset * width;
    v.norms = norms + offset;
    v.width = width;
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
  rows.width = precision == Precision::SplitTf32 ? 3 * d : d;
  rows.packedOwned = DeviceBuffer<float>(std::size_t(n) * rows.width);
  rows.normsOwned = DeviceBuffer<float>(std::size_t(n));
  rows.packed = rows.packedOwned.get();
  rows.norms = rows.normsOwned.get();
  packKernel<<<unsigned((n + kWarpsPerBlock - 1) / kWarpsPerBlock), kWarpsPerBlock * 32>>>(
      rows.raw, n, d, deviceMean, int(metric), precision == Precision::SplitTf32 ? 1 : 0,
      queryRole ? 1 : 0, rows.packedOwned.get(), rows.normsOwned.get());
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
                      std::int64_t targetOffset,
                      std::int32_t* outIds, float* outDist, JobControl& job, double progressFrom,
                      double progressSpan) {
  const int cap = int(knn::candidateCap(k));
  const int bq = int(std::min<std::int64_t>(tiles.bq, nq));
  const int bb = int(std::min<std::int64_t>(tiles.bb, nb));
  const int capG = bb + cap;
  const int width = base.width;
  DeviceBuffer<float> C{std::size_t(bq) * bb};
  DeviceBuffer<RowState> states{std::size_t(bq)};
  DeviceBuffer<Candidate> lists{std::size_t(bq) * capG};
  DeviceBuffer<int> pruneList{std::size_t(bq)}, pruneCount{1};
  DeviceBuffer<std::int32_t> tileIds{std::size_t(bq) * k};
  DeviceBuffer<float> tileDist{std::size_t(bq) * k};
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(
      cublas.get(), precision == Precision::Fp32 ? CUBLAS_DEFAULT_MATH : CUBLAS_TF32_TENSOR_OP_MATH));
  const cublasComputeType_t compute =
      precision == Precision::Fp32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
  int sortSize = 1;
  while (sortSize < cap)
    sortSize *= 2;
  const std::size_t rerankShared = std::size_t(sortSize) * (sizeof(double) + sizeof(std::int32_t));
  if (rerankShared > 48 * 1024)
    NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(
        rerankKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(rerankShared)));

  const float one = 1.0f, zero = 0.0f;
  PassResult result;
  std::vector<RowState> hostStates(static_cast<std::size_t>(bq));
  std::vector<std::int32_t> hostIds(static_cast<std::size_t>(bq) * k);
  std::vector<float> hostDist(static_cast<std::size_t>(bq) * k);
  for (std::int64_t i0 = 0; i0 < nq; i0 += bq) {
    const int rows = int(std::min<std::int64_t>(bq, nq - i0));
    initStatesKernel<<<(rows + 255) / 256, 256>>>(states.get(), q.norms + i0, rows,
                                                  int(metric), maxBaseNorm2,
                                                  dotError(precision, d));
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    for (std::int64_t j0 = 0; j0 < nb; j0 += bb) {
      job.check();
      const int cols = int(std::min<std::int64_t>(bb, nb - j0));
      // Row-major C (rows × cols) = Q · Bᵀ, i.e. column-major C (cols × rows) = B · Qᵀ.
      NEARSCAPE_CUBLAS_CHECK(cublasGemmEx(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, cols, rows,
                                          width, &one, base.packed + j0 * width, CUDA_R_32F,
                                          width, q.packed + i0 * width, CUDA_R_32F, width,
                                          &zero, C.get(), CUDA_R_32F, cols, compute,
                                          CUBLAS_GEMM_DEFAULT));
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(pruneCount.get(), 0, sizeof(int)));
      filterKernel<<<(rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32>>>(
          C.get(), rows, cols, q.norms + i0, base.norms + j0,
          selfIds ? selfIds + i0 : nullptr, j0, int(metric), states.get(), lists.get(), capG, cap,
          pruneList.get(), pruneCount.get());
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      pruneKernel<<<std::min(rows, 4096), kPruneThreads>>>(states.get(), lists.get(), capG,
                                                            pruneList.get(), pruneCount.get(), k,
                                                            cap);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      job.progress(progressFrom + progressSpan *
                                      (double(i0) + double(rows) * double(j0 + cols) / double(nb)) /
                                      double(nq),
                   "exact kNN (GPU)");
    }
    rerankKernel<<<rows, kRerankThreads, rerankShared>>>(
        q.raw + i0 * d, base.raw, d, int(metric), states.get(), lists.get(), capG, k,
        sortSize, tileIds.get(), tileDist.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
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
      std::memcpy(outIds + target * k, hostIds.data() + std::size_t(r) * k, sizeof(std::int32_t) * k);
      std::memcpy(outDist + target * k, hostDist.data() + std::size_t(r) * k, sizeof(float) * k);
    }
  }
  return result;
}

KnnResult runOnDevice(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params, Tiles tiles) {
  const auto started = std::chrono::steady_clock::now();
  const int device = context.device;
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(device));
  const std::int64_t nq = queries.rows, nb = base.rows;
  const int d = int(base.cols);
  const int threads = effectiveThreads(context);
  const knn::Packing packing = knn::makePacking(base, metric, threads);
  DeviceBuffer<float> mean{std::size_t(d)};
  if (metric == Metric::L2)
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(mean.get(), packing.mean.data(), sizeof(float) * d,
                                    cudaMemcpyHostToDevice));
  CublasHandle cublas;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(nq * k));
  std::vector<float> dists(static_cast<std::size_t>(nq * k));
  std::int64_t candidates = 0;

  // The base goes up once; it is packed again on the device when the precision changes.
  DeviceRows deviceBase;
  uploadRaw(base, 0, nb, nullptr, deviceBase);
  float maxBaseNorm2 = 0;
  auto packBase = [&](Precision p) {
    packRows(deviceBase, nb, d, mean.get(), metric, p, false);
    std::vector<float> norms(static_cast<std::size_t>(nb));
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(norms.data(), deviceBase.norms, sizeof(float) * nb,
                                    cudaMemcpyDeviceToHost));
    maxBaseNorm2 = *std::max_element(norms.begin(), norms.end());
  };
  // A pass over query rows [begin, end), or over `rows` when given; returns the overflowed rows.
  auto pass = [&](Precision p, std::int64_t begin, std::int64_t end,
                  const std::vector<std::int64_t>* rows, double from, double span) {
    const std::int64_t n = rows ? std::int64_t(rows->size()) : end - begin;
    DeviceRows q;
    if (excludeSelf && !rows && p != Precision::SplitTf32) {
      q = deviceBase.view(begin, d); // the graph's queries are the base, packed alike
    } else {
      if (excludeSelf && !rows) {
        q.raw = deviceBase.raw + begin * d;
      } else {
        uploadRaw(queries, begin, n, rows, q);
      }
      packRows(q, n, d, mean.get(), metric, p, true);
    }
    DeviceBuffer<std::int64_t> selfIds;
    if (excludeSelf) {
      std::vector<std::int64_t> self(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        self[i] = rows ? (*rows)[i] : begin + i;
      selfIds = DeviceBuffer<std::int64_t>(std::size_t(n));
      NEARSCAPE_CUDA_CHECK(cudaMemcpy(selfIds.get(), self.data(), sizeof(std::int64_t) * n,
                                      cudaMemcpyHostToDevice));
    }
    const PassResult r =
        searchPass(q, n, selfIds.get(), deviceBase, nb, d, maxBaseNorm2, metric, p, k, tiles,
                   cublas, rows ? *rows : std::vector<std::int64_t>{}, begin, ids.data(),
                   dists.data(), job, from, span);
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
    // One TF32 pass is 8× cheaper than float32 but its bound is loose: on data of high intrinsic
    // dimension (many near-equal distances) most rows would overflow. A probe of the first rows
    // decides; rows that still overflow are redone with 3xTF32.
    packBase(Precision::Tf32);
    const std::int64_t probe = std::min<std::int64_t>(nq, std::clamp<std::int64_t>(nq / 16, 64, 2048));
    remaining = pass(Precision::Tf32, 0, probe, nullptr, 0.0, 0.05);
    const bool tf32Works = remaining.size() * 50 <= std::size_t(probe); // ≤ 2% overflow
    if (tf32Works) {
      if (probe < nq) {
        const auto more = pass(Precision::Tf32, probe, nq, nullptr, 0.05, 0.9);
        remaining.insert(remaining.end(), more.begin(), more.end());
      }
      how = "TF32 candidates";
      if (!remaining.empty()) {
        how += "; 3xTF32 for " + std::to_string(remaining.size()) + " rows";
        packBase(Precision::SplitTf32);
        const auto redo = remaining;
        remaining = pass(Precision::SplitTf32, 0, 0, &redo, 0.95, 0.05);
      }
    } else {
      packBase(Precision::SplitTf32);
      auto again = remaining;
      remaining = pass(Precision::SplitTf32, probe, nq, nullptr, 0.05, 0.9);
      if (!again.empty()) {
        const auto more = pass(Precision::SplitTf32, 0, 0, &again, 0.95, 0.05);
        remaining.insert(remaining.end(), more.begin(), more.end());
      }
      how = "3xTF32 candidates";
    }
  }

  // Rows whose bound kept too many candidates even so: a direct exact scan on the CPU.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::size_t r = 0; r < remaining.size(); ++r) {
    const std::int64_t i = remaining[r];
    knn::directRow(queries.row(i), base, metric, k, excludeSelf ? i : -1, ids.data() + i * k,
                   dists.data() + i * k);
  }
  job.check();

  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device);
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cuda;
  result.device = std::string(prop.name) + " (" + how + ")";
  result.fallbackRows = std::int64_t(remaining.size());
  result.candidatesPerRow =
      nq > result.fallbackRows ? double(candidates) / double(nq - result.fallbackRows) : 0.0;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  job.progress(1.0, "done");
  return result;
}

} // namespace

KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params) {
  if (int(knn::candidateCap(k)) > kMaxCap)
    throw InvalidArgument("the GPU exact search takes k ≤ " + std::to_string(kMaxCap / 4) +
                          " for now");
  Tiles tiles{params.queryTile > 0 ? int(params.queryTile) : 4096,
              params.baseTile > 0 ? int(params.baseTile) : 4096};
  // Out of device memory: smaller query tiles first; the caller falls back to the CPU after.
  for (;;) {
    try {
      return runOnDevice(queries, base, k, metric, excludeSelf, context, job, params, tiles);
    } catch (const DeviceOutOfMemory&) {
      cudaGetLastError();
      if (tiles.bq <= 256)
        throw;
      tiles.bq /= 4;
    }
  }
}

} // namespace nearscape::cuda
