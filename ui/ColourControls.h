#pragma once
// What the map's colours say: the toolbar's "Colour by", "Opacity" and "Size" boxes, the colour
// key beside the map (the legend of a categorical colouring, whose unticked groups are hidden,
// or a numeric colouring's colour bar with its "show from … to …" range), and the computed
// columns (the k-th neighbour's distance, map trust, outlier scores, a comparison's overlap).
// The colouring and its filter are the model's (ExplorerSession): choosing one is an undoable
// edit, and these controls follow the model's signals.

#include "Colouring.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QToolBar;
class QWidget;

namespace nearscape::ui {

class ColorBar;
class ExplorationJobs;
class ExplorerSession;
class JobRunner;
class LegendPanel;
class MapPair;

class ColourControls : public QObject {
  Q_OBJECT
public:
  /// Adds the three boxes to `bar`; key() is the colour key's widget, for a dock.
  ColourControls(ExplorerSession* session, MapPair* maps, ExplorationJobs* exploration,
                 QToolBar* bar);

  QWidget* key() const { return m_key; }
  LegendPanel* legend() const { return m_legend; }

  /// Colours by `name` (see MainWindow::setColourBy): an undoable edit of the model. False (and
  /// nothing changes) for a name not among colourChoices().
  bool setColourBy(const QString& name);
  QStringList colourChoices() const;
  /// The colouring shown (not one still being read or computed).
  QString colourBy() const;
  static QString trustColumn();
  static QString outlierColumn();
  /// A computed column from a panel (a comparison's overlap), offered until other data opens.
  void addPanelColumn(const QString& name, std::vector<double> values);
  /// The model's colouring shown again (a session's computed column once the graph exists).
  void applyColouring();

  bool setOpacityBy(const QString& name);
  QString opacityBy() const { return m_opacityColumn; }
  bool setSizeBy(const QString& name);
  QString sizeBy() const { return m_sizeColumn; }
  QStringList opacityChoices() const;

  /// The colours last put on the map (n × 3; the selection's or search's fading included).
  const std::vector<std::uint8_t>& shownColours() const { return m_shown; }
  /// The colour bar (numeric colourings), for tests and screenshots.
  ColorBar* colorBar() const { return m_colorBar; }

  bool setShownRange(double from, double to);
  std::optional<std::pair<double, double>> shownRange() const;

  /// Its background jobs (a column being read), for the window to stop on closing.
  std::vector<JobRunner*> jobs() const { return {m_colourJobs, m_opacityJobs, m_sizeJobs}; }
  /// A colouring, opacity or size column is read or computed in the background.
  bool pending() const;
  /// Paints the scheme's colours, bright for the selection (else the search's matches) and
  /// faded for the rest, and hides what the filter hides.
  void recolour();

signals:
  void message(const QString& text, int msecs);

private:
  /// Shows the model's colouring `name` (read or computed in the background when it must be).
  void apply(const QString& name);
  void showScheme(std::unique_ptr<ColourScheme> scheme);
  /// Fills the legend (categories) or the colour bar (numbers) for a new scheme.
  void showSchemeKey();
  /// The model's filter on the legend's boxes and the range's spin boxes.
  void showFilter();
  /// The filter the legend and range boxes show now (a person changed them).
  void filterEdited();
  void applyVisibility();
  /// Paints a numeric colouring again on the model's scale, fitted to its range filter, when
  /// either differs from what the colours follow now; refreshes the colour bar and scale box.
  void restyle();
  void refreshChoices();
  /// Shows the colouring `name` in the "Colour by" box (its items carry their names as data).
  void showChoice(const QString& name);
  void reset();

  ExplorerSession* m_session;
  MapPair* m_maps;
  ExplorationJobs* m_exploration;
  QComboBox* m_colourBox;
  QComboBox* m_opacityBox;
  QComboBox* m_sizeBox;
  QWidget* m_key;
  ColorBar* m_colorBar;
  LegendPanel* m_legend;
  QLineEdit* m_legendSearch; ///< searches a long legend by name
  QWidget* m_rangeFilter;    ///< the numeric colouring's scale and "show from … to …"
  QComboBox* m_scaleBox;
  QDoubleSpinBox* m_rangeFrom;
  QDoubleSpinBox* m_rangeTo;
  bool m_showingFilter = false; ///< the filter is being put on the boxes (not a person's edit)
  // Work on whole metadata columns, off the GUI thread (millions of items take seconds); each
  // its own runner, so that a new request stops only the one it replaces.
  JobRunner* m_colourJobs;
  JobRunner* m_opacityJobs;
  JobRunner* m_sizeJobs;
  std::unique_ptr<ColourScheme> m_scheme;
  /// What a numeric scheme's colours follow now (restyle paints again when the model differs).
  ColourScaleKind m_paintedScale = ColourScaleKind::Auto;
  std::optional<std::pair<double, double>> m_paintedRange;
  std::vector<std::uint8_t> m_shown;
  /// A colouring being read or computed in the background (a metadata column, map trust,
  /// outlier scores), shown when it arrives unless another was chosen meanwhile.
  QString m_colourPending;
  bool m_opacityPending = false, m_sizePending = false;
  QString m_sizeColumn;                    ///< the column point sizes follow ("" for none)
  std::vector<std::uint8_t> m_sizeClasses; ///< its items' size classes (MapView), empty for none
  QString m_opacityColumn;                 ///< the column opacity follows ("" for none)
  std::vector<double> m_opacityValues;     ///< its values (n), empty for none
  /// Computed colour-by columns from panels (a comparison's overlap), by name; per data set.
  std::map<QString, std::vector<double>> m_panelColumns;
  /// Map trust of the 2D and 3D maps, and the map each was computed for (its positions' buffer).
  struct Trust {
    const float* map = nullptr;
    std::vector<double> values;
    double mean = 0;
  };
  std::array<Trust, 2> m_trust;
  /// Outlier scores, and the artefacts (graph, metric) they were computed for.
  struct Outliers {
    const void* artefacts = nullptr;
    std::vector<double> values;
  } m_outliers;
};

} // namespace nearscape::ui
