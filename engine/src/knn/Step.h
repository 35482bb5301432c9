#pragma once
// STEP §4.1 on the CPU, for low
// dimensions (internal): the base in k-means clusters with bounding spheres; each query sorts the
// clusters by the distance to their sphere (Lemma 1: no member is nearer than that), traverses
// them in that order and stops at the first one farther than its current k-th neighbour; inside
// a cluster, members farther than the k-th are dropped. Distances are float64 (exactDistance), so
// the result is the float64 brute force's, ties by id.

#include "nearscape/knn/Knn.h"

#include <optional>

namespace nearscape::knn {

/// STEP applies to L2 in at most 16 dimensions (the paper's switch to exhaustive search at d = 16;
/// its pruning rests on the triangle inequality, which inner product breaks).
bool stepApplies(std::int64_t d, Metric metric);

/// Exact kNN by STEP (L2, any dimension; `stepApplies` says where it is tried unasked);
/// `excludeSelf` as exactSearchCpu. Nothing when the first queries show the
/// pruning too weak for this data (they score more than `maxScoredShare` of the base each:
/// clusters do not separate well in high intrinsic dimension); the caller then searches
/// exhaustively. Throws Cancelled.
std::optional<KnnResult> stepSearch(const MatrixView<float>& queries, const MatrixView<float>& base,
                                    int k, Metric metric, bool excludeSelf, const Context& context,
                                    JobControl& job, double maxScoredShare);

/// Whether STEP's clusters may search `base` for k neighbours on the GPU: L2 (the pruning rests
/// on the triangle inequality), k within the kernel's buffer (kStepMaxK), the clusters (12 bytes
/// a value) within the memory budget, and — unless `asked` — at most 256 dimensions (beyond,
/// clusters have not been seen to prune: on fashion-mnist, 784, they cost more than the GEMM
/// path; docs/benchmarks.md). The one test of the exact search and of clusteredGraphIfCheap.
bool gpuStepMayRun(const MatrixView<float>& base, int k, Metric metric, const Context& context,
                   bool asked);

/// The exact kNN graph by STEP's clusters on the GPU when a probe shows each row scoring at most
/// `maxScoredShare` of the data — clustered data, where it beats NN-Descent on time and recall —
/// else nullopt (gpuStepMayRun says no, `backend` — what the context resolved to at the public
/// entry — is not CUDA, or the clusters do not prune). What `method = auto` tries before
/// NN-Descent.
std::optional<KnnResult> clusteredGraphIfCheap(const MatrixView<float>& data, int k, Metric metric,
                                               Backend backend, const Context& context,
                                               JobControl& job, double maxScoredShare);

} // namespace nearscape::knn
