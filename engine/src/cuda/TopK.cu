// One query against a resident base, any k: distances by GEMV (float32, a tight bound), the
// k-th smallest by radix select over the float's ordered bits (Dr. Top-k §3: radix-select top-k,
// four 8-bit digit passes with shared-memory histograms), every candidate within the rounding
// bound of it kept in id order (CUB's order-preserving select), re-checked in float64 and sorted
// stably by distance (so ties keep the smaller id first).
#include "cuda/Bitonic.cuh"
#include "cuda/Cublas.cuh"
#include "cuda/CudaCheck.cuh"
#include "cuda/CudaKnn.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/ExactRows.cuh"
#include "cuda/Primitives.cuh"
#include "cuda/Rerank.cuh"
#include "cuda/Resources.cuh"
#include "cuda/Select.cuh"
#include "cuda/Upload.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/ExactCommon.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

namespace nearscape::cuda {
namespace {

constexpr int kThreads = 256;

/// Selection state on the device: the digits fixed so far and the rank still wanted.
struct RadixState {
  unsigned prefix;
  unsigned mask;
  int remaining;
  float threshold;
  float queryNorm; ///< ‖packed query‖² (L2)
  float margin;    ///< twice the rounding bound: candidates lie within it of the k-th
};

__global__ void approxKernel(const float* __restrict__ dots, const float* __restrict__ norms,
                             std::int64_t n, const RadixState* __restrict__ state, int metric,
                             float* __restrict__ out) {
  const float queryNorm = state->queryNorm;
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const float dot = dots[j];
    out[j] = metric == int(Metric::L2)             ? queryNorm + norms[j] - 2.0f * dot
             : metric == int(Metric::InnerProduct) ? -dot
                                                   : 1.0f - dot;
  }
}

__global__ void histogramKernel(const float* __restrict__ values, std::int64_t n,
                                const RadixState* __restrict__ state, int shift,
                                unsigned* __restrict__ histogram) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    local[b] = 0;
  __syncthreads();
  const unsigned prefix = state->prefix, mask = state->mask;
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const unsigned key = orderedBits(values[j]);
    if ((key & mask) == prefix)
      atomicAdd(&local[(key >> shift) & 0xffu], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b])
      atomicAdd(&histogram[b], local[b]);
}

/// Fixes the next digit: the bucket that holds the wanted rank. On the last digit, sets the
/// threshold to the k-th value plus the margin.
__global__ void chooseDigitKernel(unsigned* __restrict__ histogram, RadixState* __restrict__ state,
                                  int shift) {
  if (threadIdx.x != 0)
    return;
  int r = state->remaining;
  unsigned b = 0;
  while (b < 255 && int(histogram[b]) < r) {
    r -= int(histogram[b]);
    ++b;
  }
  state->remaining = r;
  state->prefix |= b << shift;
  state->mask |= 0xffu << shift;
  for (int i = 0; i < 256; ++i)
    histogram[i] = 0;
  if (shift == 0) {
    const unsigned key = state->prefix;
    const float kth = __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
    state->threshold = kth + state->margin;
  }
}

struct WithinThreshold {
  const float* values;
  const RadixState* state;
  __device__ bool operator()(std::int32_t j) const { return values[j] <= state->threshold; }
};

/// Exact float64 distances of the candidates, a warp per candidate.
__global__ void exactKernel(const float* __restrict__ query, const float* __restrict__ raw, int d,
                            int metric, const std::int32_t* __restrict__ ids, int count,
                            double* __restrict__ out) {
  const int c = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (c >= count)
    return;
  const double v = warpExactDistance(query, raw + std::int64_t(ids[c]) * d, d, metric, lane);
  if (lane == 0)
    out[c] = v;
}

constexpr int kSmallSort = 2048; ///< candidates the one-block re-rank sorts in shared memory
constexpr int kSmallThreads = 1024;

/// The usual case in one launch and no host round trip: when the select kept at most
/// kSmallSort candidates (read on the device), their float64 distances (a warp per candidate),
/// a bitonic sort by (distance, id) in shared memory, and the first k written to `out`:
/// [status, count, k ids, k distances as float bits]. status 1: too many, the caller sorts.
__global__ void rerankSmallKernel(const float* __restrict__ query, const float* __restrict__ raw,
                                  int d, int metric, const std::int32_t* __restrict__ ids,
                                  const int* __restrict__ selected, int k, int* __restrict__ out) {
  __shared__ double dist[kSmallSort];
  __shared__ std::int32_t id[kSmallSort];
  const int count = *selected;
  if (count > kSmallSort) {
    if (threadIdx.x == 0) {
      out[0] = 1;
      out[1] = count;
    }
    return;
  }
  const int lane = threadIdx.x % 32;
  scoreAndSort(
      nextPowerOfTwo(count), threadIdx.x / 32, kSmallThreads / 32, threadIdx.x, blockDim.x, dist,
      id,
      [&](int c) {
        if (c >= count)
          return Scored{INFINITY, kPadId};
        return Scored{warpExactDistance(query, raw + std::int64_t(ids[c]) * d, d, metric, lane),
                      ids[c]};
      },
      [] { __syncthreads(); });
  for (int c = threadIdx.x; c < k; c += blockDim.x) {
    out[2 + c] = id[c];
    out[2 + k + c] = __float_as_int(float(dist[c]));
  }
  if (threadIdx.x == 0) {
    out[0] = 0;
    out[1] = count;
  }
}

} // namespace

struct ResidentBase::State {
  int device = 0;
  Metric metric = Metric::L2;
  std::int64_t n = 0;
  int d = 0;
  float maxNorm2 = 0;
  std::vector<float> mean;
  DeviceBuffer<float> raw, packed, norms, meanDevice;
  DeviceBuffer<std::int32_t> iota;
  std::optional<ResourceLease> resources; ///< its stream and cuBLAS handle, for the object's life
  cublasHandle_t cublas = nullptr;        ///< resources' handle
  cudaStream_t stream = nullptr;          ///< resources' stream: every step of a search
  std::string name;
  // Working buffers of a search, allocated once: a click must not pay for allocations.
  DeviceBuffer<float> query, rawQuery, dots, approx;
  DeviceBuffer<unsigned> histogram;
  DeviceBuffer<RadixState> radix;
  DeviceBuffer<std::int32_t> selected, sortedIds;
  DeviceBuffer<int> selectedCount;
  DeviceBuffer<double> exact, exactSorted;
  DeviceBuffer<unsigned char> scratch;
  DeviceBuffer<int> small;      ///< rerankSmallKernel's output
  float* pinnedQuery = nullptr; ///< packed, then raw query: uploaded without a host wait
  RadixState* pinnedRadix = nullptr;
  int* pinnedSmall = nullptr; ///< rerankSmallKernel's output, copied back
  // The whole search for one k (kSmallSort at most) as a CUDA graph: one launch a query.
  cudaGraphExec_t graph = nullptr;
  int graphK = 0;
  std::mutex busy; // one search at a time
};

ResidentBase::ResidentBase(const MatrixView<float>& base, Metric metric, const Context& context)
    : m_state(std::make_unique<State>()) {
  State& s = *m_state;
  s.device = context.device;
  s.metric = metric;
  s.n = base.rows;
  s.d = int(base.cols);
  s.resources.emplace(leaseResources(s.device));
  s.stream = (*s.resources)->stream();
  s.cublas = (*s.resources)->cublas();
  s.name = (*s.resources)->properties().name;
  const knn::Packing packing = knn::makePacking(base, metric, effectiveThreads(context));
  s.mean = packing.mean;
  s.raw = DeviceBuffer<float>(std::size_t(s.n) * s.d);
  s.packed = DeviceBuffer<float>(std::size_t(s.n) * s.d);
  s.norms = DeviceBuffer<float>(std::size_t(s.n));
  s.meanDevice = DeviceBuffer<float>(std::size_t(s.d));
  s.iota = DeviceBuffer<std::int32_t>(std::size_t(s.n));
  copyToDevice(s.raw.get(), base.data, sizeof(float) * s.n * s.d);
  if (metric == Metric::L2)
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(s.meanDevice.get(), s.mean.data(), sizeof(float) * s.d, cudaMemcpyHostToDevice));
  packRowsFloat(s.raw.get(), s.n, s.d, s.meanDevice.get(), metric, s.packed.get(), s.norms.get(),
                nullptr);
  fillIota(s.iota.get(), s.n);
  std::vector<float> norms(static_cast<std::size_t>(s.n));
  NEARSCAPE_CUDA_CHECK(
      cudaMemcpy(norms.data(), s.norms.get(), sizeof(float) * s.n, cudaMemcpyDeviceToHost));
  s.maxNorm2 = *std::max_element(norms.begin(), norms.end());
  s.query = DeviceBuffer<float>(std::size_t(s.d));
  s.rawQuery = DeviceBuffer<float>(std::size_t(s.d));
  s.dots = DeviceBuffer<float>(std::size_t(s.n));
  s.approx = DeviceBuffer<float>(std::size_t(s.n));
  s.histogram = DeviceBuffer<unsigned>(256);
  s.radix = DeviceBuffer<RadixState>(1);
  s.selected = DeviceBuffer<std::int32_t>(std::size_t(s.n));
  s.sortedIds = DeviceBuffer<std::int32_t>(std::size_t(s.n));
  s.selectedCount = DeviceBuffer<int>(1);
  s.exact = DeviceBuffer<double>(std::size_t(s.n));
  s.exactSorted = DeviceBuffer<double>(std::size_t(s.n));
  NEARSCAPE_CUDA_CHECK(cudaMemset(s.histogram.get(), 0, 256 * sizeof(unsigned)));
  std::size_t selectBytes = 0, sortBytes = 0;
  cub::DeviceSelect::If(nullptr, selectBytes, s.iota.get(), s.selected.get(), s.selectedCount.get(),
                        int(s.n), WithinThreshold{s.approx.get(), s.radix.get()});
  cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, s.exact.get(), s.exactSorted.get(),
                                  s.selected.get(), s.sortedIds.get(), int(s.n));
  s.scratch = DeviceBuffer<unsigned char>(std::max(selectBytes, sortBytes));
  NEARSCAPE_CUDA_ALLOC(cudaHostAlloc(reinterpret_cast<void**>(&s.pinnedQuery),
                                     sizeof(float) * 2 * std::size_t(s.d), cudaHostAllocDefault));
  NEARSCAPE_CUDA_ALLOC(cudaHostAlloc(reinterpret_cast<void**>(&s.pinnedRadix), sizeof(RadixState),
                                     cudaHostAllocDefault));
  NEARSCAPE_CUDA_ALLOC(cudaHostAlloc(reinterpret_cast<void**>(&s.pinnedSmall),
                                     sizeof(int) * (2 + 2 * std::size_t(kSmallSort)),
                                     cudaHostAllocDefault));
  // float32 GEMV: the bound stays tight
  NEARSCAPE_CUBLAS_CHECK(cublasSetMathMode(s.cublas, CUBLAS_DEFAULT_MATH));
}

ResidentBase::~ResidentBase() {
  if (!m_state)
    return;
  State& s = *m_state;
  for (void* pinned : {static_cast<void*>(s.pinnedQuery), static_cast<void*>(s.pinnedRadix),
                       static_cast<void*>(s.pinnedSmall)})
    if (pinned)
      cudaFreeHost(pinned);
  if (s.graph)
    cudaGraphExecDestroy(s.graph);
}

KnnResult ResidentBase::search(const MatrixView<float>& queries, int k, JobControl& job) const {
  const auto started = std::chrono::steady_clock::now();
  State& s = *m_state;
  std::lock_guard lock(s.busy);
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(s.device));
  const std::int64_t n = s.n;
  const int d = s.d;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(queries.rows * k));
  std::vector<float> dists(ids.size());
  const float one = 1.0f, zero = 0.0f;
  std::int64_t candidates = 0;
  if (k <= kSmallSort && s.small.size() < std::size_t(2 + 2 * k))
    s.small = DeviceBuffer<int>(std::size_t(2 + 2 * k));
  float* packedQuery = s.pinnedQuery;
  float* rawQuery = s.pinnedQuery + d;
  const cudaStream_t stream = s.stream;
  // Uploads (queued from pinned memory), GEMV, the radix select and the candidates' selection.
  auto select = [&] {
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(s.query.get(), packedQuery, sizeof(float) * d,
                                         cudaMemcpyHostToDevice, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(s.rawQuery.get(), rawQuery, sizeof(float) * d,
                                         cudaMemcpyHostToDevice, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(s.radix.get(), s.pinnedRadix, sizeof(RadixState),
                                         cudaMemcpyHostToDevice, stream));
    // dots = packedBase · query (the row-major base is a column-major d × n matrix).
    NEARSCAPE_CUBLAS_CHECK(cublasSgemv(s.cublas, CUBLAS_OP_T, d, int(n), &one, s.packed.get(), d,
                                       s.query.get(), 1, &zero, s.dots.get(), 1));
    approxKernel<<<1024, kThreads, 0, stream>>>(s.dots.get(), s.norms.get(), n, s.radix.get(),
                                                int(s.metric), s.approx.get());
    for (int shift = 24; shift >= 0; shift -= 8) {
      histogramKernel<<<512, kThreads, 0, stream>>>(s.approx.get(), n, s.radix.get(), shift,
                                                    s.histogram.get());
      chooseDigitKernel<<<1, 32, 0, stream>>>(s.histogram.get(), s.radix.get(), shift);
    }
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    std::size_t bytes = s.scratch.size();
    NEARSCAPE_CUDA_CHECK(cub::DeviceSelect::If(
        s.scratch.get(), bytes, s.iota.get(), s.selected.get(), s.selectedCount.get(), int(n),
        WithinThreshold{s.approx.get(), s.radix.get()}, stream));
  };
  // …then, for k ≤ kSmallSort, the one-block re-rank and its copy back: all of it one graph.
  auto rerankSmall = [&] {
    rerankSmallKernel<<<1, kSmallThreads, 0, stream>>>(s.rawQuery.get(), s.raw.get(), d,
                                                       int(s.metric), s.selected.get(),
                                                       s.selectedCount.get(), k, s.small.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(s.pinnedSmall, s.small.get(), sizeof(int) * (2 + 2 * k),
                                         cudaMemcpyDeviceToHost, stream));
  };
  if (k <= kSmallSort && s.graphK != k) {
    if (s.graph)
      NEARSCAPE_CUDA_CHECK(cudaGraphExecDestroy(s.graph));
    s.graph = nullptr;
    s.graphK = 0;
    cudaGraph_t captured = nullptr;
    NEARSCAPE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      select();
      rerankSmall();
    } catch (...) {
      cudaStreamEndCapture(stream, &captured);
      if (captured)
        cudaGraphDestroy(captured);
      throw;
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamEndCapture(stream, &captured));
    const cudaError_t made = cudaGraphInstantiate(&s.graph, captured, 0);
    cudaGraphDestroy(captured);
    NEARSCAPE_CUDA_CHECK(made);
    s.graphK = k;
  }
  for (std::int64_t q = 0; q < queries.rows; ++q) {
    job.check();
    const float* x = queries.row(q);
    // Pack the query on the host (one row): centre, normalise or copy, as the base was.
    double norm2 = 0, raw2 = 0;
    for (int j = 0; j < d; ++j)
      raw2 += double(x[j]) * x[j];
    const double inv = s.metric == Metric::Cosine && raw2 > 0 ? 1.0 / std::sqrt(raw2) : 1.0;
    for (int j = 0; j < d; ++j) {
      rawQuery[j] = x[j];
      packedQuery[j] = s.metric == Metric::L2       ? x[j] - s.mean[j]
                       : s.metric == Metric::Cosine ? float(x[j] * inv)
                                                    : x[j];
      norm2 += double(packedQuery[j]) * packedQuery[j];
    }
    const float margin = float(2.0 * knn::errorBound(s.metric, d, norm2, s.maxNorm2, 0.0));
    // The staging is free: the last search's final copy has returned.
    *s.pinnedRadix = RadixState{0u, 0u, k, 0.0f, float(norm2), margin};
    if (s.graph) {
      NEARSCAPE_CUDA_CHECK(cudaGraphLaunch(s.graph, stream));
      NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
      const int* small = s.pinnedSmall;
      if (small[0] == 0) {
        candidates += small[1];
        for (int c = 0; c < k; ++c) {
          ids[std::size_t(q * k + c)] = small[2 + c];
          std::memcpy(&dists[std::size_t(q * k + c)], &small[2 + k + c], sizeof(float));
        }
        continue;
      }
    } else {
      select();
    }
    // Many candidates (large k, or many near ties): re-ranked and sorted by CUB.
    int count = 0;
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(&count, s.selectedCount.get(), sizeof(int),
                                         cudaMemcpyDeviceToHost, stream));
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    candidates += count;
    exactKernel<<<(count + kThreads / 32 - 1) / (kThreads / 32), kThreads, 0, stream>>>(
        s.rawQuery.get(), s.raw.get(), d, int(s.metric), s.selected.get(), count, s.exact.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    std::size_t bytes = s.scratch.size();
    NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(s.scratch.get(), bytes, s.exact.get(),
                                                         s.exactSorted.get(), s.selected.get(),
                                                         s.sortedIds.get(), count, 0, 64, stream));
    std::vector<double> best(static_cast<std::size_t>(k));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(ids.data() + q * k, s.sortedIds.get(),
                                         sizeof(std::int32_t) * k, cudaMemcpyDeviceToHost, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(best.data(), s.exactSorted.get(), sizeof(double) * k,
                                         cudaMemcpyDeviceToHost, stream));
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int c = 0; c < k; ++c)
      dists[std::size_t(q * k + c)] = float(best[std::size_t(c)]);
  }
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), queries.rows, k);
  result.distances = Matrix<float>(std::move(dists), queries.rows, k);
  result.backend = Backend::Cuda;
  result.report.device = s.name;
  result.report.setMethod(KnnMethod::ResidentBase);
  result.candidatesPerRow = queries.rows ? double(candidates) / double(queries.rows) : 0.0;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace nearscape::cuda
