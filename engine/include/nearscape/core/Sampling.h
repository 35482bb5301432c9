#pragma once
/// @file Sampling.h
/// The engine's one seeded row sampler (PCA fits, k-means training, held-out queries, checks).

#include <cstdint>
#include <vector>

namespace nearscape {

/// `count` distinct rows of [0, n), drawn uniformly for `seed` (a partial Fisher-Yates shuffle
/// of counter-based draws: the same rows on every machine), in increasing order; all rows when
/// count ≥ n.
std::vector<std::int64_t> seededSample(std::int64_t n, std::int64_t count, std::uint64_t seed);

} // namespace nearscape
