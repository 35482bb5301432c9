#include "cuda/ThresholdExchange.cuh"

#include "cuda/CudaCheck.cuh"

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

} // namespace

ThresholdExchange::ThresholdExchange(knn::PairsExchange& exchange, int part, std::int64_t n)
    : m_exchange(exchange), m_part(part), m_n(n), m_mine(std::size_t(n)), m_theirs(std::size_t(n)) {
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&m_device));
}

void ThresholdExchange::operator()(RowState* states, cudaStream_t stream, const JobControl& job) {
  takeThresholdsKernel<<<blocksFor(m_n), 256, 0, stream>>>(states, m_mine.get(), m_n);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream)); // offered whole
  const std::vector<knn::PairsExchange::Offer> offers =
      m_exchange.meet(m_part, {m_device, m_mine.get()}, job);
  // Every share reads the others' offers before any of them changes its own again: a failure
  // here still reaches doneReading, so that nobody waits for this share in vain.
  std::exception_ptr failed;
  try {
    for (const knn::PairsExchange::Offer& offer : offers) {
      const std::size_t bytes = sizeof(float) * std::size_t(m_n);
      if (offer.device == m_device) {
        NEARSCAPE_CUDA_CHECK(
            cudaMemcpyAsync(m_theirs.get(), offer.data, bytes, cudaMemcpyDeviceToDevice, stream));
      } else {
        // Direct over NVLink where the devices allow it (else the driver stages the copy).
        if (std::find(m_peers.begin(), m_peers.end(), offer.device) == m_peers.end()) {
          int can = 0;
          NEARSCAPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, m_device, offer.device));
          if (can && cudaDeviceEnablePeerAccess(offer.device, 0) != cudaSuccess)
            cudaGetLastError(); // already enabled (by another share's pass): fine
          m_peers.push_back(offer.device);
        }
        NEARSCAPE_CUDA_CHECK(
            cudaMemcpyPeerAsync(m_theirs.get(), m_device, offer.data, offer.device, bytes, stream));
      }
      lowerThresholdsKernel<<<blocksFor(m_n), 256, 0, stream>>>(states, m_theirs.get(), m_n);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    failed = std::current_exception();
  }
  m_exchange.doneReading(m_part);
  if (failed)
    std::rethrow_exception(failed);
}

} // namespace nearscape::cuda
