// A CPU-only build: no GPU backend. Stands in for cuda/CudaBackend.cpp.
#include "gpu/GpuBackend.h"

namespace nearscape::gpu {

GpuBackend* gpuBackend(std::string* whyNot) {
  if (whyNot)
    *whyNot = "built without CUDA";
  return nullptr;
}

} // namespace nearscape::gpu
