// The explorer's model as the person meets it: a failed File → Open changes nothing, Edit → Undo
// and Redo take back selection, colouring and filter edits, and no export of a panel replaces
// a file the explorer read.
#include "DuplicatesPanel.h"
#include "ExplorerSession.h"
#include "GuiTest.h"
#include "LegendPanel.h"
#include "MainWindow.h"
#include "OutliersPanel.h"
#include "SweepPanel.h"
#include "TestFiles.h"
#include "TradeoffStudio.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace nearscape;
using namespace nearscape::ui;
using nearscape::test::countNonBackground;

class TestGuiSession : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data, m_meta;
  static constexpr int kN = 450;

  QString artifact(const QString& name) const {
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    return QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/" + name;
  }

  /// A window whose errors are recorded, not shown in a box; opened on the test data.
  void openData(MainWindow& window, QStringList* errors) {
    window.setErrorDisplay(
        [errors](const QString& title, const QString& message) { *errors << title + message; });
    window.resize(1000, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(m_data, m_meta);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
  }

  /// The action named `name` in the menu bar's menu titled `title`.
  static QAction* menuAction(MainWindow& window, const QString& title, const QString& name) {
    for (QAction* top : window.menuBar()->actions())
      if (top->menu() && top->text() == title)
        for (QAction* action : top->menu()->actions())
          if (action->objectName() == name)
            return action;
    return nullptr;
  }

private slots:
  /// Three blobs labelled cat, dog, bird; metadata in a file of its own (not the sidecar) with a
  /// numeric column "score".
  void initTestCase() {
    m_data = m_dir.filePath("pets.npy");
    m_meta = m_dir.filePath("labels.tsv");
    std::vector<float> x = test::randomFloats(std::size_t(kN) * 4, 9);
    QByteArray meta("label\tscore\n");
    const char* names[] = {"cat", "dog", "bird"};
    for (int i = 0; i < kN; ++i) {
      x[std::size_t(i * 4 + i % 3)] += 8.0f;
      meta += QByteArray(names[i % 3]) + "\t" + QByteArray::number(i) + "\n";
    }
    QVERIFY(test::writeBytes(m_data, test::npyBytes("<f4", {kN, 4}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(m_meta, meta));
  }

  void failedOpenChangesNothing() {
    MainWindow window;
    QStringList errors;
    openData(window, &errors);
    window.setSelection({1, 2, 3});
    window.selectItem(4);
    window.showPathTo(7);
    QTRY_VERIFY(window.lastPath().found());
    const Dataset* dataset = window.dataset();
    const auto artefacts = window.session()->artefacts();
    const std::vector<std::int32_t> path = window.lastPath().nodes;
    const QString title = window.windowTitle();
    const QImage before = window.mapView()->grabFramebuffer();

    // A file that is no embedding: refused, shown as an error, and nothing else happens.
    const QString bad = m_dir.filePath("broken.npy");
    QVERIFY(test::writeBytes(bad, "\x93NUMPY this is not an array"));
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openPath(bad);
    QVERIFY(failed.wait(30000));
    QCOMPARE(errors.size(), 1);
    QVERIFY2(window.lastError().contains("broken.npy"), qPrintable(window.lastError()));
    QCOMPARE(window.dataset(), dataset);
    QCOMPARE(window.session()->dataPath(), m_data);
    QCOMPARE(window.session()->metaPath(), m_meta);
    QVERIFY(window.session()->artefacts() == artefacts);
    QCOMPARE(window.selection(), (std::vector<std::int64_t>{1, 2, 3}));
    QCOMPARE(window.selectedItem(), std::int64_t(4));
    QCOMPARE(window.lastPath().nodes, path);
    QCOMPARE(window.windowTitle(), title);
    QCOMPARE(window.mapView()->grabFramebuffer(), before);

    // A session saved afterwards is the first data set's, under its own hash.
    const QString saved = m_dir.filePath("after-failure.nearscape");
    QVERIFY(window.saveSessionTo(saved));
    const Session session = Session::read(saved);
    QCOMPARE(session.data, m_data);
    QCOMPARE(session.contentHash, dataset->contentHash);
    QCOMPARE(session.selection, (std::vector<std::int64_t>{1, 2, 3}));

    // A session of other data (its hash differs) is refused before anything changes too.
    QByteArray text = test::readBytes(saved);
    text.replace(QByteArray::fromStdString(dataset->contentHash),
                 "0123456789abcdef0123456789abcdef");
    const QString other = m_dir.filePath("other.nearscape");
    QVERIFY(test::writeBytes(other, text));
    window.openSession(other);
    QVERIFY(failed.wait(30000));
    QVERIFY2(window.lastError().contains("other data"), qPrintable(window.lastError()));
    QCOMPARE(window.dataset(), dataset);
    QVERIFY(window.session()->artefacts() == artefacts);
    QCOMPARE(window.session()->sessionPath(), QString());
    QCOMPARE(window.selection(), (std::vector<std::int64_t>{1, 2, 3}));
    // And the next plain open is not taken for that session's.
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(m_data, m_meta);
    QVERIFY2(shown.wait(30000), qPrintable(window.lastError()));
    QVERIFY(window.dataset() != dataset);
    QVERIFY(window.selection().empty());
  }

  void editMenuUndoesAndRedoes() {
    MainWindow window;
    QStringList errors;
    openData(window, &errors);
    QAction* undo = menuAction(window, QStringLiteral("&Edit"), QStringLiteral("undoAction"));
    QAction* redo = menuAction(window, QStringLiteral("&Edit"), QStringLiteral("redoAction"));
    QVERIFY(undo && redo);
    QVERIFY(!undo->isEnabled());

    // The selection.
    window.setSelection({10, 11, 12});
    QVERIFY(undo->isEnabled());
    undo->trigger();
    QVERIFY(window.selection().empty());
    QVERIFY(redo->isEnabled());
    redo->trigger();
    QCOMPARE(window.selection(), (std::vector<std::int64_t>{10, 11, 12}));
    undo->trigger();

    // A filter: the first class unticked in the legend hides its items on the map.
    MapView* map = window.mapView();
    QTest::qWait(50);
    const int all = countNonBackground(map->grabFramebuffer());
    QVERIFY(all > 200);
    window.legend()->setLabelVisible(0, false);
    QTest::qWait(50);
    const int fewer = countNonBackground(map->grabFramebuffer());
    QVERIFY2(fewer < all * 4 / 5, qPrintable(QString("%1 of %2").arg(fewer).arg(all)));
    undo->trigger();
    QCOMPARE(window.legend()->visibleLabels()[0], true);
    QTest::qWait(50);
    QCOMPARE(countNonBackground(map->grabFramebuffer()), all);
    redo->trigger();
    QCOMPARE(window.legend()->visibleLabels()[0], false);
    QVERIFY(window.grab().save(artifact("session-undo-filter.png")));

    // The colouring (a column read in the background); undoing it brings the labels back with
    // their filter.
    QVERIFY(window.setColourBy(QStringLiteral("score")));
    QTRY_COMPARE(window.colourBy(), QStringLiteral("score"));
    QVERIFY(window.setShownRange(0, 100));
    QCOMPARE(window.shownRange(), (std::optional<std::pair<double, double>>{{0.0, 100.0}}));
    undo->trigger(); // the range
    QVERIFY(!window.shownRange());
    undo->trigger(); // the colouring
    QTRY_COMPARE(window.colourBy(), QStringLiteral("label"));
    QCOMPARE(window.legend()->visibleLabels()[0], false);
    redo->trigger();
    QTRY_COMPARE(window.colourBy(), QStringLiteral("score"));
    redo->trigger();
    QCOMPARE(window.shownRange(), (std::optional<std::pair<double, double>>{{0.0, 100.0}}));
    QVERIFY(!redo->isEnabled());
    QVERIFY(errors.isEmpty());
  }

  void panelExportsRefuseEveryInput() {
    MainWindow window;
    QStringList errors;
    openData(window, &errors);
    // A session opened is an input too.
    const QString session = m_dir.filePath("view.nearscape");
    QVERIFY(window.saveSessionTo(session));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openSession(session);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    QCOMPARE(window.session()->sessionPath(), session);

    OutliersPanel* outliers = window.outliersPanel();
    QSignalSpy scored(outliers, &OutliersPanel::scored);
    QTest::mouseClick(outliers->scoreButton(), Qt::LeftButton);
    QVERIFY(scored.wait(60000));
    const QString sidecar = m_dir.filePath("pets.meta.tsv");
    QVERIFY(test::writeBytes(sidecar, "label\nx\n"));
    for (const QString& input : {m_data, m_meta, session, sidecar}) {
      const QByteArray bytes = test::readBytes(input);
      QString error;
      QVERIFY2(!window.duplicatesPanel()->exportGroups(input, &error), qPrintable(input));
      QVERIFY2(error.contains("refusing to overwrite"), qPrintable(error));
      QVERIFY(!window.duplicatesPanel()->exportKeepList(input, &error));
      QVERIFY(!outliers->exportScores(input, &error));
      QVERIFY2(error.contains("refusing to overwrite"), qPrintable(error));
      QVERIFY(!window.tradeoffStudio()->exportCsv(input));
      QVERIFY(!window.tradeoffStudio()->exportPng(input));
      QCOMPARE(test::readBytes(input), bytes);
    }
    // Elsewhere they write.
    QVERIFY(outliers->exportScores(m_dir.filePath("scores.tsv")));
    QVERIFY(window.duplicatesPanel()->exportKeepList(m_dir.filePath("keep.txt")));
    QFile::remove(sidecar);
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiSession>(argc, argv);
}
#include "tst_gui_session.moc"
