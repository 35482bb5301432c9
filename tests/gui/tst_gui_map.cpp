// The first map as a person sees it: open Fashion-MNIST, wait for the map, look at the pixels.
#include "Colors.h"
#include "GuiTest.h"
#include "HoverCard.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "LegendPanel.h"
#include "MainWindow.h"
#include "MapView.h"
#include "SweepPanel.h"
#include "TestFiles.h"
#include "UiMain.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolButton>

#include <QTest>
#include <cmath>
#include <random>

using namespace nearscape;
using namespace nearscape::ui;
using nearscape::test::countColor;
using nearscape::test::countNonBackground;

class TestGuiMap : public QObject {
  Q_OBJECT

private:
  QString artifact(const QString& name) const {
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    return QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/" + name;
  }

private slots:
  void fashionMnistMap() {
    const QString fashion = QString::fromStdString(defaultDatasetPath().string());
    QVERIFY2(QFileInfo::exists(fashion),
             "Fashion-MNIST is missing: scripts/install-deps.sh installs dataset-fashion-mnist");
    MainWindow window;
    window.resize(1100, 760);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::mapShown);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openPath(fashion);
    QVERIFY2(shown.wait(120000), qPrintable("no map: " + window.lastError()));
    QCOMPARE(failed.count(), 0);
    QCOMPARE(window.dataset()->size(), 70000);
    QCOMPARE(window.mapView()->pointCount(), 70000);
    QVERIFY(window.summaryText().contains("784"));

    QImage frame = window.mapView()->grabFramebuffer();
    QVERIFY(window.grab().save(artifact("fashion-mnist-map.png")));
    frame.save(artifact("fashion-mnist-view.png"));
    const int drawn = countNonBackground(frame);
    QVERIFY2(drawn > 20000, qPrintable(QString("only %1 pixels drawn").arg(drawn)));
    for (int label = 0; label < 10; ++label) {
      const int pixels = countColor(frame, labelColor(label));
      QVERIFY2(pixels > 200,
               qPrintable(QString("label %1 colour: %2 pixels").arg(label).arg(pixels)));
    }

    // Unchecking "Trouser" in the legend removes its colour from the map.
    const QColor trouser = labelColor(1);
    const int before = countColor(frame, trouser);
    window.legend()->setLabelVisible(1, false);
    QTest::qWait(50);
    frame = window.mapView()->grabFramebuffer();
    const int after = countColor(frame, trouser);
    QVERIFY2(after < before / 20, qPrintable(QString("%1 -> %2").arg(before).arg(after)));
    QVERIFY(countNonBackground(frame) > 20000);
    window.legend()->setLabelVisible(1, true);

    // Hovering a point shows its id, label and thumbnail.
    const std::int64_t item = 12345;
    const QPoint at = window.mapView()->widgetPosOf(item).toPoint();
    const std::int64_t under = window.mapView()->itemAt(at);
    QVERIFY(under >= 0);
    QTest::mouseMove(window.mapView(), at);
    QMouseEvent move(QEvent::MouseMove, QPointF(at), window.mapView()->mapToGlobal(QPointF(at)),
                     Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(window.mapView(), &move);
    QTRY_VERIFY(window.hoverCard()->isVisible());
    QVERIFY(window.hoverCard()->text().contains(QString("#%1").arg(under)));
    QVERIFY(window.hoverCard()->text().contains(
        QString::fromStdString(window.dataset()->labelOf(under))));
    QVERIFY(!window.hoverCard()->thumbnail().isNull());

    // Zooming in spreads the points: fewer of them fit, the picture changes.
    window.mapView()->zoomAt(
        QPointF(window.mapView()->width() / 2.0, window.mapView()->height() / 2.0), 4.0);
    const QImage zoomed = window.mapView()->grabFramebuffer();
    QVERIFY(zoomed != frame);
  }

  void badFileShowsAnErrorAndKeepsRunning() {
    MainWindow window;
    window.show();
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openPath(QStringLiteral("/nonexistent/embeddings.npy"));
    QVERIFY(failed.wait(20000));
    QVERIFY(window.lastError().contains("embeddings.npy"));
    QVERIFY(window.dataset() == nullptr);
  }

  void attachMetadataRecolours() {
    QTemporaryDir dir;
    std::vector<float> xy;
    for (int i = 0; i < 400; ++i) {
      xy.push_back(float(i % 20));
      xy.push_back(float(i / 20) + (i % 2) * 0.5f);
    }
    writeNpy((dir.path() + "/grid.npy").toStdString(), MatrixView<float>{xy.data(), 400, 2});
    MainWindow window;
    window.resize(800, 600);
    window.show();
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(dir.path() + "/grid.npy");
    QVERIFY(shown.wait(30000));
    QCOMPARE(window.legend()->count(), 0); // no labels yet: one colour
    const QImage before = window.mapView()->grabFramebuffer();
    QVERIFY(countColor(before, unlabelledColor()) > 100);

    QFile meta(dir.path() + "/labels.tsv");
    QVERIFY(meta.open(QIODevice::WriteOnly));
    meta.write("label\ttext\n");
    for (int i = 0; i < 400; ++i)
      meta.write(QByteArray(i % 2 ? "odd" : "even") + "\tpoint " + QByteArray::number(i) + "\n");
    meta.close();
    QSignalSpy done(window.jobs(), &JobRunner::finished);
    window.attachMetadataFile(meta.fileName());
    QVERIFY(done.wait(30000));
    QCOMPARE(window.legend()->count(), 2);
    QCOMPARE(window.dataset()->textOf(7), std::string("point 7"));
    const QImage after = window.mapView()->grabFramebuffer();
    QVERIFY(countColor(after, labelColor(0)) > 100);
    QVERIFY(countColor(after, labelColor(1)) > 100);
    QVERIFY(countColor(after, unlabelledColor()) < 10);

    // A metadata file of the wrong length is refused with a message; the map stays.
    QFile bad(dir.path() + "/short.tsv");
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("a\nb\n");
    bad.close();
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.attachMetadataFile(bad.fileName());
    QVERIFY(failed.wait(30000));
    QVERIFY(window.lastError().contains("2 rows"));
    QCOMPARE(window.legend()->count(), 2);

    // One column whose first line looks like a header: item 0's value all the same (one column
    // has no header row, as in TensorBoard; the rows match), and the status bar says so, its
    // warning sign keeping the whole message.
    QFile one(dir.path() + "/classes.tsv");
    QVERIFY(one.open(QIODevice::WriteOnly));
    one.write("Class\n");
    for (int i = 1; i < 400; ++i)
      one.write(i % 2 ? "odd\n" : "even\n");
    one.close();
    auto* sign = window.findChild<QToolButton*>(QStringLiteral("warnings"));
    QVERIFY(sign && !sign->isVisible());
    QSignalSpy attached(window.jobs(), &JobRunner::finished);
    window.attachMetadataFile(one.fileName());
    QVERIFY(attached.wait(30000));
    QCOMPARE(window.dataset()->labelOf(0), std::string("Class"));
    QCOMPARE(window.legend()->count(), 3);
    const QString message = window.statusBar()->currentMessage();
    QVERIFY2(message.contains("'Class'") && message.contains("item 0's value"),
             qPrintable(message));
    QVERIFY(sign->isVisible());
    QVERIFY2(sign->toolTip().contains("second column"), qPrintable(sign->toolTip()));
    QTest::qWait(50);
    for (const QLabel* label : window.statusBar()->findChildren<QLabel*>()) // under the message
      QVERIFY2(!label->isVisible(), qPrintable(label->text()));
    QVERIFY(window.grab().save(artifact("one-column-header-hint.png")));
    // Metadata with a header row: no warning.
    window.attachMetadataFile(meta.fileName());
    QVERIFY(attached.wait(30000));
    QVERIFY(!sign->isVisible());
  }

  void exploreNeighboursAndSmoothestPath() {
    // A noisy spiral in 8-D: one connected kNN graph, clear neighbourhoods.
    QTemporaryDir dir;
    const int n = 1500, d = 8;
    std::vector<float> x(std::size_t(n * d));
    std::mt19937_64 rng(3);
    std::normal_distribution<float> noise(0.0f, 0.05f);
    for (int i = 0; i < n; ++i) {
      const float t = 0.01f * float(i);
      x[std::size_t(i * d)] = t * std::cos(4 * t);
      x[std::size_t(i * d + 1)] = t * std::sin(4 * t);
      for (int j = 2; j < d; ++j)
        x[std::size_t(i * d + j)] = noise(rng);
    }
    const QString file = dir.path() + "/spiral.npy";
    writeNpy(file.toStdString(), MatrixView<float>{x.data(), n, d});
    MainWindow window;
    window.resize(1000, 760);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(explored.wait(120000), qPrintable(window.lastError()));
    QVERIFY(window.explorationReady());

    // Click an item: its 10 exact nearest neighbours are listed and ringed on the map.
    MapView* map = window.mapView();
    const std::int64_t a = map->itemAt(map->widgetPosOf(100));
    QVERIFY(a >= 0);
    QTest::mouseClick(map, Qt::LeftButton, Qt::NoModifier, map->widgetPosOf(a).toPoint());
    QTRY_COMPARE(window.selectedItem(), a);
    const MatrixView<float> v{x.data(), n, d};
    const KnnResult truth = knnReference(v, v, 10, Metric::L2, true, {a});
    QTRY_COMPARE(window.neighboursPanel()->count(), 10); // exact neighbours come from a job
    for (int c = 0; c < 10; ++c)
      QCOMPARE(window.neighboursPanel()->itemAt(c), truth.ids.row(0)[c]);
    const int ringed = countColor(map->grabFramebuffer(), MapView::overlayColor());
    QVERIFY2(ringed > 30, qPrintable(QString::number(ringed)));

    // Ctrl+click a far item: the min-max path is drawn and listed, and it is the engine's.
    const std::int64_t b = map->itemAt(map->widgetPosOf(1400));
    QVERIFY(b >= 0);
    QTest::mouseClick(map, Qt::LeftButton, Qt::ControlModifier, map->widgetPosOf(b).toPoint());
    QTRY_VERIFY(window.lastPath().found());
    const GraphPath& shown = window.lastPath();
    QCOMPARE(std::int64_t(shown.nodes.front()), a);
    QCOMPARE(std::int64_t(shown.nodes.back()), b);
    QCOMPARE(window.pathStrip()->count(), int(shown.nodes.size()));
    const KnnResult g = knnReference(v, v, 15, Metric::L2, true);
    const SpanningForest forest(symmetrizeKnnGraph(g.ids.view(), g.distances.view(), Metric::L2));
    const GraphPath expected = minimaxPath(forest, std::int32_t(a), std::int32_t(b));
    QVERIFY(std::abs(shown.bottleneck - expected.bottleneck) <= 1e-6f * expected.bottleneck);
    QTest::qWait(50);
    const QImage withPath = map->grabFramebuffer();
    QVERIFY(withPath.save(artifact("spiral-path.png")));
    const int drawn = countColor(withPath, MapView::overlayColor());
    QVERIFY2(drawn > ringed / 3 && drawn > 100, qPrintable(QString::number(drawn)));
  }

  void threeDMapTurnsAndPicks() {
    // Three Gaussian clusters in 6-D: the 3D map refines, turns under the mouse and still picks.
    QTemporaryDir dir;
    const int n = 1200, d = 6;
    std::vector<float> x(std::size_t(n * d));
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        x[std::size_t(i * d + j)] = normal(rng) + (j == i % 3 ? 8.0f : 0.0f);
    const QString file = dir.path() + "/three.npy";
    writeNpy(file.toStdString(), MatrixView<float>{x.data(), n, d});
    MainWindow window;
    window.resize(1000, 760);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(explored.wait(120000), qPrintable(window.lastError()));
    MapView* map = window.mapView();
    QCOMPARE(map->dim(), 2);
    QVERIFY(window.mapRefined(2));

    QSignalSpy refined(&window, &MainWindow::layoutFinished);
    window.setMapDimension(3);
    QCOMPARE(map->dim(), 3);
    QCOMPARE(map->pointCount(), n);
    QVERIFY2(refined.wait(120000), qPrintable(window.lastError()));
    QCOMPARE(refined.at(0).at(0).toInt(), 3);
    QVERIFY(window.mapRefined(3));
    QTest::qWait(50);
    const QImage front = map->grabFramebuffer();
    QVERIFY(front.save(artifact("map-3d.png")));
    QVERIFY2(countNonBackground(front) > 2000,
             qPrintable(QString::number(countNonBackground(front))));

    auto checkPicking = [&] {
      for (std::int64_t item : {10, 400, 801, 1199}) {
        const QPointF at = map->widgetPosOf(item);
        const std::int64_t got = map->itemAt(at);
        QVERIFY(got >= 0);
        // The nearest on screen: item itself or one drawn on (almost) the same pixel.
        QVERIFY2((map->widgetPosOf(got) - at).manhattanLength() <= 2.0,
                 qPrintable(QString("%1 picked for %2").arg(got).arg(item)));
      }
    };
    checkPicking();
    // A drag turns the scene: the picture changes, picking follows the turn.
    const QPoint centre(map->width() / 2, map->height() / 2);
    QTest::mousePress(map, Qt::LeftButton, Qt::NoModifier, centre);
    for (int step = 1; step <= 10; ++step) {
      QMouseEvent move(QEvent::MouseMove, QPointF(centre + QPoint(15 * step, 6 * step)),
                       map->mapToGlobal(QPointF(centre + QPoint(15 * step, 6 * step))),
                       Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
      QApplication::sendEvent(map, &move);
    }
    QTest::mouseRelease(map, Qt::LeftButton, Qt::NoModifier, centre + QPoint(150, 60));
    QVERIFY(map->userMovedCamera());
    QTest::qWait(50);
    const QImage turned = map->grabFramebuffer();
    QVERIFY(turned.save(artifact("map-3d-turned.png")));
    int changed = 0;
    for (int y = 0; y < turned.height(); ++y)
      for (int x2 = 0; x2 < turned.width(); ++x2)
        changed += turned.pixel(x2, y) != front.pixel(x2, y);
    QVERIFY2(changed > 1000, qPrintable(QString::number(changed)));
    checkPicking();

    // A click selects the item under the mouse, whose exact neighbours are listed.
    // (A click lands on a whole pixel: the item picked there, within a pixel or two of it.)
    const QPoint click = map->widgetPosOf(400).toPoint();
    const std::int64_t a = map->itemAt(QPointF(click));
    QVERIFY((map->widgetPosOf(a) - QPointF(click)).manhattanLength() <= 2.0);
    QTest::mouseClick(map, Qt::LeftButton, Qt::NoModifier, click);
    QTRY_COMPARE(window.selectedItem(), a);
    QTRY_COMPARE(window.neighboursPanel()->count(), 10);

    // Back to 2D: the refined 2D map at once, no new job.
    window.setMapDimension(2);
    QCOMPARE(map->dim(), 2);
    QCOMPARE(std::int64_t(map->positions().size()), std::int64_t(2 * n));
  }

  void disconnectedComponentsCanBeJoined() {
    // Two far-apart blobs: their 15-NN graph has two components, so no path joins them at first.
    QTemporaryDir dir;
    const int n = 600, d = 4;
    std::vector<float> x(std::size_t(n * d));
    std::mt19937_64 rng(4);
    std::normal_distribution<float> normal;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        x[std::size_t(i * d + j)] = normal(rng) + (i < n / 2 ? 0.0f : 100.0f);
    writeNpy((dir.path() + "/two.npy").toStdString(), MatrixView<float>{x.data(), n, d});
    MainWindow window;
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(dir.path() + "/two.npy");
    QVERIFY(explored.wait(60000));
    QSignalSpy disconnected(&window, &MainWindow::componentsDisconnected);
    window.selectItem(3);
    window.showPathTo(n - 3);
    QCOMPARE(disconnected.count(), 1);
    QCOMPARE(disconnected.at(0).at(2).toInt(), 2);
    QVERIFY(!window.lastPath().found());
    window.bridgeComponentsAndRetry(n - 3);
    QTRY_VERIFY_WITH_TIMEOUT(window.lastPath().found(), 30000);
    QCOMPARE(std::int64_t(window.lastPath().nodes.back()), std::int64_t(n - 3));
    // The bridge is the exact nearest pair between the blobs: the path's largest step.
    double nearest = INFINITY;
    for (int i = 0; i < n / 2; ++i)
      for (int j = n / 2; j < n; ++j)
        nearest = std::min(
            nearest, exactDistance(&x[std::size_t(i * d)], &x[std::size_t(j * d)], d, Metric::L2));
    QVERIFY(std::abs(window.lastPath().bottleneck - nearest) <= 1e-4 * nearest);
  }

  void theDataMetricDrivesEveryStage() {
    // Vectors of very different lengths: their cosine neighbours differ from their L2 ones. An
    // ann-benchmarks file says "angular": the graph, the neighbours and the sweep use cosine.
    QTemporaryDir dir;
    const int n = 600, d = 6;
    std::vector<float> x = test::randomFloats(std::size_t(n) * d, 9);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        x[std::size_t(i * d + j)] *= 0.1f + float(i % 17);
    const QString file = dir.filePath("angular.hdf5");
    QVERIFY(test::writeAnnHdf5(file, x, n, d, "angular", false));
    const MatrixView<float> v{x.data(), n, d};
    MainWindow window;
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    QCOMPARE(window.metric(), Metric::Cosine);
    QCOMPARE(window.sweepPanel()->metric(), Metric::Cosine);
    QVERIFY2(window.summaryText().contains("cos (the file's)"), qPrintable(window.summaryText()));
    const std::int64_t item = 5;
    auto shownNeighbours = [&] {
      std::vector<std::int32_t> ids;
      for (int c = 0; c < window.neighboursPanel()->count(); ++c)
        ids.push_back(window.neighboursPanel()->itemAt(c));
      return ids;
    };
    auto reference = [&](Metric metric) {
      const KnnResult r = knnReference(v, v, 10, metric, true, {item});
      return std::vector<std::int32_t>(r.ids.row(0), r.ids.row(0) + 10);
    };
    QVERIFY(reference(Metric::Cosine) != reference(Metric::L2)); // the test can tell them apart
    window.selectItem(item);
    QTRY_COMPARE(window.neighboursPanel()->count(), 10);
    QCOMPARE(shownNeighbours(), reference(Metric::Cosine));

    // View → Metric → L2: everything is rebuilt under L2.
    QAction* l2 = nullptr;
    for (QAction* a : window.findChildren<QAction*>())
      if (a->text().contains("L2"))
        l2 = a;
    QVERIFY(l2);
    explored.clear();
    l2->trigger();
    QCOMPARE(window.metric(), Metric::L2);
    QVERIFY(explored.wait(60000));
    window.selectItem(item);
    QTRY_COMPARE(window.neighboursPanel()->count(), 10);
    QCOMPARE(shownNeighbours(), reference(Metric::L2));
    QCOMPARE(window.sweepPanel()->metric(), Metric::L2);
  }

  void tinyDataFinishesExploring() {
    // Fewer items than the graph's 15 neighbours: a graph of n − 1, the map refined; one item:
    // no graph, and the exploration still ends (a --screenshot used to wait forever).
    QTemporaryDir dir;
    for (const int n : {10, 1}) {
      const QString file = dir.filePath(QString("tiny-%1.npy").arg(n));
      QVERIFY(test::writeBytes(
          file, test::npyBytes("<f4", {n, 5}, test::rawBytes(test::randomFloats(n * 5, 3)))));
      MainWindow window;
      window.show();
      QSignalSpy finished(&window, &MainWindow::explorationFinished);
      QSignalSpy failed(&window, &MainWindow::loadFailed);
      window.openPath(file);
      QVERIFY2(finished.wait(30000),
               qPrintable(QString("n = %1: %2").arg(n).arg(window.lastError())));
      QCOMPARE(failed.count(), 0);
      QCOMPARE(window.mapView()->pointCount(), n);
      QString status; // the status bar's summary, as drawn
      for (const QLabel* label : window.findChildren<QLabel*>())
        if (label->text().startsWith("n = "))
          status = label->text();
      QVERIFY2(status.contains(n == 1 ? QString("no graph") : QString("9-NN graph")),
               qPrintable(status));
    }
  }

  void untrustedTextStaysText() {
    // A file name that looks like markup is shown as those characters, never interpreted.
    QTemporaryDir dir;
    const QString file = dir.filePath("<b>bold<img src=x>.npy");
    QVERIFY(test::writeBytes(file, "not an npy file"));
    MainWindow window;
    window.show();
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openPath(file);
    QVERIFY(failed.wait(20000));
    const auto boxes = window.findChildren<QMessageBox*>();
    QVERIFY(!boxes.isEmpty());
    QCOMPARE(boxes.last()->textFormat(), Qt::PlainText);
    QVERIFY(boxes.last()->text().contains("<b>bold<img src=x>.npy"));
  }

  void cancellingALoadLeavesNoMap() {
    MainWindow window;
    window.show();
    QSignalSpy cancelled(window.jobs(), &JobRunner::cancelled);
    window.openPath(QString::fromStdString(defaultDatasetPath().string()));
    window.jobs()->cancel();
    QVERIFY(cancelled.wait(60000));
    QVERIFY(window.dataset() == nullptr);
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiMap>(argc, argv);
}
#include "tst_gui_map.moc"
