#pragma once
// Tiles of nearby items for the all-pairs searches (internal): the near-duplicate range search and
// the exact nearest-other-item pass that its quantile threshold rests on.
//
// Items are projected onto the top principal axes of a sample and split like a k-d tree (the
// widest projected coordinate at a tile boundary near its median) into tiles of at most
// `tileRows` items. Each node of the tree keeps the box of its items' projections. Projection onto
// orthonormal axes never lengthens a difference, so the gap between two boxes is a lower bound on
// the Euclidean distance between any item of one and any of the other (STEP's Lemma 1 idea with
// boxes instead of spheres): a pair of nodes whose gap exceeds the threshold holds no pair within
// it, and a dual-tree descent never visits the tile pairs below it. Cosine works on the normalised
// rows (‖x̂ − ŷ‖² = 2(1 − cos)); inner product has no triangle inequality and prunes nothing.

#include "knn/ExactCommon.h"
#include "nearscape/analysis/Duplicates.h"
#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <vector>

namespace nearscape::analysis {

/// Two tiles (a ≤ b) and the lower bound of the approximate distances between them.
struct TilePair {
  double bound;
  std::int32_t a, b;
};

struct TilePlan {
  /// A node of the k-d split: places [begin, end) of `order`; a leaf is a tile.
  struct Node {
    std::int64_t begin, end;
    std::int32_t left, right; ///< children (−1 for a leaf)
    std::int32_t tile;        ///< the leaf's tile (−1 for an inner node)
  };

  Metric metric = Metric::L2;
  knn::Packing packing;            ///< the exact searches' packing (L2 centred, cosine normalised)
  std::vector<std::int32_t> order; ///< item ids, tile after tile
  std::vector<std::int64_t> start; ///< tiles + 1 offsets into `order`
  std::vector<Node> nodes;         ///< preorder, the root first
  std::vector<float> norms;        ///< packed norm² per item id
  double maxNorm2 = 0;             ///< their maximum (the GEMM error bound's)
  int dims = 0;                    ///< projected coordinates per box (0: no pruning)
  std::vector<double> lo, hi;      ///< nodes × dims, widened by the projection's rounding

  std::int64_t tiles() const { return std::int64_t(start.size()) - 1; }
  std::int64_t rowsOf(std::int64_t tile) const { return start[tile + 1] - start[tile]; }
  /// A lower bound on the Euclidean distance between the packed rows of nodes a and b.
  double gap(std::int32_t a, std::int32_t b) const;
  /// A lower bound on any approximate distance (the GEMM's units: squared L2, 1 − cos) between
  /// the nodes' rows, before the GEMM's own rounding; −∞ where nothing can be pruned (inner
  /// product).
  double approxLowerBound(std::int32_t a, std::int32_t b) const;
  /// The tile pairs (a ≤ b) whose boxes allow an approximate distance ≤ `limit`, by (a, b).
  std::vector<TilePair> pairsBelow(double limit, int threads = 1) const;
  /// Writes the packed rows of `tile` (rowsOf × d) into `out`.
  void packTile(const MatrixView<float>& data, std::int64_t tile, float* out) const;
};

/// Tiles of at most `params.tileRows` items over `data`, boxes in `params.boxDims` directions.
/// Throws InvalidArgument (no rows per tile, no box directions), Cancelled.
TilePlan makeTilePlan(const MatrixView<float>& data, Metric metric, const DuplicateParams& params,
                      const Context& context, JobControl& job);

/// The threshold in the GEMM's units for a distance `threshold` in the metric's reported units
/// (Euclidean → squared; 1 − cos and −ip unchanged).
double approxUnits(Metric metric, double threshold);

} // namespace nearscape::analysis
