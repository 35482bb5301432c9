#pragma once
/// @file ResultJson.h
/// The results that `nearscape-cli … --json` prints and the Python module returns as dicts,
/// described once: each function gives the fields both share, in the CLI's order; the CLI adds
/// its files and timings, the module its arrays (python/src/ToPython.h converts the JSON).

#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nearscape {
struct GraphPath;
struct NearPairs;
struct DuplicateGroups;
} // namespace nearscape

namespace nearscape::results {

/// An item's label (the data's metadata); an empty function: no labels are written (the Python
/// module's arrays carry none).
using Labels = std::function<std::string(std::int64_t item)>;

/// A run's report field by field: device, method (knnMethodName), precision, iterations, shards,
/// streamed_chunks, detail, fallback.
nlohmann::ordered_json runReportJson(const RunReport& report);

/// A path: found, path (ids), steps, bottleneck, bottleneck_step, total, and labels (one per id)
/// when `labels` is given.
nlohmann::ordered_json graphPathJson(const GraphPath& path, const Labels& labels = {});

/// What a min-max path search knows beside its two paths.
struct MinimaxPathFacts {
  std::int64_t from = 0, to = 0;
  Metric metric = Metric::L2;
  std::string weights;          ///< the graph's weight note
  std::int64_t components = 0;  ///< connected components (trees of the forest)
  std::size_t bridgesAdded = 0; ///< edges that joined components (--bridge)
  bool bridgesExact = true;     ///< each its component's exact nearest (ComponentBridges::exact)
  std::string mstBackend;       ///< where the spanning forest was built
  std::string graph;            ///< which graph: "k=10 (CPU …)", a file, "given"
};

/// The min-max path (graphPathJson's fields), then from, to, metric, weights, components,
/// bridges_added (with bridges_exact when any), mst_backend, shortest (the least-total path) and
/// graph.
nlohmann::ordered_json minimaxPathJson(const GraphPath& minimax, const GraphPath& shortest,
                                       const MinimaxPathFacts& facts, const Labels& labels = {});

/// Outlier scores: rows, k, score (its kind), metric, graph (how the exact graph ran) and top:
/// [{id, score(, label)}] for the items `top` lists.
nlohmann::ordered_json outliersJson(std::int64_t rows, int k, const std::string& score,
                                    Metric metric, const RunReport& graph,
                                    const std::vector<float>& scores,
                                    const std::vector<std::int64_t>& top,
                                    const Labels& labels = {});

/// Two embeddings' neighbourhood overlap (a share of k per item), summarised.
struct OverlapSummary {
  double mean = 0;                       ///< mean share
  std::vector<std::int64_t> histogram;   ///< items by shared neighbours, 0 … k
  std::vector<std::int64_t> mostChanged; ///< the `top` items of least overlap
};
/// Summarises `overlap` (shares of k) for compare. Throws nothing.
OverlapSummary summariseOverlap(const std::vector<float>& overlap, int k, std::int64_t top);

/// rows, k, metric_a, metric_b, mean_overlap, histogram, most_changed: [{id, overlap(, label)}].
nlohmann::ordered_json compareJson(std::int64_t rows, int k, Metric metricA, Metric metricB,
                                   const std::vector<float>& overlap, const OverlapSummary& summary,
                                   const Labels& labels = {});

/// Near-duplicates found: rows, metric, threshold, (quantile, searched_up_to: when the threshold
/// was a quantile), pairs, groups, items_in_groups, redundant_items, largest_group.
nlohmann::ordered_json duplicatesJson(std::int64_t rows, Metric metric, const NearPairs& pairs,
                                      const DuplicateGroups& groups, std::optional<double> quantile,
                                      double searchedUpTo);

/// How the duplicates' range search worked: tile_pairs_computed, tile_pairs, candidates, run.
nlohmann::ordered_json duplicatesWorkJson(const NearPairs& pairs);

} // namespace nearscape::results
