#include "cuda/ShareExchange.cuh"

#include "cuda/CudaCheck.cuh"
#include "cuda/Upload.cuh"

#include <algorithm>
#include <exception>

namespace nearscape::cuda {
namespace {

__global__ void takeThresholdsKernel(const RowState* states, float* out, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = states[i].threshold;
}

__global__ void lowerThresholdsKernel(RowState* states, const float* theirs, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && theirs[i] < states[i].threshold)
    states[i].threshold = theirs[i];
}

unsigned blocksFor(std::int64_t n) {
  return unsigned((n + 255) / 256);
}

/// Lets `device` read `other`'s memory directly where they allow it (NVLink, PCIe P2P), once;
/// else the driver stages peer copies through the host.
void enablePeer(int device, int other, std::vector<int>& enabled) {
  if (other == device || std::find(enabled.begin(), enabled.end(), other) != enabled.end())
    return;
  int can = 0;
  NEARSCAPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, other));
  if (can && cudaDeviceEnablePeerAccess(other, 0) != cudaSuccess)
    cudaGetLastError(); // already enabled (by another share's pass): fine
  enabled.push_back(other);
}

/// Copies `bytes` from `from` on `fromDevice` to `to` on `device` (the current one).
void copyFromDevice(void* to, int device, const void* from, int fromDevice, std::size_t bytes,
                    cudaStream_t stream) {
  if (fromDevice == device)
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
  else
    NEARSCAPE_CUDA_CHECK(cudaMemcpyPeerAsync(to, device, from, fromDevice, bytes, stream));
}

/// Runs `read` (the others' offers, copied on `stream`), then doneReading whatever `read`
/// throws, then rethrows it: nobody waits in vain for a share that failed while reading, and no
/// copy it queued is still reading another's buffer once that one goes on.
template <typename Read>
void readThenDone(knn::PairsExchange& exchange, int part, cudaStream_t stream, Read&& read) {
  std::exception_ptr failed;
  try {
    read();
  } catch (...) {
    failed = std::current_exception();
    cudaStreamSynchronize(stream); // its own error, if any, is the one rethrown
    cudaGetLastError();
  }
  exchange.doneReading(part);
  if (failed)
    std::rethrow_exception(failed);
}

} // namespace

void uploadAcrossShares(const MatrixView<float>& data, knn::PairsExchange& exchange, int part,
                        int parts, cudaStream_t stream, const JobControl& job, DeviceRows& out) {
  const std::int64_t n = data.rows;
  const int d = int(data.cols);
  auto begin = [&](int p) { return n * p / parts; };
  out.rawOwned = DeviceBuffer<float>(std::size_t(n) * std::size_t(d));
  out.raw = out.rawOwned.get();
  float* const raw = out.rawOwned.get();
  auto fromHost = [&](int p) {
    copyToDevice(raw + begin(p) * d, data.row(begin(p)),
                 sizeof(float) * std::size_t(begin(p + 1) - begin(p)) * std::size_t(d));
  };
  fromHost(part);
  int device = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  std::vector<bool> copied(std::size_t(parts), false); // made before the round: nothing throws
  copied[std::size_t(part)] = true;                    // between meet and doneReading but read
  if (exchange.gaveUp())
    throw ThresholdExchange::GaveUp{};
  const std::vector<knn::PairsExchange::Offer> offers = exchange.meet(part, {device, raw}, job);
  readThenDone(exchange, part, stream, [&] {
    std::vector<int> peers;
    for (const knn::PairsExchange::Offer& offer : offers) {
      const int p = offer.part;
      enablePeer(device, offer.device, peers);
      copyFromDevice(raw + begin(p) * d, device,
                     static_cast<const float*>(offer.data) + begin(p) * d, offer.device,
                     sizeof(float) * std::size_t(begin(p + 1) - begin(p)) * std::size_t(d), stream);
      copied[std::size_t(p)] = true;
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  for (int p = 0; p < parts; ++p)
    if (!copied[std::size_t(p)])
      fromHost(p);
}

ThresholdExchange::ThresholdExchange(knn::PairsExchange& exchange, int part, std::int64_t n)
    : m_exchange(exchange), m_part(part), m_n(n), m_mine(std::size_t(n)), m_theirs(std::size_t(n)) {
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&m_device));
}

void ThresholdExchange::operator()(RowState* states, cudaStream_t stream, const JobControl& job) {
  if (m_exchange.gaveUp()) // a cheaper way pays, or another share left without its result
    throw GaveUp{};
  takeThresholdsKernel<<<blocksFor(m_n), 256, 0, stream>>>(states, m_mine.get(), m_n);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream)); // offered whole
  const std::vector<knn::PairsExchange::Offer> offers =
      m_exchange.meet(m_part, {m_device, m_mine.get()}, job);
  // Every share reads the others' offers before any of them changes its own again.
  readThenDone(m_exchange, m_part, stream, [&] {
    for (const knn::PairsExchange::Offer& offer : offers) {
      enablePeer(m_device, offer.device, m_peers);
      copyFromDevice(m_theirs.get(), m_device, offer.data, offer.device,
                     sizeof(float) * std::size_t(m_n), stream);
      lowerThresholdsKernel<<<blocksFor(m_n), 256, 0, stream>>>(states, m_theirs.get(), m_n);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

} // namespace nearscape::cuda
