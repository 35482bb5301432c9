// Cancellation: every long job stops within 200 ms of Cancel, on data large enough to run for
// seconds, and returns nothing (Cancelled). The GUI's Cancel button and Ctrl-C rest on this.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <functional>
#include <future>
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
    JobControl control;
    auto done = std::async(std::launch::async, [&] {
      try {
        job(control);
        return false;
      } catch (const Cancelled&) {
        return true;
      }
    });
    // Let it get going (past its set-up), then cancel and time how long it takes to end.
    QVERIFY2(done.wait_for(std::chrono::milliseconds(700)) == std::future_status::timeout,
             "the job ended before it could be cancelled: give it more work");
    const auto cancelled = Clock::now();
    control.requestStop();
    done.wait();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - cancelled).count();
    QVERIFY2(done.get(), "the job ended without Cancelled");
    qInfo("stopped %.1f ms after Cancel", ms);
    QVERIFY2(ms <= 200, qPrintable(QString("%1 ms after Cancel").arg(ms)));
  }
};

QTEST_GUILESS_MAIN(TestCancel)
#include "tst_cancel.moc"
