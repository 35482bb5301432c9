#include "ResultJson.h"

#include "nearscape/analysis/Duplicates.h"
#include "nearscape/analysis/NeighbourhoodScores.h"
#include "nearscape/graph/Graph.h"

#include <cmath>
#include <numeric>

namespace nearscape::results {

nlohmann::ordered_json runReportJson(const RunReport& report) {
  return {{"device", report.device},       {"method", std::string(knnMethodName(report.method()))},
          {"precision", report.precision}, {"iterations", report.iterations},
          {"shards", report.shards},       {"streamed_chunks", report.streamedChunks},
          {"detail", report.detail},       {"fallback", report.fallback}};
}

nlohmann::ordered_json graphPathJson(const GraphPath& p, const Labels& labels) {
  nlohmann::ordered_json j;
  j["found"] = p.found();
  j["path"] = p.nodes;
  j["steps"] = p.steps;
  j["bottleneck"] = p.bottleneck;
  j["bottleneck_step"] = p.bottleneckIndex;
  j["total"] = p.total;
  if (labels) {
    std::vector<std::string> names;
    for (auto id : p.nodes)
      names.push_back(labels(id));
    j["labels"] = names;
  }
  return j;
}

nlohmann::ordered_json minimaxPathJson(const GraphPath& minimax, const GraphPath& shortest,
                                       const MinimaxPathFacts& facts, const Labels& labels) {
  nlohmann::ordered_json j = graphPathJson(minimax, labels);
  j["from"] = facts.from;
  j["to"] = facts.to;
  j["metric"] = std::string(metricName(facts.metric));
  j["weights"] = facts.weights;
  j["components"] = facts.components;
  j["bridges_added"] = facts.bridgesAdded;
  if (facts.bridgesAdded > 0)
    j["bridges_exact"] = facts.bridgesExact;
  j["mst_backend"] = facts.mstBackend;
  j["shortest"] = graphPathJson(shortest, labels);
  j["graph"] = facts.graph;
  return j;
}

// The lists' entries are plain (key-sorted) JSON objects, as the CLI has always printed them.
nlohmann::ordered_json outliersJson(std::int64_t rows, int k, const std::string& score,
                                    Metric metric, const RunReport& graph,
                                    const std::vector<float>& scores,
                                    const std::vector<std::int64_t>& top, const Labels& labels) {
  nlohmann::ordered_json j;
  j["rows"] = rows;
  j["k"] = k;
  j["score"] = score;
  j["metric"] = std::string(metricName(metric));
  j["graph"] = graph.describe();
  nlohmann::json listed = nlohmann::json::array();
  for (const std::int64_t item : top) {
    nlohmann::json entry = {{"id", item}, {"score", scores[std::size_t(item)]}};
    if (labels)
      entry["label"] = labels(item);
    listed.push_back(std::move(entry));
  }
  j["top"] = listed;
  return j;
}

OverlapSummary summariseOverlap(const std::vector<float>& overlap, int k, std::int64_t top) {
  OverlapSummary s;
  s.mean = overlap.empty()
               ? 0.0
               : std::accumulate(overlap.begin(), overlap.end(), 0.0) / double(overlap.size());
  s.histogram.assign(std::size_t(k) + 1, 0);
  for (const float o : overlap)
    ++s.histogram[std::size_t(std::lround(o * float(k)))];
  std::vector<float> change(overlap.size()); // the least overlap first
  for (std::size_t i = 0; i < overlap.size(); ++i)
    change[i] = 1.0f - overlap[i];
  s.mostChanged = topItems(change, top);
  return s;
}

nlohmann::ordered_json compareJson(std::int64_t rows, int k, Metric metricA, Metric metricB,
                                   const std::vector<float>& overlap, const OverlapSummary& summary,
                                   const Labels& labels) {
  nlohmann::ordered_json j;
  j["rows"] = rows;
  j["k"] = k;
  j["metric_a"] = std::string(metricName(metricA));
  j["metric_b"] = std::string(metricName(metricB));
  j["mean_overlap"] = summary.mean;
  j["histogram"] = summary.histogram;
  nlohmann::json listed = nlohmann::json::array();
  for (const std::int64_t item : summary.mostChanged) {
    nlohmann::json entry = {{"id", item}, {"overlap", overlap[std::size_t(item)]}};
    if (labels)
      entry["label"] = labels(item);
    listed.push_back(std::move(entry));
  }
  j["most_changed"] = listed;
  return j;
}

nlohmann::ordered_json duplicatesJson(std::int64_t rows, Metric metric, const NearPairs& pairs,
                                      const DuplicateGroups& groups, std::optional<double> quantile,
                                      double searchedUpTo) {
  nlohmann::ordered_json j;
  j["rows"] = rows;
  j["metric"] = std::string(metricName(metric));
  j["threshold"] = pairs.threshold;
  if (quantile) {
    j["quantile"] = *quantile;
    j["searched_up_to"] = searchedUpTo;
  }
  j["pairs"] = pairs.pairs.size();
  j["groups"] = groups.groups.size();
  j["items_in_groups"] = groups.itemsInGroups();
  j["redundant_items"] = groups.redundantItems();
  j["largest_group"] = groups.groups.empty() ? 0 : groups.groups.front().size();
  return j;
}

nlohmann::ordered_json duplicatesWorkJson(const NearPairs& pairs) {
  return {{"tile_pairs_computed", pairs.tilePairs},
          {"tile_pairs", pairs.tilePairsAll},
          {"candidates", pairs.candidates},
          {"run", pairs.report.describe()}};
}

} // namespace nearscape::results
