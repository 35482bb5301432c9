#pragma once
// The all-pairs searches on the CPU (internal): float32 GEMM over the tile pairs that the plan's
// boxes cannot rule out, each proposal within the GEMM's rounding bound re-checked in float64.

#include "analysis/TilePlan.h"
#include "nearscape/analysis/Duplicates.h"

#include <memory>

namespace nearscape::analysis {

/// The rows of `data` in the plan's order, packed (n × d). Not zero-filled first: each thread
/// touches the pages it writes (3.8 GB at 10M × 96 took over a second to zero on one thread).
std::unique_ptr<float[]> packInTileOrder(const MatrixView<float>& data, const TilePlan& plan,
                                         int threads);

/// The pairs among `count` proposals (`positions`: 2 per proposal, places in the plan's order)
/// whose float64 distance is at most `threshold`, sorted by (a, b). The GPU's re-check.
std::vector<NearPair> keepWithin(const MatrixView<float>& data, const TilePlan& plan,
                                 const std::int32_t* positions, std::int64_t count,
                                 double threshold, int threads);

/// Pairs an all-pairs search keeps in its first pass (16 bytes each). Past this many (or
/// maxPairs, if fewer) a pass only counts them, refused as soon as the count passes maxPairs (a
/// threshold joining every pair stops in small memory), and a second pass keeps them in memory
/// reserved for exactly that many. The CPU's search and the device's do the same.
constexpr std::int64_t kKeptWhileCounting = 4'000'000;

/// Sorts pairs by (a, b).
void sortPairs(std::vector<NearPair>& pairs);

/// pairsWithin on the CPU over `plan`.
NearPairs pairsWithinCpu(const MatrixView<float>& data, const TilePlan& plan, double threshold,
                         std::int64_t maxPairs, const Context& context, JobControl& job);

/// For each place of the plan's order, the place of the nearest other row of its own tile by the
/// GEMM's approximate distance (−1 in a tile of one row): the quantile's upper bounds.
std::vector<std::int32_t> tileNearestCpu(const MatrixView<float>& data, const TilePlan& plan,
                                         const Context& context, JobControl& job);

} // namespace nearscape::analysis
