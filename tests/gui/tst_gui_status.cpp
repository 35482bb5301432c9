// What the status bar says: the refined map's trust (README: "its mean in the status bar"),
// equal to a float64 check (each item's exact 10-NN against its 10 nearest on the map), and the
// count of unreadable image files, all of them, before any is shown.
#include "ExplorerSession.h"
#include "GuiTest.h"
#include "MainWindow.h"
#include "TestFiles.h"
#include "Thumbnailer.h"

#include <QDir>
#include <QImage>

#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <algorithm>

using namespace nearscape;
using namespace nearscape::ui;

class TestGuiStatus : public QObject {
  Q_OBJECT

private slots:
  void statusBarShowsTheMapTrust() {
    QTemporaryDir dir;
    constexpr int n = 400, d = 6, k = 10;
    const std::vector<float> x = test::randomFloats(std::size_t(n) * d, 7);
    const QString file = dir.filePath("trust.npy");
    QVERIFY(test::writeBytes(file, test::npyBytes("<f4", {n, d}, test::rawBytes(x))));
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(finished.wait(60000), qPrintable(window.lastError()));
    auto* label = window.findChild<QLabel*>(QStringLiteral("mapTrust"));
    QVERIFY(label);
    QTRY_VERIFY_WITH_TIMEOUT(label->isVisible(), 30000);
    const QString text = label->text();
    QVERIFY2(text.startsWith("map trust ") && text.endsWith("%"), qPrintable(text));
    const double shown = text.mid(10, text.size() - 11).toDouble();

    const int dim = window.session()->mapDim();
    const std::vector<float>& map = window.session()->layout(dim);
    QCOMPARE(std::int64_t(map.size()), std::int64_t(n) * dim);
    const MatrixView<float> v{x.data(), n, d}, p{map.data(), n, dim};
    const KnnResult truth = knnReference(v, v, k, Metric::L2, true);
    const KnnResult onMap = knnReference(p, p, k, Metric::L2, true);
    double kept = 0;
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < k; ++a)
        kept += std::count(onMap.ids.row(i), onMap.ids.row(i) + k, truth.ids.row(i)[a]) > 0;
    const double want = 100 * kept / (double(n) * k);
    QVERIFY2(std::abs(shown - want) <= 0.051 + 1.0, // ties on the map may fall either way
             qPrintable(QString("%1 vs %2").arg(shown).arg(want)));
  }

  void everyUnreadableImageIsCounted() {
    // 40 items with image files: 5 missing, 3 not images; none is shown (decoded), yet all 8 are
    // counted by the check (decoding alone counted 2 of 5 in issue 42).
    QTemporaryDir dir;
    constexpr int n = 40;
    QVERIFY(QDir(dir.path()).mkpath("img"));
    QByteArray meta("label\timage\n");
    for (int i = 0; i < n; ++i) {
      const QString file = QStringLiteral("img/%1.png").arg(i);
      meta += "x\t" + file.toUtf8() + "\n";
      if (i % 8 == 3)
        continue;        // missing: 3, 11, 19, 27, 35
      if (i % 13 == 5) { // 5, 18, 31
        QVERIFY(test::writeBytes(dir.filePath(file), "not a PNG at all"));
        continue;
      }
      QImage image(16, 16, QImage::Format_RGB32);
      image.fill(Qt::red);
      QVERIFY(image.save(dir.filePath(file)));
    }
    QVERIFY(test::writeBytes(
        dir.filePath("im.npy"),
        test::npyBytes("<f4", {n, 3}, test::rawBytes(test::randomFloats(n * 3, 9)))));
    QVERIFY(test::writeBytes(dir.filePath("im.meta.tsv"), meta));
    OpenOptions options;
    const auto data =
        std::make_shared<const Dataset>(openDataset(dir.filePath("im.npy").toStdString(), options));
    QCOMPARE(data->imageColumn, 1);
    Thumbnailer thumbnails;
    QSignalSpy checked(&thumbnails, &Thumbnailer::filesChecked);
    thumbnails.setDataset(data);
    QTRY_COMPARE_WITH_TIMEOUT(thumbnails.checked(), n, 20000);
    QCOMPARE(thumbnails.unreadable(), 8);
    QCOMPARE(thumbnails.loaded() + thumbnails.failed(), 0); // nothing decoded
    QVERIFY(!checked.isEmpty());
    QCOMPARE(checked.last().at(0).toInt(), 8);
    QCOMPARE(checked.last().at(2).toInt(), n);
  }
};

int main(int argc, char** argv) {
  return test::runGuiTest<TestGuiStatus>(argc, argv);
}
#include "tst_gui_status.moc"
