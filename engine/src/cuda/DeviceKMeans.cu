#include "cuda/DeviceKMeans.cuh"

#include "cuda/CudaCheck.cuh"
#include "cuda/NearestCentroid.cuh"
#include "cuda/Primitives.cuh"
#include "cuda/Upload.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <random>

namespace nearscape::cuda {
namespace {

/// One warp per row: row i of `out` = row ids[i] of `in`.
__global__ void gatherKernel(const float* __restrict__ in, const std::int32_t* __restrict__ ids,
                             std::int64_t n, int d, float* __restrict__ out) {
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (i >= n)
    return;
  const float* src = in + std::int64_t(ids[i]) * d;
  for (int t = threadIdx.x % 32; t < d; t += 32)
    out[i * d + t] = src[t];
}

/// k-means' update: each row's coordinates added to its cluster's sums (a warp per row).
__global__ void accumulateKernel(const float* __restrict__ rows,
                                 const std::int32_t* __restrict__ labels, std::int64_t n, int d,
                                 float* __restrict__ sums, int* __restrict__ counts) {
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (i >= n)
    return;
  const int c = labels[i], lane = threadIdx.x % 32;
  for (int t = lane; t < d; t += 32)
    atomicAdd(&sums[std::int64_t(c) * d + t], rows[i * d + t]);
  if (lane == 0)
    atomicAdd(&counts[c], 1);
}

/// Centroid = mean of its rows; an emptied cluster keeps its centroid.
__global__ void divideKernel(const float* __restrict__ sums, const int* __restrict__ counts,
                             int clusters, int d, float* __restrict__ centroids) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= std::int64_t(clusters) * d)
    return;
  const int c = int(i / d);
  if (counts[c] > 0)
    centroids[i] = sums[i] / float(counts[c]);
}

__global__ void rowNormsKernel(const float* __restrict__ rows, int n, int d,
                               float* __restrict__ out) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (i >= n)
    return;
  float s = 0;
  for (int t = threadIdx.x % 32; t < d; t += 32)
    s += rows[std::int64_t(i) * d + t] * rows[std::int64_t(i) * d + t];
  for (int off = 16; off > 0; off /= 2)
    s += __shfl_xor_sync(kFullMask, s, off);
  if (threadIdx.x % 32 == 0)
    out[i] = s;
}

} // namespace

void gatherRows(const float* in, const std::int32_t* ids, std::int64_t n, int d, float* out,
                cudaStream_t stream) {
  gatherKernel<<<unsigned((n * 32 + 255) / 256), 256, 0, stream>>>(in, ids, n, d, out);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void Clustering::assign(cublasHandle_t cublas, const float* rows, std::int64_t n, int d,
                        std::int32_t* labels, cudaStream_t stream) const {
  const std::int64_t tile =
      std::max<std::int64_t>(1, std::min<std::int64_t>(n, (std::int64_t(256) << 20) / (4 * count)));
  DeviceBuffer<float> dots(std::size_t(tile) * std::size_t(count), stream);
  const float one = 1.0f, zero = 0.0f;
  for (std::int64_t r0 = 0; r0 < n; r0 += tile) {
    const std::int64_t m = std::min(tile, n - r0);
    NEARSCAPE_CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, count, int(m), d, &one,
                                       centroids.get(), d, rows + r0 * d, d, &zero, dots.get(),
                                       count));
    argminKernel<<<unsigned((m * 32 + 255) / 256), 256, 0, stream>>>(dots.get(), norms.get(), true,
                                                                     m, count, labels + r0);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
}

void Clustering::refreshNorms(int d, cudaStream_t stream) {
  rowNormsKernel<<<unsigned((count * 32 + 255) / 256), 256, 0, stream>>>(centroids.get(), count, d,
                                                                         norms.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

Clustering cluster(cublasHandle_t cublas, const float* rows, std::int64_t n, int d, int clusters,
                   std::uint64_t seed, cudaStream_t stream) {
  // A strided sample of about 64 rows a cluster, with a seeded offset; first centroids: rows of
  // it at a stride.
  const std::int64_t m = std::min<std::int64_t>(n, std::int64_t(clusters) * 64);
  std::mt19937_64 random(seed);
  std::vector<std::int32_t> pick(static_cast<std::size_t>(m));
  const std::int64_t shift =
      std::int64_t(random() % std::uint64_t(std::max<std::int64_t>(1, n / m)));
  for (std::int64_t i = 0; i < m; ++i)
    pick[std::size_t(i)] = std::int32_t(std::min(n - 1, i * n / m + shift));
  DeviceBuffer<std::int32_t> pickDevice(std::size_t(m), stream);
  copyToDevice(pickDevice.get(), pick.data(), sizeof(std::int32_t) * m, stream);
  DeviceBuffer<float> sample(std::size_t(m) * std::size_t(d), stream);
  gatherRows(rows, pickDevice.get(), m, d, sample.get(), stream);
  std::vector<std::int32_t> first(static_cast<std::size_t>(clusters));
  for (int c = 0; c < clusters; ++c)
    first[std::size_t(c)] = pick[std::size_t(std::int64_t(c) * m / clusters)];
  copyToDevice(pickDevice.get(), first.data(), sizeof(std::int32_t) * clusters, stream);
  Clustering out;
  out.count = clusters;
  out.centroids = DeviceBuffer<float>(std::size_t(clusters) * std::size_t(d), stream);
  out.norms = DeviceBuffer<float>(std::size_t(clusters), stream);
  gatherRows(rows, pickDevice.get(), clusters, d, out.centroids.get(), stream);
  DeviceBuffer<std::int32_t> labels(std::size_t(m), stream);
  DeviceBuffer<float> sums(std::size_t(clusters) * std::size_t(d), stream);
  DeviceBuffer<int> counts(std::size_t(clusters), stream);
  for (int iteration = 0; iteration < 6; ++iteration) {
    out.refreshNorms(d, stream);
    out.assign(cublas, sample.get(), m, d, labels.get(), stream);
    NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, sizeof(float) * sums.size(), stream));
    NEARSCAPE_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, sizeof(int) * counts.size(), stream));
    accumulateKernel<<<unsigned((m * 32 + 255) / 256), 256, 0, stream>>>(
        sample.get(), labels.get(), m, d, sums.get(), counts.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    const std::int64_t values = std::int64_t(clusters) * d;
    divideKernel<<<unsigned((values + 255) / 256), 256, 0, stream>>>(
        sums.get(), counts.get(), clusters, d, out.centroids.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
  out.refreshNorms(d, stream);
  return out;
}

std::vector<ClusterBlock> clusterBlocks(const std::vector<std::int64_t>& offsets, int rows) {
  std::vector<ClusterBlock> blocks;
  for (std::size_t c = 0; c + 1 < offsets.size(); ++c)
    for (std::int64_t b = offsets[c]; b < offsets[c + 1]; b += rows)
      blocks.push_back(
          {std::int32_t(c), std::int32_t(b), std::int32_t(std::min(b + rows, offsets[c + 1]))});
  return blocks;
}

ClusterOrder orderByCluster(const float* rows, const std::int32_t* labels, std::int64_t n, int d,
                            int clusters, cudaStream_t stream) {
  ClusterOrder out;
  out.ids = DeviceBuffer<std::int32_t>(std::size_t(n), stream);
  out.labels = DeviceBuffer<std::int32_t>(std::size_t(n), stream);
  DeviceBuffer<std::int32_t> iota(std::size_t(n), stream);
  fillIota(iota.get(), n, stream);
  int bits = 1;
  while ((1 << bits) < clusters)
    ++bits;
  std::size_t scratchBytes = 0;
  NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratchBytes, labels,
                                                       out.labels.get(), iota.get(), out.ids.get(),
                                                       int(n), 0, bits, stream));
  DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scratchBytes, 1), stream);
  NEARSCAPE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), scratchBytes, labels,
                                                       out.labels.get(), iota.get(), out.ids.get(),
                                                       int(n), 0, bits, stream));
  std::vector<std::int32_t> sortedLabels(static_cast<std::size_t>(n));
  copyToHost(sortedLabels.data(), out.labels.get(), sizeof(std::int32_t) * n, stream);
  out.hostOffsets.assign(std::size_t(clusters) + 1, 0);
  for (const std::int32_t c : sortedLabels)
    ++out.hostOffsets[std::size_t(c) + 1];
  for (int c = 0; c < clusters; ++c)
    out.hostOffsets[std::size_t(c) + 1] += out.hostOffsets[std::size_t(c)];
  out.offsets = uploaded(out.hostOffsets.data(), out.hostOffsets.size(), stream);
  if (rows) {
    out.rows = DeviceBuffer<float>(std::size_t(n) * std::size_t(d), stream);
    gatherRows(rows, out.ids.get(), n, d, out.rows.get(), stream);
  }
  return out;
}

} // namespace nearscape::cuda
