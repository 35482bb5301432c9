#pragma once
/// @file Knn.h
/// Exact k-nearest-neighbour search and kNN graphs, on the CPU and (when built with it) CUDA.
///
/// Distances follow docs/design.md's conventions: L2 → Euclidean distance, cosine → 1 − cos (a zero
/// vector has cos = 0 with everything), inner product → −⟨x, y⟩; ascending = nearest first, ties
/// broken by the smaller id. Candidates come from GEMM (norm expansion, reduced precision on the
/// GPU); every reported distance is recomputed from the vectors in float64, and the candidate set
/// provably holds the true k: every candidate within twice the rounding-error bound of the k-th
/// is kept, and a row whose bound is too loose is recomputed directly.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace nearscape {

/// Tuning of the exact search; the defaults suit both backends.
struct ExactKnnParams {
  std::int64_t queryTile = 0;   ///< queries per GEMM tile; 0 = chosen from the memory budget
  std::int64_t baseTile = 0;    ///< base rows per GEMM tile; 0 = chosen from the memory budget
  bool reducedPrecision = true; ///< GPU only: float16 candidates (then the exact re-check)
  /// GPU only: float16 tiles scored and filtered in one kernel, the dot products never stored
  /// (d of 32, 64, 128 or 256; k ≤ 256); off: every tile through cuBLAS (A/B, tests).
  bool fusedTiles = true;
  /// GPU only: a graph's fused float16 sweeps score each pair of rows once and test the value
  /// for both rows (half the tiles; every row's candidate list on the device at once, where it
  /// fits); off: each row sweeps every column (A/B, tests).
  bool pairedSweeps = true;
  /// STEP's cluster pruning (L2): Auto takes it where a probe of the queries shows it pruning
  /// most of the base (GPU: ≤ 256 dimensions, CPU: ≤ 16), Always whenever it applies (tests),
  /// Off never.
  enum class Pruning { Auto, Always, Off } pruning = Pruning::Auto;
};

/// k nearest rows of `base` for each row of `queries` (k ≤ base rows).
/// Throws InvalidArgument (k out of range, dimension mismatch, NaN/Inf, empty input, a memory
/// budget below one row), DeviceOutOfMemory only when no fallback exists, Cancelled.
KnnResult knnSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                    Metric metric, const Context& context, JobControl& job = noJobControl(),
                    const ExactKnnParams& params = {});

/// Whether the GPU's exact search of rows of `dim` values for k neighbours takes the fused float16
/// kernel (at its default precision, on an sm_80 or later GPU, against a base of more than one
/// tile), which needs no float16 GEMM from cuBLAS (DeviceWarmUp::leaveOutFloat16Gemm).
bool gpuSearchIsFused(std::int64_t dim, int k);

/// The exact kNN graph: each row's k nearest other rows (itself excluded; k ≤ n − 1).
/// Throws as knnSearch.
KnnResult knnGraph(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                   JobControl& job = noJobControl(), const ExactKnnParams& params = {});

/// An exact search over a fixed base kept ready for many small calls — the GUI's click, one query
/// against millions. With CUDA the base stays on the device and each query is one pass: distances
/// (GEMV), a radix select of the k-th (Dr. Top-k's radix-select top-k), every candidate within
/// the rounding bound of it re-checked in float64, sorted; any k up to n.
class ExactKnnIndex {
public:
  /// Keeps `base` (the caller keeps it alive) and, on CUDA, uploads it; on the CPU keeps it packed
  /// for the GEMM (one more copy of the data, up to 2 GB or half the memory budget).
  /// Throws InvalidArgument (empty, NaN/Inf), DeviceOutOfMemory (CUDA forced).
  ExactKnnIndex(const MatrixView<float>& base, Metric metric, const Context& context);
  ~ExactKnnIndex();
  ExactKnnIndex(const ExactKnnIndex&) = delete;
  ExactKnnIndex& operator=(const ExactKnnIndex&) = delete;

  /// The k nearest base rows of each query (k ≤ n). Throws InvalidArgument, Cancelled.
  KnnResult search(const MatrixView<float>& queries, int k, JobControl& job = noJobControl()) const;
  /// Where the base lives.
  Backend backend() const;

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// Plain float64 brute force over the rows `rows` of `queries` (all when empty); with
/// `excludeSelf` a query row i never returns base row i. The oracle for tests and benchmarks.
KnnResult knnReference(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                       Metric metric, bool excludeSelf, const std::vector<std::int64_t>& rows = {},
                       int threads = 0);

/// "" when `got` equals the float64 reference `ref` (same rows): distances within 1e-6 relative,
/// ids equal except inside runs of reference distances tied within 1e-6 relative; else a
/// description of the first difference.
std::string compareWithReference(const KnnResult& got, const KnnResult& ref,
                                 const std::vector<std::int64_t>& gotRows = {});

/// Recall@k as ann-benchmarks counts it: a returned id is a hit when its exact distance is at most
/// the true k-th distance (from `truth`, rows × ≥k ids) plus 1e-6 relative. `queryRows` maps the
/// rows of `found` and `truth` to rows of `queries` (identity when empty).
double recallAtK(const MatrixView<std::int32_t>& found, const MatrixView<std::int32_t>& truth,
                 int k, const MatrixView<float>& queries, const MatrixView<float>& base,
                 Metric metric, const std::vector<std::int64_t>& queryRows = {});

} // namespace nearscape
