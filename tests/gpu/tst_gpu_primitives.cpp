// The shared device primitives (selection, ordered float bits, exact re-rank and sort, iota, the
// GEMM rounding bound) against CPU oracles written here from their definitions, on fresh random
// data with ties, duplicates and awkward sizes. Skips where no CUDA device answers.
#include "PrimitiveProbes.h"
#include "knn/ExactCommon.h"
#include "knn/GemmBound.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

using namespace nearscape;

namespace {

#define SKIP_WITHOUT_CUDA()                                                                        \
  do {                                                                                             \
    std::string why;                                                                               \
    if (!probes::deviceAvailable(&why))                                                            \
      QSKIP(qPrintable(QString("no CUDA device: ") + QString::fromStdString(why)));                \
  } while (false)

/// The exact distance by its definition, in long double (docs/design.md, "Metrics").
long double referenceDistance(const float* q, const float* b, int d, int metric) {
  long double s = 0, qq = 0, bb = 0;
  for (int j = 0; j < d; ++j) {
    const long double x = q[j], y = b[j];
    s += metric == int(Metric::L2) ? (x - y) * (x - y) : x * y;
    qq += x * x;
    bb += y * y;
  }
  if (metric == int(Metric::L2))
    return std::sqrt(s);
  if (metric == int(Metric::InnerProduct))
    return -s;
  return qq == 0 || bb == 0 ? 1.0L : 1.0L - s / std::sqrt(qq * bb);
}

} // namespace

class TestGpuPrimitives : public QObject {
  Q_OBJECT

private slots:
  void radixSelectFindsTheRankthKey_data() {
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("distinct"); // keys drawn from this many values: ties
    QTest::addColumn<int>("threads");
    QTest::newRow("1 key") << 1 << 1 << 256;
    QTest::newRow("7 keys, 64 threads") << 7 << 1000 << 64;
    QTest::newRow("1000 keys, many ties") << 1000 << 5 << 256;
    QTest::newRow("5000 keys, 1024 threads") << 5000 << 1 << 1024;
    QTest::newRow("8191 distinct keys") << 8191 << 1 << 256;
  }
  void radixSelectFindsTheRankthKey() {
    SKIP_WITHOUT_CUDA();
    QFETCH(int, count);
    QFETCH(int, distinct);
    QFETCH(int, threads);
    std::mt19937_64 rng(std::uint64_t(count) * 31 + std::uint64_t(distinct));
    std::vector<std::uint32_t> keys32(static_cast<std::size_t>(count));
    std::vector<std::uint64_t> keys64(keys32.size());
    for (std::size_t i = 0; i < keys32.size(); ++i) {
      const std::uint64_t r = rng();
      keys32[i] = distinct > 1 ? std::uint32_t(r % std::uint64_t(distinct)) * 0x01010101u
                               : std::uint32_t(r);
      keys64[i] = distinct > 1 ? (r % std::uint64_t(distinct)) << 40 | (r & 3) : r;
    }
    for (const int rank : {1, std::max(1, count / 3), std::max(1, count / 2), count}) {
      auto sorted32 = keys32;
      std::sort(sorted32.begin(), sorted32.end());
      auto sorted64 = keys64;
      std::sort(sorted64.begin(), sorted64.end());
      QCOMPARE(probes::selectKey32(keys32, rank, threads), sorted32[std::size_t(rank - 1)]);
      QCOMPARE(probes::selectKey64(keys64, rank, threads), sorted64[std::size_t(rank - 1)]);
    }
  }

  void orderedBitsOrderLikeTheFloats() {
    SKIP_WITHOUT_CUDA();
    const float inf = std::numeric_limits<float>::infinity();
    const float tiny = std::numeric_limits<float>::denorm_min();
    std::vector<float> values = {-inf, -3e38f, -1.5f, -1.0f,      -tiny, -0.0f, 0.0f,
                                 tiny, 1e-38f, 1.0f,  1.0000001f, 3e38f, inf};
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1e3f);
    for (int i = 0; i < 2000; ++i)
      values.push_back(normal(rng));
    const auto bits = probes::orderedBitsOf(values);
    for (std::size_t i = 0; i < values.size(); ++i)
      for (std::size_t j : {std::size_t(0), i / 2, values.size() - 1}) {
        const bool less =
            values[i] < values[j] || (values[i] == values[j] && std::signbit(values[i]) &&
                                      !std::signbit(values[j])); // −0 just below +0
        QCOMPARE(bits[i] < bits[j], less);
      }
    const auto back = probes::fromOrderedBitsOf(bits);
    QVERIFY(std::memcmp(back.data(), values.data(), sizeof(float) * values.size()) == 0);
  }

  void scoreAndSortMatchesAFloat64Reference_data() {
    QTest::addColumn<int>("metric");
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("count");
    QTest::addColumn<bool>("singleWarp");
    for (const int metric : {int(Metric::L2), int(Metric::InnerProduct), int(Metric::Cosine)})
      for (const bool warp : {false, true}) {
        const QByteArray name = QByteArray::number(metric) + (warp ? " warp" : " block");
        QTest::newRow(name + " d1 n1") << metric << 1 << 1 << warp;
        QTest::newRow(name + " d33 n37") << metric << 33 << 37 << warp;
        QTest::newRow(name + " d100 n256") << metric << 100 << 256 << warp;
        QTest::newRow(name + " d7 n300") << metric << 7 << 300 << warp;
      }
  }
  void scoreAndSortMatchesAFloat64Reference() {
    SKIP_WITHOUT_CUDA();
    QFETCH(int, metric);
    QFETCH(int, d);
    QFETCH(int, count);
    QFETCH(bool, singleWarp);
    const int n = 500;
    std::mt19937 rng(std::uint32_t(metric * 1000 + d * 10 + count));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> base(std::size_t(n) * d), query(static_cast<std::size_t>(d));
    for (float& v : base)
      v = normal(rng);
    for (float& v : query)
      v = normal(rng);
    std::fill(base.begin() + 3 * d, base.begin() + 4 * d, 0.0f); // a zero row (cosine: 1)
    std::vector<std::int32_t> candidates(static_cast<std::size_t>(count));
    std::uniform_int_distribution<int> pick(0, n - 1);
    for (auto& c : candidates)
      c = pick(rng);
    if (count > 5) {
      candidates[1] = -1; // an empty slot: +inf, after the padding
      candidates[4] = 3;
      candidates[2] = candidates[0]; // an id listed twice: two equal entries
    }
    std::vector<double> dist;
    std::vector<std::int32_t> ids;
    probes::scoreAndSortOf(query, base, d, metric, candidates, singleWarp, dist, ids);

    struct Entry {
      long double dist;
      std::uint32_t id;
    };
    std::vector<Entry> expected;
    for (const std::int32_t c : candidates)
      expected.push_back(
          {c < 0 ? std::numeric_limits<long double>::infinity()
                 : referenceDistance(query.data(), base.data() + std::size_t(c) * d, d, metric),
           std::uint32_t(c)});
    while (expected.size() < ids.size())
      expected.push_back({std::numeric_limits<long double>::infinity(), 0x7fffffffu});
    std::sort(expected.begin(), expected.end(), [](const Entry& a, const Entry& b) {
      return a.dist < b.dist || (a.dist == b.dist && a.id < b.id);
    });
    QCOMPARE(ids.size(), expected.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      QCOMPARE(std::uint32_t(ids[i]), expected[i].id);
      const long double e = expected[i].dist;
      if (std::isinf(e)) {
        QVERIFY(std::isinf(dist[i]));
      } else {
        QVERIFY2(std::abs(dist[i] - e) <= 1e-12L * std::max(1.0L, std::abs(e)),
                 qPrintable(QString("slot %1: %2 vs %3").arg(i).arg(dist[i]).arg(double(e))));
      }
    }
  }

  void directRowsOnDeviceMatchTheCpuScan_data() {
    QTest::addColumn<int>("metric");
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("selfSkip");
    for (const int metric : {int(Metric::L2), int(Metric::InnerProduct), int(Metric::Cosine)}) {
      const QByteArray name = QByteArray::number(metric);
      QTest::newRow(name + " d128 k10 search") << metric << 128 << 10 << false;
      QTest::newRow(name + " d33 k7 graph") << metric << 33 << 7 << true;
      QTest::newRow(name + " d5 k beyond the others") << metric << 5 << 1000 << true;
    }
  }
  void directRowsOnDeviceMatchTheCpuScan() {
    SKIP_WITHOUT_CUDA();
    QFETCH(int, metric);
    QFETCH(int, d);
    QFETCH(int, k);
    QFETCH(bool, selfSkip);
    // The graph's queries are its base; duplicated rows give exact ties (the smaller id first).
    const int n = 1000;
    std::mt19937 rng(std::uint32_t(metric * 100 + d + k));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> base(std::size_t(n) * d);
    for (float& v : base)
      v = normal(rng);
    for (int dup = 0; dup < 40; ++dup)
      std::copy_n(base.begin() + std::ptrdiff_t(dup) * d, d,
                  base.begin() + std::ptrdiff_t(500 + dup) * d);
    std::fill(base.begin() + 7 * d, base.begin() + 8 * d, 0.0f); // a zero row (cosine: 1)
    const std::vector<std::int64_t> rows = {0, 7, 3, 999, 500};
    std::vector<std::int32_t> ids;
    std::vector<float> dist;
    probes::directRowsOnDeviceOf(base, base, d, rows, metric, k, selfSkip, ids, dist);

    // The definition: every other row's distance (long double), ordered by (distance, id).
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::vector<std::pair<long double, std::int32_t>> all;
      for (int j = 0; j < n; ++j)
        if (!selfSkip || j != rows[r])
          all.push_back({referenceDistance(base.data() + rows[r] * d,
                                           base.data() + std::size_t(j) * d, d, metric),
                         j});
      std::sort(all.begin(), all.end());
      for (int c = 0; c < k; ++c)
        QCOMPARE(ids[r * k + std::size_t(c)],
                 c < int(all.size()) ? all[std::size_t(c)].second : -1);
    }
    // The CPU twin (knn::directRows: a row a thread here; tst_knn shares out a larger base).
    std::vector<std::int32_t> cpuIds(std::size_t(n) * k, -1);
    std::vector<float> cpuDist(std::size_t(n) * k, std::numeric_limits<float>::quiet_NaN());
    knn::directRows(
        MatrixView<float>{base.data(), n, d}, rows, MatrixView<float>{base.data(), n, d},
        Metric(metric), k, [&](std::int64_t i) { return selfSkip ? i : std::int64_t(-1); },
        cpuIds.data(), cpuDist.data(), 8);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (int c = 0; c < k; ++c) {
        const std::size_t at = r * k + std::size_t(c), cpuAt = rows[r] * k + std::size_t(c);
        QCOMPARE(ids[at], cpuIds[cpuAt]);
        if (std::isnan(cpuDist[cpuAt]))
          QVERIFY(std::isnan(dist[at]));
        else
          QVERIFY2(dist[at] == cpuDist[cpuAt], qPrintable(QString("row %1 slot %2: %3 vs %4")
                                                              .arg(rows[r])
                                                              .arg(c)
                                                              .arg(dist[at])
                                                              .arg(cpuDist[cpuAt])));
      }
  }

  void iotaCountsUp() {
    SKIP_WITHOUT_CUDA();
    for (const std::int64_t n : {std::int64_t(1), std::int64_t(257), std::int64_t(3 << 20) + 5}) {
      const auto out = probes::iotaOf(n);
      std::vector<std::int32_t> expected(static_cast<std::size_t>(n));
      std::iota(expected.begin(), expected.end(), 0);
      QVERIFY(out == expected);
    }
  }

  void gemmBoundIsTheHostsOnTheDevice() {
    SKIP_WITHOUT_CUDA();
    for (const int metric : {int(Metric::L2), int(Metric::InnerProduct), int(Metric::Cosine)})
      for (const double dotRel : {784.0 / (1 << 24), 1.0 / 1024})
        for (const double qn : {0.0, 1.0, 37.5}) {
          const knn::BoundTerms host = knn::gemmBoundTerms(Metric(metric), dotRel, qn, 12.25);
          const auto device = probes::gemmBoundOnDevice(metric, dotRel, qn, 12.25);
          // The same arithmetic; the device may fuse a multiply-add (one rounding less).
          QVERIFY(std::abs(device[0] - host.perBaseNorm) <= 1e-15 * std::abs(host.perBaseNorm));
          QVERIFY(std::abs(device[1] - host.constant) <= 1e-15 * std::abs(host.constant));
        }
  }
};

QTEST_MAIN(TestGpuPrimitives)
#include "tst_gpu_primitives.moc"
