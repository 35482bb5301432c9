#pragma once
// What a person sets once and keeps: stored with QSettings (per user), read when the window opens.

#include "nearscape/core/Context.h"
#include "nearscape/knn/NnDescent.h"

#include <cstdint>

namespace nearscape::ui {

struct Preferences {
  int shownNeighbours = 10; ///< neighbours listed for a selected item
  int graphK = 15;          ///< the kNN graph's k (umap-learn's default)
  GraphMethod graphMethod = GraphMethod::Auto;
  Backend backend = Backend::Auto;
  double cacheGigabytes = 10; ///< the artefact cache's bound

  /// The stored preferences (defaults where none are stored or a value is out of range).
  static Preferences load();
  void save() const;
  std::uint64_t cacheBytes() const { return std::uint64_t(cacheGigabytes * 1e9); }
};

} // namespace nearscape::ui
