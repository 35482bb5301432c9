// The plugin's gpu::AnalysisDevice: forwards to RangeSearch.cu.
#include "cuda/CudaAnalysis.h"

namespace nearscape::cuda {
namespace {

class CudaAnalysis final : public gpu::AnalysisDevice {
public:
  std::unique_ptr<gpu::TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                  const analysis::TilePlan& plan,
                                                  const Context& context) override {
    return cuda::makeTileSearch(data, plan, context);
  }
};

} // namespace

gpu::AnalysisDevice& analysisDevice() {
  static CudaAnalysis analysis;
  return analysis;
}

} // namespace nearscape::cuda
