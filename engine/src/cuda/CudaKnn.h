#pragma once
// The plugin's kNN (gpu::KnnDevice): the exact search's GEMM tiles (ExactKnn.cu), STEP's clusters
// (StepKnn.cu), the resident base (TopK.cu) and GNND (Gnnd.cu); offered to the engine by
// CudaKnn.cpp. Nothing outside engine/src/cuda includes this.

#include "knn/KnnDevice.h"
#include "nearscape/core/Context.h"
#include "nearscape/knn/Knn.h"
#include "nearscape/knn/NnDescent.h"

#include <memory>
#include <optional>
#include <vector>

namespace nearscape::cuda {

/// Exact kNN on device `context.device` (knn/Knn.h semantics; `excludeSelf` for graphs).
/// Throws DeviceOutOfMemory when even small tiles do not fit, Unsupported for k too large
/// for the GPU path, Cancelled, Error on other CUDA failures.
KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params);

/// Part `part` of `parts` of the exact graph of `data` by the paired float16 sweeps, their bands
/// split between devices (gpu::KnnDevice::pairsShare); nothing where that path does not apply.
/// Leaves `exchange` (may be null) on any return. Throws DeviceOutOfMemory, Error, Cancelled.
std::optional<gpu::PairsShare> pairsShare(const MatrixView<float>& data, int k, Metric metric,
                                          int part, int parts, const Context& context,
                                          JobControl& job, const ExactKnnParams& params,
                                          knn::PairsExchange* exchange);

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

/// The plugin's gpu::KnnDevice (one for the process).
gpu::KnnDevice& knnDevice();

} // namespace nearscape::cuda
