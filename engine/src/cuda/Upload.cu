#include "cuda/Upload.cuh"

#include "cuda/CudaCheck.cuh"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace nearscape::cuda {
namespace {

constexpr std::size_t kChunk = std::size_t(32) << 20;      ///< bytes a staging buffer holds
constexpr std::size_t kDirectBelow = std::size_t(8) << 20; ///< small copies go straight

/// Two pinned staging buffers and their stream, made at the first large copy and kept (one
/// set per process: copies take turns).
struct Staging {
  std::mutex mutex;
  void* buffer[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaStream_t stream = nullptr;
  int device = -1;

  void ensure(int current) {
    if (device == current)
      return;
    release();
    for (int b = 0; b < 2; ++b) {
      NEARSCAPE_CUDA_ALLOC(cudaHostAlloc(&buffer[b], kChunk, cudaHostAllocDefault));
      NEARSCAPE_CUDA_CHECK(cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    device = current;
  }
  void release() {
    for (int b = 0; b < 2; ++b) {
      if (buffer[b])
        cudaFreeHost(buffer[b]);
      if (done[b])
        cudaEventDestroy(done[b]);
      buffer[b] = nullptr;
      done[b] = nullptr;
    }
    if (stream)
      cudaStreamDestroy(stream);
    stream = nullptr;
    device = -1;
  }
};

Staging& staging() {
  static Staging s; // never destroyed before the CUDA runtime: released with the process
  return s;
}

/// The staging set for the current device, ready; the caller holds s.mutex.
Staging& stagingFor(int device) {
  Staging& s = staging();
  s.ensure(device);
  return s;
}

/// memcpy by all host threads, a MiB a piece.
void parallelCopy(unsigned char* out, const unsigned char* in, std::size_t size) {
  constexpr std::size_t kPiece = std::size_t(1) << 20;
  const auto pieces = std::int64_t((size + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::size_t at = std::size_t(p) * kPiece;
    std::memcpy(out + at, in + at, std::min(kPiece, size - at));
  }
}

int currentDevice() {
  int device = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

} // namespace

void copyToDevice(void* target, const void* source, std::size_t bytes) {
  if (bytes < kDirectBelow) {
    if (bytes > 0)
      NEARSCAPE_CUDA_CHECK(cudaMemcpy(target, source, bytes, cudaMemcpyHostToDevice));
    return;
  }
  const int device = currentDevice();
  const std::lock_guard lock(staging().mutex);
  Staging& s = stagingFor(device);
  auto* out = static_cast<unsigned char*>(target);
  const auto* in = static_cast<const unsigned char*>(source);
  int b = 0;
  for (std::size_t offset = 0; offset < bytes; offset += kChunk, b ^= 1) {
    const std::size_t size = std::min(kChunk, bytes - offset);
    NEARSCAPE_CUDA_CHECK(cudaEventSynchronize(s.done[b])); // its last DMA has finished
    auto* stage = static_cast<unsigned char*>(s.buffer[b]);
    parallelCopy(stage, in + offset, size);
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpyAsync(out + offset, stage, size, cudaMemcpyHostToDevice, s.stream));
    NEARSCAPE_CUDA_CHECK(cudaEventRecord(s.done[b], s.stream));
  }
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(s.stream));
}

void copyToHost(void* target, const void* source, std::size_t bytes) {
  if (bytes < kDirectBelow) { // cudaMemcpy waits for the default stream's work
    if (bytes > 0)
      NEARSCAPE_CUDA_CHECK(cudaMemcpy(target, source, bytes, cudaMemcpyDeviceToHost));
    return;
  }
  // The staging stream does not wait for the default stream, whose kernels made `source`.
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  const int device = currentDevice();
  const std::lock_guard lock(staging().mutex);
  Staging& s = stagingFor(device);
  auto* out = static_cast<unsigned char*>(target);
  const auto* in = static_cast<const unsigned char*>(source);
  auto drain = [&](int b, std::size_t offset, std::size_t size) {
    NEARSCAPE_CUDA_CHECK(cudaEventSynchronize(s.done[b]));
    parallelCopy(out + offset, static_cast<const unsigned char*>(s.buffer[b]), size);
  };
  // The DMA of one staging buffer runs while the other one is copied out.
  std::size_t pendingOffset = 0, pendingSize = 0;
  int b = 0;
  for (std::size_t offset = 0; offset < bytes; offset += kChunk, b ^= 1) {
    const std::size_t size = std::min(kChunk, bytes - offset);
    NEARSCAPE_CUDA_CHECK(cudaEventSynchronize(s.done[b])); // drained below before reuse
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpyAsync(s.buffer[b], in + offset, size, cudaMemcpyDeviceToHost, s.stream));
    NEARSCAPE_CUDA_CHECK(cudaEventRecord(s.done[b], s.stream));
    if (pendingSize > 0)
      drain(b ^ 1, pendingOffset, pendingSize);
    pendingOffset = offset;
    pendingSize = size;
  }
  if (pendingSize > 0)
    drain(b ^ 1, pendingOffset, pendingSize);
}

} // namespace nearscape::cuda
