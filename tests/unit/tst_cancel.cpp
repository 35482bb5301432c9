// Cancellation: every long job stops within 200 ms of Cancel, requested from another thread once
// the job has reported progress (it is past its set-up and at work), on data large enough to run
// for seconds, and returns nothing (Cancelled). NN-Descent is stopped in a later iteration, and the
// CLI, interrupted mid-run, leaves no output file. The GUI's Cancel button and Ctrl-C rest on this.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

using namespace nearscape;
using namespace nearscape::test;

Q_DECLARE_METATYPE(std::function<void(JobControl&)>)

namespace {

using Clock = std::chrono::steady_clock;

/// Clustered data (clusters keep NN-Descent and the layout busy for several iterations).
const std::vector<float>& data(std::int64_t n, std::int64_t d) {
  static std::map<std::pair<std::int64_t, std::int64_t>, std::vector<float>> made;
  auto& x = made[{n, d}];
  if (x.empty()) {
    x = randomFloats(std::size_t(n * d), 7);
    for (std::int64_t i = 0; i < n; ++i)
      x[std::size_t(i * d + i % d)] += 4.0f;
  }
  return x;
}

/// A million items with a text column each (the explorer's search looks at every one).
const Dataset& texts() {
  static const Dataset made = [] {
    Dataset ds;
    constexpr std::int64_t n = 1000000;
    ds.vectors = Matrix<float>(std::vector<float>(std::size_t(n), 0.0f), n, 1);
    ds.metadata.columnNames = {"text"};
    ds.metadata.columns.resize(1);
    for (std::int64_t i = 0; i < n; ++i)
      ds.metadata.columns[0].push_back("item number " + std::to_string(i));
    return ds;
  }();
  return made;
}

Context cpu() {
  Context c;
  c.backend = Backend::Cpu;
  return c;
}

/// A flag one thread raises and another waits for.
class Signal {
public:
  void raise() {
    const std::lock_guard lock(m_mutex);
    m_raised = true;
    m_changed.notify_all();
  }
  bool waitFor(std::chrono::milliseconds limit) {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, limit, [&] { return m_raised; });
  }

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  bool m_raised = false;
};

} // namespace

class TestCancel : public QObject {
  Q_OBJECT

private slots:
  void stopsWithin200ms_data() {
    QTest::addColumn<std::function<void(JobControl&)>>("job");
    const MatrixView<float> big{data(40000, 96).data(), 40000, 96};
    const MatrixView<float> mid{data(20000, 32).data(), 20000, 32};
    QTest::newRow("exact kNN graph") << std::function<void(JobControl&)>(
        [=](JobControl& j) { knnGraph(big, 10, Metric::L2, cpu(), j); });
    QTest::newRow("exact search") << std::function<void(JobControl&)>(
        [=](JobControl& j) { knnSearch(big, big, 10, Metric::Cosine, cpu(), j); });
    QTest::newRow("NN-Descent") << std::function<void(JobControl&)>([=](JobControl& j) {
      NnDescentParams p;
      p.delta = 0; // every iteration runs
      nnDescentGraph(big, 20, Metric::L2, cpu(), j, p);
    });
    QTest::newRow("graph index build") << std::function<void(JobControl&)>(
        [=](JobControl& j) { buildIndex(big, Metric::L2, GraphIndexParams{}, cpu(), j); });
    QTest::newRow("IVF build") << std::function<void(JobControl&)>([=](JobControl& j) {
      buildIndex(big, Metric::L2, IvfFlatParams{.nlist = 1024, .iterations = 100}, cpu(), j);
    });
    QTest::newRow("duplicates") << std::function<void(JobControl&)>(
        [=](JobControl& j) { pairsWithin(big, 6.0, Metric::L2, cpu(), j); });
    QTest::newRow("duplicates by quantile") << std::function<void(JobControl&)>(
        [=](JobControl& j) { pairsWithinQuantile(big, 0.5, Metric::Cosine, cpu(), j); });
    QTest::newRow("explore pipeline") << std::function<void(JobControl&)>([=](JobControl& j) {
      ExploreParams p;
      p.layout.epochs = 5000;
      explore(mid, p, cpu(), j);
    });
    QTest::newRow("k-means") << std::function<void(JobControl&)>([=](JobControl& j) {
      KMeansParams p;
      p.clusters = 1024;
      p.iterations = 100;
      kmeans(big, p, Metric::L2, cpu(), j);
    });
    const Dataset& text = texts();
    QTest::newRow("search") << std::function<void(JobControl&)>(
        [&text](JobControl& j) { findItems(text, "number.*[a-z]$", MatchMode::Regex, j); });
    static const KnnResult g = knnGraph(mid, 10, Metric::L2, cpu());
    static const std::vector<float> start = randomFloats(std::size_t(mid.rows) * 2, 9);
    QTest::newRow("layout") << std::function<void(JobControl&)>([=](JobControl& j) {
      LayoutParams p;
      p.epochs = 5000;
      layoutGraph(g.ids.view(), g.distances.view(), {start.data(), mid.rows, 2}, p, cpu(), j);
    });
    // Built before the rows run (statics), so that the sweep itself is what is cancelled.
    static const auto index = buildIndex(mid, Metric::L2, GraphIndexParams{}, cpu());
    static const KnnResult truth = knnSearch(mid, mid, 10, Metric::L2, cpu());
    QTest::newRow("sweep") << std::function<void(JobControl&)>([=](JobControl& j) {
      SweepOptions o;
      o.k = 10;
      for (int ef = 10; ef <= 4000; ef += 10)
        o.grid.push_back({{"ef", double(ef)}});
      runSweep(*index, mid, mid, truth.ids.view(), o, {}, j);
    });
  }

  void stopsWithin200ms() {
    QFETCH(std::function<void(JobControl&)>, job);
    Signal started;
    std::atomic<double> reached{0};
    // The stop is requested from this thread once the job reports progress: it has started.
    JobControl control(
        [&](double fraction, const std::string&) {
          reached = fraction;
          if (fraction > 0)
            started.raise();
        },
        std::chrono::milliseconds(0));
    auto done = std::async(std::launch::async, [&] {
      try {
        job(control);
        return false;
      } catch (const Cancelled&) {
        return true;
      }
    });
    const bool reported = started.waitFor(std::chrono::seconds(20));
    const double at = reached;
    const auto cancelled = Clock::now();
    control.requestStop();
    done.wait();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - cancelled).count();
    QVERIFY2(reported, "the job reported no progress");
    QVERIFY2(done.get(), "the job ended without Cancelled: give it more work");
    qInfo("stopped %.1f ms after Cancel, at %.1f%%", ms, 100 * at);
    QVERIFY2(ms <= 200, qPrintable(QString("%1 ms after Cancel").arg(ms)));
  }

  void nnDescentStopsInALaterIteration() {
    // The stop lands a third of an iteration after the second one's report, in the third one's
    // joins: a loop that checked only in its first iteration would finish those joins and
    // report the third (and, without the sampling step's check, run its thirty to the end); a
    // stop between chunks leaves the third unreported.
    const MatrixView<float> x{data(30000, 128).data(), 30000, 128};
    Signal second;
    std::atomic<int> last{0};
    std::atomic<double> iterationMs{0};
    NnDescentParams params;
    params.delta = 0; // every iteration runs
    params.maxIterations = 30;
    JobControl control;
    auto done = std::async(std::launch::async, [&] {
      try {
        Clock::time_point previous;
        nnDescentGraph(x, 10, Metric::L2, cpu(), control, params, [&](int iteration, double) {
          last = iteration;
          const auto now = Clock::now();
          if (iteration == 2) {
            iterationMs = std::chrono::duration<double, std::milli>(now - previous).count();
            second.raise();
          }
          previous = now;
        });
        return false;
      } catch (const Cancelled&) {
        return true;
      }
    });
    QVERIFY(second.waitFor(std::chrono::seconds(60)));
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(iterationMs / 3));
    const auto cancelled = Clock::now();
    control.requestStop();
    done.wait();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - cancelled).count();
    QVERIFY2(done.get(), "NN-Descent ended without Cancelled");
    qInfo("stopped %.1f ms after Cancel, after iteration %d (an iteration: %.0f ms)", ms, int(last),
          double(iterationMs));
    QVERIFY2(last <= 2, qPrintable(QString("%1 iterations ran").arg(int(last))));
    QVERIFY2(ms <= 200, qPrintable(QString("%1 ms after Cancel").arg(ms)));
  }

  void interruptedCommandLeavesNoOutput_data() {
    QTest::addColumn<QStringList>("args"); // %in and %out stand for the input and output files
    QTest::newRow("knn exact") << QStringList{"knn",      "%in",   "--k",   "10",
                                              "--method", "exact", "--out", "%out"};
    QTest::newRow("layout") << QStringList{"layout", "%in", "--epochs", "5000", "--out", "%out"};
    QTest::newRow("duplicates") << QStringList{"duplicates", "%in",   "--threshold",
                                               "6",          "--out", "%out"};
  }
  void interruptedCommandLeavesNoOutput() {
    // Ctrl-C (SIGINT) half a second into a command that runs for seconds: it ends soon, says it
    // was cancelled, and writes nothing — no output, no temporary file.
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    const QString in = dir.filePath("data.npy"), out = dir.filePath("out.npy");
    const std::vector<float>& x = data(40000, 96);
    QVERIFY(writeBytes(in, npyBytes("<f4", {40000, 96}, rawBytes(x))));
    for (QString& a : args)
      a = a == "%in" ? in : a == "%out" ? out : a;
    args << "--backend"
         << "cpu";
    QProcess p;
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), args);
    QVERIFY(p.waitForStarted());
    QVERIFY2(!p.waitForFinished(700), p.readAllStandardError().constData()); // still at work
    QElapsedTimer timer;
    timer.start();
    ::kill(pid_t(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(10000));
    qInfo("ended %lld ms after SIGINT", timer.elapsed());
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains("cancelled"), err.constData());
    QVERIFY2(timer.elapsed() <= 1000, qPrintable(QString("%1 ms").arg(timer.elapsed())));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"data.npy"});
  }
};

QTEST_GUILESS_MAIN(TestCancel)
#include "tst_cancel.moc"
