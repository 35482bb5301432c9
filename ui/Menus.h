#pragma once
// The menu bar, one builder per menu (ParaView's pqParaViewMenuBuilders): each fills its menu
// with actions that call the window's public operations.

#include "nearscape/Nearscape.h"

#include <array>
#include <map>

class QAction;
class QMenu;
class QToolBar;

namespace nearscape::ui {

class MainWindow;

/// The actions the window keeps to follow its state (checked, enabled).
struct MenuActions {
  QAction* openFile = nullptr;
  QAction* undo = nullptr;
  QAction* redo = nullptr;
  QAction* map3D = nullptr;
  std::array<QAction*, 3> density{}; ///< by MapView::DensityMode
  std::map<Metric, QAction*> metrics;
  QAction* sideBySide = nullptr;
  std::array<QAction*, 3> dragTools{}; ///< pan, lasso, rectangle
};

/// The explore bar's drag tools: what a left drag does on the map (pan, lasso, rectangle).
void buildDragTools(MainWindow& window, QToolBar& bar, MenuActions& actions);

/// File: open a file, an IDX folder or an example; attach metadata; compare; sessions; exports;
/// clear the cache; quit.
void buildFileMenu(MainWindow& window, QMenu& menu, MenuActions& actions);
/// Edit: undo and redo (of selection, colouring and filter edits), find, preferences.
void buildEditMenu(MainWindow& window, QMenu& menu, MenuActions& actions);
/// View: reset, 3D, point density, metric, the panels, the Trade-off Studio, maps side by side.
void buildViewMenu(MainWindow& window, QMenu& menu, MenuActions& actions);
/// Help: about (with why there is no GPU, when there is none).
void buildHelpMenu(MainWindow& window, QMenu& menu);

} // namespace nearscape::ui
