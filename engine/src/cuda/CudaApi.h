#pragma once
// The CUDA backend's own declarations, shared by its .cu files and CudaBackend.cpp (which
// offers them to the engine as gpu::GpuBackend). Nothing outside engine/src/cuda includes this.

#include "gpu/GpuBackend.h"
#include "nearscape/core/Context.h"
#include "nearscape/graph/Graph.h"
#include "nearscape/knn/Knn.h"
#include "nearscape/knn/NnDescent.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace nearscape::layout {
struct EpochStep;
}

namespace nearscape::cuda {

/// Never throws: any CUDA error means "not usable", with the error's text as the reason.
DeviceInfo queryDevice(int ordinal);

/// out[i] = ‖row i‖² for a host n × d matrix, computed on device `ordinal`.
/// Throws DeviceOutOfMemory, Error on any other CUDA failure.
void rowNormsSquared(const float* hostData, std::int64_t n, std::int64_t d, float* hostOut,
                     int ordinal);

/// The same for rows already on the current device (n × d) into `deviceOut` (n), on the
/// default stream (float64 accumulation). Throws Error.
void rowNormsSquaredOnDevice(const float* deviceRows, std::int64_t n, std::int64_t d,
                             float* deviceOut);

/// Exact kNN on device `context.device` (knn/Knn.h semantics; `excludeSelf` for graphs).
/// Throws DeviceOutOfMemory when even small tiles do not fit, Unsupported for k too large
/// for the GPU path, Cancelled, Error on other CUDA failures.
KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params);

using gpu::kStepMaxK;
using gpu::kStepMaxScoredShare;

/// STEP's clusters of an L2 base on the device (k-means, the members stored cluster by cluster,
/// per cluster the others sorted by their Lemma-1 key): built once, searched many times.
class DeviceClusters final : public gpu::ClusterIndex {
public:
  /// Uploads and clusters `base` (host; the caller keeps it alive) into `clusters` clusters
  /// (0: about 256 members each; at most 4,096 either way).
  /// Throws Unsupported (2^30 rows or more), DeviceOutOfMemory, Error.
  DeviceClusters(const MatrixView<float>& base, const Context& context, int clusters = 0);
  ~DeviceClusters();
  DeviceClusters(const DeviceClusters&) = delete;
  DeviceClusters& operator=(const DeviceClusters&) = delete;

  /// Exact L2 kNN of `queries` (with `graph`: of the base itself, each row excluded from its
  /// own list; `queries` unused), k ≤ kStepMaxK. Nothing when a probe of the queries shows each
  /// scoring more than `maxScoredShare` of the base. Throws Unsupported, DeviceOutOfMemory,
  /// Error, Cancelled.
  std::optional<KnnResult> search(const MatrixView<float>& queries, int k, bool graph,
                                  JobControl& job, double maxScoredShare) const override;
  /// Whether the probe of the base's own graph passes (its rows scoring on average at most half
  /// of `maxScoredShare` of the base; a block may give up); the rest is not searched. (A base of so
  /// few blocks that the probe is the whole search — under 16 — is searched whole and passes.)
  bool probePrunes(int k, JobControl& job, double maxScoredShare) const;
  double buildSeconds() const override;

private:
  std::optional<KnnResult> search(const MatrixView<float>& queries, int k, bool graph,
                                  JobControl& job, double maxScoredShare, bool probeOnly) const;

  struct State;
  std::unique_ptr<State> m_state;
};

/// Exact L2 kNN by STEP's sorted clusters on device `context.device` (knn/Knn.h semantics,
/// `excludeSelf` for graphs; k ≤ kStepMaxK). Nothing when a probe of the queries shows each of
/// them scoring more than `maxScoredShare` of the base (clusters that do not separate: the GEMM
/// path is faster). Throws Unsupported (k), DeviceOutOfMemory, Error, Cancelled.
std::optional<KnnResult> stepSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                                    int k, bool excludeSelf, const Context& context,
                                    JobControl& job, double maxScoredShare);

/// A base kept on the device for single-query exact searches of any k (ExactKnnIndex's CUDA side).
class ResidentBase final : public gpu::ResidentIndex {
public:
  /// Uploads and packs `base`. Throws DeviceOutOfMemory, Error.
  ResidentBase(const MatrixView<float>& base, Metric metric, const Context& context);
  ~ResidentBase();
  ResidentBase(const ResidentBase&) = delete;
  ResidentBase& operator=(const ResidentBase&) = delete;
  /// The k nearest rows for each query, one query at a time. Throws Error, Cancelled.
  KnnResult search(const MatrixView<float>& queries, int k, JobControl& job) const override;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

} // namespace nearscape::cuda

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

} // namespace nearscape::cuda

namespace nearscape::cuda {

using gpu::DeviceForest;

/// Borůvka's minimum spanning forest of `graph` (weights ≥ 0) on device `context.device`, in
/// Kruskal's (weight, a, b) order of ties. Throws DeviceOutOfMemory, Error, Cancelled.
DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context, JobControl& job);

/// gpu::GpuBackend::warmUp: a lease of `context`'s device (made and pooled), the pinned staging
/// set, a 64 × 64 TF32 GEMM on it and, while `float16Gemm` holds, a float16 GEMM of the exact
/// path's tile shape (Resources.cu). Throws DeviceError, DeviceOutOfMemory.
void warmUp(const Context& context, const std::atomic<bool>& float16Gemm);

/// CAGRA's rank-based pruning of kNN lists (gpu::GpuBackend::pruneByDetours) on the device.
std::vector<std::int32_t> pruneByDetours(const MatrixView<std::int32_t>& knn, int degree,
                                         const Context& context);
/// All of index::optimiseSearchGraph on the device (gpu::GpuBackend::optimiseSearchGraph).
std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                              const Context& context);

} // namespace nearscape::cuda

namespace nearscape::cuda {

/// The layout's epochs (layout/LayoutStep.h, the CPU's arithmetic) on device `context.device`:
/// `step` describes the fuzzy graph and its sampling schedule in host memory; `positions`
/// (nodes × dim, host) are the start and receive the result. After each epoch `report(epochs
/// done)` is called, with `positions` refreshed first on every `reportEvery`-th epoch and the
/// last. Every allocation comes first: DeviceOutOfMemory leaves `positions` untouched.
/// Throws DeviceOutOfMemory, Error, Cancelled (between epochs).
void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate, int reportEvery,
                  float* positions, const Context& context, JobControl& job,
                  const std::function<void(int)>& report);

} // namespace nearscape::cuda

namespace nearscape::cuda {

/// The near-duplicate searches' rows on device `context.device` (gpu::TileSearch): batched
/// float32 GEMMs over tile pairs, proposals within the rounding bound re-checked in float64 on
/// the host. Throws DeviceOutOfMemory, Error.
std::unique_ptr<gpu::TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                const analysis::TilePlan& plan,
                                                const Context& context);

/// nearestCentroids (index/KMeans.h) on device `context.device`: a float32 cuBLAS GEMM per tile
/// of rows, then a warp argmin (count 1) or a block radix select per row; ties to the smaller
/// centroid. Throws DeviceOutOfMemory, Error.
std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                           const MatrixView<float>& centroids, int count,
                                           Metric metric, const Context& context);

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

} // namespace nearscape::cuda

namespace nearscape::cuda {

/// NN-Descent on device `context.device` (GNND; knn/NnDescent.h semantics: itself excluded,
/// exact float64 distances, nearest first with ties by id), with working lists of
/// min(n − 1, max(k, min(2k, 32))) entries. With `headStart` a coarse k-means on the device
/// seeds each node's first neighbours from its own cluster; `warm` makes it GGM's merge of two
/// parts' graphs instead. Not bitwise reproducible (atomic
/// appends). Throws Unsupported (k > 64, d > 800, n ≥ 2^30), DeviceOutOfMemory, Error,
/// Cancelled.
using gpu::GnndClusters;
using gpu::GnndWarmStart;

/// Centroids (count × d, host) of a seeded k-means on the device of `sample` — normalised rows
/// for cosine, as GNND ranks them. Throws DeviceOutOfMemory, Error.
std::vector<float> gnndCodebook(const MatrixView<float>& sample, Metric metric, int count,
                                const Context& context);

KnnResult gnndGraph(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                    JobControl& job, const NnDescentParams& params,
                    const NnDescentProgress& progress, bool headStart,
                    const GnndWarmStart& warm = {}, const GnndClusters& clusters = {});

} // namespace nearscape::cuda
