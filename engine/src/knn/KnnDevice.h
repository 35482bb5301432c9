#pragma once
// What kNN asks of a GPU: exact search (the GEMM path's tiles, STEP's sorted clusters), a base
// kept on the device for single queries, and GNND with its shared codebook. The CUDA plugin's
// CudaKnn implements it (cuda/CudaKnn.h); reached through gpu::device<gpu::KnnDevice>() and
// gpu::onGpuOrCpu (gpu/Dispatch.h).

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"
#include "nearscape/knn/Knn.h"
#include "nearscape/knn/NnDescent.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace nearscape::knn {
class PairsExchange; // knn/PairsExchange.h
}

namespace nearscape::gpu {

/// Largest k of the cluster search (its per-row candidate buffer holds k + a tile's appends).
constexpr int kStepMaxK = 128;
/// The cluster search scores pairs more slowly than the TF32 GEMM path (float32 differences on
/// CUDA cores): it pays while a query scores under a quarter of the base (docs/benchmarks.md).
constexpr double kStepMaxScoredShare = 0.25;
/// Against the fused float16 tiles (knn::gpuFusedTiles) its rate is far lower still: it pays
/// while a query scores under 1% of the base (docs/benchmarks.md, session 16). A probe gives up
/// at that share, so on data whose clusters do not prune it stops far sooner than at a quarter.
constexpr double kStepMaxScoredShareFused = 0.01;

/// STEP's clusters of an L2 base on the device (k-means, the members stored cluster by cluster,
/// per cluster the others sorted by their Lemma-1 key): built once, searched many times.
class ClusterIndex {
public:
  virtual ~ClusterIndex() = default;
  /// Exact L2 kNN of `queries` (with `graph`: of the base itself, each row excluded from its
  /// own list; `queries` unused), k ≤ kStepMaxK. Nothing when a probe of the queries shows each
  /// scoring more than `maxScoredShare` of the base. Throws Unsupported, DeviceOutOfMemory,
  /// Error, Cancelled.
  virtual std::optional<KnnResult> search(const MatrixView<float>& queries, int k, bool graph,
                                          JobControl& job, double maxScoredShare) const = 0;
  virtual double buildSeconds() const = 0;
};

/// A base kept on the device for single-query exact searches of any k (ExactKnnIndex's GPU side).
class ResidentIndex {
public:
  virtual ~ResidentIndex() = default;
  /// The k nearest rows for each query, one query at a time. Throws Error, Cancelled.
  virtual KnnResult search(const MatrixView<float>& queries, int k, JobControl& job) const = 0;
};

/// GGM's start (GNND §5.1): merging the graphs of rows [0, split) and [split, n) — `initial`
/// (n × w, ids global, −1 for none) holds each row's graph within its own part.
struct GnndWarmStart {
  const MatrixView<std::int32_t>* initial = nullptr;
  std::int64_t split = 0;
  /// Rows [split, n) when they do not follow `data` in memory (then data.rows == split).
  const MatrixView<float>* second = nullptr;
  /// Called once the host's inputs are on the device: the host is free while the device works.
  std::function<void()> uploaded;
};

/// The head start's clusters shared by the builds and merges of one sharded graph (so a merge
/// runs no k-means of its own): centroids from gnndCodebook; a build writes its rows' clusters
/// to `labelsOut`, a merge reads each part's from `labels` and `secondLabels`. Host memory.
struct GnndClusters {
  const std::vector<float>* centroids = nullptr; ///< count × d
  int count = 0;
  std::int32_t* labelsOut = nullptr;
  const std::int32_t* labels = nullptr;
  const std::int32_t* secondLabels = nullptr;
};

/// One device's share of a graph's exact kNN whose row pairs are split over several devices
/// (KnnDevice::pairsShare): each row's k nearest among the pairs this device scored, nearest
/// first with ties by id. A pair is scored by one device (its group's diagonal by all), so the
/// k nearest of the union of the shares' lists — an id listed by several once — is the graph.
struct PairsShare {
  Matrix<std::int32_t> ids; ///< n × k
  Matrix<double> distances; ///< n × k, exact (float64): the order one device sorts by
  /// Rows this device could not bound by the pairs and then searched whole: their rows are the
  /// graph's own (the distances the float ones the device wrote), taken as they are.
  std::vector<std::int64_t> complete;
  std::vector<std::int64_t> overflow; ///< rows left unbounded (unwritten): the caller's
  std::int64_t candidates = 0;        ///< candidates re-checked, summed over the other rows
  RunReport report;                   ///< device, method, precision
  /// With an exchange the shares merge on the first one's device: the first share then holds
  /// the graph (graphIds, graphDistances: n × k as one device writes them; `overflow`, the rows
  /// no share could bound; `candidates`, summed), the others nothing but this flag.
  bool mergedOnFirst = false;
  std::shared_ptr<std::int32_t[]> graphIds;
  std::shared_ptr<float[]> graphDistances;
};

/// kNN on a GPU. Each call runs on device `context.device`; host memory in and out.
/// DeviceOutOfMemory and Unsupported (a limit of the GPU path: k, d, n) let callers fall back to
/// the CPU; Error is any other device failure.
class KnnDevice {
public:
  /// Bumped whenever a declaration below, or a type it passes, changes.
  static constexpr int kVersion = 4;
  virtual ~KnnDevice() = default;

  /// Exact kNN (knn/Knn.h semantics; `excludeSelf` for graphs) by the GEMM path's tiles.
  virtual KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                                int k, Metric metric, bool excludeSelf, const Context& context,
                                JobControl& job, const ExactKnnParams& params) = 0;
  /// Exact L2 kNN by STEP's sorted clusters (k ≤ kStepMaxK); nothing when a probe shows each
  /// query scoring more than `maxScoredShare` of the base.
  virtual std::optional<KnnResult> stepSearch(const MatrixView<float>& queries,
                                              const MatrixView<float>& base, int k,
                                              bool excludeSelf, const Context& context,
                                              JobControl& job, double maxScoredShare) = 0;
  /// Part `part` of `parts` of the exact kNN graph of `data` (k ≤ 32) with each pair of rows
  /// scored once over all the parts: the float16 paired sweeps' bands split between devices.
  /// Nothing where that path does not apply (precision, d, k, memory: the caller splits the
  /// rows instead). `exchange` (may be null): where the parts hand each other their rows'
  /// thresholds after each band; the share leaves it on any return. Throws DeviceOutOfMemory,
  /// Error, Cancelled.
  virtual std::optional<PairsShare> pairsShare(const MatrixView<float>& data, int k, Metric metric,
                                               int part, int parts, const Context& context,
                                               JobControl& job, const ExactKnnParams& params,
                                               knn::PairsExchange* exchange) = 0;
  /// STEP's clusters of `base` (the caller keeps it alive).
  virtual std::unique_ptr<ClusterIndex> makeClusterIndex(const MatrixView<float>& base,
                                                         const Context& context) = 0;
  /// `base` uploaded and packed for single-query searches (the caller keeps it alive).
  virtual std::unique_ptr<ResidentIndex>
  makeResidentIndex(const MatrixView<float>& base, Metric metric, const Context& context) = 0;

  /// GNND (knn/NnDescent.h semantics) with working lists of min(n − 1, max(k, min(2k, 32)));
  /// `headStart`: a coarse k-means seeds first neighbours; `warm`: GGM's merge of two parts.
  /// Not bitwise reproducible. Throws Unsupported (k > 64, d > 800, n ≥ 2^30).
  virtual KnnResult gnndGraph(const MatrixView<float>& data, int k, Metric metric,
                              const Context& context, JobControl& job,
                              const NnDescentParams& params, const NnDescentProgress& progress,
                              bool headStart, const GnndWarmStart& warm,
                              const GnndClusters& clusters) = 0;
  /// Centroids (count × d) of a seeded k-means of `sample` (rows normalised for cosine).
  virtual std::vector<float> gnndCodebook(const MatrixView<float>& sample, Metric metric, int count,
                                          const Context& context) = 0;
};

} // namespace nearscape::gpu
