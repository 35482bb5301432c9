#pragma once
// Host → device copies of large blocks at pinned-memory speed: the data (pageable, as read from
// a file) is copied by all host threads into one of two pinned staging buffers while the other
// one's DMA runs (well above the pageable rate on the GPU servers: docs/benchmarks.md).

#include "cuda/DeviceBuffer.cuh"

#include <cstddef>

namespace nearscape::cuda {

/// Makes the current device's pinned staging set now (the device's warm-up), so that the first
/// large copy does not pay for it. Throws DeviceOutOfMemory, DeviceError.
void prepareCopies();

/// Copies `bytes` from host `source` to device `target` (current device); returns when done.
/// Throws DeviceOutOfMemory (pinned memory), Error.
void copyToDevice(void* target, const void* source, std::size_t bytes);

/// The same in the order of `stream` (the copy follows its work; returns when done), for work
/// that keeps off the default stream.
void copyToDevice(void* target, const void* source, std::size_t bytes, cudaStream_t stream);

/// Copies `bytes` from device `source` to host `target` through the same pinned buffers (the
/// host side copied out by all threads, which also touches fresh pages in parallel), after the
/// default stream's work; returns when done.
void copyToHost(void* target, const void* source, std::size_t bytes);

/// The same after `stream`'s work, not the default stream's.
void copyToHost(void* target, const void* source, std::size_t bytes, cudaStream_t stream);

/// Writes a byte of every page of fresh host memory `p` (`bytes` long), by all host threads: the
/// faults a first touch costs (a graph's results fault in slowly on one thread: docs/benchmarks.md,
/// session 19), taken where nothing waits for them.
void touchPages(void* p, std::size_t bytes);

/// A new device buffer holding `count` elements copied from `host`.
template <typename T> DeviceBuffer<T> uploaded(const T* host, std::size_t count) {
  DeviceBuffer<T> out(count);
  copyToDevice(out.get(), host, sizeof(T) * count);
  return out;
}

/// The same in `stream`'s order (the buffer too: DeviceBuffer's stream-ordered constructor).
template <typename T>
DeviceBuffer<T> uploaded(const T* host, std::size_t count, cudaStream_t stream) {
  DeviceBuffer<T> out(count, stream);
  copyToDevice(out.get(), host, sizeof(T) * count, stream);
  return out;
}

} // namespace nearscape::cuda
