#pragma once
/// @file Sampling.h
/// The engine's one seeded row sampler (PCA fits, k-means training, held-out queries, checks).

#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <vector>

namespace nearscape {

/// `count` distinct rows of [0, n), drawn uniformly for `seed` (a partial Fisher-Yates shuffle
/// of counter-based draws: the same rows on every machine), in increasing order; all rows when
/// count ≥ n.
std::vector<std::int64_t> seededSample(std::int64_t n, std::int64_t count, std::uint64_t seed);

/// Rows of a data set split into queries (a seededSample of them) and the base (the rest), as
/// copies, for measuring a search on data that has no queries of its own.
struct HeldOut {
  std::vector<float> base, queries;    ///< row-major copies
  std::vector<std::int64_t> baseRows;  ///< base row → data row
  std::vector<std::int64_t> queryRows; ///< query row → data row
  std::int64_t dim = 0;
  MatrixView<float> baseView() const { return {base.data(), std::int64_t(baseRows.size()), dim}; }
  MatrixView<float> queryView() const {
    return {queries.data(), dim ? std::int64_t(queries.size()) / dim : 0, dim};
  }
};
/// `alsoHold` (when in range) is held out too, beside the sample: the item a person chose.
HeldOut holdOutRows(const MatrixView<float>& data, std::int64_t count, std::uint64_t seed,
                    std::int64_t alsoHold = -1);

} // namespace nearscape
