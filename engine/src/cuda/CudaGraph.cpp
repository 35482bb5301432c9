// The plugin's gpu::GraphDevice: forwards to Boruvka.cu.
#include "cuda/CudaGraph.h"

namespace nearscape::cuda {
namespace {

class CudaGraph final : public gpu::GraphDevice {
public:
  gpu::DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context,
                                  JobControl& job) override {
    return cuda::boruvkaForest(graph, context, job);
  }
};

} // namespace

gpu::GraphDevice& graphDevice() {
  static CudaGraph graph;
  return graph;
}

} // namespace nearscape::cuda
