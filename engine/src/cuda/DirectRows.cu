#include "cuda/DirectRows.cuh"

#include "cuda/CudaCheck.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/WarpRows.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <climits>
#include <limits>

namespace nearscape::cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// One warp a (row, base row) pair: its exact distance and the base row's id; the row's own item
/// scores +inf.
__global__ void directDistancesKernel(const float* __restrict__ base, std::int64_t nb, int d,
                                      const float* __restrict__ queries,
                                      const std::int64_t* __restrict__ skips, int rows, int metric,
                                      double* __restrict__ keys, std::int32_t* __restrict__ ids) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  const std::int64_t total = std::int64_t(rows) * nb;
  for (std::int64_t p = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; p < total;
       p += warps) {
    const int r = int(p / nb);
    const std::int64_t j = p - std::int64_t(r) * nb;
    const double dist = j == skips[r] ? kInf
                                      : warpExactDistance(queries + std::int64_t(r) * d,
                                                          base + j * d, d, metric, lane);
    if (lane == 0) {
      keys[p] = dist;
      ids[p] = std::int32_t(j);
    }
  }
}

} // namespace

void directRowsOnDevice(const float* base, std::int64_t nb, int d, const MatrixView<float>& queries,
                        const std::vector<std::int64_t>& rows, Metric metric, int k,
                        const std::function<std::int64_t(std::int64_t)>& skipOf,
                        std::int32_t* outIds, float* outDist, cudaStream_t stream) {
  const int nr = int(rows.size());
  if (nr == 0 || nb == 0)
    return;
  NEARSCAPE_GPU_LIMIT(nb <= INT_MAX, "a direct scan of a base of more than 2^31 rows");
  std::vector<float> hostQueries(std::size_t(nr) * d);
  std::vector<std::int64_t> hostSkips(rows.size());
  for (int r = 0; r < nr; ++r) {
    const float* q = queries.row(rows[std::size_t(r)]);
    std::copy(q, q + d, hostQueries.begin() + std::ptrdiff_t(r) * d);
    hostSkips[std::size_t(r)] = skipOf(rows[std::size_t(r)]);
  }
  DeviceBuffer<float> deviceQueries{hostQueries.size()};
  DeviceBuffer<std::int64_t> skips{hostSkips.size()};
  NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(deviceQueries.get(), hostQueries.data(),
                                       sizeof(float) * hostQueries.size(), cudaMemcpyHostToDevice,
                                       stream));
  NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(skips.get(), hostSkips.data(),
                                       sizeof(std::int64_t) * hostSkips.size(),
                                       cudaMemcpyHostToDevice, stream));
  const std::size_t pairs = std::size_t(nr) * std::size_t(nb);
  DeviceBuffer<double> keys{pairs}, keysAlt{pairs};
  DeviceBuffer<std::int32_t> ids{pairs}, idsAlt{pairs};
  const int blocks = int(std::min<std::int64_t>(
      (std::int64_t(pairs) + kThreads / 32 - 1) / (kThreads / 32), std::int64_t(1) << 16));
  directDistancesKernel<<<blocks, kThreads, 0, stream>>>(
      base, nb, d, deviceQueries.get(), skips.get(), nr, int(metric), keys.get(), ids.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();

  // Each row sorted on its own: a segmented sort gives each segment one block, slow for a few
  // long rows (H100, manifold 1M's search: 0.059-0.073 s with a sort a row, 0.076-0.080 s
  // segmented).
  // The radix sort is stable and ids start in order, so equal distances keep the smaller id
  // first, as directRow orders them (it takes −0.0 as +0.0, as `<` does).
  std::size_t scratchBytes = 0;
  {
    cub::DoubleBuffer<double> keyBuffers(keys.get(), keysAlt.get());
    cub::DoubleBuffer<std::int32_t> idBuffers(ids.get(), idsAlt.get());
    NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratchBytes, keyBuffers,
                                                         idBuffers, int(nb), 0, 64, stream));
  }
  const DeviceBuffer<unsigned char> scratch{std::max<std::size_t>(scratchBytes, 1)};
  const int take = int(std::min<std::int64_t>(k, nb));
  std::vector<double> best(std::size_t(nr) * take);
  std::vector<std::int32_t> bestIds(std::size_t(nr) * take);
  for (int r = 0; r < nr; ++r) {
    const std::size_t at = std::size_t(r) * std::size_t(nb), to = std::size_t(r) * take;
    cub::DoubleBuffer<double> keyBuffers(keys.get() + at, keysAlt.get() + at);
    cub::DoubleBuffer<std::int32_t> idBuffers(ids.get() + at, idsAlt.get() + at);
    NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), scratchBytes, keyBuffers,
                                                         idBuffers, int(nb), 0, 64, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(best.data() + to, keyBuffers.Current(),
                                         sizeof(double) * take, cudaMemcpyDeviceToHost, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(bestIds.data() + to, idBuffers.Current(),
                                         sizeof(std::int32_t) * take, cudaMemcpyDeviceToHost,
                                         stream));
  }
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  // A row's own item (+inf, last) is left out, as directRow leaves it out.
  for (int r = 0; r < nr; ++r) {
    const std::int64_t i = rows[std::size_t(r)];
    for (int c = 0; c < take && best[std::size_t(r) * take + c] < kInf; ++c) {
      outIds[i * k + c] = bestIds[std::size_t(r) * take + c];
      outDist[i * k + c] = float(best[std::size_t(r) * take + c]);
    }
  }
}

} // namespace nearscape::cuda
