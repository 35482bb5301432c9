// The plugin's gpu::DeviceRuntime: each method forwards to the CUDA code of this folder.
#include "cuda/CudaRuntime.h"

#include <cuda_runtime.h>

namespace nearscape::cuda {
namespace {

class CudaRuntime final : public gpu::DeviceRuntime {
public:
  DeviceInfo queryDevice(int ordinal) override {
    DeviceInfo info = cuda::queryDevice(ordinal);
    info.compiledWithCuda = true;
    return info;
  }

  int deviceCount() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return count;
  }

  void warmUp(const Context& context, const std::atomic<bool>& float16Gemm) override {
    cuda::warmUp(context, float16Gemm);
  }

  void rowNormsSquared(const MatrixView<float>& m, float* out, const Context& context) override {
    cuda::rowNormsSquared(m.data, m.rows, m.cols, out, context.device);
  }
};

} // namespace

gpu::DeviceRuntime& runtimeDevice() {
  static CudaRuntime runtime;
  return runtime;
}

} // namespace nearscape::cuda
