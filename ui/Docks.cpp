#include "Docks.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QScrollArea>
#include <QTabBar>
#include <QTimer>

namespace nearscape::ui {
namespace {

QDockWidget* addDock(QMainWindow& window, const QString& title, const char* name, QWidget* content,
                     Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, &window);
  dock->setObjectName(QString::fromLatin1(name));
  dock->setWidget(content);
  window.addDockWidget(area, dock);
  return dock;
}

} // namespace

Docks addDocks(QMainWindow& window, const DockContents& c) {
  Docks d;
  d.colourKey =
      addDock(window, QObject::tr("Colours"), "legendDock", c.colourKey, Qt::RightDockWidgetArea);
  d.colourKey->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  d.neighbours = addDock(window, QObject::tr("Nearest neighbours"), "neighboursDock", c.neighbours,
                         Qt::RightDockWidgetArea);
  d.path =
      addDock(window, QObject::tr("Smoothest path"), "pathDock", c.path, Qt::BottomDockWidgetArea);
  // In a scroll area: the sweep panel's plot and table need height the key's tab does not.
  auto* sweepScroll = new QScrollArea(&window);
  sweepScroll->setWidget(c.sweep);
  sweepScroll->setWidgetResizable(true);
  sweepScroll->setFrameShape(QFrame::NoFrame);
  d.sweep = addDock(window, QObject::tr("Index sweep"), "sweepDock", sweepScroll,
                    Qt::RightDockWidgetArea);
  d.duplicates = addDock(window, QObject::tr("Duplicates"), "duplicatesDock", c.duplicates,
                         Qt::RightDockWidgetArea);
  d.outliers =
      addDock(window, QObject::tr("Outliers"), "outliersDock", c.outliers, Qt::RightDockWidgetArea);
  d.compare =
      addDock(window, QObject::tr("Compare"), "compareDock", c.compare, Qt::RightDockWidgetArea);
  d.selection = addDock(window, QObject::tr("Selection"), "selectionDock", c.selection,
                        Qt::RightDockWidgetArea);
  d.facets =
      addDock(window, QObject::tr("Facets"), "facetsDock", c.facets, Qt::RightDockWidgetArea);
  // The panels tabbed behind the key, which stays in front.
  QDockWidget* previous = d.colourKey;
  for (QDockWidget* dock : {d.facets, d.sweep, d.duplicates, d.outliers, d.compare, d.selection}) {
    window.tabifyDockWidget(previous, dock);
    previous = dock;
  }
  d.colourKey->raise();
  window.resizeDocks({d.path}, {130}, Qt::Vertical);
  return d;
}

void sizeDocks(QMainWindow& window, const Docks& docks) {
  window.resizeDocks({docks.colourKey, docks.neighbours}, {330, 400}, Qt::Vertical);
  window.resizeDocks({docks.colourKey}, {300}, Qt::Horizontal);
}

void unelideDockTabs(QMainWindow& window) {
  // QMainWindow makes its tab bars as docks are tabbed, so they are found (again) after each.
  auto apply = [&window] {
    for (QTabBar* bar : window.findChildren<QTabBar*>(Qt::FindDirectChildrenOnly)) {
      bar->setElideMode(Qt::ElideNone);
      bar->setUsesScrollButtons(true);
    }
  };
  apply();
  QObject::connect(&window, &QMainWindow::tabifiedDockWidgetActivated, &window, apply);
  for (QDockWidget* dock : window.findChildren<QDockWidget*>())
    QObject::connect(dock, &QDockWidget::dockLocationChanged, &window,
                     [&window, apply] { QTimer::singleShot(0, &window, apply); });
}

} // namespace nearscape::ui
