// The plugin's gpu::LayoutDevice: forwards to GraphLayout.cu.
#include "cuda/CudaLayout.h"

#include "layout/LayoutStep.h"

namespace nearscape::cuda {
namespace {

class CudaLayout final : public gpu::LayoutDevice {
public:
  void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate, int reportEvery,
                    float* positions, const Context& context, JobControl& job,
                    const std::function<void(int)>& report) override {
    cuda::layoutEpochs(step, epochs, learningRate, reportEvery, positions, context, job, report);
  }
};

} // namespace

gpu::LayoutDevice& layoutDevice() {
  static CudaLayout layout;
  return layout;
}

} // namespace nearscape::cuda
