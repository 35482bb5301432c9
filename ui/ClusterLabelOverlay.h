#pragma once
// Cluster labels drawn over the map (Nomic Atlas, Embedding Atlas): a transparent widget on top of
// the MapView that writes each cluster's words at its centre item, dark text in a light halo so it
// reads over points. Zoomed out it shows the coarse level; zoomed in, finer ones; of two labels
// that would overlap, the larger cluster's stays.

#include "nearscape/analysis/ClusterLabels.h"

#include <QRectF>
#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

namespace nearscape::ui {

class MapView;

class ClusterLabelOverlay : public QWidget {
  Q_OBJECT
public:
  /// Covers `map` (a child of it, following its size) and repaints with each frame it draws.
  explicit ClusterLabelOverlay(MapView* map);

  /// Shows `labels` (null: none) of the map's current points; `area` is the map's extent in map
  /// units² (robustArea), which sets the zoom at which each level appears.
  void setLabels(std::shared_ptr<const ClusterLabels> labels, double area);
  const std::shared_ptr<const ClusterLabels>& labels() const { return m_labels; }

  /// A label as the current camera places it (widget coordinates).
  struct Placed {
    QString text;
    QPointF anchor;        ///< the centre item's position
    QRectF box;            ///< the text's box, centred on the anchor
    std::size_t label = 0; ///< index into the level's labels
  };
  /// The level shown at the map's current zoom: the finest whose typical cluster spans at least
  /// kClusterPixels on screen (else the coarsest); −1 without labels.
  int levelShown() const;
  /// The labels drawn at the current camera: the shown level's, largest cluster first, those whose
  /// boxes would overlap a larger cluster's, lie outside the widget or hold no words left out.
  std::vector<Placed> placedLabels() const;
  static constexpr double kClusterPixels = 170;

  /// The extent of `positions` (n × dim) in map units²: the product of the two widest axes'
  /// spans between their 2nd and 98th percentiles (one far point does not shrink the labels).
  static double robustArea(const std::vector<float>& positions, int dim);

protected:
  void paintEvent(QPaintEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  QFont fontFor(int level) const;

  MapView* m_map;
  std::shared_ptr<const ClusterLabels> m_labels;
  double m_area = 0;
};

} // namespace nearscape::ui
