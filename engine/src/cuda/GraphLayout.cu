// The map's layout epochs on the GPU: a thread per node runs layout::moveNode, the very function
// the CPU loop runs, reading the previous epoch's positions and writing the next (so no races,
// and the CPU is a true twin up to floating-point rounding of powf).
#include "cuda/CudaLayout.h"
#include "cuda/DeviceBuffer.cuh"
#include "layout/LayoutStep.h"

#include <algorithm>
#include <utility>

namespace nearscape::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void layoutEpoch(layout::EpochStep step) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < step.nodes)
    layout::moveNode(step, i);
}

template <typename T> DeviceBuffer<T> upload(const T* host, std::size_t count) {
  DeviceBuffer<T> device{count};
  if (count > 0)
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(device.get(), host, sizeof(T) * count, cudaMemcpyHostToDevice));
  return device;
}

} // namespace

void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate, int reportEvery,
                  float* positions, const Context& context, JobControl& job,
                  const std::function<void(int)>& report) {
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  const std::int64_t n = step.nodes;
  const std::size_t entries = std::size_t(step.offsets[n]);
  const std::size_t coords = std::size_t(n) * std::size_t(step.dim);
  const DeviceBuffer<std::int64_t> offsets = upload(step.offsets, std::size_t(n) + 1);
  const DeviceBuffer<std::int32_t> targets = upload(step.targets, entries);
  const DeviceBuffer<float> perSample = upload(step.perSample, entries);
  const DeviceBuffer<float> nextSample = upload(step.nextSample, entries);
  DeviceBuffer<float> current = upload(positions, coords);
  DeviceBuffer<float> next{coords};

  layout::EpochStep device = step;
  device.offsets = offsets.get();
  device.targets = targets.get();
  device.perSample = perSample.get();
  device.nextSample = nextSample.get();
  const unsigned blocks = unsigned((n + kThreads - 1) / kThreads);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    job.check();
    device.current = current.get();
    device.next = next.get();
    device.epoch = epoch;
    device.alpha = learningRate * (1.0f - float(epoch) / float(epochs));
    layoutEpoch<<<blocks, kThreads>>>(device);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    std::swap(current, next);
    if ((epoch + 1) % std::max(1, reportEvery) == 0 || epoch + 1 == epochs)
      NEARSCAPE_CUDA_CHECK(
          cudaMemcpy(positions, current.get(), sizeof(float) * coords, cudaMemcpyDeviceToHost));
    report(epoch + 1);
  }
}

} // namespace nearscape::cuda
