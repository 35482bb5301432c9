#pragma once
// Small device operations several kernels' callers need, launched from the host.

#include <cuda_runtime.h>

#include <cstdint>

namespace nearscape::cuda {

/// out[i] = i for i in [0, n) (device memory), queued on `stream` (0: the default stream).
/// Throws DeviceError when the launch fails.
void fillIota(std::int32_t* out, std::int64_t n, cudaStream_t stream = nullptr);

/// out[i] = first + i for i in [0, n), as above.
void fillIota(std::int64_t* out, std::int64_t n, std::int64_t first, cudaStream_t stream);

} // namespace nearscape::cuda
