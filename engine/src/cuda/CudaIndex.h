#pragma once
// The plugin's indexes (gpu::IndexDevice): the search graph's pruning (SearchGraphPrune.cu), the
// graph index's search (GraphSearch.cu) and IVF-Flat's (Ivf.cu); offered to the engine by
// CudaIndex.cpp. Nothing outside engine/src/cuda includes this.

#include "index/IndexDevice.h"
#include "nearscape/core/Context.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nearscape::cuda {

/// The graph index's CUDA search (SONG §IV):
/// vectors (in the index's working form) and the fixed-degree graph stay on the device; one warp
/// per query keeps its bounded candidate queue, its top list and a visited hash in shared memory.
class DeviceGraphSearch final : public gpu::GraphSearcher {
public:
  /// Uploads. Throws DeviceOutOfMemory, Error.
  /// `sample` (count ids) and `upper` (count × degree, sample-local ids) are the upper layer.
  DeviceGraphSearch(const MatrixView<float>& vectors, const std::int32_t* graph, int degree,
                    const std::int32_t* sample, const std::int32_t* upper, int count, Metric metric,
                    const Context& context);
  ~DeviceGraphSearch();
  DeviceGraphSearch(const DeviceGraphSearch&) = delete;
  DeviceGraphSearch& operator=(const DeviceGraphSearch&) = delete;

  /// Largest queue (ef) the kernel holds.
  static constexpr int kMaxQueue = gpu::kGraphSearchMaxQueue;

  /// For each (working) query, the k best ids and working scores (squared L2 or −dot) found with
  /// a queue of `ef` (k ≤ ef ≤ kMaxQueue), the first `degree` edges per node and the upper
  /// layer walked from its first `entries` nodes; rows short of k pad with −1. Throws Error,
  /// Cancelled (between batches).
  void search(const MatrixView<float>& queries, int k, int ef, int degree, int entries,
              std::int32_t* ids, float* scores, JobControl& job) const override;
  std::uint64_t bytes() const override;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

/// CAGRA's rank-based pruning of kNN lists (gpu::IndexDevice::pruneByDetours) on the device.
std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                         const Context& context);
/// All of index::optimiseSearchGraph on the device (gpu::IndexDevice::optimiseSearchGraph).
std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                              const Context& context);

/// IVF-Flat's lists and centroids on the device, searched a block per query.
class DeviceIvfFlat final : public gpu::IvfSearcher {
public:
  /// Uploads `centroids` (nlist × d), the lists (`offsets`: nlist + 1; `ids` and `vectors`: the
  /// base in list order, working form). `metric`: L2 ranks by squared L2, others by −dot.
  /// Throws DeviceOutOfMemory, Error.
  DeviceIvfFlat(const MatrixView<float>& centroids, const std::int64_t* offsets,
                const std::int32_t* ids, const MatrixView<float>& vectors, Metric metric,
                const Context& context);
  ~DeviceIvfFlat();
  DeviceIvfFlat(const DeviceIvfFlat&) = delete;
  DeviceIvfFlat& operator=(const DeviceIvfFlat&) = delete;

  /// Largest k the kernel keeps.
  static constexpr int kMaxK = gpu::kIvfMaxK;

  /// For each (working) query, the k best base ids and working scores among the vectors of its
  /// `nprobe` nearest lists; rows short of k pad with −1. Throws Error, Cancelled (between
  /// batches).
  void search(const MatrixView<float>& queries, int k, int nprobe, std::int32_t* ids, float* scores,
              JobControl& job) const override;
  std::uint64_t bytes() const override;

private:
  struct State;
  std::unique_ptr<State> m_state;
  int m_device = 0;
};

/// The plugin's gpu::IndexDevice (one for the process).
gpu::IndexDevice& indexDevice();

} // namespace nearscape::cuda
