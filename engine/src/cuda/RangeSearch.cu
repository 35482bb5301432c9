// The near-duplicate range search on the GPU: the host's tile plan (analysis/TilePlan.h) names
// the tile pairs its boxes cannot rule out; batches of them go through one batched float32
// cuBLAS GEMM (no TF32: its rounding would widen the margin past the thresholds people use), a
// kernel proposes every entry within its row's rounding bound of the threshold, and the host
// re-checks the proposals in float64 — as the CPU twin does, so both return the same pairs.
#include "analysis/AllPairsCpu.h"
#include "cuda/Cublas.cuh"
#include "cuda/CudaAnalysis.h"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/ExactRows.cuh"
#include "cuda/Resources.cuh"
#include "cuda/Upload.cuh"
#include "nearscape/core/Log.h"

#include <math_constants.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

namespace nearscape::cuda {
namespace {

/// One tile pair of a batch: rows [a, a + rowsA) against [b, b + rowsB) (places in tile order).
struct PairJob {
  std::int32_t a, rowsA, b, rowsB;
};

/// Entry (i, j) of pair p's product (row-major rows × stride, stride = the tile size): proposed
/// when within row i's bound; a tile with itself keeps j > i only.
__global__ void proposeKernel(const float* __restrict__ products, const PairJob* __restrict__ jobs,
                              int tile, const float* __restrict__ norms,
                              const float* __restrict__ proposeUpTo, int metric,
                              std::int32_t* __restrict__ out, unsigned long long capacity,
                              unsigned long long* __restrict__ count) {
  const PairJob job = jobs[blockIdx.y];
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int i = int(e / tile), j = int(e % tile);
  if (i >= job.rowsA || j >= job.rowsB || (job.a == job.b && j <= i))
    return;
  const float dot = products[std::int64_t(blockIdx.y) * tile * tile + e];
  const int x = job.a + i, y = job.b + j;
  float approx;
  if (metric == int(Metric::L2))
    approx = norms[x] + norms[y] - 2.0f * dot;
  else if (metric == int(Metric::Cosine))
    approx = 1.0f - dot;
  else
    approx = -dot;
  if (approx > proposeUpTo[x])
    return;
  const unsigned long long slot = atomicAdd(count, 1ull);
  if (slot < capacity) {
    out[2 * slot] = x;
    out[2 * slot + 1] = y;
  }
}

/// Warp w of the grid takes row i = w mod tile of the batch's pair p = w / tile (a tile with
/// itself): the place of its nearest other row by the approximate distance, −1 when alone.
__global__ void nearestInTileKernel(const float* __restrict__ products,
                                    const PairJob* __restrict__ jobs, int tile, int pairs,
                                    const float* __restrict__ norms, int metric,
                                    std::int32_t* __restrict__ nearest) {
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= std::int64_t(pairs) * tile)
    return;
  const PairJob job = jobs[warp / tile];
  const int i = int(warp % tile);
  if (i >= job.rowsA)
    return;
  const float* row = products + warp * tile;
  float best = CUDART_INF_F;
  int bestJ = -1;
  for (int j = lane; j < job.rowsA; j += 32) {
    const float dot = row[j];
    const float approx = metric == int(Metric::L2) ? norms[job.a + i] + norms[job.a + j] - 2 * dot
                         : metric == int(Metric::Cosine) ? 1.0f - dot
                                                         : -dot;
    if (j != i && (approx < best || (approx == best && j < bestJ))) {
      best = approx;
      bestJ = j;
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    const float otherBest = __shfl_xor_sync(0xffffffffu, best, off);
    const int otherJ = __shfl_xor_sync(0xffffffffu, bestJ, off);
    if (otherJ >= 0 && (bestJ < 0 || otherBest < best || (otherBest == best && otherJ < bestJ))) {
      best = otherBest;
      bestJ = otherJ;
    }
  }
  if (lane == 0)
    nearest[job.a + i] = bestJ < 0 ? -1 : job.a + bestJ;
}

template <typename T> void upload(DeviceBuffer<T>& device, const T* host, std::size_t count) {
  NEARSCAPE_CUDA_CHECK(cudaMemcpy(device.get(), host, sizeof(T) * count, cudaMemcpyHostToDevice));
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

PairJob jobOf(const analysis::TilePlan& plan, std::int64_t a, std::int64_t b) {
  return {std::int32_t(plan.start[a]), std::int32_t(plan.rowsOf(a)), std::int32_t(plan.start[b]),
          std::int32_t(plan.rowsOf(b))};
}

/// The plan's rows on the device in tile order (a tile of zeros after them, so that every GEMM
/// of a batch is tile × tile, a short last tile reading into the zeros), their norms, and the
/// batched GEMM of tile pairs.
class DeviceTiles final : public gpu::TileSearch {
public:
  DeviceTiles(const MatrixView<float>& data, const analysis::TilePlan& plan, const Context& context)
      : m_data(data), m_plan(plan), m_device(context.device), m_threads(effectiveThreads(context)),
        m_d(data.cols), m_tile(int(plan.rowsOf(0))),
        m_batch(std::max<std::int64_t>(
            1, std::min<std::int64_t>(4096, (std::int64_t(1) << 30) /
                                                (std::int64_t(m_tile) * m_tile * 4)))),
        m_resources(leaseResources(context)), m_context(context) {
    const auto started = std::chrono::steady_clock::now();
    const std::int64_t n = data.rows;
    m_norms.assign(static_cast<std::size_t>(n + m_tile), 0.0f);
    for (std::int64_t m = 0; m < n; ++m)
      m_norms[m] = plan.norms[plan.order[m]];
    m_rowsDevice = DeviceBuffer<float>{std::size_t(n + m_tile) * std::size_t(m_d)};
    const std::unique_ptr<float[]> packed = analysis::packInTileOrder(data, plan, m_threads);
    const double packing = secondsSince(started);
    copyToDevice(m_rowsDevice.get(), packed.get(), sizeof(float) * std::size_t(n * m_d));
    NEARSCAPE_CUDA_CHECK(cudaMemset(m_rowsDevice.get() + n * m_d, 0,
                                    sizeof(float) * std::size_t(m_tile) * std::size_t(m_d)));
    splitForTensorCores(n + m_tile);
    m_normsDevice = DeviceBuffer<float>{m_norms.size()};
    upload(m_normsDevice, m_norms.data(), m_norms.size());
    m_products = DeviceBuffer<float>{std::size_t(m_batch) * m_tile * m_tile};
    m_pointers = DeviceBuffer<void*>{std::size_t(3 * m_batch)};
    m_jobs = DeviceBuffer<PairJob>{std::size_t(m_batch)};
    logMessage(context, LogLevel::Debug,
               "tile search: rows packed in tile order in " + std::to_string(packing) +
                   " s, uploaded (and split for 3xTF32: " + (m_split ? "yes" : "no") + ") in " +
                   std::to_string(secondsSince(started) - packing) + " s");
  }

  std::vector<std::int32_t> nearestInTile(JobControl& job) override {
    NEARSCAPE_CUDA_CHECK(cudaSetDevice(m_device));
    DeviceBuffer<std::int32_t> nearest{std::size_t(m_data.rows)};
    std::vector<PairJob> pairs;
    for (std::int64_t t0 = 0; t0 < m_plan.tiles(); t0 += m_batch) {
      job.check();
      pairs.clear();
      for (std::int64_t t = t0; t < std::min(m_plan.tiles(), t0 + m_batch); ++t)
        pairs.push_back(jobOf(m_plan, t, t));
      multiply(pairs);
      const std::int64_t warps = std::int64_t(pairs.size()) * m_tile;
      nearestInTileKernel<<<unsigned((warps * 32 + 255) / 256), 256>>>(
          m_products.get(), m_jobs.get(), m_tile, int(pairs.size()), m_normsDevice.get(),
          int(m_plan.metric), nearest.get());
      NEARSCAPE_CUDA_CHECK_LAUNCH();
    }
    std::vector<std::int32_t> out(static_cast<std::size_t>(m_data.rows));
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.data(), nearest.get(), sizeof(std::int32_t) * out.size(),
                                    cudaMemcpyDeviceToHost));
    return out;
  }

  NearPairs pairsWithin(double threshold, std::int64_t maxPairs, JobControl& job) override {
    NEARSCAPE_CUDA_CHECK(cudaSetDevice(m_device));
    const std::int64_t n = m_data.rows;
    const Metric metric = m_plan.metric;
    const double limit = analysis::approxUnits(metric, threshold);
    const auto started = std::chrono::steady_clock::now();
    const std::vector<analysis::TilePair> work = m_plan.pairsBelow(limit, m_threads);
    const double listed = secondsSince(started);
    // Row i proposes j when the GEMM's value is within its rounding bound of the threshold.
    std::vector<float> proposeUpTo(static_cast<std::size_t>(n + m_tile),
                                   -std::numeric_limits<float>::infinity());
    // The products' rounding: float32's d·u, or 3xTF32's (its splits rounded, lo·lo dropped).
    const double dotRel =
        m_split ? dotError(Precision::SplitTf32, int(m_d)) : double(m_d) * knn::kUnitRoundoff;
    const double maxNorm = std::sqrt(double(m_plan.maxNorm2));
    for (std::int64_t m = 0; m < n; ++m) {
      const knn::BoundTerms t =
          knn::gemmBoundTerms(metric, dotRel, std::sqrt(double(m_norms[m])), maxNorm);
      proposeUpTo[m] = float(limit + t.perBaseNorm * maxNorm + t.constant);
    }
    DeviceBuffer<float> proposeDevice{proposeUpTo.size()};
    upload(proposeDevice, proposeUpTo.data(), proposeUpTo.size());
    DeviceBuffer<unsigned long long> count{1};
    std::uint64_t capacity = std::uint64_t(1) << 22;
    DeviceBuffer<std::int32_t> proposals{2 * capacity};
    const cudaStream_t stream = m_resources->stream();

    std::vector<NearPair> pairs;
    std::vector<std::int32_t> hostProposals;
    std::int64_t proposed = 0;
    double rechecked = 0; // host seconds in the float64 re-check
    // Every tile pair's job and GEMM operands go up once per chunk of the list; then the device
    // runs batch after batch (GEMM, proposals appended) and the host waits only once per group
    // of batches, to take the group's proposals and re-check them.
    constexpr std::size_t kChunk = std::size_t(1) << 20; // tile pairs whose jobs are uploaded
    constexpr std::size_t kGroup = 8;                    // batches between host waits
    const std::size_t batch = std::size_t(m_batch);
    std::vector<PairJob> jobs;
    std::vector<const void*> operands;
    DeviceBuffer<PairJob> jobsDevice{std::min(kChunk, work.size())};
    DeviceBuffer<const void*> operandsDevice{2 * std::min(kChunk, work.size())};
    std::vector<void*> productPointers(batch);
    for (std::size_t p = 0; p < batch; ++p)
      productPointers[p] = m_products.get() + std::int64_t(p) * m_tile * m_tile;
    DeviceBuffer<void*> productsDevice{batch};
    upload(productsDevice, productPointers.data(), batch);
    const float one = 1.0f, zero = 0.0f;
    const std::int64_t width = m_split ? 3 * m_d : m_d; // a row's width in the GEMM
    // As on the CPU (kKeptWhileCounting): pairs are kept while they are few, else a first pass
    // counts them (refused past maxPairs before they fill the host's memory) and a second keeps
    // them in memory reserved for that many.
    const std::int64_t keptWhileCounting = std::min(maxPairs, analysis::kKeptWhileCounting);
    auto pass = [&](bool keepAll) { // the pairs' count when it stopped keeping them, else −1
      bool keeping = true;
      std::int64_t total = 0;
      proposed = 0;
      rechecked = 0;
      NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
      for (std::size_t c0 = 0; c0 < work.size(); c0 += kChunk) {
        const std::size_t chunk = std::min(kChunk, work.size() - c0);
        jobs.resize(chunk);
        operands.resize(2 * chunk);
#pragma omp parallel for num_threads(m_threads) schedule(static)
        for (std::size_t w = 0; w < chunk; ++w) {
          jobs[w] = jobOf(m_plan, work[c0 + w].a, work[c0 + w].b);
          // Column-major C (tile × tile) = B-rowsᵀ · A-rows, i.e. row-major C = A · Bᵀ.
          operands[w] = m_split ? m_splitBase.get() + std::int64_t(jobs[w].b) * width
                                : m_rowsDevice.get() + std::int64_t(jobs[w].b) * m_d;
          operands[chunk + w] = m_split ? m_splitQuery.get() + std::int64_t(jobs[w].a) * width
                                        : m_rowsDevice.get() + std::int64_t(jobs[w].a) * m_d;
        }
        NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(jobsDevice.get(), jobs.data(), sizeof(PairJob) * chunk,
                                             cudaMemcpyHostToDevice, stream));
        NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(operandsDevice.get(), operands.data(),
                                             sizeof(void*) * 2 * chunk, cudaMemcpyHostToDevice,
                                             stream));
        // Runs batches [g0, g1) of the chunk: products, then proposals appended to the buffer.
        auto runGroup = [&](std::size_t g0, std::size_t g1) {
          for (std::size_t b0 = g0; b0 < g1; b0 += batch) {
            const int pairsHere = int(std::min(batch, g1 - b0));
            NEARSCAPE_CUBLAS_CHECK(cublasGemmBatchedEx(
                m_resources->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, m_tile, m_tile, int(width), &one,
                operandsDevice.get() + b0, CUDA_R_32F, int(width),
                operandsDevice.get() + chunk + b0, CUDA_R_32F, int(width), &zero,
                productsDevice.get(), CUDA_R_32F, m_tile, pairsHere,
                m_split ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_PEDANTIC,
                CUBLAS_GEMM_DEFAULT));
            const dim3 grid(unsigned((std::int64_t(m_tile) * m_tile + 255) / 256),
                            unsigned(pairsHere));
            proposeKernel<<<grid, 256, 0, stream>>>(
                m_products.get(), jobsDevice.get() + b0, m_tile, m_normsDevice.get(),
                proposeDevice.get(), int(metric), proposals.get(), capacity, count.get());
            NEARSCAPE_CUDA_CHECK_LAUNCH();
          }
        };
        for (std::size_t g0 = 0; g0 < chunk; g0 += kGroup * batch) {
          job.check();
          const std::size_t g1 = std::min(chunk, g0 + kGroup * batch);
          runGroup(g0, g1);
          unsigned long long found = 0;
          NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(&found, count.get(), sizeof(unsigned long long),
                                               cudaMemcpyDeviceToHost, stream));
          NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
          if (found > capacity) { // beyond the buffer: grow it and run the group again
            capacity = found + found / 4;
            proposals = DeviceBuffer<std::int32_t>{2 * capacity};
            NEARSCAPE_CUDA_CHECK(
                cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
            runGroup(g0, g1);
            NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(&found, count.get(), sizeof(unsigned long long),
                                                 cudaMemcpyDeviceToHost, stream));
            NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
          }
          hostProposals.resize(2 * found);
          NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(hostProposals.data(), proposals.get(),
                                               sizeof(std::int32_t) * 2 * found,
                                               cudaMemcpyDeviceToHost, stream));
          NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
          NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
          proposed += std::int64_t(found);
          const auto checking = std::chrono::steady_clock::now();
          if (found > 0) {
            std::vector<NearPair> kept = analysis::keepWithin(
                m_data, m_plan, hostProposals.data(), std::int64_t(found), threshold, m_threads);
            total += std::int64_t(kept.size());
            if (keeping)
              pairs.insert(pairs.end(), kept.begin(), kept.end());
          }
          rechecked += secondsSince(checking);
          if (total > maxPairs)
            throw InvalidArgument("more than " + std::to_string(maxPairs) + " pairs lie within " +
                                  std::to_string(threshold) + ": choose a smaller threshold");
          if (keeping && !keepAll && total > keptWhileCounting) {
            keeping = false;
            pairs = {};
          }
          job.progress(double(c0 + g1) / double(work.size()),
                       keeping ? "pairs within the threshold"
                               : "counting the pairs within the threshold");
        }
      }
      return keeping ? std::int64_t(-1) : total;
    };
    if (const std::int64_t many = pass(false); many >= 0) { // many: kept in a second pass
      pairs.reserve(std::size_t(many));
      pass(true);
    }
    analysis::sortPairs(pairs);
    NearPairs result;
    result.pairs = std::move(pairs);
    result.threshold = threshold;
    result.tilePairs = std::int64_t(work.size());
    result.tilePairsAll = m_plan.tiles() * (m_plan.tiles() + 1) / 2;
    result.candidates = proposed;
    result.report.device = m_resources->properties().name;
    char detail[96];
    std::snprintf(detail, sizeof detail, "listed in %.2f s, %.2f s on the device and re-checked",
                  listed, secondsSince(started) - listed);
    result.report.detail = detail;
    result.report.precision = m_split ? "3xTF32 products" : "float32 products";
    logMessage(m_context, LogLevel::Debug,
               "tile search: " + std::to_string(work.size()) + " tile pairs in " +
                   std::to_string((work.size() + std::size_t(m_batch) - 1) / std::size_t(m_batch)) +
                   " batches; " + std::to_string(proposed) +
                   " proposals re-checked on the host in " + std::to_string(rechecked) + " s");
    return result;
  }

private:
  /// The rows split for 3xTF32 products (tensor cores at float32-grade accuracy, about three
  /// times the FP32 GEMM's rate), in both roles, when the device holds them with room to spare;
  /// else the products stay FP32.
  void splitForTensorCores(std::int64_t rows) {
    const std::size_t bytes = 2 * 3 * std::size_t(rows) * std::size_t(m_d) * sizeof(float);
    std::size_t free = 0, total = 0;
    NEARSCAPE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (bytes > free / 2)
      return;
    try {
      m_splitQuery = DeviceBuffer<float>{bytes / 2 / sizeof(float)};
      m_splitBase = DeviceBuffer<float>{bytes / 2 / sizeof(float)};
    } catch (const DeviceOutOfMemory&) { // another user took the room: FP32 products
      m_splitQuery = {};
      m_splitBase = {};
      return;
    }
    splitRowsTf32(m_rowsDevice.get(), rows, int(m_d), true, m_splitQuery.get(), nullptr);
    splitRowsTf32(m_rowsDevice.get(), rows, int(m_d), false, m_splitBase.get(), nullptr);
    m_split = true;
  }

  /// Products of the tile pairs of `pairs` (≤ m_batch): row-major rowsA × tile entries each.
  void multiply(const std::vector<PairJob>& pairs) {
    const int count = int(pairs.size());
    std::vector<void*> pointers(static_cast<std::size_t>(3 * m_batch), nullptr);
    for (int p = 0; p < count; ++p) {
      // Column-major C (tile × tile) = B-rowsᵀ · A-rows, i.e. row-major C = A · Bᵀ.
      pointers[p] = m_rowsDevice.get() + std::int64_t(pairs[p].b) * m_d;
      pointers[m_batch + p] = m_rowsDevice.get() + std::int64_t(pairs[p].a) * m_d;
      pointers[2 * m_batch + p] = m_products.get() + std::int64_t(p) * m_tile * m_tile;
    }
    upload(m_pointers, pointers.data(), pointers.size());
    upload(m_jobs, pairs.data(), std::size_t(count));
    const float one = 1.0f, zero = 0.0f;
    NEARSCAPE_CUBLAS_CHECK(cublasGemmBatchedEx(
        m_resources->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, m_tile, m_tile, int(m_d), &one,
        m_pointers.get(), CUDA_R_32F, int(m_d), m_pointers.get() + m_batch, CUDA_R_32F, int(m_d),
        &zero, m_pointers.get() + 2 * m_batch, CUDA_R_32F, m_tile, count,
        CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
  }

  const MatrixView<float> m_data;
  const analysis::TilePlan& m_plan;
  int m_device;
  int m_threads;
  std::int64_t m_d;
  int m_tile;
  std::int64_t m_batch;
  std::vector<float> m_norms; ///< tile order, then the zeros
  DeviceBuffer<float> m_rowsDevice, m_normsDevice, m_products;
  DeviceBuffer<float> m_splitQuery, m_splitBase; ///< 3xTF32 rows ([hi, hi, lo], [hi, lo, hi])
  bool m_split = false;
  DeviceBuffer<void*> m_pointers;
  DeviceBuffer<PairJob> m_jobs;
  ResourceLease m_resources; ///< its cuBLAS handle, for the object's life
  Context m_context;
};

} // namespace

std::unique_ptr<gpu::TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                const analysis::TilePlan& plan,
                                                const Context& context) {
  return std::make_unique<DeviceTiles>(data, plan, context);
}

} // namespace nearscape::cuda
