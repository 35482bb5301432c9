// What the map's colours say, driven through real widgets: a skewed column on a log scale that
// spans the palette (pixels and the per-item colours), the colour bar's ticks, the scale in the
// command line and the session; 50 equal clusters all in the legend, searched; facets brushed
// on their charts, dimming the map and recounting the other facets.
#include "ColorBar.h"
#include "ColourControls.h"
#include "Colouring.h"
#include "FacetChart.h"
#include "FacetsPanel.h"
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

  void longNamesAreCutInTheLegend() {
    // 20 labels of 10 KB each were laid out whole at every repaint of the legend: the window
    // stalled 200-300 ms at each (tst_gui_explore's hostile regex). An entry shows a line's
    // worth; its tooltip more; the legend's search still reads the whole name.
    LegendPanel legend;
    const QString tail = QStringLiteral("needle");
    const std::string longName = std::string(10000, 'x') + tail.toStdString();
    legend.setLabels({longName, "short"}, {3, 4});
    QCOMPARE(legend.count(), 2);
    QVERIFY2(legend.item(0)->text().size() < 100, qPrintable(legend.item(0)->text().left(200)));
    QVERIFY(legend.item(0)->text().endsWith(QStringLiteral("…  (3)")));
    QVERIFY(legend.item(0)->toolTip().size() > 100 && legend.item(0)->toolTip().size() < 1000);
    QCOMPARE(legend.item(1)->text(), QString("short  (4)"));
    QVERIFY(legend.item(1)->toolTip().isEmpty());
    legend.setFilterText(tail);
    QCOMPARE(legend.listedCount(), 1);
    QVERIFY(!legend.isRowHidden(0) && legend.isRowHidden(1));
  }

  void brushingFacetsDimsTheMapAndRecounts() {
    MainWindow window;
    openData(window);
    auto* panel = window.findChild<FacetsPanel*>();
    QVERIFY(panel);
    QTRY_VERIFY(panel->ready() && !panel->pending());
    window.findChild<QDockWidget*>(QStringLiteral("facetsDock"))->raise();
    FacetChart* size = panel->chart(QStringLiteral("size"));
    FacetChart* kind = panel->chart(QStringLiteral("kind"));
    FacetChart* label = panel->chart(QStringLiteral("label"));
    QVERIFY(size && kind && label);
    QTRY_VERIFY(size->isVisible() && size->width() > 100);
    QVERIFY(size->counts().logBins);
    auto sum = [](const std::vector<std::int64_t>& v) {
      std::int64_t s = 0;
      for (const auto x : v)
        s += x;
      return s;
    };
    QCOMPARE(sum(kind->counts().filtered), std::int64_t(kN));
    QTest::qWait(100);
    const int brightBefore = countBright(window.mapView()->grabFramebuffer());
    const std::vector<std::uint8_t> coloursBefore = controls(window)->shownColours();
    QVERIFY(window.grab().save(artifact("facets-none.png")));

    // Drag across the first half of the size histogram.
    const int bins = int(size->counts().total.size());
    QTest::mousePress(size, Qt::LeftButton, {}, size->barRect(0).center());
    QTest::mouseRelease(size, Qt::LeftButton, {}, size->barRect(bins / 2 - 1).center());
    QCOMPARE(int(window.session()->facets().size()), 1);
    QTRY_VERIFY(!panel->pending()); // counted off the GUI thread
    const auto range = *window.session()->facets().front().range;
    const std::vector<std::uint8_t>& mask = window.session()->facetMask();
    QCOMPARE(int(mask.size()), kN);
    int passing = 0;
    for (int i = 0; i < kN; ++i) {
      const bool in = sizeOf(i) >= range.first && sizeOf(i) <= range.second;
      QCOMPARE(bool(mask[std::size_t(i)]), in);
      passing += in;
      // Outside: dimmed toward the background, not hidden; inside: as before.
      const QColor now = colourAt(controls(window)->shownColours(), i);
      const QColor was = colourAt(coloursBefore, i);
      if (in)
        QCOMPARE(now, was);
      else
        QVERIFY(now != was);
    }
    QVERIFY(passing > kN / 5 && passing < kN * 4 / 5);
    QCOMPARE(panel->passing(), std::int64_t(passing));
    QCOMPARE(window.mapView()->pointCount(), std::int64_t(kN)); // dimmed, none hidden
    // The other facets count within the brush.
    QCOMPARE(sum(kind->counts().filtered), std::int64_t(passing));
    QCOMPARE(sum(label->counts().filtered), std::int64_t(passing));
    QCOMPARE(sum(kind->counts().total), std::int64_t(kN));
    QTest::qWait(100);
    const int brightAfter = countBright(window.mapView()->grabFramebuffer());
    QVERIFY2(brightAfter < brightBefore * 4 / 5,
             qPrintable(QString("%1 -> %2").arg(brightBefore).arg(brightAfter)));
    QVERIFY(window.grab().save(artifact("facets-size-brushed.png")));

    // AND a click on "rare" in the kind facet: fewer pass; the size facet counts within kind.
    int rareRow = -1;
    for (int r = 0; r < int(kind->counts().labels.size()); ++r)
      if (kind->counts().labels[std::size_t(r)] == "rare")
        rareRow = r;
    QVERIFY(rareRow >= 0);
    QTest::mouseClick(kind, Qt::LeftButton, {}, kind->barRect(rareRow).center());
    QCOMPARE(int(window.session()->facets().size()), 2);
    QTRY_VERIFY(!panel->pending());
    int both = 0;
    for (int i = 0; i < kN; ++i)
      both += i % 4 == 0 && sizeOf(i) >= range.first && sizeOf(i) <= range.second;
    QCOMPARE(panel->passing(), std::int64_t(both));
    QCOMPARE(sum(size->counts().filtered), std::int64_t(kN / 4)); // within kind alone
    QCOMPARE(sum(label->counts().filtered), std::int64_t(both));
    QVERIFY(window.grab().save(artifact("facets-two-brushes.png")));
    // Saved with the session, and restored with it: the same items pass.
    const QString session = m_dir.filePath("facets.nearscape");
    QVERIFY(window.saveSessionTo(session));
    QCOMPARE(Session::read(session).facets, window.session()->facets());
    {
      MainWindow again;
      again.resize(1000, 700);
      again.show();
      QSignalSpy explored(&again, &MainWindow::explorationFinished);
      again.openSession(session);
      QVERIFY(explored.wait(60000));
      QCOMPARE(again.session()->facets(), window.session()->facets());
      auto* restored = again.findChild<FacetsPanel*>();
      QTRY_VERIFY(restored->ready() && !restored->pending());
      QTRY_COMPARE(restored->passing(), std::int64_t(both));
      QCOMPARE(again.session()->facetMask(), window.session()->facetMask());
    }
    // Undo takes the second brush back; Clear all restores the whole map.
    window.session()->undoStack()->undo();
    QTRY_VERIFY(!panel->pending());
    QCOMPARE(panel->passing(), std::int64_t(passing));
    auto* clear = panel->findChild<QPushButton*>(QStringLiteral("facetsClear"));
    QVERIFY(clear && clear->isEnabled());
    QTest::mouseClick(clear, Qt::LeftButton);
    QVERIFY(window.session()->facets().empty());
    QTRY_VERIFY(!panel->pending());
    QVERIFY(window.session()->facetMask().empty());
    QCOMPARE(controls(window)->shownColours(), coloursBefore);
  }

  void commandLineScaleAndFilters() {
    // nearscape DATA --colour-by size --colour-scale quantile [--filter kind=rare --filter
    // size=10..1000] --screenshot: the filtered picture has fewer bright items (the rest dim);
    // unknown scales and columns: exit 2 with the reason.
    auto shoot = [this](const QString& name, const QStringList& extra) {
      const QString png = m_dir.filePath(name);
      QProcess gui;
      gui.start(QStringLiteral(NEARSCAPE_GUI_PATH),
                QStringList{m_data, "--colour-by", "size", "--colour-scale", "quantile"} + extra +
                    QStringList{"--screenshot", png});
      if (!gui.waitForFinished(120000) || gui.exitCode() != 0)
        qWarning("%s", gui.readAllStandardError().constData());
      return QImage(png);
    };
    const QImage whole = shoot("cli-whole.png", {});
    const QImage filtered =
        shoot("cli-filtered.png", {"--filter", "kind=rare", "--filter", "size=10..1000"});
    QVERIFY(whole.width() > 100 && filtered.size() == whole.size());
    const int brightWhole = countBright(whole), brightFiltered = countBright(filtered);
    QVERIFY2(brightFiltered < brightWhole - 500,
             qPrintable(QString("%1 -> %2").arg(brightWhole).arg(brightFiltered)));
    QVERIFY(filtered.save(artifact("colours-cli-filtered.png")));
    QProcess badScale;
    badScale.start(QStringLiteral(NEARSCAPE_GUI_PATH), {m_data, "--colour-scale", "cubic"});
    QVERIFY(badScale.waitForFinished(60000));
    QCOMPARE(badScale.exitCode(), 2);
    QVERIFY(badScale.readAllStandardError().contains("linear, log or quantile"));
    QProcess badFilter;
    badFilter.start(QStringLiteral(NEARSCAPE_GUI_PATH),
                    {m_data, "--filter", "colour=red", "--screenshot", m_dir.filePath("no.png")});
    QVERIFY(badFilter.waitForFinished(120000));
    QCOMPARE(badFilter.exitCode(), 2);
    QVERIFY(badFilter.readAllStandardError().contains("no such facet column"));
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiColours>(argc, argv);
}
#include "tst_gui_colours.moc"
