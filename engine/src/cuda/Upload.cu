#include "cuda/Upload.cuh"

#include "cuda/CudaCheck.cuh"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include <omp.h>

namespace nearscape::cuda {
namespace {

constexpr std::size_t kChunk = std::size_t(32) << 20;      ///< bytes a staging buffer holds
constexpr std::size_t kDirectBelow = std::size_t(8) << 20; ///< small copies go straight

/// Two pinned staging buffers and their stream on one device, made at its first large copy and
/// kept. One set a device: copies to one device take turns, copies to two GPUs run at once (a
/// single set shared by the devices serialised them and was re-pinned at every change of device).
struct Staging {
  std::mutex mutex;
  void* buffer[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaStream_t stream = nullptr;

  /// Made with its device current. Throws DeviceOutOfMemory, DeviceError (having freed what it
  /// made).
  Staging() {
    try {
      for (int b = 0; b < 2; ++b) {
        NEARSCAPE_CUDA_ALLOC(cudaHostAlloc(&buffer[b], kChunk, cudaHostAllocDefault));
        NEARSCAPE_CUDA_CHECK(cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
      }
      NEARSCAPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      // The driver maps pinned pages into the process at their first touch, a fault each: the
      // first 64 MB through a fresh set cost 70–130 ms on an H100 host, its next pass 10 ms.
      // Touched here, by all threads, where the set is made (the device's warm-up, off the
      // first search's path).
      for (int b = 0; b < 2; ++b)
        touchPages(buffer[b], kChunk);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Staging() { release(); }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

private:
  void release() {
    for (int b = 0; b < 2; ++b) {
      if (buffer[b])
        cudaFreeHost(buffer[b]);
      if (done[b])
        cudaEventDestroy(done[b]);
    }
    if (stream)
      cudaStreamDestroy(stream);
  }
};

/// The staging set of `device` (current on the calling thread), made on first use. The sets are
/// never freed: they live until the process ends, after which the driver reclaims them.
Staging& stagingFor(int device) {
  static std::mutex registry;
  static auto* sets = new std::map<int, std::unique_ptr<Staging>>;
  const std::lock_guard lock(registry);
  std::unique_ptr<Staging>& set = (*sets)[device];
  if (!set)
    set = std::make_unique<Staging>(); // a throw leaves it empty, to be tried again
  return *set;
}

/// Copies through staging sets at this moment (one a device at most, each its own thread).
std::atomic<int> g_copiesInFlight{0};

/// Counts a copy through a staging set while it lasts.
struct InFlight {
  InFlight() { g_copiesInFlight.fetch_add(1, std::memory_order_relaxed); }
  ~InFlight() { g_copiesInFlight.fetch_sub(1, std::memory_order_relaxed); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
};

/// The host threads a copy through a staging set takes: all of them, or their share where copies
/// to several devices run at once (two pools of every thread each fought over the cores).
int copyThreads() {
  return std::max(1, omp_get_max_threads() /
                         std::max(1, g_copiesInFlight.load(std::memory_order_relaxed)));
}

/// memcpy by `threads` host threads, a MiB a piece.
void parallelCopy(unsigned char* out, const unsigned char* in, std::size_t size, int threads) {
  constexpr std::size_t kPiece = std::size_t(1) << 20;
  const auto pieces = std::int64_t((size + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) num_threads(threads)
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

void touchPages(void* p, std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  auto* bytesAt = static_cast<unsigned char*>(p);
  const auto pages = std::int64_t((bytes + kPage - 1) / kPage);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < pages; ++i)
    bytesAt[std::size_t(i) * kPage] = 0;
}

void prepareCopies() {
  stagingFor(currentDevice());
}

namespace {

/// copyToDevice's large copies: through the device's staging set.
void stagedToDevice(void* target, const void* source, std::size_t bytes) {
  Staging& s = stagingFor(currentDevice());
  const std::lock_guard lock(s.mutex);
  const InFlight counted;
  const int threads = copyThreads();
  auto* out = static_cast<unsigned char*>(target);
  const auto* in = static_cast<const unsigned char*>(source);
  int b = 0;
  for (std::size_t offset = 0; offset < bytes; offset += kChunk, b ^= 1) {
    const std::size_t size = std::min(kChunk, bytes - offset);
    NEARSCAPE_CUDA_CHECK(cudaEventSynchronize(s.done[b])); // its last DMA has finished
    auto* stage = static_cast<unsigned char*>(s.buffer[b]);
    parallelCopy(stage, in + offset, size, threads);
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpyAsync(out + offset, stage, size, cudaMemcpyHostToDevice, s.stream));
    NEARSCAPE_CUDA_CHECK(cudaEventRecord(s.done[b], s.stream));
  }
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(s.stream));
}

/// copyToHost's large copies, once the work that made `source` is done: through the device's
/// staging set.
void stagedToHost(void* target, const void* source, std::size_t bytes) {
  Staging& s = stagingFor(currentDevice());
  const std::lock_guard lock(s.mutex);
  const InFlight counted;
  const int threads = copyThreads();
  auto* out = static_cast<unsigned char*>(target);
  const auto* in = static_cast<const unsigned char*>(source);
  auto drain = [&](int b, std::size_t offset, std::size_t size) {
    NEARSCAPE_CUDA_CHECK(cudaEventSynchronize(s.done[b]));
    parallelCopy(out + offset, static_cast<const unsigned char*>(s.buffer[b]), size, threads);
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

} // namespace

void copyToDevice(void* target, const void* source, std::size_t bytes) {
  if (bytes < kDirectBelow) {
    if (bytes > 0)
      NEARSCAPE_CUDA_CHECK(cudaMemcpy(target, source, bytes, cudaMemcpyHostToDevice));
    return;
  }
  stagedToDevice(target, source, bytes);
}

void copyToDevice(void* target, const void* source, std::size_t bytes, cudaStream_t stream) {
  if (bytes < kDirectBelow) {
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(target, source, bytes, cudaMemcpyHostToDevice, stream));
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  // The staging stream does not wait for `stream`, in whose order `target` may have been made.
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  stagedToDevice(target, source, bytes);
}

void copyToHost(void* target, const void* source, std::size_t bytes) {
  if (bytes < kDirectBelow) { // cudaMemcpy waits for the default stream's work
    if (bytes > 0)
      NEARSCAPE_CUDA_CHECK(cudaMemcpy(target, source, bytes, cudaMemcpyDeviceToHost));
    return;
  }
  // The staging stream does not wait for the default stream, whose kernels made `source`.
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  stagedToHost(target, source, bytes);
}

void copyToHost(void* target, const void* source, std::size_t bytes, cudaStream_t stream) {
  if (bytes < kDirectBelow) {
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDeviceToHost, stream));
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  // The staging stream does not wait for `stream`, whose work made `source`.
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  stagedToHost(target, source, bytes);
}

} // namespace nearscape::cuda
