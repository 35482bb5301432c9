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
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <random>

using namespace nearscape;
using namespace nearscape::ui;

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

    // Every setting is a dot and a table row; the front is the engine's; the best is near exact.
    const std::vector<SweepRow>& rows = panel->plot()->rows();
    QVERIFY(rows.size() >= 4);
    QCOMPARE(panel->table()->rowCount(), int(rows.size()));
    QCOMPARE(panel->plot()->front(), paretoFront(rows));
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
    const HeldOut split = holdOutRows(MatrixView<float>{x.data(), n, d}, queries, 0, item);
    const KnnResult truth = knnReference({x.data() + std::size_t(item) * d, 1, d}, split.baseView(),
                                         k, Metric::L2, false);
    for (const std::int32_t id : ids) {
      bool isTrue = false;
      for (int c = 0; c < k; ++c)
        isTrue = isTrue || split.baseRows[std::size_t(truth.ids.row(0)[c])] == id;
      QVERIFY2(isTrue, qPrintable(QString("%1 is not a true neighbour of %2").arg(id).arg(item)));
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
