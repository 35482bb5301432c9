// A "monkey" run of the explorer: random clicks, drags, wheel turns, keys, typed searches, menu
// actions and panel widgets on a small data set, for a bounded time. Passes when nothing crashes
// (CI runs it under ASan + UBSan too), no action takes longer than a bound, the window still
// answers its event loop at the end and closes promptly with its jobs stopped.
//   NEARSCAPE_MONKEY_SECONDS (default 12), NEARSCAPE_MONKEY_SEED (default 1): a failing run is
//   replayed with the seed it printed.
#include "GuiTest.h"
#include "MainWindow.h"
#include "MapView.h"
#include "TestFiles.h"

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QWheelEvent>

#include <random>

using namespace nearscape;
using namespace nearscape::ui;

namespace {

int envInt(const char* name, int fallback) {
  bool ok = false;
  const int value = qEnvironmentVariableIntValue(name, &ok);
  return ok ? value : fallback;
}

/// Actions the monkey leaves alone: they end the run or replace the data set under test.
bool offLimits(const QAction* action) {
  const QString text = action->text().remove('&').toLower();
  for (const char* word : {"quit", "exit", "close", "open", "example", "session", "restart"})
    if (text.contains(QLatin1String(word)))
      return true;
  return action->menu() != nullptr || action->isSeparator();
}

} // namespace

class TestGuiMonkey : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data;
  static constexpr int kN = 400;

private slots:
  void initTestCase() {
    // Four blobs (a label each), a numeric and a text column: enough for every panel to work.
    m_data = m_dir.filePath("monkey.npy");
    std::vector<float> x = test::randomFloats(std::size_t(kN) * 8, 3);
    QByteArray meta("label\tscore\ttext\n");
    const char* names[] = {"north", "south", "east", "west"};
    for (int i = 0; i < kN; ++i) {
      x[std::size_t(i * 8 + i % 4)] += 7.0f;
      meta += QByteArray(names[i % 4]) + "\t" + QByteArray::number(i % 17 * 1.5) + "\tword" +
              QByteArray::number(i % 9) + " item " + QByteArray::number(i) + "\n";
    }
    QVERIFY(test::writeBytes(m_data, test::npyBytes("<f4", {kN, 8}, test::rawBytes(x))));
    QVERIFY(test::writeBytes(m_dir.filePath("monkey.meta.tsv"), meta));
  }

  void randomActionsNeitherCrashNorHang() {
    const int seconds = envInt("NEARSCAPE_MONKEY_SECONDS", 12);
    const int seed = envInt("NEARSCAPE_MONKEY_SEED", 1);
    qInfo("monkey: %d s, seed %d (NEARSCAPE_MONKEY_SEED replays it)", seconds, seed);
    std::mt19937 rng{std::uint32_t(seed)};
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };

    auto window = std::make_unique<MainWindow>();
    window->resize(1000, 700);
    window->show();
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    QSignalSpy explored(window.get(), &MainWindow::explorationFinished);
    window->openPath(m_data);
    QVERIFY2(explored.wait(120000), qPrintable(window->lastError()));

    // Dialogs and pop-up menus the monkey opens are dismissed, as a person would.
    int dismissed = 0;
    QTimer dismisser;
    QObject::connect(&dismisser, &QTimer::timeout, [&] {
      if (QWidget* popup = QApplication::activePopupWidget()) {
        popup->close();
        ++dismissed;
      }
      if (QWidget* modal = QApplication::activeModalWidget()) {
        if (auto* dialog = qobject_cast<QDialog*>(modal))
          dialog->reject();
        else
          modal->close();
        ++dismissed;
      }
    });
    dismisser.start(150);

    const QList<Qt::Key> keys = {Qt::Key_Escape, Qt::Key_Delete, Qt::Key_Home,   Qt::Key_Plus,
                                 Qt::Key_Minus,  Qt::Key_Space,  Qt::Key_Left,   Qt::Key_Right,
                                 Qt::Key_Up,     Qt::Key_Down,   Qt::Key_Return, Qt::Key_Tab,
                                 Qt::Key_A,      Qt::Key_Z,      Qt::Key_3,      Qt::Key_F};
    const QList<Qt::KeyboardModifiers> modifiers = {Qt::NoModifier, Qt::ControlModifier,
                                                    Qt::ShiftModifier,
                                                    Qt::ControlModifier | Qt::ShiftModifier};
    const QStringList texts = {"north", "item 1", "(a+)+$", "[", "word.*", "", "zzz", "7"};

    QElapsedTimer run, step;
    run.start();
    int actions = 0;
    qint64 slowest = 0;
    while (run.elapsed() < seconds * 1000LL) {
      MapView* map = window->mapView();
      const QPoint inside(8 + pick(std::max(1, map->width() - 16)),
                          8 + pick(std::max(1, map->height() - 16)));
      const Qt::KeyboardModifiers mods = modifiers[pick(int(modifiers.size()))];
      step.start();
      switch (pick(8)) {
      case 0: // a click, a double click or a right click on the map
        if (pick(4) == 0)
          QTest::mouseDClick(map, Qt::LeftButton, mods, inside);
        else
          QTest::mouseClick(map, pick(5) == 0 ? Qt::RightButton : Qt::LeftButton, mods, inside);
        break;
      case 1: { // a drag: a lasso, a rectangle or a pan, closed near its start or not
        QTest::mousePress(map, Qt::LeftButton, mods, inside);
        QPoint at = inside;
        for (int i = 0, n = 2 + pick(8); i < n; ++i) {
          at += QPoint(pick(81) - 40, pick(81) - 40);
          QMouseEvent move(QEvent::MouseMove, QPointF(at), map->mapToGlobal(QPointF(at)),
                           Qt::NoButton, Qt::LeftButton, mods);
          QApplication::sendEvent(map, &move);
        }
        QTest::mouseRelease(map, Qt::LeftButton, mods, pick(2) ? inside + QPoint(2, 1) : at);
        break;
      }
      case 2: { // the wheel
        QWheelEvent wheel(QPointF(inside), map->mapToGlobal(QPointF(inside)), QPoint(),
                          QPoint(0, pick(2) ? 120 : -120), Qt::NoButton, mods, Qt::NoScrollPhase,
                          false);
        QApplication::sendEvent(map, &wheel);
        break;
      }
      case 3: // a key, to the map or to the window
        QTest::keyClick(pick(2) ? static_cast<QWidget*>(map) : window.get(),
                        keys[pick(int(keys.size()))], mods);
        break;
      case 4: { // a menu or toolbar action
        QList<QAction*> actions;
        for (QAction* a : window->findChildren<QAction*>())
          if (a->isEnabled() && !offLimits(a))
            actions.append(a);
        if (!actions.isEmpty())
          actions[pick(int(actions.size()))]->trigger();
        break;
      }
      case 5: { // typing into a field (the search among them)
        const auto fields = window->findChildren<QLineEdit*>();
        QLineEdit* field = fields.isEmpty() ? nullptr : fields[pick(int(fields.size()))];
        if (field && field->isVisible() && field->isEnabled()) {
          field->clear();
          QTest::keyClicks(field, texts[pick(int(texts.size()))]);
          QTest::keyClick(field, Qt::Key_Return);
        }
        break;
      }
      case 6: { // a check box, a combo box or a spin box of a panel
        const auto boxes = window->findChildren<QCheckBox*>();
        const auto combos = window->findChildren<QComboBox*>();
        const auto spins = window->findChildren<QAbstractSpinBox*>();
        const int which = pick(3);
        if (which == 0 && !boxes.isEmpty()) {
          QCheckBox* box = boxes[pick(int(boxes.size()))];
          if (box->isVisible() && box->isEnabled())
            box->click();
        } else if (which == 1 && !combos.isEmpty()) {
          QComboBox* combo = combos[pick(int(combos.size()))];
          if (combo->isVisible() && combo->isEnabled() && combo->count() > 0)
            combo->setCurrentIndex(pick(combo->count()));
        } else if (!spins.isEmpty()) {
          QAbstractSpinBox* spin = spins[pick(int(spins.size()))];
          if (spin->isVisible() && spin->isEnabled())
            spin->stepBy(pick(5) - 2);
        }
        break;
      }
      default: // a moment for the background jobs
        QTest::qWait(pick(60));
        break;
      }
      QApplication::processEvents();
      slowest = std::max(slowest, step.elapsed());
      QVERIFY2(step.elapsed() < 20000,
               qPrintable(QStringLiteral("action %1 took %2 ms").arg(actions).arg(step.elapsed())));
      ++actions;
    }
    dismisser.stop();
    qInfo("monkey: %d actions, %d dialogs or menus dismissed, slowest %lld ms", actions, dismissed,
          slowest);
    QVERIFY(actions > 20);

    // Still alive: the event loop answers, and closing stops the jobs promptly.
    bool answered = false;
    QTimer::singleShot(0, [&] { answered = true; });
    QTRY_VERIFY_WITH_TIMEOUT(answered, 5000);
    QVERIFY(window->isVisible());
    QElapsedTimer closing;
    closing.start();
    window->close();
    window.reset();
    QVERIFY2(closing.elapsed() < 10000,
             qPrintable(QStringLiteral("closing took %1 ms").arg(closing.elapsed())));
  }
};

int main(int argc, char** argv) {
  return nearscape::test::runGuiTest<TestGuiMonkey>(argc, argv);
}

#include "tst_gui_monkey.moc"
