// The CPU exact graph's tile pairs (knn/TilePairQueue, knn/TileScan): each pair handed out once
// and never beside a pair sharing a tile; the AVX-512 and portable scans keep the same
// candidates; and graphs split among several workers (SYRK diagonals, a short last tile, ties,
// every metric) equal the float64 oracle.
#include "Oracle.h"
#include "knn/CandidateRow.h"
#include "knn/TilePairQueue.h"
#include "knn/TileScan.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <thread>

using namespace nearscape;
using namespace nearscape::test;

Q_DECLARE_METATYPE(nearscape::Metric)

namespace {

std::vector<float> gaussian(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<std::size_t>(n * d));
  for (auto& x : v)
    x = normal(rng);
  return v;
}

/// A row's candidates in a canonical order, for comparing two scans.
std::vector<std::pair<float, std::int32_t>> sorted(knn::CandidateRow& row) {
  std::vector<std::pair<float, std::int32_t>> out;
  for (const auto& c : row.items())
    out.emplace_back(c.approx, c.id);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

class TestExactPairs : public QObject {
  Q_OBJECT

private slots:
  void queueHandsOutEveryPairOnce() {
    for (std::int64_t tiles : {1, 2, 3, 6, 7}) {
      knn::TilePairQueue queue(tiles);
      QCOMPARE(queue.pairs(), tiles * (tiles + 1) / 2);
      std::set<std::pair<std::int64_t, std::int64_t>> seen;
      std::int64_t a = -1, b = -1;
      for (std::int64_t p = 0; p < queue.pairs(); ++p) {
        QVERIFY(queue.take(a, b));
        QVERIFY(a <= b && b < tiles);
        QVERIFY2(seen.insert({a, b}).second, "a pair handed out twice");
        if (p < tiles)
          QCOMPARE(a, b); // the diagonal first
        queue.release(a, b);
      }
      QVERIFY(!queue.take(a, b));
    }
    knn::TilePairQueue none(0);
    std::int64_t a = 0, b = 0;
    QVERIFY(!none.take(a, b));
  }

  void queueNeverLendsATileTwice() {
    // Four threads on 9 tiles: a tile is never in two pairs in work at once, every pair done.
    const std::int64_t tiles = 9;
    knn::TilePairQueue queue(tiles);
    std::vector<std::atomic<int>> users(tiles);
    std::atomic<int> done{0}, clashes{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w)
      workers.emplace_back([&] {
        std::int64_t a = 0, b = 0;
        while (queue.take(a, b)) {
          if (users[std::size_t(a)]++ != 0)
            ++clashes;
          if (b != a && users[std::size_t(b)]++ != 0)
            ++clashes;
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          --users[std::size_t(a)];
          if (b != a)
            --users[std::size_t(b)];
          ++done;
          queue.release(a, b);
        }
      });
    for (auto& t : workers)
      t.join();
    QCOMPARE(clashes.load(), 0);
    QCOMPARE(done.load(), int(tiles * (tiles + 1) / 2));
  }

  void queueStops() {
    knn::TilePairQueue queue(5);
    std::int64_t a = 0, b = 0;
    QVERIFY(queue.take(a, b));
    queue.stop();
    QVERIFY(!queue.take(a, b));
  }

  void scanKernelsKeepTheSameCandidates() {
    // Random dots and norms (a pair of tiles, then one tile's upper triangle) through both
    // kernels: every row keeps the same candidates with the same approximations.
    const std::int64_t rows = 203, cols = 157; // not multiples of 16: the tails too
    const auto C = gaussian(rows, cols, 31), an = gaussian(rows, 1, 32), bn = gaussian(cols, 1, 33);
    for (const Metric metric : {Metric::L2, Metric::InnerProduct, Metric::Cosine})
      for (const bool upper : {false, true}) {
        const std::int64_t cs = upper ? rows : cols;
        const std::vector<float> square = gaussian(rows, rows, 34);
        const float* c = upper ? square.data() : C.data();
        const float* bNorms = upper ? an.data() : bn.data();
        std::vector<knn::CandidateRow> a[2], b[2];
        std::vector<float> scratch(static_cast<std::size_t>(cs));
        for (int s = 0; s < 2; ++s) {
          a[s].resize(std::size_t(rows));
          b[s].resize(std::size_t(cs));
          for (auto& r : a[s])
            r.reset(5, 0.25f, 64);
          for (auto& r : b[s])
            r.reset(5, 0.25f, 64);
          knn::CandidateRow* bRows = upper ? a[s].data() : b[s].data();
          knn::feedPair(metric, c, rows, cs, cs, an.data(), 0, bNorms, 1000, upper, a[s].data(),
                        bRows, scratch.data(),
                        s == 0 ? knn::ScanKernel::best : knn::ScanKernel::portable);
        }
        for (std::int64_t i = 0; i < rows; ++i)
          QVERIFY(sorted(a[0][std::size_t(i)]) == sorted(a[1][std::size_t(i)]));
        for (std::int64_t j = 0; j < cs; ++j)
          QVERIFY(sorted(b[0][std::size_t(j)]) == sorted(b[1][std::size_t(j)]));
        // One row alone, skipping an id.
        knn::CandidateRow one[2];
        for (int s = 0; s < 2; ++s) {
          one[s].reset(3, 0.1f, 64);
          knn::feedRow(metric, C.data(), cols, an[0], bn.data(), 0, 17, one[s],
                       s == 0 ? knn::ScanKernel::best : knn::ScanKernel::portable);
        }
        QVERIFY(sorted(one[0]) == sorted(one[1]));
        for (const auto& c1 : one[0].items())
          QVERIFY(c1.id != 17);
      }
  }

  void cancellationStopsTheWorkers() {
    // 6,000 rows on 2 threads: 4 tiles of 1,536, two workers; a stop asked at 20% ends the
    // graph with Cancelled, not a result, and no worker takes a pair after it (10 pairs: the
    // stop comes at the third, 0.29).
    const auto data = gaussian(6000, 64, 7);
    const MatrixView<float> v{data.data(), 6000, 64};
    bool stopped = false;
    double last = 0;
    JobControl* self = nullptr;
    JobControl job(
        [&](double fraction, const std::string&) {
          last = fraction;
          if (fraction > 0.2 && !stopped) {
            stopped = true;
            self->requestStop();
          }
        },
        std::chrono::milliseconds(0));
    self = &job;
    Context context;
    context.backend = Backend::Cpu;
    context.threads = 2;
    QVERIFY_THROWS_EXCEPTION(Cancelled, knnGraph(v, 10, Metric::L2, context, job));
    QVERIFY(stopped);
    QVERIFY2(last < 0.6, qPrintable(QString("the pairs went on to %1 after the stop").arg(last)));
  }

  void workersMatchReference_data() {
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("threads");
    QTest::addColumn<bool>("ties");
    // 2,600 rows on 4 threads: tiles of 384, the last of 296, 3 workers; 1,100 on 2: 4 tiles of
    // 320 (the last 140), 2 workers; 300 on 2: one tile, one worker.
    QTest::newRow("l2 ties 4 threads") << Metric::L2 << 2600 << 24 << 10 << 4 << true;
    QTest::newRow("l2 2 threads") << Metric::L2 << 1100 << 37 << 7 << 2 << false;
    QTest::newRow("l2 grid ties 3 threads") << Metric::L2 << 2304 << 3 << 12 << 3 << true;
    QTest::newRow("ip 2 threads") << Metric::InnerProduct << 1100 << 17 << 10 << 2 << false;
    QTest::newRow("cos ties 3 threads") << Metric::Cosine << 1500 << 9 << 10 << 3 << true;
    QTest::newRow("l2 k=300 2 threads") << Metric::L2 << 1200 << 8 << 300 << 2 << false;
    QTest::newRow("l2 one tile") << Metric::L2 << 300 << 5 << 10 << 2 << false;
  }
  void workersMatchReference() {
    QFETCH(Metric, metric);
    QFETCH(int, n);
    QFETCH(int, d);
    QFETCH(int, k);
    QFETCH(int, threads);
    QFETCH(bool, ties);
    std::vector<float> data = gaussian(n, d, std::uint64_t(n) * 7 + std::uint64_t(d));
    if (ties && d == 3) { // integer grid: many equal distances
      for (int i = 0; i < n; ++i) {
        data[std::size_t(i) * 3] = float(i % 16);
        data[std::size_t(i) * 3 + 1] = float((i / 16) % 16);
        data[std::size_t(i) * 3 + 2] = float(i / 256);
      }
    } else if (ties) { // the last third repeats the first, across tiles
      for (int i = 0; i < n / 3; ++i)
        std::copy(data.begin() + i * d, data.begin() + (i + 1) * d, data.begin() + (n - 1 - i) * d);
    }
    const MatrixView<float> v{data.data(), n, d};
    Context context;
    context.backend = Backend::Cpu;
    context.threads = threads;
    const KnnResult got = knnGraph(v, k, metric, context);
    const std::string why =
        compareWithOracle(got, oracleKnn(v, v, k, metric, true), v, v, metric, true, {});
    QVERIFY2(why.empty(), why.c_str());
    QCOMPARE(got.fallbackRows, std::int64_t(0));
  }
};

QTEST_GUILESS_MAIN(TestExactPairs)
#include "tst_exact_pairs.moc"
