#pragma once
// The engine's one door to a GPU: an interface that the CUDA backend (engine/src/cuda, built as
// the plugin libnearscape_cuda.so) implements. Algorithms never name CUDA: they ask gpuBackend()
// and choose through onGpuOrCpu() (gpu/Dispatch.h). gpu/PluginLoader.cpp loads the plugin on
// the first call, so a program runs on the CPU wherever the plugin, the driver or cuBLAS is
// missing.

#include "nearscape/analysis/Duplicates.h"
#include "nearscape/core/Context.h"
#include "nearscape/graph/Graph.h"
#include "nearscape/knn/Knn.h"
#include "nearscape/knn/NnDescent.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nearscape::layout {
struct EpochStep;
}
namespace nearscape::analysis {
struct TilePlan;
}

namespace nearscape::gpu {

/// Largest k of the cluster search (its per-row candidate buffer holds k + a tile's appends).
constexpr int kStepMaxK = 128;
/// The cluster search scores pairs at about a third of the TF32 GEMM path's rate (float32
/// differences on CUDA cores): it pays while a query scores under a quarter of the base.
constexpr double kStepMaxScoredShare = 0.25;
/// Against the fused float16 tiles (knn::gpuFusedTiles) it scores pairs at about a hundredth
/// of their rate (H100, 1M × 128: STEP's search scored 10^9 pairs of blobs in 0.13 s, the fused
/// sweep 10^12 of manifold data in 1.0 s): it pays while a query scores under 1% of the base.
/// A probe gives up at that share, so on data whose clusters do not prune it costs a tenth of
/// what it did at a quarter (manifold 1M: 0.25 s of probing before the GEMM path).
constexpr double kStepMaxScoredShareFused = 0.01;
/// Largest queue (ef) of the graph search kernel.
constexpr int kGraphSearchMaxQueue = 512;
/// Largest k of the IVF search kernel.
constexpr int kIvfMaxK = 256;

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

/// A tile plan's rows on the device (analysis/TilePlan.h), for the near-duplicate searches.
class TileSearch {
public:
  virtual ~TileSearch() = default;
  /// For each place of the plan's order, the place of the nearest other row of its own tile by
  /// the float32 GEMM (−1 in a tile of one row). Throws DeviceOutOfMemory, Error, Cancelled.
  virtual std::vector<std::int32_t> nearestInTile(JobControl& job) = 0;
  /// Every pair within `threshold` (analysis/Duplicates.h's pairsWithin) over the tile pairs the
  /// plan cannot rule out. Throws InvalidArgument (more than `maxPairs`), DeviceOutOfMemory,
  /// Error, Cancelled.
  virtual NearPairs pairsWithin(double threshold, std::int64_t maxPairs, JobControl& job) = 0;
};

/// A minimum spanning forest computed on the device, with the time the device spent on it
/// (the graph's upload and the edges' download excluded).
struct DeviceForest {
  std::vector<WeightedEdge> edges;
  double deviceSeconds = 0;
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

/// Everything the engine asks of a GPU. Each call runs on device `context.device`; host memory
/// in and out. DeviceOutOfMemory and Unsupported (a limit of the GPU path: k, d, n) let callers
/// fall back to the CPU; Error is any other device failure.
class GpuBackend {
public:
  virtual ~GpuBackend() = default;

  /// Never throws: any error means "not usable", with the error's text as the reason.
  virtual DeviceInfo queryDevice(int ordinal) = 0;
  /// How many CUDA devices the driver shows (0 on any error). Never throws.
  virtual int deviceCount() = 0;
  /// Starts `context`'s device: its CUDA context, a pooled stream and cuBLAS handle, and one
  /// small GEMM (cuBLAS loads its first kernels), so that later calls do not wait for them;
  /// then, where `float16Gemm` still holds when it is reached, a float16 GEMM of the exact path's
  /// tile shape (DeviceWarmUp::leaveOutFloat16Gemm clears it).
  virtual void warmUp(const Context& context, const std::atomic<bool>& float16Gemm) = 0;

  /// out[i] = ‖row i‖² (float64 accumulation).
  virtual void rowNormsSquared(const MatrixView<float>& m, float* out, const Context& context) = 0;

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

  /// `plan`'s rows uploaded for the all-pairs searches (the caller keeps `data` and `plan`).
  virtual std::unique_ptr<TileSearch> makeTileSearch(const MatrixView<float>& data,
                                                     const analysis::TilePlan& plan,
                                                     const Context& context) = 0;

  /// Borůvka's minimum spanning forest (weights ≥ 0), in Kruskal's order of ties.
  virtual DeviceForest boruvkaForest(const UndirectedGraph& graph, const Context& context,
                                     JobControl& job) = 0;
  /// The layout's epochs (layout/LayoutStep.h, the CPU's arithmetic): `positions` (host) are the
  /// start and receive the result; `report(epochs done)` after each epoch, `positions`
  /// refreshed first every `reportEvery`-th epoch and the last. DeviceOutOfMemory leaves
  /// `positions` untouched.
  virtual void layoutEpochs(const layout::EpochStep& step, int epochs, float learningRate,
                            int reportEvery, float* positions, const Context& context,
                            JobControl& job, const std::function<void(int)>& report) = 0;

  /// nearestCentroids (index/KMeans.h): ties to the smaller centroid.
  virtual std::vector<std::int32_t> nearestCentroids(const MatrixView<float>& data,
                                                     const MatrixView<float>& centroids, int count,
                                                     Metric metric, const Context& context) = 0;
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

/// The GPU backend, loaded from the CUDA plugin on the first call (once, thread-safe), or null
/// with `whyNot`: no plugin ("built without CUDA"), the loader's error (a missing libcuda.so.1
/// or cuBLAS), or a plugin of another interface version. Device problems (no GPU, an old
/// driver) are reported by the backend's queryDevice instead.
GpuBackend* gpuBackend(std::string* whyNot = nullptr);

/// Initialises the NVIDIA driver (cuInit through libcuda.so.1) where a plugin may be loaded:
/// run beside the plugin's load, whose cuBLAS libraries take as long to map as the driver takes
/// to start (about 100 ms each on an H100 host), so that the device is ready sooner. Does
/// nothing without a driver; errors are left to the runtime to report.
void startDriverEarly() noexcept;

/// What the first gpuBackend() call found: the backend, or why not.
struct PluginLoad {
  GpuBackend* backend = nullptr;
  bool pluginFound = false; ///< a plugin file was found (it may still have failed to load)
  std::string pluginPath;   ///< that file
  std::string whyNot;       ///< empty when `backend` is set
};
/// Loads the plugin on the first call; later calls return the same answer.
const PluginLoad& pluginLoad();

/// The plugin's interface version: bumped whenever GpuBackend or a type it passes changes, so
/// that a stale plugin is refused instead of crashing.
constexpr int kPluginAbiVersion = 6;
/// The plugin's file name and its two C entry points (no C++ name mangling across the dlopen).
constexpr const char* kPluginFileName = "libnearscape_cuda.so";
constexpr const char* kPluginAbiSymbol = "nearscape_gpu_plugin_abi";
constexpr const char* kPluginFactorySymbol = "nearscape_gpu_backend_v1";
using PluginAbiFunction = int (*)();
using PluginFactoryFunction = GpuBackend* (*)();

} // namespace nearscape::gpu
