#pragma once
// A session file (.nearscape, JSON): what a person was looking at — the data and its metadata,
// the metric, the colouring, the search, hidden classes, the selection, the selected item and
// path, the map's dimension and camera, the panels — so that a view can be saved, shared and
// reproduced (`nearscape --session FILE`).
//
// {"format": "nearscape-session", "version": 1, "data": PATH, "metadata": PATH|null,
//  "content_hash": HEX, "metric": "l2"|"cos"|"ip", "colour_by": NAME,
//  "colour_scale": "auto"|"linear"|"log"|"quantile" (absent: auto),
//  "facets": ["COLUMN=VALUE"|"COLUMN=A|B"|"COLUMN=FROM..TO"…] (absent: none),
//  "search": {"text": TEXT, "regex": BOOL}, "hidden": [GROUP…], "selection": [ID…],
//  "selected": ID|-1, "path_to": ID|-1, "dim": 2|3, "title_column": NAME|""|null,
//  "cluster_labels": COLUMN|""|null (shown, from that text column or the default one; null or
//  absent: not shown),
//  "camera": {"focal": [x,y,z], "position": [x,y,z], "up": [x,y,z], "scale": S}|null,
//  "window": BASE64}
// Paths are stored as given; relative ones are read against the session file's folder.

#include "ColourScale.h"
#include "MapView.h"
#include "nearscape/core/Facets.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

namespace nearscape::ui {

class ExplorerSession;

struct Session {
  QString data, metadata;
  std::string contentHash;
  std::string metric; ///< "l2", "cos" or "ip"; empty: the data's own (read: a known one)
  QString colourBy = QStringLiteral("label");
  ColourScaleKind colourScale = ColourScaleKind::Auto;
  QString searchText;
  bool searchRegex = false;
  /// The metadata column naming items ("": none); absent (older sessions): picked on its own.
  std::optional<QString> titleColumn;
  /// The cluster labels when shown: their text column ("": the default one); none: not shown.
  /// The window's (ClusterLabelsControl), as the camera is.
  std::optional<QString> clusterLabels;
  QStringList hidden; ///< legend groups unticked
  /// A numeric colouring's shown range (items outside hidden); none: every item.
  std::optional<std::pair<double, double>> shownRange;
  std::vector<FacetBrush> facets; ///< the Facets dock's brushes (items outside dimmed)
  std::vector<std::int64_t> selection;
  std::int64_t selected = -1, pathTo = -1;
  int dim = 2;
  std::optional<MapView::Camera> camera;
  QByteArray windowState;

  /// What `model` holds (no camera or window state: the window adds them).
  static Session of(const ExplorerSession& model);
  /// Puts into `model` what needs only its data: the colouring and its filter (when `colourings`
  /// offers the colouring; false when it does not yet, a computed one before the graph), the
  /// search (the Finder runs it; an empty one too), the selection and the selected item (item 0
  /// included; an id outside the data: none). What needs the graph — the item's neighbours and
  /// its path (restorablePathEnd) — and the camera (the map's, not the model's) the window
  /// restores once the graph exists.
  bool restoreInto(ExplorerSession& model, const QStringList& colourings) const;
  /// The end of the path to show from the model's selected item, or −1 (none, or outside).
  std::int64_t restorablePathEnd(const ExplorerSession& model) const;
  /// The colouring and its filter alone, when `colourings` offers it.
  bool restoreColouring(ExplorerSession& model, const QStringList& colourings) const;

  /// Reads and checks a session file. Throws IoError, FormatError (naming the file and the
  /// problem: not JSON, another format, a missing or mistyped field).
  static Session read(const QString& path);
  /// The same checks on a file's bytes; `path` names it in errors and anchors relative paths.
  /// Throws FormatError.
  static Session parse(const QByteArray& bytes, const QString& path);
  /// Writes it atomically (the old file kept on failure), never over the data or metadata it
  /// names, their sidecar, or `alsoInputs` (a compared file). Throws InvalidArgument (an input),
  /// IoError, WriteError.
  void write(const QString& path, const QStringList& alsoInputs = {}) const;
};

} // namespace nearscape::ui
