#pragma once
// The exact kNN graph from its shares on several GPUs (gpu::KnnDevice::pairsShare): each device
// scored a disjoint part of the row pairs, so a row's k nearest are the k nearest of the union
// of the shares' lists.

#include "knn/KnnDevice.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nearscape::knn {

/// The shares merged: row i's k nearest, nearest first with ties by id, distances as one
/// device writes them (the float64 distance rounded to float).
struct MergedShares {
  std::shared_ptr<std::int32_t[]> ids; ///< n × k
  std::shared_ptr<float[]> distances;  ///< n × k
  /// Rows any share could not bound, ascending and distinct: their rows above are unspecified.
  std::vector<std::int64_t> overflow;
  std::int64_t candidates = 0; ///< the shares' candidates re-checked, summed
};

/// Merges `shares` (each n × k, each row sorted by (distance, id)): each row's k nearest of the
/// union under the same order, an id that several shares list taken once. A row a share lists
/// as complete (searched whole there) is that share's row as it is. Padding entries (id −1 or
/// past n, as a row with fewer than k candidates leaves) are skipped; a row with fewer than k
/// distinct ids over all shares, or in a share's `overflow` and complete in none, is listed in
/// `overflow`. Throws InvalidArgument when the shares' shapes differ.
MergedShares mergePairShares(const std::vector<gpu::PairsShare>& shares, int threads);

/// Per row of n, the first of the shares (in order) whose `whole` lists it — it searched the row
/// whole, so its row is the graph's — or −1. Ids outside [0, n) are skipped.
std::vector<std::int8_t>
firstShareWhole(std::int64_t n, const std::vector<const std::vector<std::int64_t>*>& whole);
/// The rows no share bounded, ascending: whole in none (`wholeIn` < 0), and listed in a share's
/// `overflow` or left with fewer than k distinct ids by the merge (`tooFew`, per row).
std::vector<std::int64_t>
rowsLeftUnbounded(const std::vector<std::int8_t>& wholeIn,
                  const std::vector<const std::vector<std::int64_t>*>& overflow,
                  const std::vector<std::int8_t>& tooFew);

} // namespace nearscape::knn
