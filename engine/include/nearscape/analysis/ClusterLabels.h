#pragma once
/// @file ClusterLabels.h
/// Labels for regions of a map, as Nomic Atlas and Embedding Atlas draw them: the map's points are
/// clustered at a few granularities (coarse to fine), and each cluster is named by the words of a
/// text column that are most distinctive of it, scored by class-based TF-IDF against the other
/// clusters (BERTopic's c-TF-IDF, Grootendorst 2022, §3.3).

#include "nearscape/core/Context.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nearscape {

struct ClusterLabelParams {
  /// Clusters per level, coarse to fine; each is held to the number of items, and a level equal
  /// to the one before it is left out.
  std::vector<int> granularities = {8, 24, 64};
  int wordsPerLabel = 3; ///< the top words kept per cluster
  int minWordLength = 3; ///< shorter tokens are dropped ("a", "of", "3d" stay out)
  int iterations = 25;   ///< Lloyd iterations of each level's k-means
  /// A word must occur in at least this many of a cluster's texts to name it (one text's odd word
  /// does not name a region).
  int minTextsPerWord = 2;
};

/// One labelled cluster of one level.
struct ClusterLabel {
  std::int64_t size = 0; ///< items in the cluster
  /// The member nearest to the members' coordinate-wise median: a robust centre that lies on a
  /// point (a centroid may fall into an empty gap of a curved cluster, and one far member pulls
  /// it away); ties to the smaller id.
  std::int64_t centreItem = -1;
  std::vector<float> centre;      ///< centreItem's map position (dim values)
  std::vector<std::string> words; ///< most distinctive first; may be empty (only stop words)
  std::vector<double> scores;     ///< c-TF-IDF of each word
};

/// One granularity: its clusters, largest first (ties to the smaller centre item), which is the
/// order in which a drawing keeps labels that would overlap.
struct ClusterLabelLevel {
  int clusters = 0;                     ///< k of this level's k-means
  std::vector<ClusterLabel> labels;     ///< non-empty clusters, largest first
  std::vector<std::int32_t> assignment; ///< per item, its index into `labels`
};

struct ClusterLabels {
  std::vector<ClusterLabelLevel> levels; ///< coarse to fine
};

/// Clusters `map` (n × dim positions, host memory, row-major) by seeded k-means at each of
/// `params.granularities` and labels each cluster from `texts` (n strings, UTF-8; tokens are the
/// lower-cased runs of letters and digits, English stop words, numbers and short tokens left out).
/// Deterministic for context.seed whatever the thread count (the k-means runs on the CPU: a 2D map
/// gains nothing from a device, and a CPU result is the same on every machine).
/// Throws InvalidArgument (no items, texts.size() ≠ n, no granularity, a granularity below 1,
/// NaN/Inf in the map), Cancelled (between clustering steps).
ClusterLabels clusterLabels(const MatrixView<float>& map, const std::vector<std::string>& texts,
                            const ClusterLabelParams& params, const Context& context,
                            JobControl& job = noJobControl());

/// The metadata column of `data` named `name` (case-insensitive), as texts to label clusters with.
/// Throws InvalidArgument naming the problem: no such column (the columns are listed), a column
/// of numbers (every non-empty cell is one), or one whose cells are all empty.
std::vector<std::string> labelTexts(const Dataset& data, const std::string& name);

/// The column cluster labels read when none is named: the data's text column (Dataset::textColumn)
/// when it holds words, else the text column (not numbers, not image paths) whose cells hold the
/// most words on average; −1 when there is none.
int defaultLabelColumn(const Dataset& data);

} // namespace nearscape
