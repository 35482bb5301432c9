#pragma once
// The window's docks: the colour key, the neighbours and the path, and the panels tabbed with
// the key (facets, sweep, duplicates, outliers, compare, selection). Their object names are what a
// session's saved window state restores.

class QDockWidget;
class QMainWindow;
class QWidget;

namespace nearscape::ui {

/// What each dock shows.
struct DockContents {
  QWidget* colourKey;
  QWidget* neighbours;
  QWidget* path;
  QWidget* sweep;
  QWidget* duplicates;
  QWidget* outliers;
  QWidget* compare;
  QWidget* selection;
  QWidget* facets;
};

struct Docks {
  QDockWidget* colourKey;
  QDockWidget* neighbours;
  QDockWidget* path;
  QDockWidget* sweep;
  QDockWidget* duplicates;
  QDockWidget* outliers;
  QDockWidget* compare;
  QDockWidget* selection;
  QDockWidget* facets;
};

/// Adds the docks to `window`: the key on the right with the panels tabbed behind it, the
/// neighbours below them, the path along the bottom.
Docks addDocks(QMainWindow& window, const DockContents& contents);
/// Their first sizes: the key and the neighbours share the right side about equally.
void sizeDocks(QMainWindow& window, const Docks& docks);
/// Tabbed docks show their whole titles ("Col…" said nothing): the window's dock tab bars
/// elide nothing and scroll instead, now and whenever docks are tabbed again.
void unelideDockTabs(QMainWindow& window);

} // namespace nearscape::ui
