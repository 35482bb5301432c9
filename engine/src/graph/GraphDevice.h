#pragma once
// What the graph algorithms ask of a GPU: Borůvka's minimum spanning forest. The CUDA plugin's
// CudaGraph implements it (cuda/CudaGraph.h); reached through gpu::onGpuOrCpu (gpu/Dispatch.h).

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/graph/Graph.h"

#include <vector>

namespace nearscape::gpu {

/// A minimum spanning forest computed on the device, with the time the device spent on it
/// (the graph's upload and the edges' download excluded).
struct DeviceForest {
  std::vector<WeightedEdge> edges;
  double deviceSeconds = 0;
};

/// The graph algorithms on a GPU; each call runs on device `context.device`, host memory in and
/// out. Throws DeviceOutOfMemory, Error, Cancelled.
class GraphDevice {
public:
  /// Bumped whenever a declaration below, or a type it passes, changes.
  static constexpr int kVersion = 1;
  virtual ~GraphDevice() = default;

  /// Borůvka's minimum spanning forest (weights ≥ 0), in Kruskal's order of ties.
  virtual DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context,
                                     JobControl& job) = 0;
};

} // namespace nearscape::gpu
