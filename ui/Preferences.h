#pragma once
// What a person sets once and keeps: stored with QSettings (per user), read when the window opens.

#include "nearscape/core/Context.h"
#include "nearscape/knn/NnDescent.h"

#include <QString>

#include <cstdint>

namespace nearscape::ui {

struct Preferences {
  int shownNeighbours = 10; ///< neighbours listed for a selected item
  int graphK = 15;          ///< the kNN graph's k (umap-learn's default)
  GraphMethod graphMethod = GraphMethod::Auto;
  Backend backend = Backend::Auto;
  /// GPUs the work is split over: "" (the first GPU), "all", or ordinals such as "0,1"
  /// (parseDevices; nearscape-cli's --devices).
  QString devices;
  double cacheGigabytes = 10; ///< the artefact cache's bound

  /// The stored preferences (defaults where none are stored or a value is out of range).
  static Preferences load();
  void save() const;
  std::uint64_t cacheBytes() const { return std::uint64_t(cacheGigabytes * 1e9); }
};

/// `context` with the GPUs `devices` names (Preferences::devices): its device list and first
/// device; the first GPU alone for "" or the CPU backend. Throws InvalidArgument as parseDevices.
void applyDevices(Context& context, const QString& devices);

} // namespace nearscape::ui
