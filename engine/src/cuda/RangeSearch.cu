// The near-duplicate range search on the GPU: the host's tile plan (analysis/TilePlan.h) names
// the tile pairs its boxes cannot rule out; batches of them go through one batched float32
// cuBLAS GEMM (no TF32: its rounding would widen the margin past the thresholds people use), a
// kernel proposes every entry within its row's rounding bound of the threshold, and the host
// re-checks the proposals in float64 — as the CPU twin does, so both return the same pairs.
#include "analysis/AllPairsCpu.h"
#include "cuda/Cublas.cuh"
#include "cuda/CudaApi.h"
#include "cuda/DeviceBuffer.cuh"

#include <math_constants.h>

#include <algorithm>
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

/// The plan's rows on the device in tile order (a tile of zeros after them, so that every GEMM
/// of a batch is tile × tile, a short last tile reading into the zeros), their norms, and the
/// batched GEMM of tile pairs.
class DeviceTiles {
public:
  DeviceTiles(const MatrixView<float>& data, const analysis::TilePlan& plan, int threads)
      : m_d(data.cols), m_tile(int(plan.rowsOf(0))),
        m_batch(std::max<std::int64_t>(
            1, std::min<std::int64_t>(4096, (std::int64_t(256) << 20) /
                                                (std::int64_t(m_tile) * m_tile * 4)))) {
    const std::int64_t n = data.rows;
    norms.assign(static_cast<std::size_t>(n + m_tile), 0.0f);
    for (std::int64_t m = 0; m < n; ++m)
      norms[m] = plan.norms[plan.order[m]];
    m_rows = DeviceBuffer<float>{std::size_t(n + m_tile) * std::size_t(m_d)};
    const std::vector<float> packed = analysis::packInTileOrder(data, plan, threads);
    upload(m_rows, packed.data(), packed.size());
    NEARSCAPE_CUDA_CHECK(cudaMemset(m_rows.get() + n * m_d, 0,
                                    sizeof(float) * std::size_t(m_tile) * std::size_t(m_d)));
    m_norms = DeviceBuffer<float>{norms.size()};
    upload(m_norms, norms.data(), norms.size());
    m_products = DeviceBuffer<float>{std::size_t(m_batch) * m_tile * m_tile};
    m_pointers = DeviceBuffer<void*>{std::size_t(3 * m_batch)};
    m_jobs = DeviceBuffer<PairJob>{std::size_t(m_batch)};
  }

  int tile() const { return m_tile; }
  std::int64_t batch() const { return m_batch; }
  const float* deviceNorms() const { return m_norms.get(); }
  const float* products() const { return m_products.get(); }
  const PairJob* jobs() const { return m_jobs.get(); }

  /// Products of `count` ≤ batch() tile pairs: row-major rowsA × tile entries each.
  void multiply(const std::vector<PairJob>& pairs, int count) {
    std::vector<void*> pointers(static_cast<std::size_t>(3 * m_batch), nullptr);
    for (int p = 0; p < count; ++p) {
      // Column-major C (tile × tile) = B-rowsᵀ · A-rows, i.e. row-major C = A · Bᵀ.
      pointers[p] = m_rows.get() + std::int64_t(pairs[p].b) * m_d;
      pointers[m_batch + p] = m_rows.get() + std::int64_t(pairs[p].a) * m_d;
      pointers[2 * m_batch + p] = m_products.get() + std::int64_t(p) * m_tile * m_tile;
    }
    upload(m_pointers, pointers.data(), pointers.size());
    upload(m_jobs, pairs.data(), std::size_t(count));
    const float one = 1.0f, zero = 0.0f;
    NEARSCAPE_CUBLAS_CHECK(cublasGemmBatchedEx(
        m_cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, m_tile, m_tile, int(m_d), &one, m_pointers.get(),
        CUDA_R_32F, int(m_d), m_pointers.get() + m_batch, CUDA_R_32F, int(m_d), &zero,
        m_pointers.get() + 2 * m_batch, CUDA_R_32F, m_tile, count, CUBLAS_COMPUTE_32F_PEDANTIC,
        CUBLAS_GEMM_DEFAULT));
  }

  std::vector<float> norms; ///< host copy, tile order (then the zeros)

private:
  std::int64_t m_d;
  int m_tile;
  std::int64_t m_batch;
  DeviceBuffer<float> m_rows, m_norms, m_products;
  DeviceBuffer<void*> m_pointers;
  DeviceBuffer<PairJob> m_jobs;
  CublasHandle m_cublas;
};

PairJob jobOf(const analysis::TilePlan& plan, std::int64_t a, std::int64_t b) {
  return {std::int32_t(plan.start[a]), std::int32_t(plan.rowsOf(a)), std::int32_t(plan.start[b]),
          std::int32_t(plan.rowsOf(b))};
}

} // namespace

std::vector<std::int32_t> tileNearest(const MatrixView<float>& data, const analysis::TilePlan& plan,
                                      const Context& context, JobControl& job) {
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  DeviceTiles tiles(data, plan, effectiveThreads(context));
  DeviceBuffer<std::int32_t> nearest{std::size_t(data.rows) + std::size_t(tiles.tile())};
  std::vector<PairJob> pairs;
  for (std::int64_t t0 = 0; t0 < plan.tiles(); t0 += tiles.batch()) {
    job.check();
    pairs.clear();
    for (std::int64_t t = t0; t < std::min(plan.tiles(), t0 + tiles.batch()); ++t)
      pairs.push_back(jobOf(plan, t, t));
    tiles.multiply(pairs, int(pairs.size()));
    const std::int64_t warps = std::int64_t(pairs.size()) * tiles.tile();
    nearestInTileKernel<<<unsigned((warps * 32 + 255) / 256), 256>>>(
        tiles.products(), tiles.jobs(), tiles.tile(), int(pairs.size()), tiles.deviceNorms(),
        int(plan.metric), nearest.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
  std::vector<std::int32_t> out(static_cast<std::size_t>(data.rows));
  NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.data(), nearest.get(), sizeof(std::int32_t) * out.size(),
                                  cudaMemcpyDeviceToHost));
  return out;
}

NearPairs pairsWithin(const MatrixView<float>& data, const analysis::TilePlan& plan,
                      double threshold, std::int64_t maxPairs, const Context& context,
                      JobControl& job) {
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  const std::int64_t n = data.rows, d = data.cols;
  const int threads = effectiveThreads(context);
  const Metric metric = plan.metric;
  const double limit = analysis::approxUnits(metric, threshold);
  const std::vector<analysis::TilePair> work = plan.pairsBelow(limit);
  DeviceTiles tiles(data, plan, threads);
  const int tile = tiles.tile();
  // Row i proposes j when the GEMM's value is within its rounding bound of the threshold.
  std::vector<float> proposeUpTo(static_cast<std::size_t>(n + tile),
                                 -std::numeric_limits<float>::infinity());
  for (std::int64_t m = 0; m < n; ++m)
    proposeUpTo[m] = float(limit + knn::errorBound(metric, d, tiles.norms[m], plan.maxNorm2, 0.0));
  DeviceBuffer<float> proposeDevice{proposeUpTo.size()};
  upload(proposeDevice, proposeUpTo.data(), proposeUpTo.size());
  DeviceBuffer<unsigned long long> count{1};
  std::uint64_t capacity = std::uint64_t(1) << 22;
  DeviceBuffer<std::int32_t> proposals{2 * capacity};

  std::vector<NearPair> pairs;
  std::vector<std::int32_t> hostProposals;
  std::vector<PairJob> batch;
  std::int64_t proposed = 0;
  for (std::size_t w0 = 0; w0 < work.size(); w0 += std::size_t(tiles.batch())) {
    job.check();
    batch.clear();
    for (std::size_t w = w0; w < std::min(work.size(), w0 + std::size_t(tiles.batch())); ++w)
      batch.push_back(jobOf(plan, work[w].a, work[w].b));
    const int count0 = int(batch.size());
    tiles.multiply(batch, count0);
    unsigned long long found = 0;
    for (;;) { // proposals beyond the buffer: grow it and scan the same products again
      NEARSCAPE_CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned long long)));
      const dim3 grid(unsigned((std::int64_t(tile) * tile + 255) / 256), unsigned(count0));
      proposeKernel<<<grid, 256>>>(tiles.products(), tiles.jobs(), tile, tiles.deviceNorms(),
                                   proposeDevice.get(), int(metric), proposals.get(), capacity,
                                   count.get());
      NEARSCAPE_CUDA_CHECK_LAUNCH();
      NEARSCAPE_CUDA_CHECK(
          cudaMemcpy(&found, count.get(), sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      if (found <= capacity)
        break;
      capacity = found + found / 4;
      proposals = DeviceBuffer<std::int32_t>{2 * capacity};
    }
    hostProposals.resize(2 * found);
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(hostProposals.data(), proposals.get(),
                                    sizeof(std::int32_t) * 2 * found, cudaMemcpyDeviceToHost));
    proposed += std::int64_t(found);
    std::vector<NearPair> kept = analysis::keepWithin(data, plan, hostProposals.data(),
                                                      std::int64_t(found), threshold, threads);
    pairs.insert(pairs.end(), kept.begin(), kept.end());
    if (std::int64_t(pairs.size()) > maxPairs)
      throw InvalidArgument("more than " + std::to_string(maxPairs) + " pairs lie within " +
                            std::to_string(threshold) + ": choose a smaller threshold");
    job.progress(double(w0 + std::size_t(count0)) / double(work.size()),
                 "pairs within the threshold");
  }
  analysis::sortPairs(pairs);
  NearPairs result;
  result.pairs = std::move(pairs);
  result.threshold = threshold;
  result.tilePairs = std::int64_t(work.size());
  result.tilePairsAll = plan.tiles() * (plan.tiles() + 1) / 2;
  result.candidates = proposed;
  result.report.device = queryDevice(context.device).name;
  return result;
}

} // namespace nearscape::cuda
