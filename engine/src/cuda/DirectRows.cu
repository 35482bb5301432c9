#include "cuda/DirectRows.cuh"

#include "cuda/CudaCheck.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/WarpRows.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <limits>

namespace nearscape::cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// One warp a (row, base row) pair: its exact distance as the sort key (+0.0 for −0.0, whose
/// bits would sort first) and the base row's id; the row's own item scores +inf.
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
      keys[p] = dist + 0.0;
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
  DeviceBuffer<double> keys{pairs}, sortedKeys{pairs};
  DeviceBuffer<std::int32_t> ids{pairs}, sortedIds{pairs};
  const std::int64_t blocks = std::min<std::int64_t>(
      (std::int64_t(pairs) + kThreads / 32 - 1) / (kThreads / 32), std::int64_t(1) << 16);
  directDistancesKernel<<<unsigned(blocks), kThreads, 0, stream>>>(
      base, nb, d, deviceQueries.get(), skips.get(), nr, int(metric), keys.get(), ids.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();

  // Each row sorted on its own; the radix sort is stable and ids start in order, so equal
  // distances keep the smaller id first, as directRow orders them.
  std::size_t scratchBytes = 0;
  NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratchBytes, keys.get(),
                                                       sortedKeys.get(), ids.get(), sortedIds.get(),
                                                       int(nb), 0, 64, stream));
  DeviceBuffer<unsigned char> scratch{scratchBytes};
  const int take = int(std::min<std::int64_t>(k, nb));
  std::vector<double> best(std::size_t(nr) * take);
  std::vector<std::int32_t> bestIds(std::size_t(nr) * take);
  for (int r = 0; r < nr; ++r) {
    const std::size_t at = std::size_t(r) * std::size_t(nb);
    NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        scratch.get(), scratchBytes, keys.get() + at, sortedKeys.get() + at, ids.get() + at,
        sortedIds.get() + at, int(nb), 0, 64, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(best.data() + std::size_t(r) * take, sortedKeys.get() + at,
                                         sizeof(double) * take, cudaMemcpyDeviceToHost, stream));
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(bestIds.data() + std::size_t(r) * take,
                                         sortedIds.get() + at, sizeof(std::int32_t) * take,
                                         cudaMemcpyDeviceToHost, stream));
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
