#pragma once
// One chart of a trade-off study, drawn with QPainter into any rectangle (a widget, a picture):
// recall across on a "nines" axis (−log10(1 − recall): 0.9, 0.99, 0.999 evenly apart, recall 1
// in a column of its own past a break), and up, on a log scale, either queries per second or
// batch-1 latency (p50 as a dot, a whisker up to p99). One colour per run, each run's front
// joined (filled dots on it, rings off it), the exact search as a dashed reference line with a
// diamond at recall 1. The trade-off studio's plots and `nearscape --sweep-plot` both draw it.

#include "nearscape/index/SweepStudy.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QObject>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <memory>
#include <utility>
#include <vector>

class QPainter;

namespace nearscape::ui {

class StudyChart {
public:
  enum class Measure {
    Throughput, ///< queries per second at the sweep's batch size (higher is better)
    Latency     ///< batch-1 latency, p50 and p99 in ms (lower is better)
  };

  explicit StudyChart(Measure measure) : m_measure(measure) {}

  /// The study drawn and each run's colour (runColour(i) for run i when `colours` is short).
  void setStudy(std::shared_ptr<const SweepStudy> study, std::vector<QColor> colours);
  const SweepStudy* study() const { return m_study.get(); }
  Measure measure() const { return m_measure; }
  /// The whole chart's rectangle: plot area, tick labels, axis titles, title.
  void setRect(const QRectF& rect);
  /// Rings a point (run, row); (−1, −1): none.
  void setChosen(int run, int row) { m_chosen = {run, row}; }
  /// Marks the point under the mouse; (−1, −1): none.
  void setHovered(int run, int row) { m_hovered = {run, row}; }

  void paint(QPainter& painter, const QFont& font) const;

  /// Whether row `row` of run `run` is drawn (latency needs a measured p50).
  bool drawn(int run, int row) const;
  /// The point of row `row` of run `run` (the p50 dot in the latency chart).
  QPointF position(int run, int row) const;
  /// The exact search's diamond, at recall 1 (only when the study has the reference).
  QPointF referencePosition() const;
  /// The plot's y of a value on its vertical axis (queries/s, or ms).
  double yOf(double value) const;
  /// The area inside the axes.
  QRectF plotArea() const;
  /// The point within `radius` pixels of `pos` nearest to it: (run, row), or (−1, −1).
  std::pair<int, int> pointAt(const QPointF& pos, double radius = 8) const;
  /// Whether row `row` of run `run` is on its run's front (recall/QPS, or recall/p50).
  bool onFront(int run, int row) const;

  /// Colour-blind-safe colours (Okabe–Ito, without yellow and black) taken by runs in turn.
  static QColor runColour(int slot);
  /// The exact search's line and diamond.
  static QColor referenceColour();
  /// Milliseconds with the digits that matter: 0.123, 4.56, 78.9, 888.
  static QString formatMs(double ms);
  /// "512 bytes", "30.1 KB", "4.2 MB", "1.3 GB" (powers of 1000).
  static QString formatBytes(std::uint64_t bytes);
  /// One line per point for hovers and the studio's details: the run, the setting, recall,
  /// QPS, p50/p99, build time, bytes.
  static QString describe(const SweepRun& run, const SweepRow& row);

private:
  /// The x of a recall: its nines, or the column of recall 1.
  double xUnits(double recall) const;
  double xOf(double recall) const;
  double valueOf(const SweepRow& row) const;
  void updateRanges();

  Measure m_measure;
  std::shared_ptr<const SweepStudy> m_study;
  std::vector<QColor> m_colours;
  std::vector<std::vector<bool>> m_front; ///< per run
  QRectF m_rect{0, 0, 400, 300};
  std::pair<int, int> m_chosen{-1, -1}, m_hovered{-1, -1};
  double m_ninesLo = 0, m_ninesHi = 1, m_logLo = 0, m_logHi = 1;
  bool m_oneColumn = false; ///< some point has recall 1: its column is drawn
};

/// The study as one picture: a title, a legend (a swatch per run, the exact reference), the
/// throughput chart and the latency chart side by side, on white. `subtitle` follows the title.
QImage renderStudyFigure(const SweepStudy& study, const std::vector<QColor>& colours,
                         const QSize& size, const QString& subtitle = {});

} // namespace nearscape::ui
