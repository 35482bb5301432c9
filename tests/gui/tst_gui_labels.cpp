// Cluster labels on the map: drawn at each cluster's centre item in legible dark text, finer
// levels as the map zooms in, overlapping ones dropped, and the View menu's toggle and column.
#include "ClusterLabelOverlay.h"
#include "ClusterLabelsControl.h"
#include "ExplorerSession.h"
#include "GuiTest.h"
#include "MainWindow.h"
#include "MapView.h"
#include "Session.h"
#include "TestFiles.h"

#include <QAction>
#include <QFileInfo>
#include <QMenu>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <random>
#include <tuple>

using namespace nearscape;
using namespace nearscape::ui;

namespace {

const QColor kTextColour(25, 25, 35); // ClusterLabelOverlay's text

/// Dark pixels of the label text's colour inside `box` of `image` (device pixels = widget's).
int textPixels(const QImage& image, const QRectF& box) {
  const QRect r = box.toAlignedRect().intersected(image.rect());
  return test::countColor(image.copy(r), kTextColour);
}

} // namespace

class TestGuiLabels : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data;

  /// `nearscape ARGS` under this display; exit code (−1: crashed or hung) and stderr.
  std::pair<int, QByteArray> gui(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(NEARSCAPE_GUI_PATH), args);
    if (!p.waitForFinished(120000)) {
      p.kill();
      p.waitForFinished(10000);
      return {-1, {}};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardError()};
  }

private slots:
  void initTestCase() {
    // Three blobs of 4-D vectors; each blob's texts speak of its own topic.
    constexpr int n = 600;
    m_data = m_dir.filePath("topics.npy");
    std::vector<float> x = test::randomFloats(std::size_t(n) * 4, 5);
    QByteArray meta("label\tname\tsize\ttext\n");
    const char* topics[] = {"kernel driver", "typeface glyphs", "python bindings"};
    for (int i = 0; i < n; ++i) {
      x[std::size_t(i * 4 + i % 3)] += 9.0f;
      meta += "c" + QByteArray::number(i % 3) + "\tpkg" + QByteArray::number(i) + "\t" +
              QByteArray::number(i) + "\tThe " + topics[i % 3] + (i % 2 ? " tool" : " files") +
              "\n";
    }
    QVERIFY(test::writeBytes(m_data, test::npyBytes("<f4", {n, 4}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(m_dir.filePath("topics.meta.tsv"), meta));
  }

  void overlayFollowsTheZoom() {
    // Two blobs side by side, "kernel" texts left and "typeface" texts right; levels of 2 and 8.
    constexpr int perBlob = 300;
    std::mt19937_64 rng(4);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xy;
    std::vector<std::string> texts;
    for (int i = 0; i < 2 * perBlob; ++i) {
      const bool right = i >= perBlob;
      xy.push_back(normal(rng) + (right ? 20.0f : 0.0f));
      xy.push_back(normal(rng));
      texts.push_back(right ? (i % 2 ? "typeface fonts" : "typeface glyphs")
                            : (i % 2 ? "kernel driver" : "kernel module"));
    }
    ClusterLabelParams params;
    params.granularities = {2, 8};
    Context context;
    context.backend = Backend::Cpu;
    auto labels = std::make_shared<const ClusterLabels>(
        clusterLabels({xy.data(), 2 * perBlob, 2}, texts, params, context));

    MapView map;
    map.resize(900, 600);
    map.setPoints(xy, 2, std::vector<std::uint8_t>(std::size_t(6 * perBlob), 170));
    map.show();
    QVERIFY(QTest::qWaitForWindowExposed(&map));
    auto* overlay = new ClusterLabelOverlay(&map);
    QCOMPARE(overlay->levelShown(), -1);
    QVERIFY(overlay->placedLabels().empty());
    const QImage without = map.grab().toImage();
    overlay->setLabels(labels, ClusterLabelOverlay::robustArea(xy, 2));
    QVERIFY(overlay->isVisible());
    QCOMPARE(overlay->geometry(), map.rect());

    // Fitted: the coarse level, one label at each blob's centre item, each named by its word.
    QCOMPARE(overlay->levelShown(), 0);
    const auto placed = overlay->placedLabels();
    QCOMPARE(placed.size(), std::size_t(2));
    const QImage with = map.grab().toImage();
    for (const auto& p : placed) {
      const ClusterLabel& label = labels->levels[0].labels[p.label];
      QCOMPARE(p.anchor, map.widgetPosOf(label.centreItem));
      QVERIFY(p.box.contains(p.anchor));
      const bool right = label.centreItem >= perBlob;
      QVERIFY2(p.text.startsWith(right ? "typeface" : "kernel"), qPrintable(p.text));
      QVERIFY((p.anchor.x() > map.width() / 2) == right);
      // The text is drawn there (dark on its halo), and was not before.
      QVERIFY2(textPixels(with, p.box) > 30, qPrintable(QString::number(textPixels(with, p.box))));
      QCOMPARE(textPixels(without, p.box), 0);
    }

    // Zoomed in on the left blob: the finer level, its labels inside the view and apart.
    map.zoomAt(map.widgetPosOf(labels->levels[0].labels[0].centreItem), 4.0);
    QCOMPARE(overlay->levelShown(), 1);
    const auto finer = overlay->placedLabels();
    QVERIFY(!finer.empty());
    for (std::size_t a = 0; a < finer.size(); ++a) {
      QVERIFY(QRectF(map.rect()).adjusted(-2, -2, 2, 2).contains(finer[a].box));
      for (std::size_t b = a + 1; b < finer.size(); ++b)
        QVERIFY(!finer[a].box.intersects(finer[b].box));
    }

    // Zoomed far out: the two labels would overlap; the larger cluster's (the first) stays.
    map.resetCamera();
    map.zoomAt(QPointF(450, 300), 0.02);
    QCOMPARE(overlay->levelShown(), 0);
    const auto crowded = overlay->placedLabels();
    QCOMPARE(crowded.size(), std::size_t(1));
    QCOMPARE(crowded[0].label, std::size_t(0));

    overlay->setLabels(nullptr, 0);
    QVERIFY(!overlay->isVisible());
  }

  void viewMenuToggleAndColumn() {
    const QString data = m_data;
    Context context;
    context.backend = Backend::Cpu;
    MainWindow window(context);
    window.setErrorDisplay([](const QString&, const QString&) {});
    window.resize(1100, 760);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.openPath(data);
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->mapRefined(2), 60000);

    ClusterLabelsControl* control = window.clusterLabels();
    QCOMPARE(control->column(), QString("text"));
    // The menu offers the text columns, not the numbers.
    QStringList offered;
    for (QAction* a : control->columnMenu()->actions())
      offered << a->text();
    QVERIFY2(offered.contains("text") && offered.contains("name") && !offered.contains("size"),
             qPrintable(offered.join(',')));
    // Opened, the menu checks the default column (worked out then, not while the data opened).
    emit control->columnMenu()->aboutToShow();
    for (QAction* a : control->columnMenu()->actions())
      QCOMPARE(a->isChecked(), a->data().toString() == "text");
    QAction* toggle = window.findChild<QAction*>("clusterLabelsAction");
    QVERIFY(toggle);
    QSignalSpy changed(control, &ClusterLabelsControl::labelsChanged);
    toggle->trigger();
    QVERIFY(changed.wait(30000));
    ClusterLabelOverlay* overlay = control->overlay();
    QVERIFY(overlay->isVisible());
    window.mapView()->resetCamera();
    QApplication::processEvents();
    const auto placed = overlay->placedLabels();
    QVERIFY(placed.size() >= 3);
    // Each blob's words name it ("kernel" and "driver" tie: both are in all its texts).
    QStringList texts;
    for (const auto& p : placed)
      texts << p.text;
    for (const char* word : {"kernel", "typeface", "python"})
      QVERIFY2(texts.filter(word).size() >= 1, qPrintable(texts.join(" | ")));
    const QImage shot = window.mapView()->grab().toImage();
    QVERIFY(textPixels(shot, placed[0].box) > 30);
    // File → Export Picture draws them too (the framebuffer alone lacks them).
    const QString picture = m_dir.filePath("labelled.png");
    QVERIFY(window.exportPictureTo(picture));
    const QImage exported(picture);
    QCOMPARE(exported.size(), window.mapView()->size() * window.mapView()->devicePixelRatio());
    QVERIFY2(textPixels(exported, placed[0].box) > 30,
             qPrintable(QString::number(textPixels(exported, placed[0].box))));
    QCOMPARE(textPixels(window.mapView()->grabFramebuffer(), placed[0].box), 0);
    // A session keeps them shown, and their column.
    const QString saved = m_dir.filePath("labels.nearscape");
    QVERIFY(window.saveSessionTo(saved));
    QCOMPARE(Session::read(saved).clusterLabels, std::optional<QString>("text"));
    {
      MainWindow again(context);
      again.setErrorDisplay([](const QString&, const QString&) {});
      again.resize(1100, 760);
      again.show();
      QSignalSpy explored(&again, &MainWindow::explorationFinished);
      again.openSession(saved);
      QVERIFY2(explored.wait(60000), qPrintable(again.lastError()));
      QTRY_VERIFY_WITH_TIMEOUT(again.clusterLabels()->overlay()->isVisible(), 30000);
      QVERIFY(again.clusterLabels()->shown());
      QCOMPARE(again.clusterLabels()->column(), QString("text"));
    }

    // A filter hiding two of the three blobs: the labels name the one drawn, and come back.
    window.session()->setFilter(Filter{{"c1", "c2"}, std::nullopt});
    QVERIFY(changed.wait(30000));
    QStringList filtered;
    for (const auto& p : overlay->placedLabels())
      filtered << p.text;
    QVERIFY2(!filtered.isEmpty() && filtered.filter("typeface").isEmpty() &&
                 filtered.filter("python").isEmpty(),
             qPrintable(filtered.join(" | ")));
    for (const auto& level : overlay->labels()->levels)
      for (const auto& label : level.labels)
        QCOMPARE(label.centreItem % 3, 0); // a c0 item
    window.session()->setFilter(Filter{});
    QVERIFY(changed.wait(30000));
    QVERIFY(overlay->placedLabels().size() >= 3);

    // Another column: the package names.
    for (QAction* a : control->columnMenu()->actions())
      if (a->text() == "name") {
        a->trigger();
        QVERIFY(a->isChecked());
        break;
      }
    QCOMPARE(control->column(), QString("name"));
    QVERIFY(changed.wait(30000));
    QVERIFY(overlay->isVisible());
    QVERIFY(overlay->placedLabels().empty()); // each name is one item's: no word names a region

    // Off: nothing drawn, and a session says so.
    toggle->trigger();
    QVERIFY(!overlay->isVisible());
    QVERIFY(!control->shown());
    QVERIFY(window.saveSessionTo(saved));
    QVERIFY(!Session::read(saved).clusterLabels);
  }

  void commandLine() {
    // --cluster-labels: the screenshot waits for the labels, whose dark text it shows.
    const QString with = m_dir.filePath("with.png"), without = m_dir.filePath("without.png");
    auto [code, err] = gui({m_data, "--backend", "cpu", "--cluster-labels", "--screenshot", with});
    QVERIFY2(code == 0, err.constData());
    std::tie(code, err) = gui({m_data, "--backend", "cpu", "--screenshot", without});
    QVERIFY2(code == 0, err.constData());
    const int labelled = test::countColor(QImage(with), kTextColour);
    const int plain = test::countColor(QImage(without), kTextColour);
    QVERIFY2(labelled > plain + 150, qPrintable(QString("%1 vs %2").arg(labelled).arg(plain)));
    // A column the data lacks is refused by name.
    std::tie(code, err) = gui({m_data, "--backend", "cpu", "--label-column", "nope", "--screenshot",
                               m_dir.filePath("never.png")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains("no column 'nope' for --label-column"), err.constData());
    // So is a title column it lacks, naming the ones it has.
    std::tie(code, err) = gui({m_data, "--backend", "cpu", "--title-column", "nope", "--screenshot",
                               m_dir.filePath("never.png")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains("no metadata column 'nope' for --title-column (columns: label, name, "
                          "size, text)"),
             err.constData());
    QVERIFY(!QFileInfo::exists(m_dir.filePath("never.png")));
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiLabels>(argc, argv);
}
#include "tst_gui_labels.moc"
