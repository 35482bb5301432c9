// The index sweep panel as a person drives it: run a sweep, watch the front fill in, click a dot
// and see which true neighbours of the selected item that setting missed.
#include "GuiTest.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "MainWindow.h"
#include "ParetoPlot.h"
#include "SweepPanel.h"
#include "UiMain.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QLineF>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace nearscape;
using namespace nearscape::ui;

/// The recall/QPS Pareto front from its definition, by a sweep rather than pairwise tests: a row
/// is dominated when a row of higher recall has at least its QPS, or a row of equal recall has
/// more QPS.
std::vector<bool> frontOf(const std::vector<SweepRow>& rows) {
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return rows[a].recall > rows[b].recall; });
  std::vector<bool> front(rows.size(), false);
  double bestAbove = -INFINITY; // the most QPS among rows of strictly higher recall
  for (std::size_t g = 0; g < order.size();) {
    std::size_t end = g; // rows g … end − 1 share one recall
    double bestHere = -INFINITY;
    while (end < order.size() && rows[order[end]].recall == rows[order[g]].recall)
      bestHere = std::max(bestHere, rows[order[end++]].qps);
    for (std::size_t i = g; i < end; ++i) {
      const double qps = rows[order[i]].qps;
      front[order[i]] = qps > bestAbove && qps == bestHere;
    }
    bestAbove = std::max(bestAbove, bestHere);
    g = end;
  }
  return front;
}

class TestGuiSweep : public QObject {
  Q_OBJECT

private slots:
  void sweepFillsThePlotAndShowsMisses_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("graph") << "graph";
    QTest::newRow("ivf") << "ivf";
  }
  void sweepFillsThePlotAndShowsMisses() {
    QFETCH(QString, kind);
    // 3,000 items in 30 overlapping Gaussian clusters of 24 dimensions: hard enough that the
    // cheapest settings miss neighbours.
    QTemporaryDir dir;
    const int n = 3000, d = 24, queries = 200, item = 7, k = 10;
    std::vector<float> x(std::size_t(n * d));
    std::mt19937_64 rng(6);
    std::normal_distribution<float> normal;
    std::vector<float> centres(std::size_t(30 * d));
    for (auto& c : centres)
      c = 0.7f * normal(rng);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        x[std::size_t(i * d + j)] = centres[std::size_t((i % 30) * d + j)] + normal(rng);
    const QString file = dir.path() + "/clusters.npy";
    writeNpy(file.toStdString(), MatrixView<float>{x.data(), n, d});

    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(file);
    QVERIFY2(shown.wait(60000), qPrintable(window.lastError()));
    window.selectItem(item);
    window.findChild<QDockWidget*>(QStringLiteral("sweepDock"))->raise();

    SweepPanel* panel = window.sweepPanel();
    panel->kindBox()->setCurrentText(kind);
    panel->queriesBox()->setValue(queries);
    QSignalSpy finished(panel, &SweepPanel::sweepFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(180000));

    // Every setting is a dot and a table row; the front is the recall/QPS front of the rows
    // (computed here from its definition); the best is near exact.
    const std::vector<SweepRow>& rows = panel->plot()->rows();
    QVERIFY(rows.size() >= 4);
    QCOMPARE(panel->table()->rowCount(), int(rows.size()));
    const std::vector<bool> expectedFront = frontOf(rows);
    QCOMPARE(panel->plot()->front(), expectedFront);
    QVERIFY(std::count(expectedFront.begin(), expectedFront.end(), true) >= 2);
    double best = 0;
    for (const auto& r : rows)
      best = std::max(best, r.recall);
    QVERIFY2(best >= 0.98, qPrintable(QString::number(best)));
    const double worstRecall =
        std::min_element(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) {
          return a.recall < b.recall;
        })->recall;
    QVERIFY2(worstRecall < 0.95, qPrintable(QString::number(worstRecall))); // a real trade-off
    QCOMPARE(panel->missedQueryItem(), std::int64_t(item));
    const QImage plot = panel->plot()->grab().toImage();
    int frontPixels = 0;
    for (int y = 0; y < plot.height(); ++y)
      for (int x2 = 0; x2 < plot.width(); ++x2)
        frontPixels += plot.pixelColor(x2, y) == ParetoPlot::frontColor();
    QVERIFY2(frontPixels > 20, qPrintable(QString::number(frontPixels)));
    // Each dot that no other dot overlaps is drawn in its row's colour: on the front or not.
    const qreal ratio = plot.devicePixelRatio();
    int checkedDots = 0;
    for (int i = 0; i < int(rows.size()); ++i) {
      const QPointF at = panel->plot()->dotPosition(i);
      bool alone = true;
      for (int j = 0; j < int(rows.size()); ++j)
        alone = alone && (j == i || QLineF(at, panel->plot()->dotPosition(j)).length() > 12);
      if (!alone)
        continue;
      const QColor drawn = plot.pixelColor((at * ratio).toPoint());
      const QColor want =
          expectedFront[std::size_t(i)] ? ParetoPlot::frontColor() : ParetoPlot::otherColor();
      QVERIFY2(drawn == want,
               qPrintable(
                   QString("dot %1 drawn %2, expected %3").arg(i).arg(drawn.name(), want.name())));
      ++checkedDots;
    }
    QVERIFY2(checkedDots >= 2, qPrintable(QString::number(checkedDots)));

    // Click the least accurate setting's dot: its misses are true neighbours of the item.
    const auto worst = int(
        std::min_element(rows.begin(), rows.end(),
                         [](const SweepRow& a, const SweepRow& b) { return a.recall < b.recall; }) -
        rows.begin());
    QSignalSpy missed(panel, &SweepPanel::missedChosen);
    QTest::mouseClick(panel->plot(), Qt::LeftButton, Qt::NoModifier,
                      panel->plot()->dotPosition(worst).toPoint());
    QCOMPARE(missed.count(), 1);
    QCOMPARE(missed.at(0).at(0).toLongLong(), qint64(item));
    QCOMPARE(panel->plot()->chosen(), worst);
    const auto ids = missed.at(0).at(1).value<std::vector<std::int32_t>>();
    QCOMPARE(ids.size(), rows[std::size_t(worst)].missed.size());
    QVERIFY2(!ids.empty(), "the cheapest setting missed none of the item's neighbours");
    QVERIFY(int(ids.size()) <= k);
    // The item's true neighbours among the base rows (every row but the held-out queries), by
    // float64 brute force here.
    const HeldOut split = holdOutRows(MatrixView<float>{x.data(), n, d}, queries, 0, item);
    std::vector<std::pair<double, std::int64_t>> byDistance;
    for (const std::int64_t row : split.baseRows) {
      double s = 0;
      for (int j = 0; j < d; ++j) {
        const double diff =
            double(x[std::size_t(item * d + j)]) - double(x[std::size_t(row * d + j)]);
        s += diff * diff;
      }
      byDistance.push_back({s, row});
    }
    // The base is every row not held out; the item is held out beside the queries.
    QCOMPARE(split.baseRows.size() + split.queryRows.size(), std::size_t(n));
    QVERIFY(std::count(split.baseRows.begin(), split.baseRows.end(), std::int64_t(item)) == 0);
    std::partial_sort(byDistance.begin(), byDistance.begin() + k, byDistance.end());
    std::vector<std::int64_t> trueIds;
    for (int c = 0; c < k; ++c)
      trueIds.push_back(byDistance[std::size_t(c)].second);
    for (std::size_t a = 0; a < ids.size(); ++a) {
      QVERIFY2(std::count(trueIds.begin(), trueIds.end(), std::int64_t(ids[a])) == 1,
               qPrintable(QString("%1 is not a true neighbour of %2").arg(ids[a]).arg(item)));
      QVERIFY(std::count(ids.begin(), ids.end(), ids[a]) == 1);
    }
    QCOMPARE(window.neighboursPanel()->count(), int(ids.size()));
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    QVERIFY(
        window.grab().save(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/sweep-" + kind + ".png"));
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiSweep>(argc, argv);
}
#include "tst_gui_sweep.moc"
