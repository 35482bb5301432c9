#pragma once
/// @file Metric.h
/// Distance metrics. Reported distances are ascending = nearest first:
/// L2 → Euclidean distance (not squared); cosine → 1 − cos; inner product → −⟨x, y⟩.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nearscape {

enum class Metric { L2, InnerProduct, Cosine };

/// "l2", "ip" or "cos".
std::string_view metricName(Metric metric);

/// Parses "l2"/"euclidean", "ip"/"dot"/"inner_product", "cos"/"cosine"/"angular";
/// nullopt for anything else.
std::optional<Metric> parseMetric(std::string_view text);

/// The exact distance between two vectors of length d under `metric`, in float64.
double exactDistance(const float* a, const float* b, std::int64_t d, Metric metric);

} // namespace nearscape
