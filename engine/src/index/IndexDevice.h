#pragma once
// What the ANN indexes ask of a GPU: the search graph's optimisation (CAGRA's pruning), the graph
// index's search (SONG) and IVF-Flat's. The CUDA plugin's CudaIndex implements it
// (cuda/CudaIndex.h); reached through gpu::device<gpu::IndexDevice>() and gpu::onGpuOrCpu.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nearscape::gpu {

/// Largest queue (ef) of the graph search kernel.
constexpr int kGraphSearchMaxQueue = 512;
/// Largest k of the IVF search kernel.
constexpr int kIvfMaxK = 256;

/// The graph index's search (SONG): vectors (in the index's working form) and the fixed-degree
/// graph stay on the device; one warp per query keeps its bounded candidate queue, its top list
/// and a visited hash in shared memory.
class GraphSearcher {
public:
  virtual ~GraphSearcher() = default;
  /// For each (working) query, the k best ids and working scores (squared L2 or −dot) found with
  /// a queue of `ef` (k ≤ ef ≤ kGraphSearchMaxQueue), the first `degree` edges per node and the
  /// upper layer walked from its first `entries` nodes; rows short of k pad with −1.
  /// Throws Unsupported, Error, Cancelled (between batches).
  virtual void search(const MatrixView<float>& queries, int k, int ef, int degree, int entries,
                      std::int32_t* ids, float* scores, JobControl& job) const = 0;
  virtual std::uint64_t bytes() const = 0;
};

/// IVF-Flat's lists and centroids on the device, searched a block per query.
class IvfSearcher {
public:
  virtual ~IvfSearcher() = default;
  /// For each (working) query, the k best base ids and working scores among the vectors of its
  /// `nprobe` nearest lists (k ≤ kIvfMaxK); rows short of k pad with −1.
  /// Throws Unsupported, Error, Cancelled (between batches).
  virtual void search(const MatrixView<float>& queries, int k, int nprobe, std::int32_t* ids,
                      float* scores, JobControl& job) const = 0;
  virtual std::uint64_t bytes() const = 0;
};

/// The indexes on a GPU. Each call runs on device `context.device`; host memory in and out.
/// Throws DeviceOutOfMemory, Unsupported (a limit of the GPU path), Error.
class IndexDevice {
public:
  /// Bumped whenever a declaration below, or a type it passes, changes.
  static constexpr int kVersion = 1;
  virtual ~IndexDevice() = default;

  /// Step 1 of optimiseSearchGraph (index/SearchGraph.h): each row of the kNN lists `knn`
  /// (n × K) pruned by detour count to `degree` ids, −1 padded; index::pruneByDetoursCpu's result.
  virtual std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                                   const Context& context) = 0;
  /// All of index::optimiseSearchGraph (pruning, reverse edges, merge; degree ≤ 256): the CPU
  /// path's result.
  virtual std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn,
                                                        int degree, const Context& context) = 0;
  /// The graph index's device side: `sample` (count ids) and `upper` (count × degree,
  /// sample-local ids) are the upper layer.
  virtual std::unique_ptr<GraphSearcher>
  makeGraphSearcher(const MatrixView<float>& vectors, const std::int32_t* graph, int degree,
                    const std::int32_t* sample, const std::int32_t* upper, int count, Metric metric,
                    const Context& context) = 0;
  /// IVF-Flat's device side: `centroids` (nlist × d), the lists (`offsets`: nlist + 1; `ids` and
  /// `vectors`: the base in list order, working form). L2 ranks by squared L2, others by −dot.
  virtual std::unique_ptr<IvfSearcher> makeIvfSearcher(const MatrixView<float>& centroids,
                                                       const std::int64_t* offsets,
                                                       const std::int32_t* ids,
                                                       const MatrixView<float>& vectors,
                                                       Metric metric, const Context& context) = 0;
};

} // namespace nearscape::gpu
