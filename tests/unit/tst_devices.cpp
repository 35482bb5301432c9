// Work spread over several GPUs (gpu/MultiDevice.h): the parts' threads, progress, stops and
// failures on any machine; then, on a GPU, the split results against one GPU's and the float64
// oracle. A machine with one GPU runs the split as two workers on GPU 0 (devices {0, 0}): the
// same code, the same shares. GPU rows QSKIP without a device.
#include "DeviceSkip.h"
#include "Oracle.h"
#include "TestFiles.h"
#include "gpu/MultiDevice.h"
#include "knn/PairShares.h"
#include "knn/PairsExchange.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace nearscape;

namespace {

/// Two GPUs where the machine has them, else GPU 0 twice.
std::vector<int> twoDevices() {
  if (deviceCount() >= 2 && queryDevice(1).usable)
    return {0, 1};
  return {0, 0};
}

Context spreadContext() {
  Context c;
  c.backend = Backend::Cuda;
  c.devices = twoDevices();
  c.device = c.devices.front();
  return c;
}

Context oneContext() {
  Context c;
  c.backend = Backend::Cuda;
  return c;
}

/// Clustered rows of unit scale: realistic, and with many near ties.
std::vector<float> blobs(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  std::vector<float> x = test::randomFloats(std::size_t(n * d), seed);
  const std::vector<float> centres = test::randomFloats(std::size_t(64 * d), seed + 1);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j)
      x[std::size_t(i * d + j)] =
          0.2f * x[std::size_t(i * d + j)] + centres[std::size_t((i % 64) * d + j)];
  return x;
}

std::int64_t rowsDiffering(const KnnResult& a, const KnnResult& b) {
  std::int64_t differ = 0;
  for (std::int64_t r = 0; r < a.ids.rows(); ++r)
    for (std::int64_t c = 0; c < a.ids.cols(); ++c)
      if (a.ids.row(r)[c] != b.ids.row(r)[c] || a.distances.row(r)[c] != b.distances.row(r)[c]) {
        ++differ;
        break;
      }
  return differ;
}

std::vector<std::int64_t> everyNth(std::int64_t n, std::int64_t count) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < count; ++i)
    rows.push_back(i * n / count);
  return rows;
}

/// Where `found` (of `data` against itself) differs from the float64 oracle on `rows`; empty
/// where it does not.
std::string oracleDiff(const KnnResult& found, const MatrixView<float>& data, int k, Metric m,
                       bool graph, const std::vector<std::int64_t>& rows) {
  const test::OracleKnn oracle = test::oracleKnn(data, data, k, m, graph, rows);
  return test::compareWithOracle(found, oracle, data, data, m, graph, {}, rows);
}

} // namespace

class TestDevices : public QObject {
  Q_OBJECT

private slots:
  void partsRunAtOnceAndReportTheirMeanProgress() {
    std::vector<double> seen;
    std::mutex mutex;
    JobControl job(
        [&](double f, const std::string&) {
          const std::lock_guard lock(mutex);
          seen.push_back(f);
        },
        std::chrono::milliseconds(0));
    std::atomic<int> running{0}, most{0};
    gpu::runParts(3, job, [&](int part, JobControl& partJob) {
      const int now = ++running;
      most = std::max(most.load(), now);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      partJob.progress(0.5, "half");
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * (part + 1)));
      partJob.progress(1.0, "done");
      --running;
    });
    QCOMPARE(most.load(), 3); // all three at once
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back(), 1.0); // every part done: the mean is 1
    for (double f : seen)
      QVERIFY(f >= 0 && f <= 1);
    QVERIFY(seen.front() <= 0.5 + 1e-9); // one part's half is a sixth of the whole
  }

  void aFailingPartStopsTheOthersAndItsErrorIsReported() {
    std::atomic<int> cancelled{0};
    bool caught = false;
    try {
      gpu::runParts(3, noJobControl(), [&](int part, JobControl& partJob) {
        if (part == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          throw DeviceOutOfMemory("part 1 ran out");
        }
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < until) { // stops long before, when told
          try {
            partJob.check();
          } catch (const Cancelled&) {
            ++cancelled;
            throw;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      });
    } catch (const DeviceOutOfMemory& e) {
      caught = QByteArray(e.what()).contains("part 1 ran out"); // not the others' Cancelled
    }
    QVERIFY(caught);
    QCOMPARE(cancelled.load(), 2);
  }

  void theJobsStopEndsEveryPart() {
    JobControl job;
    std::atomic<int> stopped{0};
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      job.requestStop();
    });
    QVERIFY_THROWS_EXCEPTION(Cancelled, gpu::runParts(2, job, [&](int, JobControl& partJob) {
                               for (;;) {
                                 if (partJob.stopRequested()) {
                                   ++stopped;
                                   partJob.check();
                                 }
                                 std::this_thread::sleep_for(std::chrono::milliseconds(1));
                               }
                             }));
    stopper.join();
    QCOMPARE(stopped.load(), 2);
  }

  void deviceListsAreParsedStrictly() {
    for (const char* bad : {"", "x", "0,", ",0", "0,,1", "-1", "1.5", "0;1"})
      QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseDevices(bad));
    if (!queryDevice(0).usable) {
      // No GPU here: an ordinal is refused with the reason; "all" names none.
      try {
        parseDevices("0");
        QFAIL("GPU 0 accepted without a usable device");
      } catch (const InvalidArgument& e) {
        QVERIFY2(QByteArray(e.what()).contains("GPU 0 is not usable"), e.what());
      }
      QVERIFY(parseDevices("all").empty());
      Context c;
      c.devices = {0, 1};
      QVERIFY(gpu::spreadDevices(c).empty()); // the CPU does the work
      return;
    }
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseDevices("0,0"));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseDevices("4096"));
    QCOMPARE(parseDevices("0"), std::vector<int>{0});
    const std::vector<int> all = parseDevices("all");
    QVERIFY(!all.empty() && all.front() == 0);
    Context cpu;
    cpu.backend = Backend::Cpu;
    cpu.devices = {0, 0};
    QVERIFY(gpu::spreadDevices(cpu).empty());
  }

  void warmUpLeavesOutItsFloat16GemmWhenTold() {
    // Only the shapes the fused kernel takes may leave it out (others' searches call it).
    QVERIFY(gpuSearchIsFused(128, 10) && gpuSearchIsFused(32, 256));
    QVERIFY(!gpuSearchIsFused(784, 10) && !gpuSearchIsFused(384, 10) &&
            !gpuSearchIsFused(128, 257));
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    // The warm-up's steps, seen in its debug laps.
    std::mutex mutex;
    std::vector<std::string> lines;
    Context c = oneContext();
    c.logLevel = LogLevel::Debug;
    c.logSink = [&](LogLevel, std::string_view line) {
      const std::lock_guard lock(mutex);
      lines.emplace_back(line);
    };
    auto saw = [&](const char* step) {
      const std::lock_guard lock(mutex);
      return std::any_of(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(step) != std::string::npos; });
    };
    { DeviceWarmUp whole(c); }
    QVERIFY(saw("first SGEMM") && saw("first float16 GEMM"));
    lines.clear();
    {
      DeviceWarmUp searchOnly(c);
      searchOnly.leaveOutFloat16Gemm(); // long before the thread reaches that step
    }
    QVERIFY(saw("first SGEMM"));
    QVERIFY(!saw("first float16 GEMM"));
  }

  void exactSplitEqualsOneGpu_data() {
    QTest::addColumn<int>("metric");
    QTest::addColumn<bool>("graph");
    for (const Metric m : {Metric::L2, Metric::Cosine, Metric::InnerProduct})
      for (const bool graph : {true, false})
        QTest::addRow("%s %s", std::string(metricName(m)).c_str(), graph ? "graph" : "search")
            << int(m) << graph;
  }

  void exactSplitEqualsOneGpu() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    QFETCH(int, metric);
    QFETCH(bool, graph);
    const Metric m = Metric(metric);
    constexpr std::int64_t n = 12000, d = 24;
    std::vector<float> x = blobs(n, d, 11);
    for (std::int64_t j = 0; j < d; ++j) // exact duplicates: ties broken by id across shares
      x[std::size_t(7000 * d + j)] = x[std::size_t(3 * d + j)];
    const MatrixView<float> data{x.data(), n, d};
    const int k = 10;
    const KnnResult one =
        graph ? knnGraph(data, k, m, oneContext()) : knnSearch(data, data, k, m, oneContext());
    const KnnResult spread = graph ? knnGraph(data, k, m, spreadContext())
                                   : knnSearch(data, data, k, m, spreadContext());
    QVERIFY2(spread.report.detail.find("split over 2 GPUs") != std::string::npos,
             spread.report.describe().c_str());
    QCOMPARE(rowsDiffering(one, spread), std::int64_t(0));
    const std::vector<std::int64_t> rows = everyNth(n, 400);
    std::vector<std::int64_t> checked = rows;
    checked.push_back(3);
    checked.push_back(7000);
    const std::string diff = oracleDiff(spread, data, k, m, graph, checked);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void pairsExchangeMeetsInRoundsAndLetsLeaversGo() {
    // Three shares offer a value a round; the third leaves after two rounds, and the others go on
    // meeting each other alone. Each sees exactly the others still in, with this round's values.
    constexpr int parts = 3, rounds = 6;
    knn::PairsExchange exchange(parts);
    const JobControl job;
    std::vector<std::vector<std::vector<int>>> seen(parts); // per part, per round: values seen
    int values[parts][rounds];
    std::vector<std::jthread> threads;
    for (int p = 0; p < parts; ++p)
      threads.emplace_back([&, p] {
        const int last = p == 2 ? 2 : rounds;
        for (int r = 0; r < last; ++r) {
          values[p][r] = 100 * r + p;
          std::vector<int> got;
          for (const auto& offer : exchange.meet(p, {p, &values[p][r]}, job)) {
            got.push_back(*static_cast<const int*>(offer.data));
            if (offer.device != got.back() % 100 || offer.part != got.back() % 100)
              got.back() = -1; // the offer's device is its part here, and meet names the part
          }
          std::sort(got.begin(), got.end());
          seen[std::size_t(p)].push_back(got);
          exchange.doneReading(p);
        }
        exchange.leave(p);
      });
    threads.clear();
    for (int p = 0; p < 2; ++p) {
      QCOMPARE(int(seen[std::size_t(p)].size()), rounds);
      for (int r = 0; r < rounds; ++r) {
        std::vector<int> want;
        for (int q = 0; q < parts; ++q)
          if (q != p && (q != 2 || r < 2))
            want.push_back(100 * r + q);
        QCOMPARE(seen[std::size_t(p)][std::size_t(r)], want);
      }
    }
    QCOMPARE(int(seen[2].size()), 2);
    // A share whose partner never comes stops with its job, out of the exchange.
    knn::PairsExchange alone(2);
    JobControl stopped;
    std::jthread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stopped.requestStop();
    });
    int value = 1;
    QVERIFY_THROWS_EXCEPTION(Cancelled, alone.meet(0, {0, &value}, stopped));
    // The partner then meets nobody, and does not wait.
    QVERIFY(alone.meet(1, {1, &value}, JobControl()).empty());
    alone.doneReading(1);
    // The verdict: shares wait for it before handing in, and stop with their job.
    knn::PairsExchange gated(2, true);
    std::atomic<int> went{0};
    int before = -1;
    {
      std::jthread waiter([&] { went = gated.awaitGo(JobControl()) ? 1 : 2; });
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      before = went.load();
      gated.open(false); // before any check: a failed one must not leave the waiter waiting
    }
    QCOMPARE(before, 0);
    QCOMPARE(went.load(), 2);
    QVERIFY(gated.gaveUp());
    QVERIFY(!gated.awaitGo(JobControl()));
    QVERIFY(gated.probeBeside()); // as made: the shares' split must not change with the verdict
    QVERIFY(!knn::PairsExchange(2, true).gaveUp()); // no verdict yet: go on
    knn::PairsExchange deserted(2);
    deserted.leave(1, false); // a share without its result: the others stop too
    QVERIFY(deserted.gaveUp());
    QVERIFY(!deserted.probeBeside());
    QVERIFY(knn::PairsExchange(2).awaitGo(JobControl()));
    knn::PairsExchange shut(2, true);
    JobControl stop;
    stop.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled, shut.awaitGo(stop));
  }

  void pairSharesMergeAsTheUnionsNearest() {
    // Each row's candidates, each given to one share or more, a share's row its k nearest by
    // (distance, id): the merge must give the union's k nearest. Distances from a few values
    // (ties broken by id) and pairs that differ in float64 but round to one float (the merge
    // must not compare the floats).
    constexpr std::int64_t n = 300;
    constexpr int k = 8, parts = 3;
    std::mt19937_64 rng(17);
    const double values[] = {0.5, 1.0, 1.0 + 1e-12, 1.0 + 2e-12, 2.0, 3.0};
    std::vector<std::vector<std::int32_t>> ids(parts, std::vector<std::int32_t>(n * k, -1));
    std::vector<std::vector<double>> dists(
        parts, std::vector<double>(n * k, std::numeric_limits<double>::infinity()));
    std::vector<std::vector<std::pair<double, std::int32_t>>> expected(n);
    for (std::int64_t r = 0; r < n; ++r) {
      std::vector<std::vector<std::pair<double, std::int32_t>>> lists(parts);
      std::map<std::int32_t, double> all;
      const int count = int(rng() % 24); // some rows fewer than k over all shares
      for (int c = 0; c < count; ++c) {
        const auto id = std::int32_t(rng() % n);
        if (all.count(id))
          continue;
        const double d = values[rng() % std::size(values)];
        all[id] = d;
        const unsigned mask = 1 + unsigned(rng() % ((1u << parts) - 1)); // one share or more
        for (int p = 0; p < parts; ++p)
          if (mask & (1u << p))
            lists[std::size_t(p)].push_back({d, id});
      }
      for (int p = 0; p < parts; ++p) {
        auto& l = lists[std::size_t(p)];
        std::sort(l.begin(), l.end());
        for (int c = 0; c < k && c < int(l.size()); ++c) {
          ids[std::size_t(p)][std::size_t(r * k + c)] = l[std::size_t(c)].second;
          dists[std::size_t(p)][std::size_t(r * k + c)] = l[std::size_t(c)].first;
        }
      }
      for (const auto& [id, d] : all)
        expected[std::size_t(r)].push_back({d, id});
      std::sort(expected[std::size_t(r)].begin(), expected[std::size_t(r)].end());
    }
    // Row 77: searched whole by share 2 (its row taken as it is), unbounded in share 1.
    for (int c = 0; c < k; ++c) {
      ids[2][std::size_t(77 * k + c)] = std::int32_t(200 + c);
      dists[2][std::size_t(77 * k + c)] = 0.25 * c;
    }
    std::vector<gpu::PairsShare> shares(parts);
    for (int p = 0; p < parts; ++p) {
      shares[std::size_t(p)].ids = Matrix<std::int32_t>(ids[std::size_t(p)], n, k);
      shares[std::size_t(p)].distances = Matrix<double>(dists[std::size_t(p)], n, k);
      shares[std::size_t(p)].candidates = 10 * (p + 1);
    }
    shares[1].overflow = {5, 77};
    shares[2].complete = {77};
    const knn::MergedShares merged = knn::mergePairShares(shares, 2);
    QCOMPARE(merged.candidates, std::int64_t(60));
    for (int c = 0; c < k; ++c) {
      QCOMPARE(merged.ids[std::size_t(77 * k + c)], std::int32_t(200 + c));
      QCOMPARE(merged.distances[std::size_t(77 * k + c)], float(0.25 * c));
    }
    std::vector<std::int64_t> overflow = {5};
    for (std::int64_t r = 0; r < n; ++r) {
      if (r == 5 || r == 77)
        continue;
      const auto& want = expected[std::size_t(r)];
      if (want.size() < std::size_t(k)) {
        overflow.push_back(r);
        continue;
      }
      for (int c = 0; c < k; ++c) {
        QCOMPARE(merged.ids[std::size_t(r * k + c)], want[std::size_t(c)].second);
        QCOMPARE(merged.distances[std::size_t(r * k + c)], float(want[std::size_t(c)].first));
      }
    }
    std::sort(overflow.begin(), overflow.end());
    overflow.erase(std::unique(overflow.begin(), overflow.end()), overflow.end());
    QCOMPARE(merged.overflow, overflow);
    shares[2].ids = Matrix<std::int32_t>(std::vector<std::int32_t>(std::size_t(n * 2)), n, 2);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, knn::mergePairShares(shares, 2));
  }

  void pairsSplitEqualsOneGpu_data() {
    QTest::addColumn<int>("metric");
    for (const Metric m : {Metric::L2, Metric::Cosine, Metric::InnerProduct})
      QTest::addRow("%s", std::string(metricName(m)).c_str()) << int(m);
  }

  void pairsSplitEqualsOneGpu() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    QFETCH(int, metric);
    const Metric m = Metric(metric);
    // Enough rows for the paired sweeps' groups (two of 8,192 at least) in a dimension the fused
    // kernel takes; near copies of one row past the probe's rows, more than a row's list holds,
    // so that the shares leave rows to be searched again.
    constexpr std::int64_t n = 40000, d = 128;
    std::vector<float> x = blobs(n, d, 23);
    const std::vector<float> noise = test::randomFloats(std::size_t(3000 * d), 29);
    for (std::int64_t i = 0; i < 3000; ++i)
      for (std::int64_t j = 0; j < d; ++j)
        x[std::size_t((36000 + i) * d + j)] =
            x[std::size_t(36000 * d + j)] + 1e-4f * noise[std::size_t(i * d + j)];
    for (std::int64_t j = 0; j < d; ++j) // an exact duplicate: a tie broken by id across shares
      x[std::size_t(20000 * d + j)] = x[std::size_t(9 * d + j)];
    const MatrixView<float> data{x.data(), n, d};
    const int k = 10;
    const KnnResult one = knnGraph(data, k, m, oneContext());
    const KnnResult spread = knnGraph(data, k, m, spreadContext());
    QVERIFY2(spread.report.detail.find("pairs split over 2 GPUs") != std::string::npos,
             spread.report.describe().c_str());
    qInfo("one GPU: %s; split: %s", one.report.describe().c_str(),
          spread.report.describe().c_str());
    QCOMPARE(rowsDiffering(one, spread), std::int64_t(0));
    std::vector<std::int64_t> checked = everyNth(n, 300);
    for (std::int64_t row :
         {std::int64_t(9), std::int64_t(20000), std::int64_t(36000), std::int64_t(37500), n - 1})
      checked.push_back(row);
    const std::string diff = oracleDiff(spread, data, k, m, true, checked);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void stepBesideTheSharesTakesTheGraphWherePays() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    // Well separated blobs: STEP's clusters prune nearly all of the base, so its probe (beside
    // the shares) wins, and the shares, already sweeping, give up.
    constexpr std::int64_t n = 60000, d = 48;
    std::vector<float> x = test::randomFloats(std::size_t(n * d), 41);
    const std::vector<float> centres = test::randomFloats(std::size_t(64 * d), 43);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < d; ++j)
        x[std::size_t(i * d + j)] += 6.0f * centres[std::size_t((i % 64) * d + j)];
    const MatrixView<float> data{x.data(), n, d};
    const KnnResult one = knnGraph(data, 10, Metric::L2, oneContext());
    const KnnResult spread = knnGraph(data, 10, Metric::L2, spreadContext());
    QVERIFY2(spread.report.detail.find("STEP's clusters on one of 2 GPUs") != std::string::npos,
             spread.report.describe().c_str());
    qInfo("one GPU: %s, %.3f s; two: %s, %.3f s", one.report.describe().c_str(), one.seconds,
          spread.report.describe().c_str(), spread.seconds);
    QCOMPARE(rowsDiffering(one, spread), std::int64_t(0));
    const std::string diff = oracleDiff(spread, data, 10, Metric::L2, true, everyNth(n, 300));
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void pairedSweepsTakeShorterListsUnderABudget() {
    // Every row's list is resident in the paired sweeps: under a budget that cannot hold them at
    // their full length they are shorter (rows past them are redone), and the graph is the same.
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    constexpr std::int64_t n = 40000, d = 128;
    const std::vector<float> x = blobs(n, d, 31);
    const MatrixView<float> data{x.data(), n, d};
    const int k = 10;
    const KnnResult whole = knnGraph(data, k, Metric::L2, oneContext());
    Context budget = oneContext();
    budget.memoryBudget = 1300ull << 20; // about 1.25 GB: lists of 2,048 need 1.7
    const KnnResult shorter = knnGraph(data, k, Metric::L2, budget);
    qInfo("whole: %s; under 1.3 GB: %s", whole.report.describe().c_str(),
          shorter.report.describe().c_str());
    QVERIFY2(shorter.report.precision.find("each pair once") != std::string::npos,
             shorter.report.describe().c_str());
    QCOMPARE(rowsDiffering(whole, shorter), std::int64_t(0));
    const std::string diff = oracleDiff(shorter, data, k, Metric::L2, true, everyNth(n, 300));
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void nnDescentSpreadKeepsRecall() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    constexpr std::int64_t n = 120000, d = 32;
    const std::vector<float> x = blobs(n, d, 5);
    const MatrixView<float> data{x.data(), n, d};
    const int k = 10;
    const std::vector<std::int64_t> rows = everyNth(n, 1000);
    std::vector<float> sampled; // the checked rows' vectors: the oracle's queries
    for (std::int64_t row : rows)
      sampled.insert(sampled.end(), data.row(row), data.row(row) + d);
    const MatrixView<float> queries{sampled.data(), std::int64_t(rows.size()), d};
    const test::OracleKnn oracle = test::oracleKnn(data, data, k, Metric::L2, true, rows);
    auto recall = [&](const KnnResult& r) {
      std::vector<std::int32_t> found;
      for (std::int64_t row : rows)
        found.insert(found.end(), r.ids.row(row), r.ids.row(row) + k);
      return test::oracleRecall({found.data(), std::int64_t(rows.size()), k}, oracle, queries, data,
                                Metric::L2);
    };
    const KnnResult one = nnDescentGraph(data, k, Metric::L2, oneContext());
    // Data one GPU holds is built there whole: halves and their merge would take longer.
    const KnnResult whole = nnDescentGraph(data, k, Metric::L2, spreadContext());
    QCOMPARE(whole.report.shards, 0);
    const double r1 = recall(one), rw = recall(whole);
    qInfo("recall@10: one GPU %.4f, two named %.4f", r1, rw);
    QVERIFY2(r1 >= 0.95 && rw >= r1 - 0.01, qPrintable(QString("%1 vs %2").arg(rw).arg(r1)));
    // Under a memory budget of three shards: rounded up to four, two a GPU; two rounds of
    // builds, three of disjoint merges.
    Context budget = spreadContext();
    budget.memoryBudget = nnDescentBytesPerItem(d, k) * std::uint64_t(n) * 2 / 3;
    const KnnResult sharded = nnDescentGraph(data, k, Metric::L2, budget);
    QCOMPARE(sharded.report.shards, 4);
    QVERIFY2(sharded.report.detail.find("2 GPUs at once") != std::string::npos,
             sharded.report.describe().c_str());
    Context budgetOne = budget;
    budgetOne.devices.clear();
    const KnnResult shardedOne = nnDescentGraph(data, k, Metric::L2, budgetOne);
    QCOMPARE(shardedOne.report.shards, 3);
    const double r4 = recall(sharded), r3 = recall(shardedOne);
    qInfo("recall@10: four shards on two GPUs %.4f, three on one %.4f", r4, r3);
    QVERIFY2(r4 >= r3 - 0.01, qPrintable(QString("%1 vs %2").arg(r4).arg(r3)));
    for (std::int64_t r = 0; r < n; ++r) // every row a full list of distinct others
      for (int c = 0; c < k; ++c) {
        const std::int32_t id = sharded.ids.row(r)[c];
        QVERIFY(id >= 0 && id < n && id != r);
        for (int e = 0; e < c; ++e)
          QVERIFY(sharded.ids.row(r)[e] != id);
      }
  }

  void indexReplicasAnswerAsTheFirstCopy_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("ivf") << "ivf";
    QTest::newRow("graph") << "graph";
  }

  void indexReplicasAnswerAsTheFirstCopy() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    QFETCH(QString, kind);
    constexpr std::int64_t n = 30000, d = 32;
    const std::vector<float> x = blobs(n, d, 9);
    const MatrixView<float> data{x.data(), n, d};
    const auto index = buildIndex(data, Metric::L2,
                                  kind == "ivf" ? IndexBuildParams{IvfFlatParams{}}
                                                : IndexBuildParams{GraphIndexParams{}},
                                  spreadContext());
    QCOMPARE(index->backend(), Backend::Cuda);
    const MatrixView<float> queries{x.data(), 6000, d}; // split: 3,000 a replica
    const KnnResult together = index->search(queries, 10, {});
    // The same queries a thousand at a time: too few to split, the first copy answers them.
    for (std::int64_t r0 = 0; r0 < queries.rows; r0 += 1000) {
      const KnnResult part = index->search({x.data() + r0 * d, 1000, d}, 10, {});
      for (std::int64_t r = 0; r < 1000; ++r)
        for (int c = 0; c < 10; ++c) {
          QCOMPARE(together.ids.row(r0 + r)[c], part.ids.row(r)[c]);
          QCOMPARE(together.distances.row(r0 + r)[c], part.distances.row(r)[c]);
        }
    }
  }
};

QTEST_GUILESS_MAIN(TestDevices)
#include "tst_devices.moc"
