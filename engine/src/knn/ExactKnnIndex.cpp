#include "nearscape/knn/Knn.h"

#include "gpu/Dispatch.h"
#include "knn/ExactCommon.h"
#include "knn/ExactCpu.h"
#include "knn/KnnDevice.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"

#include <mutex>

namespace nearscape {
namespace {

/// Queries from which a search takes the batch paths (the tiles or STEP's clusters) instead of
/// one resident pass a query: the tiles' fixed cost (the base's upload, 512 MB at 1M × 128,
/// tens of ms) is some hundred single passes of 0.3 ms.
constexpr std::int64_t kBatchQueries = 64;

} // namespace

struct ExactKnnIndex::Impl {
  MatrixView<float> base;
  Metric metric;
  Context context;
  Backend backend = Backend::Cpu;
  knn::BaseSummary summary; ///< CPU: the base's packing and norms, computed once
  std::unique_ptr<gpu::ResidentIndex> device;
  // L2 with k ≤ kStepMaxK over a large base: STEP's clusters, built at the first search, kept
  // while its probe shows them pruning.
  std::mutex clustersMutex;
  std::unique_ptr<gpu::ClusterIndex> clusters;
  bool clustersPrune = true;
};

ExactKnnIndex::ExactKnnIndex(const MatrixView<float>& base, Metric metric, const Context& context)
    : m_impl(std::make_unique<Impl>()) {
  NEARSCAPE_EXPECTS(base.rows > 0 && base.cols > 0, "the data is empty");
  requireFinite(base, "the data");
  m_impl->base = base;
  m_impl->metric = metric;
  m_impl->context = context;
  m_impl->backend = gpu::onGpuOrCpu<gpu::KnnDevice>(
      context,
      [&](gpu::KnnDevice& gpu) {
        m_impl->device = gpu.makeResidentIndex(base, metric, context);
        return Backend::Cuda;
      },
      [&] {
        // The packed base kept for the clicks (one more copy of the data) up to 2 GB, or half
        // the memory budget.
        const std::uint64_t bytes = std::uint64_t(base.rows) * std::uint64_t(base.cols) * 4;
        const bool keep =
            bytes <= (context.memoryBudget > 0 ? context.memoryBudget / 2 : (2ull << 30));
        m_impl->summary = knn::summariseBase(base, metric, effectiveThreads(context), keep);
        return Backend::Cpu;
      });
}

ExactKnnIndex::~ExactKnnIndex() = default;

Backend ExactKnnIndex::backend() const {
  return m_impl->backend;
}

KnnResult ExactKnnIndex::search(const MatrixView<float>& queries, int k, JobControl& job) const {
  Impl& s = *m_impl;
  NEARSCAPE_EXPECTS(queries.cols == s.base.cols,
                    "queries have dimension " + std::to_string(queries.cols) +
                        " but the data has " + std::to_string(s.base.cols));
  NEARSCAPE_EXPECTS(k >= 1 && k <= s.base.rows, "k = " + std::to_string(k) +
                                                    " is out of range [1, " +
                                                    std::to_string(s.base.rows) + "]");
  requireFinite(queries, "the queries");
  if (s.device) {
    // A batch takes the path knnSearch takes on a GPU: STEP's clusters where they prune (kept
    // here between calls), else the GEMM path's tiles. The resident base's single pass (GEMV,
    // radix select) is for one query — the GUI's click: blobs 1M, 0.31 ms against 0.54 ms
    // through the clusters — and a batch through it is one pass a query (a sweep's reference
    // row on manifold 1M: 2,954 QPS against the tiles' 10,000 queries in 0.05 s).
    const bool batch = queries.rows >= kBatchQueries;
    const bool fused = batch && knn::gpuFusedTiles(s.base.cols, k) && // (no device query for
                       queryDevice(s.context.device).computeCapability >= 80; // a click)
    if (s.metric == Metric::L2 && k <= gpu::kStepMaxK && s.base.rows >= 50000 && batch) {
      const std::lock_guard lock(s.clustersMutex);
      if (s.clustersPrune) {
        std::optional<KnnResult> found; // else the tiles
        gpu::tryOptionalGpuPath([&] {
          if (!s.clusters)
            s.clusters = gpu::requireDevice<gpu::KnnDevice>().makeClusterIndex(s.base, s.context);
          // The share at which they stop paying: against the fused float16 tiles as knnSearch
          // decides it (exactOnGpu), else against the TF32 GEMM.
          found =
              s.clusters->search(queries, k, false, job,
                                 fused ? gpu::kStepMaxScoredShareFused : gpu::kStepMaxScoredShare);
        });
        if (found)
          return std::move(*found);
        s.clustersPrune = false; // this data's clusters do not prune (or do not fit)
        s.clusters.reset();
      }
    }
    KnnResult found;
    if (batch && gpu::tryOnDevice(s.context, [&] {
          found = gpu::requireDevice<gpu::KnnDevice>().exactSearch(queries, s.base, k, s.metric,
                                                                   false, s.context, job, {});
        }))
      return found;
    if (gpu::tryOnDevice(s.context, [&] { found = s.device->search(queries, k, job); }))
      return found;
  }
  Context cpu = s.context;
  cpu.backend = Backend::Cpu;
  return knn::exactSearchCpu(queries, s.base, k, s.metric, false, cpu, job, {}, &s.summary);
}

} // namespace nearscape
