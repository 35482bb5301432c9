#pragma once
/// @file GraphLayout.h
/// The map: a kNN-graph layout in 2D or 3D (UMAP-style fuzzy weights, attraction along edges,
/// repulsion by negative sampling, SGD with a decaying rate), and its quality.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace nearscape {

struct LayoutParams {
  int dim = 2;               ///< 2 or 3
  int epochs = 0;            ///< 0: 500 up to 10,000 items, 200 beyond (as umap-learn)
  float minDist = 0.1f;      ///< how tightly points may pack (umap-learn's min_dist)
  int negativeSamples = 5;   ///< repulsive samples per attractive update
  float learningRate = 1.0f; ///< initial rate, decaying linearly to 0
  int reportEvery = 10;      ///< hand out positions every this many epochs
};

/// Called with the current n × dim positions (host memory, valid during the call) and the
/// fraction done. Runs on the layout's thread.
using LayoutProgress = std::function<void(const MatrixView<float>& positions, double fraction)>;

/// Lays out the kNN graph (`ids`, `distances`: n × k, nearest first, −1 ids ignored) starting
/// from `initial` (n × dim, e.g. PCA). Deterministic for a seed whatever the thread count: each
/// epoch reads the previous epoch's positions and moves every node by its own edges.
/// Throws InvalidArgument (shapes, dim), Cancelled.
Matrix<float> layoutGraph(const MatrixView<std::int32_t>& ids, const MatrixView<float>& distances,
                          const MatrixView<float>& initial, const LayoutParams& params,
                          const Context& context, JobControl& job = noJobControl(),
                          const LayoutProgress& progress = {});

/// Exact k nearest neighbours in a 2D or 3D map (a uniform grid searched ring by ring; ties by
/// smaller id), n × k ids; with `rows`, those rows' only (rows.size() × k, in their order).
/// Throws InvalidArgument.
Matrix<std::int32_t> mapNeighbours(const MatrixView<float>& positions, int k, int threads = 0,
                                   const std::vector<std::int64_t>& rows = {});

/// Per item, the share of its true neighbours (`truth`, n × ≥k) among its k nearest in the map;
/// `overall` is their mean. Every item's: the full map trust (the GUI's colouring, `layout
/// --trust`); layout/MapTrust.h estimates the mean from a sample instead.
struct LayoutQuality {
  std::vector<float> perItem;
  double overall = 0;
};
LayoutQuality layoutQuality(const MatrixView<std::int32_t>& truth,
                            const MatrixView<float>& positions, int k = 10, int threads = 0);

} // namespace nearscape
