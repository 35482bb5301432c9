#include "nearscape/analysis/ClusterLabels.h"

#include "analysis/LabelWords.h"
#include "nearscape/cluster/KMeans.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <numeric>

namespace nearscape {
namespace {

/// The member nearest to the members' coordinate-wise median (ties to the smaller id).
std::int64_t robustCentre(const MatrixView<float>& map, const std::vector<std::int64_t>& members) {
  const std::int64_t dim = map.cols;
  std::vector<float> median(static_cast<std::size_t>(dim)), values(members.size());
  for (std::int64_t c = 0; c < dim; ++c) {
    for (std::size_t m = 0; m < members.size(); ++m)
      values[m] = map.row(members[m])[c];
    auto middle = values.begin() + std::ptrdiff_t(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    median[std::size_t(c)] = *middle;
  }
  std::int64_t best = -1;
  double bestDistance = 0;
  for (const std::int64_t i : members) { // in id order: a strict < keeps the smaller id
    double distance = 0;
    for (std::int64_t c = 0; c < dim; ++c) {
      const double delta = double(map.row(i)[c]) - double(median[std::size_t(c)]);
      distance += delta * delta;
    }
    if (best < 0 || distance < bestDistance) {
      best = i;
      bestDistance = distance;
    }
  }
  return best;
}

/// One level: k-means of the map, each non-empty cluster's centre and words, largest first.
ClusterLabelLevel labelLevel(const MatrixView<float>& map, const analysis::WordSets& words,
                             int clusters, const ClusterLabelParams& params, const Context& context,
                             JobControl& job) {
  KMeansParams kParams;
  kParams.clusters = clusters;
  kParams.iterations = params.iterations;
  kParams.plusPlus = true; // random seeds put two centres into one blob of a well-separated map
  JobControl fit = job.sub(0.0, 0.8);
  const KMeansResult fitted = kmeans(map, kParams, Metric::L2, context, fit);
  JobControl assign = job.sub(0.8, 0.9);
  const std::vector<std::int32_t> nearest =
      nearestCentroids(map, fitted.centroids.view(), 1, Metric::L2, context, assign);

  std::vector<std::vector<std::int64_t>> members(static_cast<std::size_t>(clusters));
  for (std::size_t i = 0; i < nearest.size(); ++i)
    members[std::size_t(nearest[i])].push_back(std::int64_t(i));
  const auto top =
      analysis::topWords(words, nearest, clusters, params.wordsPerLabel, params.minTextsPerWord);
  job.check();

  ClusterLabelLevel level;
  level.clusters = clusters;
  std::vector<int> kept; // k-means cluster of each label
  for (int c = 0; c < clusters; ++c) {
    if (members[std::size_t(c)].empty())
      continue;
    ClusterLabel label;
    label.size = std::int64_t(members[std::size_t(c)].size());
    label.centreItem = robustCentre(map, members[std::size_t(c)]);
    label.centre.assign(map.row(label.centreItem), map.row(label.centreItem) + map.cols);
    for (const analysis::ScoredWord& w : top[std::size_t(c)]) {
      label.words.push_back(words.vocabulary[std::size_t(w.word)]);
      label.scores.push_back(w.score);
    }
    level.labels.push_back(std::move(label));
    kept.push_back(c);
  }
  std::vector<std::size_t> order(level.labels.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (level.labels[a].size != level.labels[b].size)
      return level.labels[a].size > level.labels[b].size;
    return level.labels[a].centreItem < level.labels[b].centreItem;
  });
  std::vector<ClusterLabel> sorted;
  std::vector<std::int32_t> rankOf(std::size_t(clusters), -1);
  for (std::size_t r = 0; r < order.size(); ++r) {
    sorted.push_back(std::move(level.labels[order[r]]));
    rankOf[std::size_t(kept[order[r]])] = std::int32_t(r);
  }
  level.labels = std::move(sorted);
  level.assignment.resize(nearest.size());
  for (std::size_t i = 0; i < nearest.size(); ++i)
    level.assignment[i] = rankOf[std::size_t(nearest[i])];
  job.progress(1.0);
  return level;
}

} // namespace

ClusterLabels clusterLabels(const MatrixView<float>& map, const std::vector<std::string>& texts,
                            const ClusterLabelParams& params, const Context& context,
                            JobControl& job) {
  NEARSCAPE_EXPECTS(map.rows > 0 && map.cols > 0, "cluster labels need a map of at least one item");
  NEARSCAPE_EXPECTS(std::int64_t(texts.size()) == map.rows,
                    "cluster labels need one text per item: " + std::to_string(texts.size()) +
                        " texts for " + std::to_string(map.rows) + " items");
  NEARSCAPE_EXPECTS(!params.granularities.empty(), "cluster labels need at least one granularity");
  for (const int g : params.granularities)
    NEARSCAPE_EXPECTS(g >= 1, "a granularity of cluster labels must be at least 1, not " +
                                  std::to_string(g));
  NEARSCAPE_EXPECTS(params.wordsPerLabel >= 1, "cluster labels need at least one word each");
  requireFinite(map, "the map");

  Context cpu = context; // see the header: a CPU result is the same on every machine
  cpu.backend = Backend::Cpu;
  JobControl reading = job.sub(0.0, 0.2);
  const analysis::WordSets words = analysis::wordSets(texts, params.minWordLength, reading);

  std::vector<int> ks;
  for (const int g : params.granularities) {
    const int k = int(std::min<std::int64_t>(g, map.rows));
    if (ks.empty() || ks.back() != k)
      ks.push_back(k);
  }
  ClusterLabels out;
  for (std::size_t l = 0; l < ks.size(); ++l) {
    JobControl part = job.sub(0.2 + 0.8 * double(l) / double(ks.size()),
                              0.2 + 0.8 * double(l + 1) / double(ks.size()));
    out.levels.push_back(labelLevel(map, words, ks[l], params, cpu, part));
  }
  return out;
}

} // namespace nearscape
