// What the map's colours say, driven through real widgets: a skewed column on a log scale that
// spans the palette (pixels and the per-item colours), the colour bar's ticks, the scale in the
// command line and the session; 50 equal clusters all in the legend, searched.
#include "ColorBar.h"
#include "ColourControls.h"
#include "Colouring.h"
#include "GuiTest.h"
#include "LegendPanel.h"
#include "MainWindow.h"
#include "MapView.h"
#include "Session.h"
#include "TestFiles.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>

using namespace nearscape;
using namespace nearscape::ui;

namespace {

constexpr int kN = 600;

/// Item i's size: 1 … 5,000 spread evenly in log (a skewed column), shuffled over the blobs.
double sizeOf(int i) {
  const int rank = (i * 7919) % kN;
  return std::round(std::exp(std::log(5000.0) * (rank + 0.5) / kN));
}

QColor colourAt(const std::vector<std::uint8_t>& rgb, int i) {
  return QColor(rgb[std::size_t(3 * i)], rgb[std::size_t(3 * i + 1)], rgb[std::size_t(3 * i + 2)]);
}

/// Pixels far from the background (dimmed items are close to it).
int countBright(const QImage& image) {
  const QColor bg = MapView::backgroundColor();
  int count = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      count += std::abs(c.red() - bg.red()) + std::abs(c.green() - bg.green()) +
                   std::abs(c.blue() - bg.blue()) >
               120;
    }
  return count;
}

/// Pixels in viridis's bright end (yellow-green: what a linear scale of a skewed column lacks).
int countBrightEnd(const QImage& image) {
  int count = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      count += c.green() > 190 && c.red() > 100 && c.blue() < 120;
    }
  return count;
}

} // namespace

class TestGuiColours : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data;

  QString artifact(const QString& name) const {
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    return QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/" + name;
  }

  void openData(MainWindow& window) {
    window.resize(1300, 860);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(m_data);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
  }

  static ColourControls* controls(MainWindow& window) {
    return window.findChild<ColourControls*>();
  }

private slots:
  void initTestCase() {
    // Three blobs; a skewed "size", 50 equal clusters, a kind.
    m_data = m_dir.filePath("things.npy");
    std::vector<float> x = test::randomFloats(std::size_t(kN) * 4, 11);
    QByteArray meta("label\tsize\tcluster\tkind\n");
    const char* names[] = {"cat", "dog", "bird"};
    for (int i = 0; i < kN; ++i) {
      x[std::size_t(i * 4 + i % 3)] += 8.0f;
      meta += QByteArray(names[i % 3]) + "\t" + QByteArray::number(sizeOf(i)) + "\tc" +
              QByteArray::number(i % 50) + "\t" + (i % 4 == 0 ? "rare" : "common") + "\n";
    }
    QVERIFY(test::writeBytes(m_data, test::npyBytes("<f4", {kN, 4}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(m_dir.filePath("things.meta.tsv"), meta));
  }

  void skewedColumnSpansThePalette() {
    MainWindow window;
    openData(window);
    ColourControls* colours = controls(window);
    QVERIFY(colours);
    QTRY_VERIFY(!window.viewPending());
    QVERIFY(window.setColourBy(QStringLiteral("size")));
    QTRY_COMPARE(window.colourBy(), QString("size"));
    ColorBar* bar = colours->colorBar();
    QVERIFY(bar->isVisible());
    // Auto picked log for 1 … 5,000; the scale box says so.
    QCOMPARE(bar->scale().kind, ColourScaleKind::Log);
    auto* scaleBox = window.findChild<QComboBox*>(QStringLiteral("colourScale"));
    QVERIFY(scaleBox && scaleBox->isVisible());
    QCOMPARE(scaleBox->currentText(), QString("auto (log)"));
    // The ticks are the powers of ten, where the scale puts them.
    std::vector<double> tickValues;
    for (const auto& t : bar->ticks()) {
      tickValues.push_back(t.value);
      QCOMPARE(t.position, bar->scale().at(t.value));
    }
    QCOMPARE(tickValues, (std::vector<double>{1, 10, 100, 1000}));
    // The items' colours span the palette: few in its darkest tenth, both ends present.
    auto darkShare = [colours] {
      const QColor tenth = viridis(0.1);
      int dark = 0;
      for (int i = 0; i < kN; ++i)
        dark += colourAt(colours->shownColours(), i).green() <= tenth.green();
      return double(dark) / kN;
    };
    QVERIFY2(darkShare() < 0.2, qPrintable(QString::number(darkShare())));
    QTest::qWait(100);
    const int brightLog = countBrightEnd(window.mapView()->grabFramebuffer());
    QVERIFY(window.grab().save(artifact("colours-size-log.png")));
    // Linear, chosen in the box as a person would: most items sink into the dark end.
    scaleBox->setCurrentIndex(scaleBox->findText(QStringLiteral("linear")));
    emit scaleBox->activated(scaleBox->currentIndex());
    QCOMPARE(window.session()->colourScale(), ColourScaleKind::Linear);
    QCOMPARE(bar->scale().kind, ColourScaleKind::Linear);
    QVERIFY2(darkShare() > 0.6, qPrintable(QString::number(darkShare())));
    QTest::qWait(100);
    const int brightLinear = countBrightEnd(window.mapView()->grabFramebuffer());
    QVERIFY2(brightLog > 3 * std::max(1, brightLinear),
             qPrintable(QString("%1 vs %2").arg(brightLog).arg(brightLinear)));
    QVERIFY(window.grab().save(artifact("colours-size-linear.png")));
    // Undo takes the scale back.
    window.session()->undoStack()->undo();
    QCOMPARE(window.session()->colourScale(), ColourScaleKind::Auto);
    QCOMPARE(bar->scale().kind, ColourScaleKind::Log);
    // A range filter rescales the colours to what it shows: the largest size shown is the
    // palette's top.
    QVERIFY(window.setShownRange(10, 100));
    QCOMPARE(bar->minimum() >= 10, true);
    QCOMPARE(bar->maximum() <= 100, true);
    int top = -1;
    for (int i = 0; i < kN; ++i)
      if (sizeOf(i) <= 100 && (top < 0 || sizeOf(i) > sizeOf(top)))
        top = i;
    QCOMPARE(colourAt(colours->shownColours(), top), viridis(1));
    QVERIFY(window.grab().save(artifact("colours-size-range.png")));
    // Quantile, saved with the session and read back.
    window.session()->editColourScale(ColourScaleKind::Quantile);
    QCOMPARE(bar->scale().kind, ColourScaleKind::Quantile);
    const QString session = m_dir.filePath("scale.nearscape");
    QVERIFY(window.saveSessionTo(session));
    QCOMPARE(Session::read(session).colourScale, ColourScaleKind::Quantile);
    MainWindow again;
    again.resize(1000, 700);
    again.show();
    QSignalSpy explored(&again, &MainWindow::explorationFinished);
    again.openSession(session);
    QVERIFY(explored.wait(60000));
    QTRY_COMPARE(again.colourBy(), QString("size"));
    QCOMPARE(again.session()->colourScale(), ColourScaleKind::Quantile);
    QTRY_COMPARE(controls(again)->colorBar()->scale().kind, ColourScaleKind::Quantile);
  }

  void fiftyClustersInASearchableLegend() {
    MainWindow window;
    openData(window);
    QVERIFY(window.setColourBy(QStringLiteral("cluster")));
    QTRY_COMPARE(window.colourBy(), QString("cluster"));
    // 50 equal clusters: every one keeps a colour; no grey "other".
    LegendPanel* legend = window.legend();
    QCOMPARE(legend->count(), 50);
    for (int g = 0; g < 50; ++g)
      QVERIFY(!legend->item(g)->text().startsWith("other"));
    auto* search = window.findChild<QLineEdit*>(QStringLiteral("legendSearch"));
    QVERIFY(search && search->isVisible());
    // Typed as a person would: c1, c10 … c19 listed; Enter shows only them on the map.
    search->setFocus();
    QTest::keyClicks(search, QStringLiteral("C1"));
    QCOMPARE(legend->listedCount(), 11);
    QVERIFY(window.grab().save(artifact("colours-legend-search.png")));
    const int before = test::countNonBackground(window.mapView()->grabFramebuffer());
    QTest::keyClick(search, Qt::Key_Return);
    QCOMPARE(window.session()->filter().hidden.size(), 39);
    QTest::qWait(100);
    const int after = test::countNonBackground(window.mapView()->grabFramebuffer());
    QVERIFY2(after < before / 2 && after > 0,
             qPrintable(QString("%1 -> %2").arg(before).arg(after)));
    // Cleared: every entry listed again; the filter stays until changed (undo takes it back).
    search->clear();
    QCOMPARE(legend->listedCount(), 50);
    window.session()->undoStack()->undo();
    QVERIFY(window.session()->filter().hidden.isEmpty());
  }

  void commandLineScale() {
    // nearscape DATA --colour-by size --colour-scale quantile --screenshot: a picture; an
    // unknown scale: exit 2 with the reason.
    const QString png = m_dir.filePath("cli.png");
    QProcess gui;
    gui.start(QStringLiteral(NEARSCAPE_GUI_PATH),
              {m_data, "--colour-by", "size", "--colour-scale", "quantile", "--screenshot", png});
    QVERIFY(gui.waitForFinished(120000));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError());
    QVERIFY(QImage(png).width() > 100);
    QProcess badScale;
    badScale.start(QStringLiteral(NEARSCAPE_GUI_PATH), {m_data, "--colour-scale", "cubic"});
    QVERIFY(badScale.waitForFinished(60000));
    QCOMPARE(badScale.exitCode(), 2);
    QVERIFY(badScale.readAllStandardError().contains("linear, log or quantile"));
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiColours>(argc, argv);
}
#include "tst_gui_colours.moc"
