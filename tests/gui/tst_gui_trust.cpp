// What a person must be able to trust (issue 42): a lasso closed where it began selects what it
// encloses, a session names the data actually open and restores every part of its state at the
// edges (item 0, the last item, an empty search), a session of moved data can be located again,
// and items of text data are named by their title column.
#include "ExplorerSession.h"
#include "GuiTest.h"
#include "HoverCard.h"
#include "ItemStrip.h"
#include "MainWindow.h"
#include "MapView.h"
#include "Session.h"
#include "TestFiles.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

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

  /// A window whose errors are recorded, not shown in a box; opened on `data` (default: the
  /// test data) and explored.
  void openData(MainWindow& window, QStringList* errors, QString data = {}, QString meta = {}) {
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
    const QPointF loop[] = {{box.left(), start.y()}, box.topLeft(),     box.topRight(),
                            box.bottomRight(),       box.bottomLeft(),  {box.left(), start.y() + 2},
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
    // A plain click (no travel) with the lasso still picks the item under it.
    sendMouse(map, QEvent::MouseButtonPress, start, Qt::LeftButton, Qt::LeftButton);
    sendMouse(map, QEvent::MouseButtonRelease, start + QPointF(1, 0), Qt::LeftButton,
              Qt::NoButton);
    QCOMPARE(window.selectedItem(), leftmost);
    QVERIFY(errors.isEmpty());
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiTrust>(argc, argv);
}
#include "tst_gui_trust.moc"
