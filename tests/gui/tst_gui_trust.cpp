// What a person must be able to trust (issue 42): a lasso closed where it began selects what it
// encloses, a session names the data actually open and restores every part of its state at the
// edges (item 0, the last item, an empty search), a session of moved data can be located again,
// and items of text data are named by their title column.
#include "CommandLine.h"
#include "ExplorerSession.h"
#include "FitBox.h"
#include "GuiTest.h"
#include "HoverCard.h"
#include "ItemStrip.h"
#include "MainWindow.h"
#include "MapView.h"
#include "MissingDataPage.h"
#include "Session.h"
#include "ShortcutsDialog.h"
#include "StatusLine.h"
#include "TestFiles.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <algorithm>

using namespace nearscape;
using namespace nearscape::ui;

class TestGuiTrust : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data, m_meta;
  static constexpr int kN = 450;

  QString artifact(const QString& name) const {
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    return QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/" + name;
  }

  /// A window whose errors are recorded, not shown in a box (errors null: the person's box);
  /// opened on `data` (default: the test data) and explored.
  void openData(MainWindow& window, QStringList* errors, QString data = {}, QString meta = {}) {
    if (errors)
      window.setErrorDisplay(
          [errors](const QString& title, const QString& message) { *errors << title + message; });
    window.resize(1100, 760);
    window.show();
    window.activateWindow(); // keyboard shortcuts go to the active window
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(data.isEmpty() ? m_data : data, meta.isEmpty() ? m_meta : meta);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
  }

  static void sendMouse(QWidget* w, QEvent::Type type, QPointF at, Qt::MouseButton button,
                        Qt::MouseButtons buttons) {
    QMouseEvent event(type, at, w->mapToGlobal(at), button, buttons, Qt::NoModifier);
    QApplication::sendEvent(w, &event);
  }

  std::vector<std::int64_t> itemsOf(const Dataset& ds, const char* label) const {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < ds.size(); ++i)
      if (ds.labelOf(i) == label)
        ids.push_back(i);
    return ids;
  }

private slots:
  /// Three blobs labelled cat, dog, bird; metadata with a package-like name column of unique
  /// values, a description and a numeric size.
  void initTestCase() {
    m_data = m_dir.filePath("pets.npy");
    m_meta = m_dir.filePath("pets-meta.tsv");
    std::vector<float> x = test::randomFloats(std::size_t(kN) * 4, 9);
    QByteArray meta("label\tpackage\tdescription\tsize\n");
    const char* names[] = {"cat", "dog", "bird"};
    for (int i = 0; i < kN; ++i) {
      x[std::size_t(i * 4 + i % 3)] += 8.0f;
      meta += QByteArray(names[i % 3]) + "\tlib" + names[i % 3] + "-" + QByteArray::number(i) +
              "\ta " + names[i % 3] + " package, number " + QByteArray::number(i) + "\t" +
              QByteArray::number(i * 7) + "\n";
    }
    QVERIFY(test::writeBytes(m_data, test::npyBytes("<f4", {kN, 4}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(m_meta, meta));
  }

  /// A lasso that ends within a few pixels of its start (how people close loops) selects what
  /// it encloses; it began over a point, which does not become the selected item.
  void closedLassoSelectsWhatItEncloses() {
    MainWindow window;
    QStringList errors;
    openData(window, &errors);
    MapView* map = window.mapView();
    const Dataset& ds = *window.dataset();
    const std::vector<std::int64_t> cats = itemsOf(ds, "cat"), dogs = itemsOf(ds, "dog");
    window.selectItem(dogs[3]);
    window.setSelection({dogs[0], dogs[1]});
    QRectF box(map->widgetPosOf(cats[0]), QSizeF(0, 0));
    std::int64_t leftmost = cats[0];
    for (const std::int64_t i : cats) {
      box = box.united(QRectF(map->widgetPosOf(i), QSizeF(1, 1)));
      if (map->widgetPosOf(i).x() < map->widgetPosOf(leftmost).x())
        leftmost = i;
    }
    box.adjust(-12, -12, 12, 12);
    QVERIFY(map->rect().contains(box.toRect()));
    // Starts on the leftmost cat, goes round the cats' box and ends 2 px from where it began.
    const QPointF start = map->widgetPosOf(leftmost);
    QCOMPARE(map->itemAt(start), leftmost);
    QTest::keyClick(&window, Qt::Key_L);
    QCOMPARE(map->dragTool(), MapView::DragTool::Lasso);
    sendMouse(map, QEvent::MouseButtonPress, start, Qt::LeftButton, Qt::LeftButton);
    const QPointF loop[] = {{box.left(), start.y()}, box.topLeft(),    box.topRight(),
                            box.bottomRight(),       box.bottomLeft(), {box.left(), start.y() + 2},
                            start + QPointF(0, 2)};
    for (const QPointF& p : loop)
      sendMouse(map, QEvent::MouseMove, p, Qt::NoButton, Qt::LeftButton);
    sendMouse(map, QEvent::MouseButtonRelease, loop[6], Qt::LeftButton, Qt::NoButton);
    // Every cat but perhaps the one on the loop's corner; nothing else.
    const std::vector<std::int64_t>& chosen = window.selection();
    QVERIFY2(chosen.size() + 1 >= cats.size(),
             qPrintable(QString("%1 of %2 cats").arg(chosen.size()).arg(cats.size())));
    QVERIFY(std::includes(cats.begin(), cats.end(), chosen.begin(), chosen.end()));
    QCOMPARE(window.selectedItem(), dogs[3]);
    // A plain click (1 px of travel) with the lasso still picks the item under it: where the
    // button is released, which may be another cat drawn over the leftmost (the selection is
    // drawn on top).
    const QPointF release = start + QPointF(1, 0);
    const std::int64_t under = map->itemAt(release);
    QVERIFY(std::binary_search(cats.begin(), cats.end(), under));
    sendMouse(map, QEvent::MouseButtonPress, start, Qt::LeftButton, Qt::LeftButton);
    sendMouse(map, QEvent::MouseButtonRelease, release, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(window.selectedItem(), under);
    QVERIFY(errors.isEmpty());
  }

  /// File → Open of an unreadable file, its error box dismissed, then Save Session: the session
  /// names the data actually open, under its own hash.
  void sessionAfterFailedOpenNamesOpenData() {
    MainWindow window;
    openData(window, nullptr);
    window.selectItem(0);
    const std::string hash = window.dataset()->contentHash;
    const QString bad = m_dir.filePath("unreadable.npy");
    QVERIFY(test::writeBytes(bad, "\x93NUMPY not an array at all"));
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openPath(bad);
    QVERIFY(failed.wait(30000));
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = window.findChild<QMessageBox*>()) && box->isVisible());
    QVERIFY2(box->text().contains("unreadable.npy"), qPrintable(box->text()));
    QTest::mouseClick(box->button(QMessageBox::Ok), Qt::LeftButton);
    QTRY_VERIFY(!window.findChild<QMessageBox*>() ||
                !window.findChild<QMessageBox*>()->isVisible());
    const QString saved = m_dir.filePath("after-unreadable.nearscape");
    QVERIFY(window.saveSessionTo(saved));
    const Session session = Session::read(saved);
    QCOMPARE(session.data, m_data);
    QCOMPARE(session.metadata, m_meta);
    QCOMPARE(session.contentHash, hash);
    QCOMPARE(session.selected, std::int64_t(0));
  }

  /// A session restores every part of its state at the edges: item 0 with a path to the last
  /// item, the last item alone, an empty search over a window that had one, the camera.
  void sessionRestoresTheEdges() {
    QStringList errors;
    MainWindow window;
    openData(window, &errors);
    const std::int64_t last = kN - 1, cat = kN - 3; // item 0 is a cat too: a path joins them
    window.setSelection({0, last});
    window.selectItem(0);
    window.showPathTo(cat);
    QTRY_VERIFY(window.lastPath().found());
    window.mapView()->zoomAt(QPointF(300, 200), 1.7);
    const MapView::Camera camera = window.mapView()->camera();
    const QString first = m_dir.filePath("edges-first.nearscape");
    QVERIFY(window.saveSessionTo(first));
    window.selectItem(last);
    const QString second = m_dir.filePath("edges-last.nearscape");
    QVERIFY(window.saveSessionTo(second));
    QCOMPARE(Session::read(second).selected, last);
    QCOMPARE(Session::read(second).pathTo, std::int64_t(-1));

    MainWindow other;
    openData(other, &errors);
    QSignalSpy searched(&other, &MainWindow::searchFinished);
    other.setSearch(QStringLiteral("dog"));
    QVERIFY(searched.wait(30000));
    QVERIFY(!other.searchMatches().empty());
    other.selectItem(5);
    QSignalSpy explored(&other, &MainWindow::explorationFinished);
    other.openSession(first);
    QVERIFY2(explored.wait(60000), qPrintable(other.lastError()));
    QCOMPARE(other.selectedItem(), std::int64_t(0));
    QCOMPARE(other.selection(), (std::vector<std::int64_t>{0, last}));
    QCOMPARE(other.session()->searchText(), QString());
    QTRY_VERIFY(other.searchMatches().empty());
    QTRY_VERIFY(other.lastPath().found());
    QCOMPARE(std::int64_t(other.lastPath().nodes.front()), std::int64_t(0));
    QCOMPARE(std::int64_t(other.lastPath().nodes.back()), cat);
    QCOMPARE(other.mapView()->camera().scale, camera.scale);
    QCOMPARE(other.mapView()->camera().focal, camera.focal);
    QCOMPARE(other.mapView()->overlayItem(), std::int64_t(0));
    QTRY_VERIFY(other.neighboursPanel()->count() > 0);

    other.openSession(second);
    QVERIFY2(explored.wait(60000), qPrintable(other.lastError()));
    QCOMPARE(other.selectedItem(), last);
    QVERIFY(!other.lastPath().found());
    QTRY_VERIFY(other.neighboursPanel()->count() > 0);
    QVERIFY(errors.isEmpty());
  }

  /// A session whose data moved opens a window that says so and offers to locate the file; a
  /// file of other content is refused with the reason, the moved file restores the session.
  void sessionOfMovedDataIsLocated() {
    QTemporaryDir dir;
    const QString data = dir.filePath("moving.npy"), meta = dir.filePath("moving-meta.tsv");
    QVERIFY(QFile::copy(m_data, data) && QFile::copy(m_meta, meta));
    QStringList errors;
    QString session = dir.filePath("moving.nearscape");
    {
      MainWindow window;
      openData(window, &errors, data, meta);
      window.setSelection({0, 1, 2});
      window.selectItem(0);
      QVERIFY(window.saveSessionTo(session));
    }
    QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
    const QString moved = dir.filePath("elsewhere/moving.npy");
    QVERIFY(QFile::rename(data, moved));
    QVERIFY(QFile::rename(meta, dir.filePath("elsewhere/moving-meta.tsv")));
    // Another embedding of as many items: not the session's data.
    const QString impostor = dir.filePath("impostor.npy");
    QVERIFY(test::writeBytes(
        impostor, test::npyBytes("<f4", {kN, 4},
                                 test::rawBytes(test::randomFloats(std::size_t(kN) * 4, 77)))));

    MainWindow window;
    window.setErrorDisplay(
        [&errors](const QString& title, const QString& message) { errors << title + message; });
    window.resize(1100, 760);
    window.show();
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openSession(session);
    QVERIFY(failed.wait(30000));
    MissingDataPage* page = window.missingDataPage();
    QTRY_VERIFY(page->isVisible());
    QVERIFY2(page->text().contains(data) && page->text().contains("moving.nearscape"),
             qPrintable(page->text()));
    QVERIFY(window.unopenedSession().has_value());
    QVERIFY(window.grab().save(artifact("trust-missing-data.png")));
    auto* locate = page->findChild<QPushButton*>(QStringLiteral("locateButton"));
    QVERIFY(locate && locate->isVisible());

    QStringList asked;
    QString answer = impostor;
    window.setFileChooser([&](const QString& missing) {
      asked << missing;
      return answer;
    });
    QTest::mouseClick(locate, Qt::LeftButton);
    QVERIFY(failed.wait(30000));
    QCOMPARE(asked, QStringList{data});
    QVERIFY2(window.lastError().contains("other data") && window.lastError().contains("hash"),
             qPrintable(window.lastError()));
    QVERIFY(page->isVisible());
    QVERIFY(!window.dataset());
    QVERIFY2(page->text().contains(data), qPrintable(page->text())); // still the saved name

    answer = moved;
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    QTest::mouseClick(locate, Qt::LeftButton);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    QCOMPARE(asked.size(), 2);
    QVERIFY(!page->isVisible());
    QVERIFY(window.mapView()->isVisible());
    QCOMPARE(window.session()->dataPath(), moved);
    QCOMPARE(window.session()->metaPath(), dir.filePath("elsewhere/moving-meta.tsv"));
    QCOMPARE(window.selection(), (std::vector<std::int64_t>{0, 1, 2}));
    QCOMPARE(window.selectedItem(), std::int64_t(0));
    QVERIFY(!window.unopenedSession());
    // Saved again, the session names where the data is now.
    QVERIFY(window.saveSessionTo(session));
    QCOMPARE(Session::read(session).data, moved);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join('\n')));
  }

  /// Items of text data are named by their title column (picked: "package") in the neighbour
  /// list, the path strip and the hover card, which lists every column with its name; another
  /// column is chosen in View → Item Titles, and a session keeps the choice.
  void titleColumnNamesItems() {
    QStringList errors;
    MainWindow window;
    openData(window, &errors);
    QCOMPARE(window.titleColumn(), QStringLiteral("package"));
    const std::int64_t item = 3; // a cat
    window.selectItem(item);
    ItemStrip* list = window.neighboursPanel();
    QTRY_VERIFY(list->count() > 0);
    for (int row = 0; row < list->count(); ++row) {
      const std::int32_t id = list->itemAt(row);
      const QString text = list->item(row)->text();
      QVERIFY2(text.startsWith(QString("#%1 libcat-%1 · cat").arg(id)), qPrintable(text));
      QVERIFY2(text.contains(QString("a cat package, number %1").arg(id)), qPrintable(text));
    }
    window.showPathTo(kN - 3);
    QTRY_VERIFY(window.pathStrip()->count() > 1);
    QVERIFY2(window.pathStrip()->item(0)->text().startsWith("#3 libcat-3"),
             qPrintable(window.pathStrip()->item(0)->text()));

    // The hover card, as the mouse brings it.
    MapView* map = window.mapView();
    const QPointF at = map->widgetPosOf(item);
    const std::int64_t under = map->itemAt(at);
    QVERIFY(under >= 0);
    QMouseEvent move(QEvent::MouseMove, at, map->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(map, &move);
    QTRY_VERIFY(window.hoverCard()->isVisible());
    const QString card = window.hoverCard()->text();
    const QString kind = QString::fromStdString(window.dataset()->labelOf(under));
    for (const QString& line :
         {QString("#%1 lib%2-%1").arg(under).arg(kind), QString("label: %1").arg(kind),
          QString("package: lib%2-%1").arg(under).arg(kind),
          QString("description: a %2 package, number %1").arg(under).arg(kind),
          QString("size: %1").arg(under * 7)})
      QVERIFY2(card.contains(line), qPrintable(card + " lacks " + line));
    QVERIFY(window.grab().save(artifact("trust-titles.png")));
    QVERIFY(window.hoverCard()->grab().save(artifact("trust-hover-card.png")));

    // Another column from the View menu; the list follows at once.
    QMenu* menu = window.findChild<QMenu*>(QStringLiteral("titleMenu"));
    QVERIFY(menu);
    emit menu->aboutToShow();
    QAction* byDescription = nullptr;
    for (QAction* a : menu->actions()) {
      if (a->text() == "package")
        QVERIFY(a->isChecked());
      if (a->text() == "description")
        byDescription = a;
    }
    QVERIFY(byDescription);
    byDescription->trigger();
    QCOMPARE(window.titleColumn(), QStringLiteral("description"));
    QTRY_VERIFY(list->count() > 0 && list->item(0)->text().startsWith(
                                         QString("#%1 a cat package").arg(list->itemAt(0))));
    QVERIFY(!window.setTitleColumn(QStringLiteral("no such column")));
    QCOMPARE(window.titleColumn(), QStringLiteral("description"));

    // Saved in the session, restored from it.
    const QString saved = m_dir.filePath("titles.nearscape");
    QVERIFY(window.saveSessionTo(saved));
    QCOMPARE(Session::read(saved).titleColumn, std::optional<QString>("description"));
    MainWindow again;
    again.setErrorDisplay([&errors](const QString& t, const QString& m) { errors << t + m; });
    again.show();
    QSignalSpy explored(&again, &MainWindow::explorationFinished);
    again.openSession(saved);
    QVERIFY2(explored.wait(60000), qPrintable(again.lastError()));
    QCOMPARE(again.titleColumn(), QStringLiteral("description"));
    QVERIFY(errors.isEmpty());
  }

  /// Escape or a click on empty space deselects; Ctrl+Z and Ctrl+Shift+Z undo and redo it;
  /// every dock is in the View menu; Help lists the shortcuts; dock tabs show whole titles;
  /// the compared maps say whose they are; a hover card goes when the map moves.
  void smallerThings() {
    QStringList errors;
    MainWindow window;
    openData(window, &errors);
    MapView* map = window.mapView();
    // An empty place on the map.
    QPointF empty;
    for (int y = 20; y < map->height() && empty.isNull(); y += 15)
      for (int x = 20; x < map->width() && empty.isNull(); x += 15)
        if (map->itemAt(QPointF(x, y)) < 0)
          empty = QPointF(x, y);
    QVERIFY(!empty.isNull());
    window.setSelection({1, 2});
    window.selectItem(5);
    sendMouse(map, QEvent::MouseButtonPress, empty, Qt::LeftButton, Qt::LeftButton);
    sendMouse(map, QEvent::MouseButtonRelease, empty, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(window.selectedItem(), std::int64_t(-1));
    QVERIFY(window.selection().empty());
    QCOMPARE(map->overlayItem(), std::int64_t(-1));
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(window.selection(), (std::vector<std::int64_t>{1, 2}));
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(window.selection().empty());
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
    window.selectItem(7);
    map->setFocus();
    QTest::keyClick(map, Qt::Key_Escape);
    QCOMPARE(window.selectedItem(), std::int64_t(-1));
    QVERIFY(window.selection().empty());

    // The View menu holds every dock's toggle.
    QMenu* view = nullptr;
    for (QAction* top : window.menuBar()->actions())
      if (top->text() == "&View")
        view = top->menu();
    QVERIFY(view);
    const QList<QDockWidget*> docks = window.findChildren<QDockWidget*>();
    QVERIFY(docks.size() >= 8);
    for (QDockWidget* dock : docks)
      QVERIFY2(view->actions().contains(dock->toggleViewAction()), qPrintable(dock->objectName()));

    // Dock tabs are not cut short.
    QTest::qWait(50);
    int tabs = 0;
    for (QTabBar* bar : window.findChildren<QTabBar*>()) {
      if (!bar->isVisible())
        continue;
      QCOMPARE(bar->elideMode(), Qt::ElideNone);
      for (int i = 0; i < bar->count(); ++i, ++tabs)
        QVERIFY2(bar->tabRect(i).width() > bar->fontMetrics().horizontalAdvance(bar->tabText(i)),
                 qPrintable(bar->tabText(i)));
    }
    QVERIFY(tabs >= 6);

    // Help → Keyboard Shortcuts, read from the actions themselves.
    QAction* shortcuts = nullptr;
    for (QAction* top : window.menuBar()->actions())
      if (top->menu())
        for (QAction* a : top->menu()->actions())
          if (a->objectName() == "shortcutsAction")
            shortcuts = a;
    QVERIFY(shortcuts);
    shortcuts->trigger();
    ShortcutsDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = window.findChild<ShortcutsDialog*>()) && dialog->isVisible());
    QStringList rows;
    for (int r = 0; r < dialog->table()->rowCount(); ++r)
      rows << dialog->table()->item(r, 0)->text() + " = " + dialog->table()->item(r, 1)->text();
    // Undo and Redo name what they take back ("Undo Selection").
    QVERIFY2(rows.filter("Edit → Undo").value(0).endsWith(" = Ctrl+Z"),
             qPrintable(rows.join('\n')));
    for (const QString& row :
         {QString("Map tool → Lasso = L"), QString("Edit → Deselect = Ctrl+Shift+A")})
      QVERIFY2(rows.contains(row), qPrintable(rows.join('\n')));
    QVERIFY2(rows.filter("Edit → Redo = ").value(0).contains("Ctrl+Shift+Z"),
             qPrintable(rows.join('\n')));
    QVERIFY(dialog->grab().save(artifact("trust-shortcuts.png")));
    dialog->close();

    // A hover card goes when the map moves under it.
    const QPointF at = map->widgetPosOf(10);
    sendMouse(map, QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
    QTRY_VERIFY(window.hoverCard()->isVisible());
    QWheelEvent wheel(at, map->mapToGlobal(at), {}, QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(map, &wheel);
    QVERIFY(!window.hoverCard()->isVisible());

    // Compared side by side, each map names its embedding.
    const QString second = m_dir.filePath("pets-second.npy");
    std::vector<float> y = test::randomFloats(std::size_t(kN) * 3, 31);
    for (int i = 0; i < kN; ++i)
      y[std::size_t(i * 3 + i % 3)] += 6.0f;
    QVERIFY(test::writeBytes(second, test::npyBytes("<f4", {kN, 3}, test::rawBytes(y))));
    window.compareWith(second);
    QTRY_VERIFY_WITH_TIMEOUT(window.otherMapView()->isVisible(), 60000);
    QCOMPARE(map->caption(), QStringLiteral("pets.npy"));
    QCOMPARE(window.otherMapView()->caption(), QStringLiteral("pets-second.npy"));
    QTest::qWait(100);
    QVERIFY(window.grab().save(artifact("trust-compare-captions.png")));
    window.showMapsSideBySide(false);
    QCOMPARE(map->caption(), QString());
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join('\n')));
  }

  /// A job's progress stays on one line with one percentage, whatever the message says.
  void progressTextFits() {
    const QFontMetrics metrics(QApplication::font());
    const QString format = progressFormat(QStringLiteral("exact kNN search 130.80%"), metrics, 200);
    QVERIFY2(!format.contains("130") && format.endsWith(" %p%"), qPrintable(format));
    const QString longer = progressFormat(
        QString("refining the map of ") + QString(200, 'x') + " with 5% left", metrics, 200);
    QVERIFY2(metrics.horizontalAdvance(QString(longer).replace("%p%", "100%")) <= 200,
             qPrintable(longer));
    QVERIFY2(progressFormat("5% of 7", metrics, 400) == "5%% of 7 %p%",
             qPrintable(progressFormat("5% of 7", metrics, 400)));
  }

  /// Fit and Home show the central percentiles: one far point does not squash the cloud, and
  /// the map says how many items lie outside.
  void fitIgnoresAFarPoint() {
    std::vector<float> cloud = test::randomFloats(2 * 400, 5); // in [-1, 1)² or so
    FitBox box = robustFitBox(cloud, 2);
    QCOMPARE(box.outside, std::int64_t(0)); // no outliers: the whole cloud, as before
    std::vector<float> far = cloud;
    far.push_back(1000.0f);
    far.push_back(-1000.0f);
    box = robustFitBox(far, 2);
    QCOMPARE(box.outside, std::int64_t(1));
    QVERIFY(box.hi[0] < 10 && box.lo[1] > -10);

    MapView map;
    map.resize(600, 450);
    map.show();
    QVERIFY(QTest::qWaitForWindowExposed(&map));
    map.setPoints(far, 2, std::vector<std::uint8_t>(far.size() / 2 * 3, 40));
    map.resetCamera();
    QCOMPARE(map.outsideAfterFit(), std::int64_t(1));
    QVERIFY(map.hasOutsideNote());
    QVERIFY2(map.outsideNote().startsWith("1 item outside the view"),
             qPrintable(map.outsideNote()));
    // The cloud spans most of the view; the far point is off it.
    double left = 1e9, right = -1e9;
    for (std::int64_t i = 0; i < 400; ++i) {
      left = std::min(left, map.widgetPosOf(i).x());
      right = std::max(right, map.widgetPosOf(i).x());
    }
    QVERIFY2(right - left > 0.5 * map.width(), qPrintable(QString("%1 px").arg(right - left)));
    QVERIFY(!map.rect().contains(map.widgetPosOf(400).toPoint()));
    // The note is drawn in the bottom-left corner.
    const QImage shot = map.grabFramebuffer();
    QVERIFY(shot.save(artifact("trust-fit-outlier.png")));
    const QImage corner = shot.copy(0, shot.height() - 40, 300, 40);
    QVERIFY2(test::countNonBackground(corner) > 200,
             qPrintable(QString::number(test::countNonBackground(corner))));
    // Once the person moves the camera, the note goes.
    map.zoomAt(QPointF(300, 220), 0.5);
    QVERIFY(!map.hasOutsideNote());
  }

  /// `nearscape DATA --title-column C` names items by C (not the picked column) once the map
  /// is shown.
  void commandLineTitleColumn() {
    CommandLine line;
    line.path = m_data;
    line.pathGiven = true;
    line.meta = m_meta;
    line.titleColumn = QStringLiteral("description");
    line.context.backend = Backend::Cpu;
    MainWindow window;
    QStringList errors;
    window.setErrorDisplay([&errors](const QString& t, const QString& m) { errors << t + m; });
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    QCOMPARE(applyCommandLine(line, window), std::optional<int>());
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    QCOMPARE(window.titleColumn(), QStringLiteral("description"));
    window.selectItem(3);
    QTRY_VERIFY(window.neighboursPanel()->count() > 0);
    const QString first = window.neighboursPanel()->item(0)->text();
    QVERIFY2(first.startsWith(QString("#%1 a ").arg(window.neighboursPanel()->itemAt(0))),
             qPrintable(first));
    QVERIFY(errors.isEmpty());
  }

  /// `nearscape --session S` of data that is gone opens the window with the page (it used to
  /// leave with one line on stderr).
  void commandLineSessionOfMissingDataKeepsTheWindow() {
    QTemporaryDir dir;
    const QString session = dir.filePath("gone.nearscape");
    Session s;
    s.data = dir.filePath("gone.npy");
    s.contentHash = "0123456789abcdef0123456789abcdef";
    s.write(session);
    CommandLine line;
    line.session = session;
    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    QCOMPARE(applyCommandLine(line, window), std::optional<int>());
    QVERIFY(failed.wait(30000));
    QTRY_VERIFY(window.missingDataPage()->isVisible());
    QVERIFY2(window.missingDataPage()->text().contains("gone.npy"),
             qPrintable(window.missingDataPage()->text()));
    QVERIFY(window.isVisible());
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiTrust>(argc, argv);
}
#include "tst_gui_trust.moc"
