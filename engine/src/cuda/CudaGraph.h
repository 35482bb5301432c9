#pragma once
// The plugin's graph algorithms (gpu::GraphDevice): Borůvka's forest (Boruvka.cu); offered to the
// engine by CudaGraph.cpp. Nothing outside engine/src/cuda includes this.

#include "graph/GraphDevice.h"
#include "nearscape/core/Context.h"
#include "nearscape/graph/Graph.h"

namespace nearscape::cuda {

using gpu::DeviceForest;

/// Borůvka's minimum spanning forest of `graph` (weights ≥ 0) on device `context.device`, in
/// Kruskal's (weight, a, b) order of ties. Throws DeviceOutOfMemory, Error, Cancelled.
DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context, JobControl& job);

/// The plugin's gpu::GraphDevice (one for the process).
gpu::GraphDevice& graphDevice();

} // namespace nearscape::cuda
