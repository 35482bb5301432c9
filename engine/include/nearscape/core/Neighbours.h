#pragma once
/// @file Neighbours.h
/// Neighbour lists and how they were found: what the kNN search, the graph files, the graph
/// algorithms and the device layer trade in, so it lives on the ground floor (docs/design.md).

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nearscape {

/// How neighbour lists were computed. The names (knnMethodName) are what files, JSON and people
/// read, so they never change.
enum class KnnMethod {
  Unknown,      ///< not said (a graph read from ids alone, a cache entry)
  Exact,        ///< the exact search (GEMM candidates, every distance re-checked in float64)
  Step,         ///< STEP's cluster-pruned exact search
  NnDescent,    ///< NN-Descent on the CPU (approximate)
  Gnnd,         ///< GNND on the GPU (approximate)
  GgmMerge,     ///< two graphs merged by GGM (--extend; approximate)
  ResidentBase, ///< the exact search over a base kept on the device (radix select)
  Reference,    ///< the float64 brute force of tests and benchmarks
  IndexSearch,  ///< an ANN index's search (approximate)
  RangeSearch,  ///< the exact range search of the duplicates finder
  Given,        ///< supplied by the caller (the Python module's (ids, distances))
};

/// "exact", "STEP", "NN-Descent", "GNND", "GGM merge", "resident base, radix select", "float64
/// reference", "index search", "exact range search", "given"; "" for Unknown.
std::string_view knnMethodName(KnnMethod method);

/// The method that knnMethodName names `text`; nullopt for any other text ("" is Unknown).
std::optional<KnnMethod> parseKnnMethod(std::string_view text);

/// Whether `method` finds the true neighbours (ties broken by the smaller id): Exact, Step,
/// ResidentBase, Reference and RangeSearch.
bool isExactMethod(KnnMethod method);

/// How a result was computed: fields for code and tests, describe() for people.
struct RunReport {
  std::string device;     ///< "CPU (2 threads)" or the GPU's name
  std::string precision;  ///< the GPU's candidate precision ("float16 candidates", "3xTF32 …")
  int iterations = 0;     ///< NN-Descent / GNND iterations run
  int shards = 0;         ///< sharded NN-Descent: shards, every pair merged by GGM (0: one piece)
  int streamedChunks = 0; ///< the base streamed from host memory in this many chunks (0: resident)
  std::string detail;     ///< anything else a person may want (STEP's clusters, items scored)
  std::string fallback;   ///< why the CPU did work the GPU was to do ("" when it did not)

  /// How the neighbours were found.
  KnnMethod method() const { return m_method; }
  /// Whether they are the true neighbours (isExactMethod), whichever exact method found them.
  bool exact() const { return isExactMethod(m_method); }
  void setMethod(KnnMethod method) { m_method = method; }

  /// One line: "NVIDIA H100 80GB HBM3, float16 candidates", "CPU (2 threads), NN-Descent, 9
  /// iterations (GPU out of memory: …)".
  std::string describe() const;

private:
  KnnMethod m_method = KnnMethod::Unknown;
};

/// The k nearest neighbours of each query row.
struct KnnResult {
  Matrix<std::int32_t> ids;       ///< rows × k, nearest first
  Matrix<float> distances;        ///< rows × k, ascending
  Backend backend = Backend::Cpu; ///< where it ran
  RunReport report;               ///< how
  std::int64_t fallbackRows = 0;  ///< rows recomputed directly because the bound was too loose
  double candidatesPerRow = 0;    ///< mean candidates re-checked exactly per row
  double seconds = 0;             ///< wall time of the call
};

/// The pair that joins one component of a graph to the rest: row `inside` of the component, row
/// `outside` of another, and their distance (the metric's, exact in float64).
struct CrossPair {
  std::int64_t inside = -1; ///< −1 when the component was not asked for
  std::int64_t outside = -1;
  float distance = 0;
  /// True when no pair between the component and the rest is nearer; false when the pair is
  /// only mutually nearest (`outside` is `inside`'s nearest row outside the component and
  /// `inside` is `outside`'s nearest row inside it), found by a descent (knn/CrossNearest.h).
  bool exact = false;
};

/// For each component c < `count` of the labelling `label` (one per row) with `wanted[c]`, the
/// pair joining it to the rest (CrossPair, `count` of them). How they are found is the caller's
/// choice (knn::nearestOutside): the graph layer asks without knowing the search. Throws
/// Cancelled.
using NearestOutside =
    std::function<std::vector<CrossPair>(const std::vector<std::int32_t>& label, std::int32_t count,
                                         const std::vector<bool>& wanted, JobControl& job)>;

} // namespace nearscape
