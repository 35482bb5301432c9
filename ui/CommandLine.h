#pragma once
// The explorer's command line: `nearscape [PATH] [--meta FILE] [--backend B] [--screenshot PNG]
// …` read into a value, then applied to a window (what waits for the graph waits for
// explorationFinished), and the answers given without a window (--sweep-plot).

#include "ColourScale.h"
#include "MapView.h"
#include "nearscape/Nearscape.h"

#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

class QApplication;

namespace nearscape::ui {

class MainWindow;

/// What the command line asks for.
struct CommandLine {
  QString path; ///< the data (default: Fashion-MNIST); empty positional: none given
  bool pathGiven = false;
  QString meta, screenshot, session, compare, colourBy, search, opacityBy, sizeBy;
  std::optional<QString> titleColumn; ///< --title-column (empty: none)
  std::optional<std::pair<double, double>> shownRange;
  std::optional<ColourScaleKind> colourScale; ///< --colour-scale (else the model's, auto)
  std::vector<FacetBrush> facets;             ///< --filter COL=VALUE|COL=FROM..TO, all of them
  std::optional<Metric> metric;
  std::optional<MapView::DensityMode> density;
  bool map3D = false;
  bool clusterLabels = false; ///< --cluster-labels, from labelColumn (empty: the default)
  QString labelColumn;
  std::optional<qint64> select, pathTo;
  Context context; ///< the backend and GPUs asked for (else the preferences')
  /// The files this run reads, which no output (the screenshot) may replace.
  QStringList inputs() const;
};

/// Takes `--session FILE` (or `--session=FILE`) out of the arguments before QApplication sees
/// them: Qt claims `-session` for X session management and would swallow it.
std::string takeSessionArgument(int& argc, char** argv);
/// Whether the arguments only ask for --help or --version, or for a picture of a study
/// (--sweep-plot): answered without a display.
bool needsNoDisplay(int argc, char** argv);
/// Reads the command line of `app`; an exit status instead when it is wrong (2, with the reason
/// on stderr) or was answered (--sweep-plot: 0, 1 or 2). `session` was taken out before.
std::variant<CommandLine, int> parseCommandLine(const QApplication& app, const QString& session);
/// Applies it to `window`: its view settings now, what needs the graph once it exists, the
/// screenshot once the view settles; then opens the session or the data. An exit status when
/// it is refused before any work (a screenshot over an input, an unreadable session).
std::optional<int> applyCommandLine(const CommandLine& line, MainWindow& window);

} // namespace nearscape::ui
