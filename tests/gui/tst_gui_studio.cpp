// The Trade-off Studio as a person drives it: open it from the sweep dock, run two builds, see
// both overlaid in their colours with the exact search's reference line, hover and click a
// point, export CSV and PNG (and fail clearly), remove and clear runs; and the headless picture
// `nearscape --sweep-plot` draws from the CLI's CSV.
#include "GuiTest.h"
#include "ItemStrip.h"
#include "MainWindow.h"
#include "StudyChart.h"
#include "StudyPlot.h"
#include "SweepPanel.h"
#include "TradeoffStudio.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPainter>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>

#include <random>

using namespace nearscape;
using namespace nearscape::ui;
using nearscape::test::countColor;

namespace {

/// n items in 20 overlapping Gaussian clusters of d dimensions, written as .npy.
QString writeClusters(const QString& path, int n, int d, std::uint64_t seed) {
  std::vector<float> x(std::size_t(n * d));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> centres(std::size_t(20 * d));
  for (auto& c : centres)
    c = 0.8f * normal(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j)
      x[std::size_t(i * d + j)] = centres[std::size_t((i % 20) * d + j)] + normal(rng);
  writeNpy(path.toStdString(), MatrixView<float>{x.data(), n, d});
  return path;
}

/// Pixels of row y (± 1) within a small distance of `colour`.
int countColourInRow(const QImage& image, int y, const QColor& colour) {
  int count = 0;
  for (int dy = -1; dy <= 1; ++dy)
    if (y + dy >= 0 && y + dy < image.height())
      count += countColor(image.copy(0, y + dy, image.width(), 1), colour);
  return count;
}

/// A point of `plot` that the hit test gives back as itself (not hidden under another's).
std::pair<int, int> uncoveredPoint(const StudyPlot* plot, int run) {
  const StudyChart& chart = plot->chart();
  const auto& rows = chart.study()->runs[std::size_t(run)].rows;
  for (int row = int(rows.size()) - 1; row >= 0; --row)
    // Checked at the whole pixel the mouse is moved to: two settings a fraction of a pixel apart
    // (timings measured in the run) would otherwise hand the hover to the other one.
    if (chart.drawn(run, row) &&
        chart.pointAt(QPointF(chart.position(run, row).toPoint())) == std::pair{run, row})
      return {run, row};
  return {-1, -1};
}

} // namespace

class TestGuiStudio : public QObject {
  Q_OBJECT

private slots:
  void studioOverlaysRunsAndExports() {
    QTemporaryDir dir;
    const int n = 2000, d = 16, item = 5;
    const QString file = writeClusters(dir.filePath("clusters.npy"), n, d, 3);
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(file);
    QVERIFY2(shown.wait(60000), qPrintable(window.lastError()));
    window.selectItem(item);

    // View → Trade-off Studio opens it; so does the sweep dock's button.
    TradeoffStudio* studio = window.tradeoffStudio();
    QVERIFY(!studio->isVisible());
    auto* action = window.findChild<QAction*>(QStringLiteral("tradeoffStudioAction"));
    QVERIFY(action);
    action->trigger();
    QVERIFY(QTest::qWaitForWindowExposed(studio));
    studio->hide();
    SweepPanel* panel = window.sweepPanel();
    QTest::mouseClick(panel->studioButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitForWindowExposed(studio));

    // Two builds of the graph index, run from the studio: a sparse one and a denser one.
    panel->kindBox()->setCurrentText(QStringLiteral("graph"));
    panel->queriesBox()->setValue(150);
    QVERIFY(panel->buildBox("degree"));
    QSignalSpy finished(panel, &SweepPanel::sweepFinished);
    for (const int degree : {4, 24}) {
      panel->buildBox("degree")->setValue(degree);
      QTest::mouseClick(studio->runButton(), Qt::LeftButton);
      QVERIFY(finished.wait(240000));
    }
    const SweepStudy& study = panel->study();
    QCOMPARE(study.runs.size(), std::size_t(2));
    QCOMPARE(study.runs[0].build.at("degree"), 4.0);
    QCOMPARE(study.runs[1].build.at("degree"), 24.0);
    QVERIFY(study.runs[0].rows.size() >= 4 && study.runs[1].rows.size() >= 4);
    QVERIFY(study.exact.has_value());
    QCOMPARE(study.exact->recall, 1.0);
    QVERIFY(study.exact->qps > 0);
    QVERIFY(study.queries == 150 || study.queries == 151); // the sample and the selected item
    QCOMPARE(studio->runList()->count(), 2);
    QVERIFY(studio->runList()->item(1)->text().contains("degree=24"));

    // Both runs drawn in their own colours; the reference line across at the exact QPS.
    const std::vector<QColor> colours = panel->runColours();
    QCOMPARE(colours.size(), std::size_t(2));
    QVERIFY(colours[0] != colours[1]);
    StudyPlot* plot = studio->throughputPlot();
    QImage image = plot->grab().toImage();
    for (const QColor& c : colours)
      QVERIFY2(countColor(image, c) > 60, qPrintable(QString::number(countColor(image, c))));
    const int referenceY = int(std::lround(plot->chart().yOf(study.exact->qps)));
    const int referencePixels = countColourInRow(image, referenceY, StudyChart::referenceColour());
    QVERIFY2(referencePixels > plot->chart().plotArea().width() * 0.4,
             qPrintable(QString::number(referencePixels)));
    QImage latency = studio->latencyPlot()->grab().toImage();
    for (const QColor& c : colours)
      QVERIFY(countColor(latency, c) > 40);

    // Hovering a point of the second run names its run and setting.
    const auto [run, row] = uncoveredPoint(plot, 1);
    QVERIFY(run == 1);
    const SweepRow& hovered = study.runs[1].rows[std::size_t(row)];
    const QPoint at = plot->chart().position(run, row).toPoint();
    QTest::mouseMove(plot, at + QPoint(20, 20));
    QTest::mouseMove(plot, at);
    QTRY_VERIFY(studio->details()->text().contains(
        QString::fromStdString(formatParameters(hovered.params))));
    QVERIFY(studio->details()->text().contains("degree=24"));
    QVERIFY(studio->details()->text().contains(QString::number(hovered.recall, 'f', 4)));
    QTRY_VERIFY(
        QToolTip::text().contains(QString::fromStdString(formatParameters(hovered.params))));

    // Clicking it rings the neighbours of the selected item that this setting missed.
    QSignalSpy missed(panel, &SweepPanel::missedChosen);
    QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, at);
    QCOMPARE(missed.count(), 1);
    QCOMPARE(missed.at(0).at(0).toLongLong(), qint64(item));
    QCOMPARE(missed.at(0).at(1).value<std::vector<std::int32_t>>().size(), hovered.missed.size());
    QCOMPARE(window.neighboursPanel()->count(), int(hovered.missed.size()));
    QCOMPARE(plot->chosen(), std::pair(run, row));

    // Export: the CSV holds both runs' rows and the reference; the PNG both colours.
    const QString csv = dir.filePath("study.csv"), png = dir.filePath("study.png");
    QVERIFY(studio->exportCsv(csv));
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QByteArray text = csvFile.readAll();
    const SweepStudy back = parseSweepStudyCsv(text.toStdString(), "study.csv");
    QCOMPARE(back.runs.size(), std::size_t(2));
    QCOMPARE(back.runs[0].rows.size(), study.runs[0].rows.size());
    QCOMPARE(back.runs[1].rows.size(), study.runs[1].rows.size());
    QCOMPARE(back.runs[1].build.at("degree"), 24.0);
    QVERIFY(back.exact.has_value());
    QVERIFY(text.contains("\n1,graph,") && text.contains("\n2,graph,") &&
            text.contains("\n0,exact,"));
    QVERIFY(studio->exportPng(png));
    const QImage picture(png);
    QCOMPARE(picture.size(), QSize(1600, 760));
    for (const QColor& c : colours)
      QVERIFY(countColor(picture, c) > 100);
    QVERIFY(countColor(picture, StudyChart::referenceColour()) > 200);

    // A write that cannot happen is a clear message, and nothing is left behind.
    const QString nowhere = dir.filePath("missing/study.csv");
    QVERIFY(!studio->exportCsv(nowhere));
    QVERIFY2(studio->lastError().contains(nowhere), qPrintable(studio->lastError()));
    QVERIFY(studio->statusLabel()->text().contains(nowhere));
    auto* box = studio->findChild<QMessageBox*>();
    QVERIFY(box && box->isVisible() && box->text().contains(nowhere));
    box->close();
    QVERIFY(!QFileInfo::exists(nowhere));

    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    QVERIFY(studio->grab().save(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/studio.png"));
    QVERIFY(picture.save(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/studio-export.png"));

    // Running the same build again replaces its run; removing a run takes its colour away.
    QTest::mouseClick(studio->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(240000));
    QCOMPARE(study.runs.size(), std::size_t(2));
    QCOMPARE(study.runs[1].build.at("degree"), 24.0);
    studio->runList()->setCurrentRow(0);
    QTest::mouseClick(studio->removeButton(), Qt::LeftButton);
    QCOMPARE(study.runs.size(), std::size_t(1));
    QCOMPARE(studio->runList()->count(), 1);
    image = plot->grab().toImage();
    QCOMPARE(countColor(image, colours[0]), 0);
    QVERIFY(countColor(image, colours[1]) > 60);
    QTest::mouseClick(studio->clearButton(), Qt::LeftButton);
    QVERIFY(study.runs.empty() && !study.exact);
    QCOMPARE(studio->runList()->count(), 0);
  }

  void platformWithoutOpenGlIsNamed() {
    // QT_QPA_PLATFORM=offscreen gives widgets no OpenGL: the map crashed (SIGSEGV) after Qt's
    // "QOpenGLWidget is not supported". Now the explorer says what is missing and exits 1, with
    // data and without; what needs no window is still answered there.
    QTemporaryDir dir;
    const QString file = writeClusters(dir.filePath("data.npy"), 300, 4, 3);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    for (const QStringList& args : {QStringList{}, QStringList{file}}) {
      QProcess gui;
      gui.setProcessEnvironment(env);
      gui.start(QStringLiteral(NEARSCAPE_GUI_PATH), args);
      QVERIFY(gui.waitForFinished(60000));
      const QByteArray err = gui.readAllStandardError();
      QCOMPARE(gui.exitStatus(), QProcess::NormalExit);
      QVERIFY2(gui.exitCode() == 1, err.constData());
      QVERIFY2(err.contains("needs OpenGL") && err.contains("'offscreen'") &&
                   err.contains("xvfb-run"),
               err.constData());
    }
    QProcess version;
    version.setProcessEnvironment(env);
    version.start(QStringLiteral(NEARSCAPE_GUI_PATH), {"--version"});
    QVERIFY(version.waitForFinished(60000));
    QCOMPARE(version.exitCode(), 0);
  }

  void headlessPictureOfTheCliStudy() {
    // nearscape-cli sweep writes a study of two builds; nearscape --sweep-plot draws it with no
    // display at all.
    QTemporaryDir dir;
    const QString file = writeClusters(dir.filePath("data.npy"), 1200, 8, 4);
    const QString csv = dir.filePath("study.csv"), png = dir.filePath("plot.png");
    QProcess cli;
    cli.start(QStringLiteral(NEARSCAPE_CLI_PATH),
              {"sweep", file, "--build", "degree=4,16", "--holdout", "100", "--grid", "ef=10,20,80",
               "--latency-queries", "10", "--out", csv, "--backend", "cpu"});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");
    gui.setProcessEnvironment(env);
    gui.start(QStringLiteral(NEARSCAPE_GUI_PATH), {"--sweep-plot", png, csv});
    QVERIFY(gui.waitForFinished(60000));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    const QImage picture(png);
    QCOMPARE(picture.size(), QSize(1600, 760));
    for (const int slot : {0, 1})
      QVERIFY(countColor(picture, StudyChart::runColour(slot)) > 100);
    QVERIFY(countColor(picture, StudyChart::referenceColour()) > 200);

    // A file that is not a study is bad input (2), named in the message.
    gui.start(QStringLiteral(NEARSCAPE_GUI_PATH), {"--sweep-plot", png, file});
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), 2);
    QVERIFY(gui.readAllStandardError().contains("data.npy"));
  }

  void chartOfAHandMadeStudy() {
    // Recall on nines: 0.9, 0.99 and 0.999 evenly apart; recall 1 in its own column at the
    // right; the front joined per run; the reference's diamond at recall 1, its line at its QPS.
    auto row = [](double ef, double recall, double qps) {
      SweepRow r;
      r.params = {{"ef", ef}};
      r.recall = recall;
      r.qps = qps;
      r.p50Ms = 1e3 / qps;
      r.p99Ms = 2e3 / qps;
      return r;
    };
    auto study = std::make_shared<SweepStudy>();
    study->runs.push_back({"graph",
                           {{"degree", 16}},
                           "cpu",
                           {row(8, 0.9, 20000), row(16, 0.99, 10000), row(32, 0.999, 5000),
                            row(64, 1.0, 2500), row(48, 0.98, 4000)}});
    SweepRow exact = row(0, 1.0, 1000);
    exact.params.clear();
    study->exact = exact;
    StudyChart chart(StudyChart::Measure::Throughput);
    chart.setStudy(study, {});
    chart.setRect(QRectF(0, 0, 800, 500));
    const double x9 = chart.position(0, 0).x(), x99 = chart.position(0, 1).x(),
                 x999 = chart.position(0, 2).x(), x1 = chart.position(0, 3).x();
    QVERIFY(std::abs((x99 - x9) - (x999 - x99)) < 0.5);
    QVERIFY(x1 > x999 + 0.3 * (x999 - x99)); // the column of recall 1, past a break
    QCOMPARE(chart.referencePosition().x(), x1);
    QVERIFY(chart.position(0, 0).y() < chart.position(0, 1).y()); // more QPS higher up
    QCOMPARE(chart.referencePosition().y(), chart.yOf(1000));
    QVERIFY(chart.onFront(0, 0) && chart.onFront(0, 3) && !chart.onFront(0, 4));
    QCOMPARE(chart.pointAt(chart.position(0, 4)), std::pair(0, 4));
    QCOMPARE(chart.pointAt(QPointF(-100, -100)), std::pair(-1, -1));

    QImage image(800, 500, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
      QPainter p(&image);
      chart.paint(p, QFont());
    }
    // The dominated setting is a ring: white at its centre, its colour around.
    const QPoint ring = chart.position(0, 4).toPoint();
    QCOMPARE(image.pixelColor(ring), QColor(Qt::white));
    QVERIFY(countColor(image.copy(ring.x() - 6, ring.y() - 6, 13, 13), StudyChart::runColour(0)) >
            8);
    const QPoint dot = chart.position(0, 1).toPoint();
    QCOMPARE(image.pixelColor(dot), StudyChart::runColour(0));
    QVERIFY(countColourInRow(image, int(std::lround(chart.yOf(1000))),
                             StudyChart::referenceColour()) > 200);
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiStudio>(argc, argv);
}
#include "tst_gui_studio.moc"
