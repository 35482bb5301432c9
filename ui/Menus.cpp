#include "Menus.h"

#include "ClusterLabelsControl.h"
#include "Docks.h"
#include "ExplorerSession.h"
#include "MainWindow.h"
#include "PreferencesDialog.h"
#include "ShortcutsDialog.h"

#include <QActionGroup>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QToolBar>
#include <QUndoStack>

#include <functional>
#include <tuple>

namespace nearscape::ui {
namespace {

/// Asks where to write, then writes (a data set must be open).
void saveAs(MainWindow& window, const QString& title, const QString& filter,
            const std::function<bool(const QString&)>& write) {
  if (!window.dataset()) {
    window.showError(title, QObject::tr("Open a data set first."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(&window, title, {}, filter);
  if (!path.isEmpty())
    write(path);
}

void buildExamplesMenu(MainWindow& window, QMenu& examples) {
  QObject::connect(&examples, &QMenu::aboutToShow, &window, [&window, &examples] {
    examples.clear();
    const QString fashion = QString::fromStdString(defaultDatasetPath().string());
    QAction* a = examples.addAction(QObject::tr("Fashion-MNIST (70,000 images)"), &window,
                                    [&window, fashion] { window.openPath(fashion); });
    a->setEnabled(QFileInfo::exists(fashion));
    const QString text = QString::fromStdString(debianTextPath().string());
    QAction* b = examples.addAction(QObject::tr("debian-text (Debian package descriptions)"),
                                    &window, [&window, text] { window.openPath(text); });
    b->setEnabled(QFileInfo::exists(text));
    if (!b->isEnabled())
      b->setToolTip(QObject::tr("Build it with scripts/make-debian-text.sh"));
  });
}

/// View → Item Titles: which metadata column names items beside `#id` (none, or a column).
void buildTitleMenu(MainWindow& window, QMenu& menu) {
  menu.setObjectName(QStringLiteral("titleMenu"));
  menu.setToolTipsVisible(true);
  QObject::connect(&menu, &QMenu::aboutToShow, &window, [&window, &menu] {
    menu.clear();
    auto* group = new QActionGroup(&menu);
    const Dataset* ds = window.dataset();
    QStringList names{QString()};
    if (ds)
      for (const std::string& name : ds->metadata.columnNames)
        names << QString::fromStdString(name);
    for (const QString& name : names) {
      QAction* a = menu.addAction(name.isEmpty() ? QObject::tr("None (#id only)") : name, &window,
                                  [&window, name] { window.setTitleColumn(name); });
      a->setCheckable(true);
      a->setChecked(name.compare(window.titleColumn(), Qt::CaseInsensitive) == 0);
      group->addAction(a);
    }
    menu.setEnabled(ds != nullptr);
  });
}

} // namespace

void buildDragTools(MainWindow& window, QToolBar& bar, MenuActions& actions) {
  MainWindow* w = &window;
  auto* tools = new QActionGroup(w);
  const std::array<std::pair<QString, QKeySequence>, 3> names = {
      std::pair{QObject::tr("Pan"), QKeySequence(Qt::Key_P)},
      std::pair{QObject::tr("Lasso"), QKeySequence(Qt::Key_L)},
      std::pair{QObject::tr("Rectangle"), QKeySequence(Qt::Key_R)}};
  for (int t = 0; t < 3; ++t) {
    QAction* a = bar.addAction(names[std::size_t(t)].first, w, [w, t] { w->setDragTool(t); });
    a->setCheckable(true);
    a->setShortcut(names[std::size_t(t)].second);
    a->setToolTip(t == 0 ? QObject::tr("Drag to pan (3D: to turn) — P")
                         : QObject::tr("Drag to select; Shift adds, Alt removes — %1")
                               .arg(names[std::size_t(t)].second.toString()));
    tools->addAction(a);
    actions.dragTools[std::size_t(t)] = a;
  }
  actions.dragTools[0]->setChecked(true);
}

void buildFileMenu(MainWindow& window, QMenu& file, MenuActions& actions) {
  MainWindow* w = &window;
  actions.openFile = file.addAction(QObject::tr("&Open File…"), QKeySequence::Open, w, [w] {
    const QString path = QFileDialog::getOpenFileName(
        w, QObject::tr("Open embeddings"), {},
        QObject::tr("Embeddings (*.npy *.fvecs *.bvecs *.ivecs *.hdf5 *.h5 *.tsv *.gz *-ubyte);;"
                    "All files (*)"));
    if (!path.isEmpty())
      w->openPath(path);
  });
  file.addAction(QObject::tr("Open IDX &Folder…"), w, [w] {
    const QString path =
        QFileDialog::getExistingDirectory(w, QObject::tr("Open a folder of IDX files"));
    if (!path.isEmpty())
      w->openPath(path);
  });
  buildExamplesMenu(window, *file.addMenu(QObject::tr("Open &Example")));
  file.addAction(QObject::tr("Attach &Metadata…"), w, [w] {
    if (!w->dataset()) {
      w->showError(QObject::tr("Attach Metadata"), QObject::tr("Open a data set first."));
      return;
    }
    const QString path = QFileDialog::getOpenFileName(
        w, QObject::tr("Attach metadata"), {}, QObject::tr("Metadata (*.tsv);;All files (*)"));
    if (!path.isEmpty())
      w->attachMetadataFile(path);
  });
  file.addAction(QObject::tr("Compare &With…"), w, [w] {
    if (!w->dataset())
      return;
    const QString path = QFileDialog::getOpenFileName(
        w, QObject::tr("A second embedding of the same items"), QString(),
        QObject::tr("Embeddings (*.npy *.fvecs *.bvecs *.h5 *.hdf5 *.tsv);;All files (*)"));
    if (!path.isEmpty())
      w->compareWith(path);
  });
  file.addAction(QObject::tr("Open &Session…"), w, [w] {
    const QString path = QFileDialog::getOpenFileName(
        w, QObject::tr("Open a session"), {},
        QObject::tr("Nearscape sessions (*.nearscape);;All files (*)"));
    if (!path.isEmpty())
      w->openSession(path);
  });
  file.addAction(QObject::tr("Save Session &As…"), QKeySequence::SaveAs, w, [w] {
    saveAs(*w, QObject::tr("Save the session"), QObject::tr("Nearscape sessions (*.nearscape)"),
           [w](QString path) {
             if (!path.endsWith(QLatin1String(".nearscape")))
               path += QLatin1String(".nearscape");
             return w->saveSessionTo(path);
           });
  });
  QMenu* exports = file.addMenu(QObject::tr("&Export"));
  exports->addAction(QObject::tr("Map &Coordinates…"), w, [w] {
    saveAs(*w, QObject::tr("Export the map"), QObject::tr("TSV (*.tsv);;NumPy (*.npy)"),
           [w](const QString& p) { return w->exportMapTo(p); });
  });
  exports->addAction(QObject::tr("&Neighbours…"), w, [w] {
    saveAs(*w, QObject::tr("Export the neighbours"), QObject::tr("TSV (*.tsv)"),
           [w](const QString& p) { return w->exportNeighboursTo(p); });
  });
  exports->addAction(QObject::tr("&Path…"), w, [w] {
    saveAs(*w, QObject::tr("Export the path"), QObject::tr("TSV (*.tsv);;JSON (*.json)"),
           [w](const QString& p) { return w->exportPathTo(p); });
  });
  exports->addAction(QObject::tr("Map P&icture…"), w, [w] {
    saveAs(*w, QObject::tr("Export a picture of the map"), QObject::tr("PNG (*.png)"),
           [w](const QString& p) { return w->exportPictureTo(p); });
  });
  file.addAction(QObject::tr("Clear the &Cache"), w, [w] { w->clearCache(); });
  file.addSeparator();
  file.addAction(QObject::tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
}

void buildEditMenu(MainWindow& window, QMenu& edit, MenuActions& actions) {
  MainWindow* w = &window;
  // The model's history: selection, colouring and filter edits.
  QUndoStack* history = window.session()->undoStack();
  actions.undo = history->createUndoAction(&edit, QObject::tr("&Undo"));
  actions.undo->setShortcut(QKeySequence::Undo);
  actions.undo->setObjectName(QStringLiteral("undoAction"));
  actions.redo = history->createRedoAction(&edit, QObject::tr("&Redo"));
  actions.redo->setShortcut(QKeySequence::Redo);
  actions.redo->setObjectName(QStringLiteral("redoAction"));
  edit.addAction(actions.undo);
  edit.addAction(actions.redo);
  edit.addSeparator();
  edit.addAction(QObject::tr("&Find"), QKeySequence::Find, w, [w] { w->focusSearch(); });
  // Escape on the map deselects too (MapView::escapePressed): as a window shortcut it would
  // take Escape from the search field, which stops a search with it.
  QAction* deselect =
      edit.addAction(QObject::tr("&Deselect"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A), w,
                     [w] { w->deselect(); });
  deselect->setObjectName(QStringLiteral("deselectAction"));
  deselect->setToolTip(QObject::tr("Escape on the map, or a click on empty space, does it too"));
  edit.addAction(QObject::tr("&Preferences…"), QKeySequence::Preferences, w, [w] {
    PreferencesDialog dialog(w->preferences(), w);
    if (dialog.exec() == QDialog::Accepted)
      w->setPreferences(dialog.preferences());
  });
}

void buildViewMenu(MainWindow& window, QMenu& view, MenuActions& actions) {
  MainWindow* w = &window;
  view.addAction(QObject::tr("&Reset View"), Qt::Key_Home, window.mapView(), &MapView::resetCamera);
  actions.map3D = view.addAction(QObject::tr("&3D Map"), QKeySequence(Qt::CTRL | Qt::Key_3), w,
                                 [w](bool on) { w->setMapDimension(on ? 3 : 2); });
  actions.map3D->setCheckable(true);
  actions.map3D->setToolTip(QObject::tr("Drag to turn the map, Shift+drag to pan, wheel to zoom"));
  // How crowded points are drawn (MapView::DensityMode; the command line's --density).
  QMenu* density = view.addMenu(QObject::tr("Point &Density"));
  density->setToolTipsVisible(true);
  auto* densityGroup = new QActionGroup(w);
  for (const auto& [mode, name, tip] :
       {std::tuple{MapView::DensityMode::Auto, QObject::tr("&Automatic"),
                   QObject::tr("A density image where points crowd the pixels, single points as "
                               "you zoom in")},
        std::tuple{MapView::DensityMode::On, QObject::tr("&Density Image"),
                   QObject::tr("Always the density image: colours mixed by count, stronger where "
                               "more points lie")},
        std::tuple{MapView::DensityMode::Off, QObject::tr("&Single Points"),
                   QObject::tr("Always every point on its own")}}) {
    QAction* a = density->addAction(name, w, [w, mode = mode] { w->setDensityMode(mode); });
    a->setToolTip(tip);
    a->setCheckable(true);
    a->setChecked(mode == window.mapView()->densityMode());
    densityGroup->addAction(a);
    actions.density[std::size_t(mode)] = a;
  }
  QMenu* metrics = view.addMenu(QObject::tr("&Metric"));
  metrics->setToolTip(QObject::tr("The distance of the graph, the neighbours, the paths, the map "
                                  "and the sweep; a file's own metric is chosen when it is "
                                  "opened"));
  auto* group = new QActionGroup(w);
  for (const auto& [metric, name] :
       {std::pair{Metric::L2, QObject::tr("&L2 (Euclidean)")},
        std::pair{Metric::Cosine, QObject::tr("&Cosine")},
        std::pair{Metric::InnerProduct, QObject::tr("&Inner product")}}) {
    QAction* a = metrics->addAction(name, w, [w, metric = metric] { w->setMetric(metric); });
    a->setCheckable(true);
    group->addAction(a);
    actions.metrics[metric] = a;
  }
  buildTitleMenu(window, *view.addMenu(QObject::tr("Item &Titles")));
  view.addSeparator();
  const Docks& docks = window.docks();
  // Every dock can be brought back from here.
  for (QDockWidget* dock :
       {docks.colourKey, docks.neighbours, docks.path, docks.selection, docks.facets})
    view.addAction(dock->toggleViewAction());
  view.addAction(docks.sweep->toggleViewAction());
  QAction* studio = view.addAction(QObject::tr("&Trade-off Studio"),
                                   QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), w,
                                   &MainWindow::showTradeoffStudio);
  studio->setObjectName(QStringLiteral("tradeoffStudioAction"));
  studio->setToolTip(
      QObject::tr("Every sweep run overlaid full size, with the exact search as reference"));
  view.addAction(docks.duplicates->toggleViewAction());
  view.addAction(docks.outliers->toggleViewAction());
  view.addAction(docks.compare->toggleViewAction());
  view.addSeparator();
  window.clusterLabels()->addTo(view);
  actions.sideBySide = view.addAction(QObject::tr("Maps &Side by Side"));
  actions.sideBySide->setCheckable(true);
  actions.sideBySide->setEnabled(false);
  actions.sideBySide->setToolTip(
      QObject::tr("The compared embedding's own map beside this one (File → Compare With…): "
                  "hover, selection and paths show on both"));
  QObject::connect(actions.sideBySide, &QAction::toggled, w,
                   [w](bool on) { w->showMapsSideBySide(on); });
}

void buildHelpMenu(MainWindow& window, QMenu& help) {
  MainWindow* w = &window;
  help.addAction(QObject::tr("&Keyboard Shortcuts"), QKeySequence(Qt::Key_F1), w,
                 [w] {
                   auto* dialog = new ShortcutsDialog(*w);
                   dialog->setAttribute(Qt::WA_DeleteOnClose);
                   dialog->show();
                 })
      ->setObjectName(QStringLiteral("shortcutsAction"));
  help.addAction(QObject::tr("&About Nearscape"), w, [w] {
    const Context& context = w->context();
    const DeviceInfo device = queryDevice(context.device);
    // Why there is no GPU, whatever the reason (no plugin, no driver, an old driver, …).
    const QString gpu =
        device.usable && context.backend != Backend::Cpu
            ? QObject::tr("GPU: %1").arg(QString::fromStdString(device.name))
            : QObject::tr("CPU engine; no GPU in use: %1")
                  .arg(context.backend == Backend::Cpu ? QObject::tr("the CPU backend was chosen")
                                                       : QString::fromStdString(device.reason));
    QMessageBox::about(
        w, QObject::tr("About Nearscape"),
        QObject::tr("<b>Nearscape %1</b><p>A desktop explorer for embeddings: exact and "
                    "approximate kNN graphs, ANN indexes, maps and min-max paths.</p><p>%2</p>")
            .arg(QString::fromLatin1(engineVersion()), gpu.toHtmlEscaped()));
  });
}

} // namespace nearscape::ui
