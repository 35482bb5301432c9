// Test kernels around the shared device primitives (PrimitiveProbes.h).
#include "PrimitiveProbes.h"

#include "cuda/CudaCheck.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/DirectRows.cuh"
#include "cuda/Primitives.cuh"
#include "cuda/Rerank.cuh"
#include "cuda/Select.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/GemmBound.h"

#include <limits>

namespace nearscape::probes {
namespace {

using cuda::DeviceBuffer;

template <typename T> DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> out(host.size());
  if (!host.empty())
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(out.get(), host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  return out;
}

template <typename T> std::vector<T> download(const DeviceBuffer<T>& device, std::size_t count) {
  std::vector<T> out(count);
  if (count > 0)
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(out.data(), device.get(), sizeof(T) * count, cudaMemcpyDeviceToHost));
  return out;
}

template <typename Key>
__global__ void selectKernel(const Key* keys, int count, int rank, Key* out) {
  // Twice in a row: the second call must not see the first one's shared state.
  const Key first = cuda::blockRadixSelect<Key>(count, rank, [&](int i) { return keys[i]; });
  const Key second = cuda::blockRadixSelect<Key>(count, rank, [&](int i) { return keys[i]; });
  // The first warp's own select must agree.
  const Key byWarp = threadIdx.x < 32 ? cuda::warpRadixSelect<Key>(keys, count, rank) : first;
  if (threadIdx.x == 0)
    *out = first == second && first == byWarp ? first : Key(0);
}

__global__ void orderedBitsKernel(const float* values, int n, std::uint32_t* bits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    bits[i] = cuda::orderedBits(values[i]);
}

__global__ void fromOrderedBitsKernel(const std::uint32_t* bits, int n, float* values) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    values[i] = cuda::fromOrderedBits(bits[i]);
}

__global__ void scoreAndSortKernel(const float* query, const float* base, int d, int metric,
                                   const std::int32_t* candidates, int count, int size,
                                   bool singleWarp, double* outDist, std::int32_t* outIds) {
  extern __shared__ unsigned char shared[];
  double* dist = reinterpret_cast<double*>(shared);
  std::int32_t* ids = reinterpret_cast<std::int32_t*>(dist + size);
  const int lane = threadIdx.x % 32;
  auto score = [&](int c) {
    const std::int32_t id = c < count ? candidates[c] : cuda::kPadId;
    if (c >= count || id < 0)
      return cuda::Scored{INFINITY, id};
    return cuda::Scored{
        cuda::warpExactDistance(query, base + std::int64_t(id) * d, d, metric, lane), id};
  };
  if (singleWarp) {
    if (threadIdx.x >= 32)
      return;
    cuda::scoreAndSort(size, 0, 1, lane, 32, dist, ids, score, [] { __syncwarp(); });
    for (int c = lane; c < size; c += 32) {
      outDist[c] = dist[c];
      outIds[c] = ids[c];
    }
  } else {
    cuda::scoreAndSort(size, threadIdx.x / 32, blockDim.x / 32, threadIdx.x, blockDim.x, dist, ids,
                       score, [] { __syncthreads(); });
    for (int c = threadIdx.x; c < size; c += blockDim.x) {
      outDist[c] = dist[c];
      outIds[c] = ids[c];
    }
  }
}

__global__ void boundKernel(int metric, double dotRel, double qn, double bn, double* out) {
  const knn::BoundTerms t = knn::gemmBoundTerms(Metric(metric), dotRel, qn, bn);
  out[0] = t.perBaseNorm;
  out[1] = t.constant;
}

template <typename Key> Key selectKey(const std::vector<Key>& keys, int rank, int threads) {
  const DeviceBuffer<Key> device = upload(keys);
  DeviceBuffer<Key> out(1);
  selectKernel<Key><<<1, threads>>>(device.get(), int(keys.size()), rank, out.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  return download(out, 1)[0];
}

} // namespace

bool deviceAvailable(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (why)
      *why = status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device";
    cudaGetLastError();
    return false;
  }
  return true;
}

std::uint32_t selectKey32(const std::vector<std::uint32_t>& keys, int rank, int threads) {
  return selectKey(keys, rank, threads);
}

std::uint64_t selectKey64(const std::vector<std::uint64_t>& keys, int rank, int threads) {
  return selectKey(keys, rank, threads);
}

std::vector<std::uint32_t> orderedBitsOf(const std::vector<float>& values) {
  const DeviceBuffer<float> device = upload(values);
  DeviceBuffer<std::uint32_t> bits(values.size());
  const int n = int(values.size());
  orderedBitsKernel<<<(n + 255) / 256, 256>>>(device.get(), n, bits.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  return download(bits, values.size());
}

std::vector<float> fromOrderedBitsOf(const std::vector<std::uint32_t>& bits) {
  const DeviceBuffer<std::uint32_t> device = upload(bits);
  DeviceBuffer<float> values(bits.size());
  const int n = int(bits.size());
  fromOrderedBitsKernel<<<(n + 255) / 256, 256>>>(device.get(), n, values.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  return download(values, bits.size());
}

void scoreAndSortOf(const std::vector<float>& query, const std::vector<float>& base, int d,
                    int metric, const std::vector<std::int32_t>& candidates, bool singleWarp,
                    std::vector<double>& distances, std::vector<std::int32_t>& ids) {
  const int count = int(candidates.size());
  const int size = cuda::nextPowerOfTwo(count);
  const DeviceBuffer<float> q = upload(query), b = upload(base);
  const DeviceBuffer<std::int32_t> c = upload(candidates);
  DeviceBuffer<double> outDist{std::size_t(size)};
  DeviceBuffer<std::int32_t> outIds{std::size_t(size)};
  const std::size_t shared = std::size_t(size) * (sizeof(double) + sizeof(std::int32_t));
  scoreAndSortKernel<<<1, 256, shared>>>(q.get(), b.get(), d, metric, c.get(), count, size,
                                         singleWarp, outDist.get(), outIds.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  distances = download(outDist, std::size_t(size));
  ids = download(outIds, std::size_t(size));
}

std::vector<std::int32_t> iotaOf(std::int64_t n) {
  DeviceBuffer<std::int32_t> out(static_cast<std::size_t>(n));
  cuda::fillIota(out.get(), n);
  return download(out, static_cast<std::size_t>(n));
}

std::vector<double> gemmBoundOnDevice(int metric, double dotRel, double queryNorm,
                                      double maxBaseNorm) {
  DeviceBuffer<double> out(2);
  boundKernel<<<1, 1>>>(metric, dotRel, queryNorm, maxBaseNorm, out.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  return download(out, 2);
}

void directRowsOnDeviceOf(const std::vector<float>& queries, const std::vector<float>& base, int d,
                          const std::vector<std::int64_t>& rows, int metric, int k, bool selfSkip,
                          std::vector<std::int32_t>& ids, std::vector<float>& distances) {
  const std::int64_t nq = std::int64_t(queries.size()) / d, nb = std::int64_t(base.size()) / d;
  const DeviceBuffer<float> b = upload(base);
  std::vector<std::int32_t> allIds(std::size_t(nq) * k, -1);
  std::vector<float> allDist(std::size_t(nq) * k, std::numeric_limits<float>::quiet_NaN());
  cuda::directRowsOnDevice(
      b.get(), nb, d, MatrixView<float>{queries.data(), nq, d}, rows, Metric(metric), k,
      [&](std::int64_t i) { return selfSkip ? i : std::int64_t(-1); }, allIds.data(),
      allDist.data(), nullptr);
  ids.clear();
  distances.clear();
  for (const std::int64_t i : rows) {
    ids.insert(ids.end(), allIds.begin() + i * k, allIds.begin() + (i + 1) * k);
    distances.insert(distances.end(), allDist.begin() + i * k, allDist.begin() + (i + 1) * k);
  }
}

} // namespace nearscape::probes
