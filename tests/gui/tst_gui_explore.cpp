// Everyday exploring: find items, colour by any column, export what is shown.
#include "ColorBar.h"
#include "Colors.h"
#include "Colouring.h"
#include "ComparePanel.h"
#include "DuplicatesPanel.h"
#include "GuiTest.h"
#include "HoverCard.h"
#include "ItemInspector.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "LegendPanel.h"
#include "MainWindow.h"
#include "MapView.h"
#include "OutliersPanel.h"
#include "PreferencesDialog.h"
#include "TestFiles.h"
#include "Thumbnailer.h"
#include "UiMain.h"
#include "WelcomePage.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLineF>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <set>

using namespace nearscape;
using namespace nearscape::ui;
using nearscape::test::countColor;
using nearscape::test::countNonBackground;

class TestGuiExplore : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data;
  static constexpr int kN = 600;

  QString artifact(const QString& name) const {
    QDir().mkpath(QStringLiteral(NEARSCAPE_TEST_ARTIFACTS));
    return QStringLiteral(NEARSCAPE_TEST_ARTIFACTS) + "/" + name;
  }

  /// Three well-separated blobs labelled cat, dog, bird; a numeric column "score" rising with
  /// the id; a text column.
  void openData(MainWindow& window) {
    window.resize(1100, 760);
    window.show();
    window.activateWindow(); // keyboard shortcuts go to the active window
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(m_data);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
  }

private slots:
  void initTestCase() {
    m_data = m_dir.filePath("pets.npy");
    std::vector<float> x = test::randomFloats(std::size_t(kN) * 4, 5);
    QByteArray meta("label\ttitle\tscore\tgroup\n");
    const char* names[] = {"cat", "dog", "bird"};
    for (int i = 0; i < kN; ++i) {
      x[std::size_t(i * 4 + i % 3)] += 8.0f; // the blob of its class
      meta += QByteArray(names[i % 3]) + "\titem <b>" + QByteArray::number(i) + "</b>\t" +
              QByteArray::number(i * 0.5) + "\tg" + QByteArray::number(i % 30) + "\n";
    }
    QVERIFY(test::writeBytes(m_data, test::npyBytes("<f4", {kN, 4}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(m_dir.filePath("pets.meta.tsv"), meta));
  }

  void imagesFromFilesShowEverywhere() {
    // 300 items, each with its own PNG (a colour of its own) named by the metadata's "image"
    // column relative to the metadata file; 5 files missing, 3 corrupt.
    QTemporaryDir dir;
    constexpr int n = 300;
    QVERIFY(QDir(dir.path()).mkpath("photos"));
    auto colourOf = [](int i) { return QColor::fromHsv((i * 37) % 360, 200, 220); };
    std::vector<float> x = test::randomFloats(std::size_t(n) * 4, 11);
    QByteArray meta("label\timage\n");
    for (int i = 0; i < n; ++i) {
      x[std::size_t(i * 4 + i % 2)] += 6.0f;
      const QString file = QStringLiteral("photos/%1.png").arg(i);
      meta += QByteArray(i % 2 ? "odd" : "even") + "\t" + file.toUtf8() + "\n";
      if (i >= 10 && i < 15)
        continue; // missing
      if (i >= 20 && i < 23) {
        QVERIFY(test::writeBytes(dir.filePath(file), "not a PNG at all"));
        continue;
      }
      QImage image(48 + i % 5, 32, QImage::Format_RGB32);
      image.fill(colourOf(i));
      QVERIFY(image.save(dir.filePath(file)));
    }
    QVERIFY(test::writeBytes(dir.filePath("photos.npy"),
                             test::npyBytes("<f4", {n, 4}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(dir.filePath("photos.meta.tsv"), meta));

    MainWindow window;
    window.resize(1100, 760);
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(dir.filePath("photos.npy"));
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    QCOMPARE(window.dataset()->imageColumn, 1);
    QVERIFY(window.thumbnailer()->available());

    // The neighbours list shows each neighbour's own image once decoded.
    window.selectItem(0);
    QTRY_COMPARE(window.neighboursPanel()->count(), 10);
    auto iconColour = [](const QListWidgetItem* entry) {
      const QImage icon = entry->icon().pixmap(56, 56).toImage();
      return icon.isNull() ? QColor() : icon.pixelColor(icon.width() / 2, icon.height() / 2);
    };
    for (int row = 0; row < 10; ++row) {
      const int id = window.neighboursPanel()->itemAt(row);
      const QListWidgetItem* entry = window.neighboursPanel()->item(row);
      const bool broken = (id >= 10 && id < 15) || (id >= 20 && id < 23);
      QTRY_VERIFY2_WITH_TIMEOUT(!entry->icon().isNull(), qPrintable(QString::number(id)), 20000);
      if (!broken)
        QCOMPARE(iconColour(entry).rgb(), colourOf(id).rgb());
    }

    // Hovering shows the item's image (arriving after the card opened), or the placeholder.
    window.showHover(7, QPoint(100, 100));
    QTRY_VERIFY_WITH_TIMEOUT(!window.hoverCard()->thumbnail().isNull(), 20000);
    const QImage shown = window.hoverCard()->thumbnail().toImage();
    QCOMPARE(shown.pixelColor(shown.width() / 2, shown.height() / 2).rgb(), colourOf(7).rgb());
    window.showHover(12, QPoint(100, 100)); // missing: the grey cross, counted
    QTRY_VERIFY_WITH_TIMEOUT(!window.hoverCard()->thumbnail().isNull(), 20000);
    QVERIFY(window.grab().save(artifact("images-from-files.png")));

    // Every broken file is counted once, none stalls the window.
    for (int i = 0; i < n; ++i)
      window.thumbnailer()->thumbnail(i);
    QTRY_COMPARE_WITH_TIMEOUT(window.thumbnailer()->loaded() + window.thumbnailer()->failed(), n,
                              30000);
    QCOMPARE(window.thumbnailer()->failed(), 8);

    // The next start reads them back from the disk cache, not from the files; a file changed
    // since is decoded again and shows its new picture.
    QImage changed(40, 30, QImage::Format_RGB32);
    changed.fill(Qt::black);
    QFile::remove(dir.filePath("photos/7.png"));
    QVERIFY(changed.save(dir.filePath("photos/7.png")));
    QFile(dir.filePath("photos/7.png"))
        .setFileTime(QDateTime::currentDateTime().addSecs(60), QFileDevice::FileModificationTime);
    Thumbnailer again;
    again.setDiskCache(std::make_shared<const ArtefactCache>(ArtefactCache::defaultFolder(),
                                                             ArtefactCache::kDefaultMaxBytes));
    again.setDataset(std::make_shared<const Dataset>(*window.dataset())); // copies share storage
    for (int i = 0; i < n; ++i)
      again.thumbnail(i);
    QTRY_COMPARE_WITH_TIMEOUT(again.loaded() + again.failed(), n, 30000);
    QCOMPARE(again.failed(), 8);
    QCOMPARE(again.fromDiskCache(), n - 8 - 1); // all but the broken ones and the changed one
    const QImage seven = again.thumbnail(7);
    QCOMPARE(seven.pixelColor(seven.width() / 2, seven.height() / 2).rgb(),
             QColor(Qt::black).rgb());
    QCOMPARE(again.thumbnail(30).pixelColor(10, 10).rgb(), colourOf(30).rgb());
  }

  void welcomePageUntilDataIsOpen() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.welcomePage()->isVisible()); // no error dialog, no empty map
    QVERIFY(!window.mapView()->isVisible());
    auto* examples = window.welcomePage()->findChild<QLabel*>(QStringLiteral("welcomeExamples"));
    QVERIFY(examples->text().contains("Fashion-MNIST"));
    if (!QFileInfo::exists(QString::fromStdString(defaultDatasetPath().string())))
      QVERIFY(examples->text().contains("dataset-fashion-mnist")); // which package brings it
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(m_data);
    QVERIFY(shown.wait(30000));
    QVERIFY(window.mapView()->isVisible() && !window.welcomePage()->isVisible());
  }

  void searchDimsTheRestAndFinds() {
    MainWindow window;
    openData(window);
    MapView* map = window.mapView();
    QTest::qWait(50);
    const QImage before = map->grabFramebuffer();
    const auto& names = window.dataset()->labelNames;
    const QColor cat =
        labelColor(int(std::find(names.begin(), names.end(), "cat") - names.begin()));
    const QColor dog =
        labelColor(int(std::find(names.begin(), names.end(), "dog") - names.begin()));
    const int catsBefore = countColor(before, cat), dogsBefore = countColor(before, dog);
    QVERIFY2(catsBefore > 100 && dogsBefore > 100,
             qPrintable(QString("%1 %2").arg(catsBefore).arg(dogsBefore)));

    // Ctrl+F, then type: the dogs stay bright, the cats and birds fade but stay drawn.
    window.activateWindow(); // the shortcut needs the active window
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
    auto* field = window.findChild<QLineEdit*>(QStringLiteral("search"));
    QVERIFY(field);
    QTRY_VERIFY(field->hasFocus());
    QTest::keyClicks(field, "DOG");
    QTRY_COMPARE(window.searchMatches().size(), std::size_t(kN / 3));
    QCOMPARE(window.searchMatches(), findItems(*window.dataset(), "DOG", MatchMode::Substring));
    QTest::qWait(50);
    const QImage after = map->grabFramebuffer();
    QVERIFY(after.save(artifact("explore-search.png")));
    QVERIFY2(countColor(after, cat) < catsBefore / 20,
             qPrintable(QString::number(countColor(after, cat))));
    QVERIFY(countColor(after, dog) > dogsBefore / 2);
    QVERIFY(countNonBackground(after) > 2 * countColor(after, dog)); // the others are still drawn

    // Enter: the first match is selected and the view centred on it.
    QTest::keyClick(field, Qt::Key_Return);
    QTRY_COMPARE(window.selectedItem(), std::int64_t(1));
    const QPointF centre = map->widgetPosOf(1);
    QVERIFY(std::abs(centre.x() - map->width() / 2.0) < 3 &&
            std::abs(centre.y() - map->height() / 2.0) < 3);

    // A regular expression; an invalid one matches nothing and says so.
    // The search runs in the background: the matches change when it ends.
    window.setSearch(QStringLiteral("^(cat|bird)$"), true);
    QTRY_COMPARE(window.searchMatches().size(), std::size_t(2 * kN / 3));
    QSignalSpy searched(&window, &MainWindow::searchFinished);
    window.setSearch(QStringLiteral("("), true);
    QVERIFY(searched.wait(10000));
    QVERIFY(window.searchMatches().empty());
    QCOMPARE(window.findChild<QLineEdit*>(QStringLiteral("search"))->text(), QString("("));
    window.setSearch({});
    map->resetCamera(); // the search had centred the view on a dog
    QTest::qWait(50);
    QVERIFY(countColor(map->grabFramebuffer(), cat) > catsBefore / 2);
  }

  void searchLeavesTheWindowResponsive() {
    // 1.5 million items with a text column: the search looks at every one off the GUI thread,
    // whose event loop keeps turning (a timer's longest gap stays short) while it runs; typing
    // on stops the search under way, whose result never shows; the count is right in the end.
    QTemporaryDir dir;
    constexpr int n = 1500000;
    {
      std::vector<float> x(std::size_t(n) * 2);
      for (int i = 0; i < n; ++i) {
        x[2 * std::size_t(i)] = float(i % 1000);
        x[2 * std::size_t(i) + 1] = float(i / 1000);
      }
      QVERIFY(test::writeBytes(dir.filePath("many.npy"),
                               test::npyBytes("<f4", {n, 2}, test::rawBytes(x))));
      QByteArray meta("text\tscore\n");
      meta.reserve(n * 24);
      for (int i = 0; i < n; ++i) {
        // "needle" in every 1000th text, "needlx" in others: "needl" finds both.
        meta += "t" + QByteArray::number(i);
        meta += i % 1000 == 0 ? " needle\t" : i % 1000 == 500 ? " needlx\t" : "\t";
        meta += QByteArray::number(i % 7) + "\n";
      }
      QVERIFY(test::writeBytes(dir.filePath("many.meta.tsv"), meta));
    }
    MainWindow window;
    window.resize(1000, 700);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(dir.filePath("many.npy"));
    QVERIFY2(shown.wait(120000), qPrintable(window.lastError()));
    window.pipelineJobs()->cancel(); // the graph of 1.5 M items is not what is measured here
    QVERIFY(window.pipelineJobs()->waitForDone(10000));
    QCOMPARE(window.dataset()->size(), n);
    // A regular expression (a substring search is some 30 times faster); the search as the
    // old code ran it, on the GUI thread, timed for the report.
    auto* regex = window.findChild<QCheckBox*>(QStringLiteral("regex"));
    QVERIFY(regex);
    regex->setChecked(true);
    QElapsedTimer clock;
    clock.start();
    const std::vector<std::int64_t> expected =
        findItems(*window.dataset(), "needle", MatchMode::Regex);
    const qint64 blockingMs = clock.elapsed();
    QCOMPARE(expected.size(), std::size_t(n / 1000));

    // The event loop's heartbeat, from the first key until the result arrives.
    qint64 longestGap = 0, last = -1, ticks = 0;
    QTimer heartbeat;
    heartbeat.setInterval(5);
    connect(&heartbeat, &QTimer::timeout, this, [&] {
      const qint64 now = clock.elapsed();
      if (last >= 0 && window.viewPending()) // the gap that applies the result is not the search's
        longestGap = std::max(longestGap, now - last);
      last = now;
      ++ticks;
    });
    QSignalSpy searched(&window, &MainWindow::searchFinished);
    std::vector<std::size_t> applied; // every result shown, in order
    connect(&window, &MainWindow::searchFinished, this,
            [&] { applied.push_back(window.searchMatches().size()); });
    auto* field = window.findChild<QLineEdit*>(QStringLiteral("search"));
    QVERIFY(field);
    field->setFocus();
    clock.restart();
    heartbeat.start();
    QTest::keyClicks(field, "needl");
    window.setSearch(field->text(), true); // as the pause in typing does, without waiting
    QVERIFY(window.viewPending());
    const qint64 started = clock.elapsed();
    QTest::keyClick(field, Qt::Key_E); // typing on: that search stops, a new one starts
    QTRY_VERIFY_WITH_TIMEOUT(!window.viewPending(), 60000);
    const qint64 searchMs = clock.elapsed() - started;
    QTest::qWait(300); // nothing stale arrives later
    heartbeat.stop();
    qInfo("regex search of %d items: %lld ms on the GUI thread before; in the background, "
          "%lld ms until shown, the event loop's longest gap %lld ms (%lld ticks)",
          n, blockingMs, searchMs, longestGap, ticks);
    QCOMPARE(window.searchMatches(), expected);
    QVERIFY(!applied.empty());
    QCOMPARE(applied.back(), expected.size());
    QVERIFY2(std::count(applied.begin(), applied.end(), std::size_t(2 * n / 1000)) <= 1,
             "a stopped search's result was shown after the one that replaced it");
    QCOMPARE(window.findChild<QLineEdit*>(QStringLiteral("search"))->text(), QString("needle"));
    QVERIFY2(longestGap < 100, qPrintable(QString("the event loop stalled %1 ms").arg(longestGap)));

    // Colouring by a column of 1.5 M values, and finding the columns worth colouring by when
    // the data opens: read in the background too (timed here as the old code ran them).
    clock.restart();
    const ColourScheme scheme = columnScheme(*window.dataset(), 1);
    const qint64 schemeMs = clock.elapsed();
    clock.restart();
    const ColumnChoices choices = columnChoices(*window.dataset());
    const qint64 choicesMs = clock.elapsed();
    QCOMPARE(choices.numeric, QStringList{"score"});
    QCOMPARE(choices.colourable, QStringList{"score"}); // the text: every value its own
    longestGap = 0;
    last = -1;
    heartbeat.start();
    QVERIFY(window.setColourBy(QStringLiteral("score")));
    QVERIFY(window.viewPending());
    QTRY_COMPARE_WITH_TIMEOUT(window.colourBy(), QString("score"), 60000);
    heartbeat.stop();
    qInfo("colouring by a column of %d values: %lld ms on the GUI thread before (and %lld ms "
          "for the columns worth colouring by); in the background, the longest gap %lld ms",
          n, schemeMs, choicesMs, longestGap);
    QCOMPARE(scheme.maximum, 6.0);
    QVERIFY2(longestGap < 100, qPrintable(QString("the event loop stalled %1 ms").arg(longestGap)));
    QCOMPARE(window.findChild<ColorBar*>()->maximum(), 6.0);
  }

  void hostileRegexLeavesTheWindowResponsive() {
    // A 50,000-character value crashed the regex search (std::regex recursed once a character)
    // and (a+)+$ over 35 characters never ended: "searching…" for ever, and closing the window
    // left the process running. Typed into the field now: results in milliseconds; a search of
    // seconds stops at the bar's stop button, at Escape and when the window closes, each within
    // 200 ms; a bad pattern shows RE2's reason; the event loop never stalls meanwhile.
    QTemporaryDir dir;
    constexpr int n = 2000;
    QVERIFY(test::writeBytes(
        dir.filePath("long.npy"),
        test::npyBytes("<f4", {n, 2}, test::rawBytes(test::randomFloats(2 * n, 3)))));
    std::vector<QByteArray> values = {QByteArray(50000, 'a'), QByteArray(34, 'a') + "b",
                                      QByteArray(35, 'A')};
    std::uint32_t state = 1;
    const char letters[] = "acdefghijklmnoprstuvwxyz"; // no b, no q
    while (values.size() < std::size_t(n)) {
      QByteArray value(10000, ' ');
      for (char& c : value) {
        state = state * 1664525u + 1013904223u;
        c = letters[(state >> 16) % 24];
      }
      values.push_back(value);
    }
    QByteArray meta;                  // one column: no header row
    std::vector<std::int64_t> endInA; // what (a+)+$ finds, case-insensitive
    for (std::size_t i = 0; i < values.size(); ++i) {
      meta += values[i] + "\n";
      if (values[i].endsWith('a') || values[i].endsWith('A'))
        endInA.push_back(std::int64_t(i));
    }
    QVERIFY(test::writeBytes(dir.filePath("long.meta.tsv"), meta));
    MainWindow window;
    window.resize(1000, 700);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(dir.filePath("long.npy"));
    QVERIFY2(shown.wait(60000), qPrintable(window.lastError()));
    window.pipelineJobs()->cancel(); // the graph is not what is looked at here
    QVERIFY(window.pipelineJobs()->waitForDone(10000));
    auto* field = window.findChild<QLineEdit*>(QStringLiteral("search"));
    auto* regex = window.findChild<QCheckBox*>(QStringLiteral("regex"));
    auto* label = window.findChild<QLabel*>(QStringLiteral("matches"));
    auto* stop = window.findChild<QToolButton*>(QStringLiteral("searchStop"));
    QVERIFY(field && regex && label && stop);
    regex->setChecked(true);

    QElapsedTimer clock;
    clock.start();
    qint64 longestGap = 0, last = -1;
    QTimer heartbeat;
    heartbeat.setInterval(5);
    connect(&heartbeat, &QTimer::timeout, this, [&] {
      const qint64 now = clock.elapsed();
      if (last >= 0 && window.viewPending())
        longestGap = std::max(longestGap, now - last);
      last = now;
    });
    heartbeat.start();
    auto type = [&](const QString& text) { // as a person does: the search starts as typing pauses
      field->setFocus();
      field->selectAll();
      QTest::keyClicks(field, text);
    };
    type(QStringLiteral("a*b"));
    QTRY_COMPARE_WITH_TIMEOUT(window.searchMatches(), std::vector<std::int64_t>{1}, 20000);
    QTRY_VERIFY(!window.viewPending());
    type(QStringLiteral("(a+)+$"));
    QTRY_COMPARE_WITH_TIMEOUT(window.searchMatches(), endInA, 20000);
    QTRY_VERIFY(!window.viewPending());
    QCOMPARE(label->text(), QString("%1 matches").arg(endInA.size()));
    type(QStringLiteral("("));
    QTRY_COMPARE_WITH_TIMEOUT(label->text(), QString("invalid expression"), 20000);
    QVERIFY(window.searchMatches().empty());
    QVERIFY2(window.statusBar()->currentMessage().contains("missing ): ("),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(label->toolTip().contains("missing ): ("));

    // Seconds of work (a pattern RE2's automaton cannot cache, over 20 MB), stopped three ways.
    const QString slow = QStringLiteral("[a-z]*a[a-z]{60}q9");
    const auto stopsWithin200ms = [&](const std::function<void()>& stopIt, const char* how) {
      type(slow);
      QTRY_VERIFY(window.searchJobs()->busy() && stop->isEnabled());
      QTest::qWait(300);
      QVERIFY2(window.viewPending(), how); // still searching
      QElapsedTimer stopped;
      stopped.start();
      stopIt();
      const bool ended = window.searchJobs()->waitForDone(200);
      qInfo("the search stopped %lld ms after %s", stopped.elapsed(), how);
      QVERIFY2(ended, how);
    };
    stopsWithin200ms([&] { QTest::mouseClick(stop, Qt::LeftButton); }, "the stop button");
    if (QTest::currentTestFailed())
      return;
    QCOMPARE(label->text(), QString("search stopped"));
    QVERIFY(window.searchMatches().empty() && !window.viewPending());
    QTRY_VERIFY(!stop->isEnabled());
    stopsWithin200ms([&] { QTest::keyClick(field, Qt::Key_Escape); }, "Escape");
    if (QTest::currentTestFailed())
      return;
    QCOMPARE(label->text(), QString("search stopped"));
    heartbeat.stop();
    qInfo("the event loop's longest gap while searching: %lld ms", longestGap);
    QVERIFY2(longestGap < 100, qPrintable(QString("the event loop stalled %1 ms").arg(longestGap)));
    stopsWithin200ms([&] { window.close(); }, "closing the window");
  }

  void sessionValuesOutOfDomainAreRefused() {
    // A hand-edited session: a metric this Nearscape does not know was taken for the data's
    // own; other values out of their domain reached the window. Each is refused, named.
    const QString path = m_dir.filePath("edited.nearscape");
    const auto refusal = [&](const QString& fields) {
      const QString text =
          QString(R"({"format": "nearscape-session", "version": 1, "data": "%1", %2})")
              .arg(m_data, fields);
      if (!test::writeBytes(path, text.toUtf8()))
        return QString("cannot write");
      MainWindow window;
      window.openSession(path);
      return window.lastError();
    };
    struct Case {
      const char* fields;
      const char* says;
    };
    for (const Case& c :
         {Case{R"("metric": "manhattan")",
               R"("metric" must be "l2", "cos" or "ip", not "manhattan")"},
          Case{R"("dim": 2.5)", R"("dim" must be an integer, not 2.5)"},
          Case{R"("selection": [1, -3])", R"("selection" must list item ids)"},
          Case{R"("selected": -7)", R"("selected" must be an item id or -1)"},
          Case{R"("path_to": 1.5)", R"("path_to" must be an integer)"},
          Case{R"("data": "")", R"("data" must name the data file)"},
          Case{R"("content_hash": "zz")", R"("content_hash" must be hexadecimal)"},
          Case{R"("search": "dog")", R"("search" must be {"text")"},
          Case{R"("cluster_labels": 5)", R"("cluster_labels" must be a column's name)"},
          Case{R"("title_column": true)", R"("title_column" must be a column's name)"},
          Case{R"("camera": {"focal": [0,0,0], "position": [0,0,1], "up": [0,1,0], "scale": 0})",
               R"("camera" must have a positive scale)"},
          Case{R"("camera": {"focal": [0,0,1], "position": [0,0,1], "up": [0,1,0], "scale": 1})",
               R"("camera" must look from a position other than its focal point)"}}) {
      const QString error = refusal(QString::fromUtf8(c.fields));
      QVERIFY2(error.contains(path + ": " + QString::fromUtf8(c.says)),
               qPrintable(QString::fromUtf8(c.fields) + " → " + error));
    }
    // The metric's other spellings are read as the names the writer uses.
    QVERIFY(test::writeBytes(
        path,
        QString(
            R"({"format": "nearscape-session", "version": 1, "data": "%1", "metric": "Cosine"})")
            .arg(m_data)
            .toUtf8()));
    QCOMPARE(Session::read(path).metric, std::string("cos"));
  }

  void colourByOnDataWithoutLabels() {
    // No labels: the default colouring is one colour, and the box says so instead of offering
    // a "label" column the file lacks.
    QTemporaryDir dir;
    constexpr int n = 300;
    QVERIFY(test::writeBytes(
        dir.filePath("plain.npy"),
        test::npyBytes("<f4", {n, 4}, test::rawBytes(test::randomFloats(4 * n, 9)))));
    MainWindow window;
    QSignalSpy shown(&window, &MainWindow::mapShown);
    window.openPath(dir.filePath("plain.npy"));
    QVERIFY2(shown.wait(60000), qPrintable(window.lastError()));
    auto* box = window.findChild<QComboBox*>(QStringLiteral("colourBy"));
    QVERIFY(box && box->count() > 0);
    QCOMPARE(window.colourBy(), QString("label"));
    QVERIFY2(box->currentText().startsWith("none"), qPrintable(box->currentText()));
    for (int i = 0; i < box->count(); ++i)
      QVERIFY2(box->itemText(i) != "label", qPrintable(box->itemText(i)));
    QCOMPARE(box->currentData().toString(), QString("label")); // sessions keep their word
  }

  void colourByAnyColumn() {
    MainWindow window;
    openData(window);
    auto* box = window.findChild<QComboBox*>(QStringLiteral("colourBy"));
    QVERIFY(box);
    QStringList listed;
    for (int i = 0; i < box->count(); ++i)
      listed << box->itemText(i);
    QVERIFY2(listed.contains("score") && listed.contains("group") &&
                 listed.join('|').contains("neighbour"),
             qPrintable(listed.join('|')));
    QVERIFY(!listed.contains("title")); // every value unique: free text says nothing as colour
    // A numeric column: a colour bar with its range; the map in viridis from end to end.
    box->setCurrentText(QStringLiteral("score"));
    emit box->activated(box->currentIndex());          // as a person choosing it
    QTRY_COMPARE(window.colourBy(), QString("score")); // the column is read in the background
    auto* bar = window.findChild<ColorBar*>();
    QTRY_VERIFY(bar->isVisible());
    QCOMPARE(bar->minimum(), 0.0);
    QCOMPARE(bar->maximum(), 0.5 * (kN - 1));
    QVERIFY(!window.legend()->isVisible());
    QTest::qWait(50);
    const QImage frame = window.grab().toImage();
    QVERIFY(window.grab().save(artifact("explore-colour-by-score.png")));
    const QImage mapFrame = window.mapView()->grabFramebuffer();
    QVERIFY(countColor(mapFrame, viridis(0.0)) > 0 || countColor(mapFrame, viridis(0.05)) > 0);
    QVERIFY(countColor(mapFrame, viridis(1.0)) > 0 || countColor(mapFrame, viridis(0.95)) > 0);
    QVERIFY(countColor(frame, viridis(0.5)) > 20); // the colour bar itself
    // Opacity by a numeric column, over the labels: low scores fade toward the background.
    QVERIFY(window.setColourBy(QStringLiteral("label")));
    QTest::qWait(50);
    const int brightBefore = countColor(window.mapView()->grabFramebuffer(), labelColor(0));
    auto* opacity = window.findChild<QComboBox*>(QStringLiteral("opacityBy"));
    QVERIFY(opacity && window.opacityChoices() == QStringList{"score"});
    opacity->setCurrentText(QStringLiteral("score"));
    emit opacity->textActivated(opacity->currentText());
    QCOMPARE(window.opacityBy(), QString("score"));
    QTRY_VERIFY(!window.viewPending());
    QTest::qWait(50);
    const int brightAfter = countColor(window.mapView()->grabFramebuffer(), labelColor(0));
    QVERIFY2(brightAfter < brightBefore / 4,
             qPrintable(QString("%1 -> %2").arg(brightBefore).arg(brightAfter)));
    QVERIFY(window.grab().save(artifact("explore-opacity-by-score.png")));
    QVERIFY(!window.setOpacityBy(QStringLiteral("group"))); // categories: no opacity
    QVERIFY(window.setOpacityBy(QStringLiteral("none")));
    // Size by a numeric column, chosen in the toolbar: the high scores' dots grow, so the map
    // covers more pixels; the low scores' shrink.
    QTest::qWait(50);
    const int coveredBefore = countNonBackground(window.mapView()->grabFramebuffer());
    auto* size = window.findChild<QComboBox*>(QStringLiteral("sizeBy"));
    QVERIFY(size);
    size->setCurrentText(QStringLiteral("score"));
    emit size->textActivated(size->currentText());
    QCOMPARE(window.sizeBy(), QString("score"));
    QTRY_VERIFY(!window.viewPending());
    QTest::qWait(50);
    const int coveredAfter = countNonBackground(window.mapView()->grabFramebuffer());
    QVERIFY2(coveredAfter > coveredBefore * 3 / 2,
             qPrintable(QString("%1 -> %2 pixels").arg(coveredBefore).arg(coveredAfter)));
    QVERIFY(window.grab().save(artifact("explore-size-by-score.png")));
    QVERIFY(!window.setSizeBy(QStringLiteral("group")));
    QVERIFY(window.setSizeBy(QStringLiteral("none")));
    QTest::qWait(50);
    QCOMPARE(countNonBackground(window.mapView()->grabFramebuffer()), coveredBefore);
    QVERIFY(window.setColourBy(QStringLiteral("score")));
    QTRY_COMPARE(window.colourBy(), QString("score"));
    // Filtered to a range of the column, typed as a person would: the rest disappear.
    auto* from = window.findChild<QDoubleSpinBox*>(QStringLiteral("rangeFrom"));
    auto* to = window.findChild<QDoubleSpinBox*>(QStringLiteral("rangeTo"));
    QVERIFY(from && to && from->isVisible());
    QCOMPARE(from->value(), 0.0);
    QVERIFY(!window.shownRange());
    const int drawnAll = countNonBackground(window.mapView()->grabFramebuffer());
    to->selectAll();
    QTest::keyClicks(to, QStringLiteral("49.5"));
    QTest::keyClick(to, Qt::Key_Return);
    QTRY_VERIFY(window.shownRange().has_value());
    QCOMPARE(window.shownRange()->second, 49.5); // items 0 … 99 of 600
    QTest::qWait(50);
    const int drawnPart = countNonBackground(window.mapView()->grabFramebuffer());
    QVERIFY2(drawnPart < drawnAll / 3 && drawnPart > 0,
             qPrintable(QString("%1 of %2 pixels").arg(drawnPart).arg(drawnAll)));
    QVERIFY(window.grab().save(artifact("explore-range-filter.png")));
    QVERIFY(!window.setShownRange(5, 1));
    QVERIFY(window.setShownRange(0, 0.5 * (kN - 1))); // the whole range again
    QVERIFY(!window.shownRange());
    // A column of 30 equal-sized groups, more than the palette's first hues: none is rare, so
    // every group keeps a colour of its own (no grey "other").
    QVERIFY(!window.setColourBy(QStringLiteral("title")));
    QVERIFY(window.setColourBy(QStringLiteral("group")));
    QTRY_COMPARE(window.colourBy(), QString("group"));
    QVERIFY(window.legend()->isVisible());
    QCOMPARE(window.legend()->count(), 30);
    for (int g = 0; g < 30; ++g)
      QVERIFY(!window.legend()->item(g)->text().startsWith("other"));
    // The computed column: the distance to each item's k-th neighbour.
    const QStringList distance = listed.filter(QStringLiteral("neighbour"));
    QCOMPARE(distance.size(), 1);
    QVERIFY(window.setColourBy(distance.front()));
    QVERIFY(bar->isVisible() && bar->maximum() > bar->minimum());
    QVERIFY(!window.setColourBy(QStringLiteral("no such column")));
    // Map trust: computed in the background, then a numeric colouring in [0, 1] whose values
    // are each item's share of its exact 10-NN among its 10 nearest on the map.
    QTRY_VERIFY(window.mapRefined(2));
    QVERIFY(window.colourChoices().contains(window.trustColumn()));
    QVERIFY(window.setColourBy(window.trustColumn()));
    QTRY_COMPARE_WITH_TIMEOUT(window.colourBy(), window.trustColumn(), 30000);
    QTRY_VERIFY(bar->isVisible());
    QVERIFY(bar->minimum() >= 0.0 && bar->maximum() <= 1.0 && bar->maximum() > 0.0);
    QVERIFY2(window.statusBar()->currentMessage().contains("Map trust"),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(window.grab().save(artifact("explore-map-trust.png")));
    // Outlier scores: the local outlier factor over the exact 10-NN, about 1 in the blobs.
    QVERIFY(window.setColourBy(window.outlierColumn()));
    QTRY_COMPARE_WITH_TIMEOUT(window.colourBy(), window.outlierColumn(), 30000);
    QVERIFY(bar->minimum() > 0.5 && bar->maximum() > 1.0);
  }

  void farNeighboursAreMarkedAndLinked() {
    // A true neighbour is "far in map" when its map rank (how many points lie nearer to the item
    // on the map) passes the limit the map sets for itself: the rank of its worst-kept fifth of
    // neighbour links, never below k - 1 (layout/FarInMap.h). Checked in screen space (a uniform
    // scale of the map) against every other point, captions and faint links alike; and the
    // flags stay a minority, where "beyond the item's k-th nearest map point" flagged nearly all.
    MainWindow window;
    openData(window);
    QTRY_VERIFY(window.mapRefined(2));
    const auto* inspector = window.findChild<ItemInspector*>();
    QVERIFY(inspector);
    int flagged = 0, judged = 0;
    for (std::int64_t item = 0; item < 40; ++item) {
      window.selectItem(item);
      QTRY_VERIFY(window.neighboursPanel()->count() == 10 &&
                  window.neighboursPanel()->itemAt(0) != -1 && window.selectedItem() == item);
      QTRY_VERIFY(window.statusBar()->currentMessage().startsWith(QString("Item %1").arg(item)));
      const std::int64_t limit = inspector->farRankLimit();
      QVERIFY2(limit >= 9 && limit < kN - 1, qPrintable(QString::number(limit)));
      const QPointF at = window.mapView()->widgetPosOf(item);
      std::vector<double> all;
      for (std::int64_t j = 0; j < kN; ++j)
        if (j != item)
          all.push_back(QLineF(at, window.mapView()->widgetPosOf(j)).length());
      std::sort(all.begin(), all.end());
      // Ranks 0..limit are kept: a neighbour is far when it lies beyond the (limit+1)-th point.
      const double radius = all[std::size_t(limit)];
      const std::vector<std::int32_t>& links = window.mapView()->farLinks();
      for (int row = 0; row < 10; ++row) {
        const std::int32_t id = window.neighboursPanel()->itemAt(row);
        const double d = QLineF(at, window.mapView()->widgetPosOf(id)).length();
        const double next = all[std::size_t(limit) + 1];
        if (std::abs(d - radius) < 1e-3 * std::max(1.0, radius) ||
            std::abs(d - next) < 1e-3 * std::max(1.0, next))
          continue; // on the boundary: screen rounding may decide either way
        const bool far = d > radius;
        QCOMPARE(window.neighboursPanel()->item(row)->text().contains("far in map"), far);
        QCOMPARE(std::find(links.begin(), links.end(), id) != links.end(), far);
        flagged += far ? 1 : 0;
        ++judged;
      }
    }
    QVERIFY2(flagged > 0, "no item of the first 40 has a neighbour the map placed far away");
    QVERIFY2(flagged * 2 < judged,
             qPrintable(QString("%1 of %2 flagged").arg(flagged).arg(judged)));
    QVERIFY(window.grab().save(artifact("explore-far-in-map.png")));
  }

  void exportsWhatIsShown() {
    MainWindow window;
    openData(window);
    const QByteArray data = test::readBytes(m_data);
    // The map as TSV (id, x, y, label) and as .npy.
    QVERIFY(window.exportMapTo(m_dir.filePath("map.tsv")));
    const QList<QByteArray> lines =
        test::readBytes(m_dir.filePath("map.tsv")).trimmed().split('\n');
    QCOMPARE(lines.size(), kN + 1);
    QCOMPARE(lines[0], QByteArray("id\tx\ty\tlabel"));
    QVERIFY(lines[2].startsWith("1\t") && lines[2].endsWith("\tdog"));
    QVERIFY(window.exportMapTo(m_dir.filePath("map.npy")));
    QVERIFY(test::readBytes(m_dir.filePath("map.npy")).startsWith("\x93NUMPY"));
    // Never over the data it came from; the failure is shown, the data untouched.
    QVERIFY(!window.exportMapTo(m_data));
    QVERIFY2(window.lastError().contains("refusing to overwrite"), qPrintable(window.lastError()));
    QCOMPARE(test::readBytes(m_data), data);
    // The neighbours of a selected item, and a path.
    window.selectItem(0);
    QTRY_COMPARE(window.neighboursPanel()->count(), 10);
    QVERIFY(window.exportNeighboursTo(m_dir.filePath("nn.tsv")));
    const QList<QByteArray> nn = test::readBytes(m_dir.filePath("nn.tsv")).trimmed().split('\n');
    QCOMPARE(nn.size(), 12);
    QVERIFY(
        nn[2].startsWith("1\t" + QByteArray::number(window.neighboursPanel()->itemAt(0)) + "\t"));
    window.showPathTo(3);
    QTRY_VERIFY(window.lastPath().found());
    QVERIFY(window.exportPathTo(m_dir.filePath("path.json")));
    QVERIFY(test::readBytes(m_dir.filePath("path.json")).contains("\"bottleneck\""));
    QVERIFY(window.exportPictureTo(m_dir.filePath("map.png")));
    QVERIFY(test::readBytes(m_dir.filePath("map.png")).startsWith("\x89PNG"));
    // A folder that does not exist: a clear error, nothing written.
    QVERIFY(!window.exportMapTo(m_dir.filePath("missing/map.tsv")));
    QVERIFY(window.lastError().contains("does not exist"));
  }

  void reopeningIsInstant() {
    // The first opening computed and cached the graph and the map (the tests above); a new
    // window on the same data reads them back — the same map, bit for bit.
    std::vector<float> first;
    {
      MainWindow window;
      openData(window);
      first = window.mapView()->positions();
    }
    MainWindow again;
    openData(again);
    QVERIFY2(again.findChildren<QLabel*>().size() > 0, "no status");
    QString status;
    for (const QLabel* label : again.findChildren<QLabel*>())
      if (label->text().startsWith("n = "))
        status = label->text();
    QVERIFY2(status.count("(cached)") == 2, qPrintable(status));
    QCOMPARE(again.mapView()->positions(), first);
    // A corrupt entry is not trusted: it is recomputed (and replaced).
    const QDir cacheDir(qEnvironmentVariable("NEARSCAPE_ARTEFACT_CACHE"));
    const QStringList maps = cacheDir.entryList({"*map2d*"}, QDir::Files);
    QVERIFY(!maps.isEmpty());
    QByteArray bytes = test::readBytes(cacheDir.filePath(maps.first()));
    bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x55);
    QVERIFY(test::writeBytes(cacheDir.filePath(maps.first()), bytes));
    MainWindow third;
    openData(third);
    for (const QLabel* label : third.findChildren<QLabel*>())
      if (label->text().startsWith("n = "))
        status = label->text();
    QVERIFY2(status.count("(cached)") == 1, qPrintable(status)); // the graph only
    QCOMPARE(third.mapView()->positions(), first);               // recomputed: the same map
  }

  void lassoAndRectangleSelect() {
    MainWindow window;
    openData(window);
    MapView* map = window.mapView();
    const Dataset& ds = *window.dataset();
    auto itemsOf = [&](const char* label) {
      std::vector<std::int64_t> ids;
      for (std::int64_t i = 0; i < ds.size(); ++i)
        if (ds.labelOf(i) == label)
          ids.push_back(i);
      return ids;
    };
    auto boundsOf = [&](const std::vector<std::int64_t>& ids) {
      QRectF r(map->widgetPosOf(ids[0]), QSizeF(0, 0));
      for (const std::int64_t i : ids)
        r = r.united(QRectF(map->widgetPosOf(i), QSizeF(1, 1)));
      return r.adjusted(-6, -6, 6, 6);
    };
    const std::vector<std::int64_t> dogs = itemsOf("dog"), cats = itemsOf("cat");
    // R: the rectangle tool; drag around the dogs.
    QTest::keyClick(&window, Qt::Key_R);
    QCOMPARE(map->dragTool(), MapView::DragTool::Rectangle);
    const QRectF dogBox = boundsOf(dogs);
    QTest::mousePress(map, Qt::LeftButton, Qt::NoModifier, dogBox.topLeft().toPoint());
    QTest::mouseMove(map, dogBox.center().toPoint());
    QTest::mouseMove(map, dogBox.bottomRight().toPoint());
    QTest::mouseRelease(map, Qt::LeftButton, Qt::NoModifier, dogBox.bottomRight().toPoint());
    QCOMPARE(window.selection(), dogs);
    // L: the lasso; Shift+lasso around the cats adds them (a polygon around their box).
    QTest::keyClick(&window, Qt::Key_L);
    const QRectF catBox = boundsOf(cats);
    const QPoint corners[] = {catBox.topLeft().toPoint(), catBox.topRight().toPoint(),
                              catBox.bottomRight().toPoint(), catBox.bottomLeft().toPoint()};
    QTest::mousePress(map, Qt::LeftButton, Qt::ShiftModifier, corners[0]);
    for (const QPoint& p : corners)
      QTest::mouseMove(map, p);
    QTest::mouseRelease(map, Qt::LeftButton, Qt::ShiftModifier, corners[3]);
    std::vector<std::int64_t> both;
    std::set_union(dogs.begin(), dogs.end(), cats.begin(), cats.end(), std::back_inserter(both));
    QCOMPARE(window.selection(), both);
    auto* summary = window.findChild<QLabel*>(QStringLiteral("selectionSummary"));
    QVERIFY2(summary->text().contains("400 items selected") && summary->text().contains("dog: 200"),
             qPrintable(summary->text()));
    QTest::qWait(50);
    QVERIFY(window.grab().save(artifact("explore-selection.png")));
    // Alt+rectangle around the dogs removes them; the cats stay bright, the birds fade.
    QTest::keyClick(&window, Qt::Key_R);
    QTest::mousePress(map, Qt::LeftButton, Qt::AltModifier, dogBox.topLeft().toPoint());
    QTest::mouseMove(map, dogBox.bottomRight().toPoint());
    QTest::mouseRelease(map, Qt::LeftButton, Qt::AltModifier, dogBox.bottomRight().toPoint());
    QCOMPARE(window.selection(), cats);
    // Exported with its metadata; inverted; grown by the graph's neighbours.
    QVERIFY(window.exportSelectionTo(m_dir.filePath("selection.tsv")));
    const QList<QByteArray> lines =
        test::readBytes(m_dir.filePath("selection.tsv")).trimmed().split('\n');
    QCOMPARE(lines.size(), int(cats.size()) + 1);
    QCOMPARE(lines[0], QByteArray("id\tlabel\tlabel\ttitle\tscore\tgroup"));
    window.invertSelection();
    QCOMPARE(window.selection().size(), std::size_t(kN) - cats.size());
    window.setSelection({cats.front()});
    window.growSelection();
    QVERIFY(window.selection().size() > 1);
    QTest::keyClick(&window, Qt::Key_P);
    QCOMPARE(map->dragTool(), MapView::DragTool::Pan);
  }

  void duplicatesGroupLiveAndSelect() {
    // Three blobs with planted copies: 7 = 300 = 450 (exact), 40 ≈ 41 (near). The panel's groups
    // equal connected components of a float64 all-pairs reference at its threshold, follow the
    // slider without a new search inside what was searched, and select on the map.
    constexpr int n = 480, d = 6;
    std::vector<float> x = test::randomFloats(std::size_t(n) * d, 17);
    for (int i = 0; i < n; ++i)
      x[std::size_t(i * d + i % 3)] += 8.0f;
    auto row = [&](int i) { return x.data() + std::size_t(i) * d; };
    std::copy(row(7), row(7) + d, row(300));
    std::copy(row(7), row(7) + d, row(450));
    for (int c = 0; c < d; ++c)
      row(41)[c] = row(40)[c] + 1e-3f;
    const QString file = m_dir.filePath("dups.npy");
    QVERIFY(test::writeBytes(file, test::npyBytes("<f4", {n, d}, test::rawBytes(x))));
    auto components = [&](double t) { // groups of ≥ 2 at threshold t, by brute force
      std::vector<int> parent(n);
      std::iota(parent.begin(), parent.end(), 0);
      std::function<int(int)> root = [&](int v) {
        return parent[v] == v ? v : parent[v] = root(parent[v]);
      };
      for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b) {
          double s = 0;
          for (int c = 0; c < d; ++c)
            s += std::pow(double(row(a)[c]) - row(b)[c], 2);
          if (std::sqrt(s) <= t)
            parent[root(b)] = root(a);
        }
      std::map<int, int> sizes;
      for (int v = 0; v < n; ++v)
        ++sizes[root(v)];
      return int(std::count_if(sizes.begin(), sizes.end(), [](auto& e) { return e.second >= 2; }));
    };

    MainWindow window;
    window.resize(1100, 760);
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("duplicatesDock"));
    QVERIFY(dock);
    dock->raise();
    DuplicatesPanel* panel = window.duplicatesPanel();
    QSignalSpy searched(panel, &DuplicatesPanel::searched);
    // 10% of the items: a search at 15% runs, then the slider moves within it live.
    panel->slider()->setValue(100);
    QVERIFY(searched.wait(60000));
    QVERIFY(panel->threshold().has_value());
    const double wide = *panel->threshold();
    QCOMPARE(int(panel->groups().groups.size()), components(wide));
    QCOMPARE(panel->groupList()->count(), int(panel->groups().groups.size()));
    panel->slider()->setValue(3); // 0.3%: the exact and near copies only
    QVERIFY(!panel->jobs()->busy());
    QCOMPARE(searched.count(), 1);
    const double narrow = *panel->threshold();
    QVERIFY(narrow < wide);
    QCOMPARE(int(panel->groups().groups.size()), components(narrow));
    QCOMPARE(panel->groups().groups.front(), (std::vector<std::int32_t>{7, 300, 450}));
    QVERIFY2(
        panel->summary()->text().contains(QString("%1 group").arg(panel->groups().groups.size())),
        qPrintable(panel->summary()->text()));
    // Choosing the first group selects it on the map and lists its three items.
    panel->groupList()->setCurrentRow(0);
    QCOMPARE(window.selection(), (std::vector<std::int64_t>{7, 300, 450}));
    auto* members = panel->findChild<ItemStrip*>(QStringLiteral("duplicateMembers"));
    QCOMPARE(members->count(), 3);
    QTest::qWait(50);
    QVERIFY(window.grab().save(artifact("explore-duplicates.png")));
    // A distance beyond the search's reach searches again; one inside it does not.
    panel->distanceBox()->setValue(wide * 3);
    QVERIFY(searched.wait(60000));
    QCOMPARE(int(panel->groups().groups.size()), components(wide * 3));
    // Exports: the CLI's TSV and the keep-list.
    panel->distanceBox()->setValue(narrow);
    QVERIFY(panel->exportGroups(m_dir.filePath("groups.tsv")));
    QVERIFY(panel->exportKeepList(m_dir.filePath("keep.txt")));
    const QList<QByteArray> lines =
        test::readBytes(m_dir.filePath("groups.tsv")).trimmed().split('\n');
    QCOMPARE(lines[0], QByteArray("group\tid"));
    QCOMPARE(lines[1], QByteArray("0\t7"));
    const QList<QByteArray> keep =
        test::readBytes(m_dir.filePath("keep.txt")).trimmed().split('\n');
    QCOMPARE(keep.size(), n - int(panel->groups().redundantItems()));
    QVERIFY(keep.contains("7") && !keep.contains("300") && !keep.contains("450"));
  }

  void dataRewrittenUnderTheWindowIsReported() {
    // Another program rewrites the open file in place (numpy.save: truncated, then a shorter
    // file): the pages the map's data lay in vanish. The next job that reads them (a duplicates
    // search) ends with the change named — a SIGBUS before — and the window goes on.
    constexpr int n = 1200, d = 32; // 150 KB: many pages
    const QString file = m_dir.filePath("rewritten.npy");
    QVERIFY(test::writeBytes(
        file, test::npyBytes("<f4", {n, d}, test::rawBytes(test::randomFloats(n * d, 29)))));
    MainWindow window;
    window.resize(1100, 760);
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    QVERIFY(test::writeBytes(
        file, test::npyBytes("<f4", {10, d}, test::rawBytes(test::randomFloats(10 * d, 30)))));
    DuplicatesPanel* panel = window.duplicatesPanel();
    QSignalSpy failed(panel->jobs(), &JobRunner::failed);
    QSignalSpy searched(panel, &DuplicatesPanel::searched);
    panel->slider()->setValue(100);
    QVERIFY(failed.wait(60000));
    const QString message = failed.first().at(1).toString();
    QVERIFY2(message.contains(file + " changed while it was being read"), qPrintable(message));
    QVERIFY2(panel->summary()->text().contains(message), qPrintable(panel->summary()->text()));
    QCOMPARE(searched.count(), 0); // the result is not used
    // Still running: the window draws and answers.
    window.mapView()->update();
    QTest::qWait(100);
    QVERIFY(!window.grab().isNull());
  }

  void outliersRankedAndChosen() {
    // Blobs and three planted far items: the panel ranks them first (LOF over the exact 10-NN),
    // a click on the first selects it, and the scores export as .npy and as a ranked TSV.
    constexpr int n = 303, d = 4;
    std::vector<float> x = test::randomFloats(std::size_t(n) * d, 23);
    for (int i = 0; i < 300; ++i)
      x[std::size_t(i * d + i % 2)] += 6.0f;
    for (int i = 300; i < n; ++i)
      x[std::size_t(i * d + (i - 300))] += 40.0f;
    const QString file = m_dir.filePath("far.npy");
    QVERIFY(test::writeBytes(file, test::npyBytes("<f4", {n, d}, test::rawBytes(x))));
    MainWindow window;
    window.resize(1100, 760);
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(file);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    window.findChild<QDockWidget*>(QStringLiteral("outliersDock"))->raise();
    OutliersPanel* panel = window.outliersPanel();
    panel->topBox()->setValue(5);
    QSignalSpy scored(panel, &OutliersPanel::scored);
    QTest::mouseClick(panel->scoreButton(), Qt::LeftButton);
    QVERIFY(scored.wait(60000));
    QCOMPARE(panel->list()->count(), 5);
    const std::vector<std::int64_t> top(panel->ranked().begin(), panel->ranked().begin() + 3);
    QCOMPARE(std::set<std::int64_t>(top.begin(), top.end()),
             (std::set<std::int64_t>{300, 301, 302}));
    const KnnResult exact = knnReference({x.data(), n, d}, {x.data(), n, d}, 10, Metric::L2, true);
    const std::vector<float> lof = localOutlierFactor(exact.ids.view(), exact.distances.view(), 10);
    for (int i = 0; i < n; ++i)
      QVERIFY(std::abs(panel->scores()[std::size_t(i)] - lof[std::size_t(i)]) <=
              1e-4f * lof[std::size_t(i)]);
    panel->list()->setCurrentRow(0);
    QCOMPARE(window.selectedItem(), panel->ranked()[0]);
    QTest::qWait(50);
    QVERIFY(window.grab().save(artifact("explore-outliers.png")));
    QVERIFY(panel->exportScores(m_dir.filePath("scores.npy")));
    QCOMPARE(readNpyFloat(m_dir.filePath("scores.npy").toStdString()).rows(), std::int64_t(n));
    QVERIFY(panel->exportScores(m_dir.filePath("scores.tsv")));
    const QList<QByteArray> lines =
        test::readBytes(m_dir.filePath("scores.tsv")).trimmed().split('\n');
    QCOMPARE(lines.size(), n + 1);
    QCOMPARE(lines[0], QByteArray("rank\tid\tscore"));
    QVERIFY(lines[1].startsWith("1\t" + QByteArray::number(panel->ranked()[0]) + "\t"));
  }

  void compareWithASecondEmbedding() {
    // B is A scaled (the same neighbourhoods) except items 0–9, moved at random: the overlaps
    // equal a brute-force reference, items 0–9 lead the most changed, and the overlap becomes
    // the colouring; a file with other rows is refused with a clear message.
    constexpr int n = 200, d = 5, k = 10;
    const std::vector<float> a = test::randomFloats(std::size_t(n) * d, 61);
    std::vector<float> b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      b[i] = 3.0f * a[i];
    const std::vector<float> moved = test::randomFloats(std::size_t(10) * d, 62);
    for (std::size_t i = 0; i < moved.size(); ++i)
      b[i] = 30.0f * moved[i];
    const QString fa = m_dir.filePath("emb-a.npy"), fb = m_dir.filePath("emb-b.npy"),
                  fc = m_dir.filePath("emb-short.npy");
    QVERIFY(test::writeBytes(fa, test::npyBytes("<f4", {n, d}, test::rawBytes(a))));
    QVERIFY(test::writeBytes(fb, test::npyBytes("<f4", {n, d}, test::rawBytes(b))));
    QVERIFY(test::writeBytes(
        fc, test::npyBytes("<f4", {n - 1, d},
                           test::rawBytes(std::vector<float>(a.begin(), a.end() - d)))));
    auto neighbours = [&](const std::vector<float>& x, int i) {
      std::vector<std::pair<double, int>> all;
      for (int j = 0; j < n; ++j)
        if (j != i) {
          double s = 0;
          for (int c = 0; c < d; ++c)
            s += std::pow(double(x[std::size_t(i * d + c)]) - x[std::size_t(j * d + c)], 2);
          all.push_back({s, j});
        }
      std::sort(all.begin(), all.end());
      std::set<int> ids;
      for (int r = 0; r < k; ++r)
        ids.insert(all[std::size_t(r)].second);
      return ids;
    };
    MainWindow window;
    window.resize(1100, 760);
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(fa);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    window.findChild<QDockWidget*>(QStringLiteral("compareDock"))->raise();
    ComparePanel* panel = window.comparePanel();
    QSignalSpy compared(panel, &ComparePanel::compared);
    panel->compareWith(fb);
    QVERIFY(compared.wait(60000));
    QCOMPARE(panel->overlap().size(), std::size_t(n));
    for (int i = 0; i < n; ++i) {
      const std::set<int> na = neighbours(a, i), nb = neighbours(b, i);
      std::vector<int> both;
      std::set_intersection(na.begin(), na.end(), nb.begin(), nb.end(), std::back_inserter(both));
      QCOMPARE(panel->overlap()[std::size_t(i)], float(both.size()) / k);
    }
    const std::set<std::int64_t> first(panel->mostChanged().begin(),
                                       panel->mostChanged().begin() + 10);
    QCOMPARE(first, (std::set<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    const QString column = compared.front().at(0).toString();
    QCOMPARE(window.colourBy(), column);
    QVERIFY(window.colourChoices().contains(column));
    panel->list()->setCurrentRow(0);
    QCOMPARE(window.selectedItem(), panel->mostChanged()[0]);
    QTest::qWait(50);
    QVERIFY(window.grab().save(artifact("explore-compare.png")));
    // Another row count: refused, nothing replaced.
    QSignalSpy failed(panel, &ComparePanel::failed);
    panel->compareWith(fc);
    QVERIFY(failed.wait(60000));
    QVERIFY2(failed.front().at(0).toString().contains("same items"),
             qPrintable(failed.front().at(0).toString()));
  }

  void mapsSideBySideLinkHoverSelectionAndPath() {
    // B: A's columns reversed and scaled (the same items, another space). After the comparison
    // B's own map stands beside A's: it is the layout of B's exact graph (as nearscape-cli
    // compare --map-b computes it), and hovering, clicking and Ctrl+clicking on either map show
    // the same item and the same path on both.
    constexpr int n = 240, d = 6;
    std::vector<float> a = test::randomFloats(std::size_t(n) * d, 71);
    for (int i = 0; i < n; ++i) // three clusters: a map with structure
      a[std::size_t(i * d)] += 8.0f * float(i % 3);
    std::vector<float> b(a.size());
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c)
        b[std::size_t(i * d + c)] = 2.0f * a[std::size_t(i * d + (d - 1 - c))];
    const QString fa = m_dir.filePath("side-a.npy"), fb = m_dir.filePath("side-b.npy");
    QVERIFY(test::writeBytes(fa, test::npyBytes("<f4", {n, d}, test::rawBytes(a))));
    QVERIFY(test::writeBytes(fb, test::npyBytes("<f4", {n, d}, test::rawBytes(b))));
    MainWindow window;
    window.resize(1300, 760);
    window.show();
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.openPath(fa);
    QVERIFY2(explored.wait(60000), qPrintable(window.lastError()));
    MapView* left = window.mapView();
    MapView* right = window.otherMapView();
    QVERIFY(!right->isVisible());
    QVERIFY(!window.showMapsSideBySide(true)); // nothing to show before a comparison
    ComparePanel* panel = window.comparePanel();
    QSignalSpy compared(panel, &ComparePanel::compared);
    panel->compareWith(fb);
    QVERIFY(compared.wait(60000));
    QTRY_VERIFY(right->isVisible());
    QCOMPARE(right->pointCount(), std::int64_t(n));

    // B's map is its exact 10-NN graph laid out by the pipeline, as the CLI's --map-b.
    const KnnResult graph = knnGraph({b.data(), n, d}, 10, Metric::L2, Context{});
    ExploreParams params;
    params.k = 10;
    params.neighbours = false;
    params.forest = false;
    params.layout.dim = 2;
    ExploreStages given;
    given.graph = [&graph](const Exploration&) { return std::optional<KnnResult>(graph); };
    const Exploration expected =
        explore({b.data(), n, d}, params, Context{}, noJobControl(), given);
    QCOMPARE(panel->otherMap().size(), std::size_t(expected.map.rows() * expected.map.cols()));
    QVERIFY(std::equal(panel->otherMap().begin(), panel->otherMap().end(), expected.map.data()));

    // Hover on the left: the same item ringed on the right; leaving restores it. (The item
    // picked at the pixel: two items may share one.)
    const QPoint at = left->widgetPosOf(17).toPoint();
    const std::int64_t hovered = left->itemAt(at);
    QVERIFY(hovered >= 0);
    QMouseEvent move(QEvent::MouseMove, QPointF(at), left->mapToGlobal(QPointF(at)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(left, &move);
    QTRY_COMPARE(right->overlayItem(), hovered);
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(left, &leave);
    QTRY_COMPARE(right->overlayItem(), std::int64_t(-1));
    // Click on the right: selected in the window, marked on both maps.
    const QPoint there = right->widgetPosOf(17).toPoint();
    const std::int64_t item = right->itemAt(there);
    QVERIFY(item >= 0);
    QTest::mouseClick(right, Qt::LeftButton, {}, there);
    QTRY_COMPARE(window.selectedItem(), item);
    QCOMPARE(left->overlayItem(), item);
    QCOMPARE(right->overlayItem(), item);
    // Ctrl+click another item on the right: the path (found in A's graph) drawn on both.
    const QPoint to = right->widgetPosOf(200).toPoint();
    const std::int64_t other = right->itemAt(to);
    QVERIFY(other >= 0 && other != item);
    QTest::mouseClick(right, Qt::LeftButton, Qt::ControlModifier, to);
    QTRY_VERIFY(!window.lastPath().nodes.empty());
    QCOMPARE(left->overlayPath(), window.lastPath().nodes);
    QCOMPARE(right->overlayPath(), window.lastPath().nodes);
    QCOMPARE(std::int64_t(window.lastPath().nodes.back()), other);
    QTest::qWait(50);
    QVERIFY(window.grab().save(artifact("explore-side-by-side.png")));
    // Off and on again from the View menu's action.
    QVERIFY(!window.showMapsSideBySide(false));
    QVERIFY(!right->isVisible());
    QVERIFY(window.showMapsSideBySide(true));
    QCOMPARE(right->overlayPath(), window.lastPath().nodes);
  }

  void sessionsSaveAndReproduceAView() {
    const QString session = m_dir.filePath("view.nearscape");
    MapView::Camera camera;
    {
      MainWindow window;
      openData(window);
      window.legend()->setLabelVisible(0, false); // hide the first class
      window.setSearch(QStringLiteral("dog"));
      window.setSelection({1, 2, 3});
      window.selectItem(4);
      window.showPathTo(7);
      QTRY_VERIFY(window.lastPath().found());
      window.mapView()->zoomAt(QPointF(100, 100), 1.7);
      camera = window.mapView()->camera();
      QVERIFY(window.saveSessionTo(session));
    }
    QVERIFY(test::readBytes(session).contains("\"format\": \"nearscape-session\""));
    MainWindow again;
    again.show();
    QSignalSpy explored(&again, &MainWindow::explorationFinished);
    again.openSession(session);
    QVERIFY2(explored.wait(60000), qPrintable(again.lastError()));
    QCOMPARE(again.dataset()->size(), kN);
    QTRY_COMPARE(again.searchMatches().size(), std::size_t(kN / 3));
    QCOMPARE(again.selection(), (std::vector<std::int64_t>{1, 2, 3}));
    QCOMPARE(again.legend()->visibleLabels()[0], false);
    QCOMPARE(again.selectedItem(), std::int64_t(4));
    QTRY_VERIFY(again.lastPath().found());
    QCOMPARE(std::int64_t(again.lastPath().nodes.back()), std::int64_t(7));
    QCOMPARE(again.mapView()->camera().scale, camera.scale);
    QCOMPARE(again.mapView()->camera().focal, camera.focal);
    // A numeric colouring's range filter is part of the view.
    QVERIFY(again.setColourBy(QStringLiteral("score")));
    QVERIFY(again.setShownRange(10, 20));
    const QString ranged = m_dir.filePath("ranged.nearscape");
    QVERIFY(again.saveSessionTo(ranged));
    MainWindow fourth;
    fourth.show();
    QSignalSpy rangedShown(&fourth, &MainWindow::explorationFinished);
    fourth.openSession(ranged);
    QVERIFY2(rangedShown.wait(60000), qPrintable(fourth.lastError()));
    QTRY_COMPARE(fourth.shownRange(), (std::optional<std::pair<double, double>>{{10.0, 20.0}}));

    // A session of data that changed since is refused with the reason; a broken file too.
    const QString other = m_dir.filePath("other.nearscape");
    QByteArray text = test::readBytes(session);
    text.replace(QByteArray::fromStdString(again.dataset()->contentHash),
                 "0123456789abcdef0123456789abcdef");
    QVERIFY(test::writeBytes(other, text));
    MainWindow third;
    QSignalSpy failed(&third, &MainWindow::loadFailed);
    third.openSession(other);
    QVERIFY(failed.wait(30000));
    QVERIFY2(third.lastError().contains("other data"), qPrintable(third.lastError()));
    QVERIFY(test::writeBytes(other, "{\"format\": \"nearscape-session\", \"version\": 1}"));
    third.openSession(other);
    QVERIFY2(third.lastError().contains("not a valid session"), qPrintable(third.lastError()));
  }

  void gpuListIsCheckedBeforeItIsKept() {
    MainWindow window;
    PreferencesDialog dialog(window.preferences(), &window);
    dialog.show();
    auto* devices = dialog.findChild<QLineEdit*>(QStringLiteral("devices"));
    auto* error = dialog.findChild<QLabel*>(QStringLiteral("devicesError"));
    QPushButton* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(devices && error && ok);
    QVERIFY(!error->isVisible());
    // A list no machine can serve: said in the dialog, which stays open.
    devices->setText(QStringLiteral("0,,1"));
    QTest::mouseClick(ok, Qt::LeftButton);
    QVERIFY(dialog.isVisible());
    QVERIFY(error->isVisible());
    QVERIFY2(error->text().contains("the GPU list must be"), qPrintable(error->text()));
    // "all" is every usable GPU (none on a machine without one: the CPU works).
    devices->setText(QStringLiteral("all"));
    QTest::mouseClick(ok, Qt::LeftButton);
    QVERIFY(!dialog.isVisible());
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(dialog.preferences().devices, QStringLiteral("all"));
    window.setPreferences(dialog.preferences());
    QCOMPARE(Preferences::load().devices, QStringLiteral("all"));
    const std::vector<int> usable = parseDevices("all");
    QString status;
    for (const QLabel* label : window.findChildren<QLabel*>())
      if (label->text().startsWith("No data"))
        status = label->text();
    QVERIFY2(status.contains(usable.size() > 1 ? "GPUs"
                             : usable.empty()  ? "CPU"
                                               : "GPU:"),
             qPrintable(status));
    window.setPreferences(Preferences{}); // the defaults again, for the other tests
  }

  void preferencesApplyAndPersist() {
    MainWindow window;
    openData(window);
    // Edit → Preferences, as a person fills it in: a graph of 8, 5 neighbours listed.
    PreferencesDialog dialog(window.preferences(), &window);
    dialog.findChild<QSpinBox*>(QStringLiteral("graphK"))->setValue(8);
    dialog.findChild<QSpinBox*>(QStringLiteral("shownNeighbours"))->setValue(5);
    auto* method = dialog.findChild<QComboBox*>(QStringLiteral("graphMethod"));
    method->setCurrentIndex(method->findData(int(GraphMethod::Exact)));
    QSignalSpy explored(&window, &MainWindow::explorationFinished);
    window.setPreferences(dialog.preferences());
    QVERIFY(explored.wait(60000));
    QString status;
    for (const QLabel* label : window.findChildren<QLabel*>())
      if (label->text().startsWith("n = "))
        status = label->text();
    QVERIFY2(status.contains("exact 8-NN graph"), qPrintable(status));
    window.selectItem(4);
    QTRY_COMPARE(window.neighboursPanel()->count(), 5);
    // Kept for the next start.
    const Preferences stored = Preferences::load();
    QCOMPARE(stored.graphK, 8);
    QCOMPARE(stored.shownNeighbours, 5);
    QCOMPARE(stored.graphMethod, GraphMethod::Exact);
    MainWindow next;
    QCOMPARE(next.preferences().graphK, 8);
    window.setPreferences(Preferences{}); // the defaults again, for the other tests
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiExplore>(argc, argv);
}
#include "tst_gui_explore.moc"
