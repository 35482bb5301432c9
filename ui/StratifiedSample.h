#pragma once
// What the map draws while the camera moves at millions of points: a seeded sample stratified by
// colour, so that each colour (a label, a band of a colour map, the search's matches against the
// dimmed rest) keeps its share of the points and none vanishes while panning.

#include <cstdint>
#include <vector>

namespace nearscape::ui {

/// About `budget` of the visible items (`visible`: empty for all) of n, sorted: items of one
/// colour (`rgb`, n × 3; colours within 8 levels per channel count as one) form a stratum, which
/// keeps its share of the budget, rounded, and at least one item; within a stratum, the items
/// whose hash of (`seed`, id) is smallest. Every visible item when there are no more than
/// `budget` of them.
std::vector<std::int32_t> stratifiedSample(const std::uint8_t* rgb, std::int64_t n,
                                           const std::vector<bool>& visible, std::int64_t budget,
                                           std::uint64_t seed);

} // namespace nearscape::ui
