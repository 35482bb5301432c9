// Near-duplicates: every pair within a threshold against a float64 all-pairs reference written
// here (its own distance code, not the engine's), the nearest other item, the quantile, the
// groups and their files; the CUDA twin (QSKIP without a device) must return the CPU's pairs.
#include "DeviceSkip.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cmath>
#include <numeric>
#include <random>
#include <set>

using namespace nearscape;

Q_DECLARE_METATYPE(nearscape::Metric)
Q_DECLARE_METATYPE(nearscape::Backend)

namespace {

/// Clustered data with planted exact and near copies, and (for cosine) zero and scaled rows.
std::vector<float> plantedData(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < d; ++c)
      x[std::size_t(i * d + c)] = normal(rng) + (c == i % 7 ? 6.0f : 0.0f);
  auto row = [&](std::int64_t i) { return x.data() + i * d; };
  for (std::int64_t i = 0; i + 40 < n; i += 97) {
    std::copy(row(i), row(i) + d, row(i + 40)); // an exact copy far away in the file
    for (std::int64_t c = 0; c < d; ++c)        // and a near copy
      row(i + 13)[c] = row(i)[c] + 1e-3f * normal(rng);
  }
  std::fill(row(5), row(5) + d, 0.0f); // zero rows (cosine: 1 − cos = 1 with everything)
  std::fill(row(6), row(6) + d, 0.0f);
  for (std::int64_t c = 0; c < d; ++c) // a scaled copy: cosine's duplicate, not L2's
    row(9)[c] = 3.0f * row(8)[c];
  return x;
}

/// The metric's distance in float64, written independently of the engine.
double referenceDistance(const float* a, const float* b, std::int64_t d, Metric metric) {
  long double dot = 0, aa = 0, bb = 0, diff = 0;
  for (std::int64_t c = 0; c < d; ++c) {
    dot += (long double)a[c] * b[c];
    aa += (long double)a[c] * a[c];
    bb += (long double)b[c] * b[c];
    diff += ((long double)a[c] - b[c]) * ((long double)a[c] - b[c]);
  }
  switch (metric) {
  case Metric::L2:
    return double(std::sqrt(diff));
  case Metric::InnerProduct:
    return double(-dot);
  case Metric::Cosine:
    return aa == 0 || bb == 0 ? 1.0 : double(1 - dot / std::sqrt(aa * bb));
  }
  return 0;
}

std::vector<std::vector<double>> allDistances(const std::vector<float>& x, std::int64_t n,
                                              std::int64_t d, Metric metric) {
  std::vector<std::vector<double>> D(static_cast<std::size_t>(n),
                                     std::vector<double>(static_cast<std::size_t>(n)));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      D[i][j] = referenceDistance(x.data() + i * d, x.data() + j * d, d, metric);
  return D;
}

Context on(Backend backend) {
  Context c;
  c.backend = backend;
  return c;
}

/// Pairs within `t` by the reference, except those within 1e-9 relative of `t` (where float64
/// summation orders may disagree): returned as `fuzzy` instead.
std::set<std::pair<int, int>> referencePairs(const std::vector<std::vector<double>>& D, double t,
                                             std::set<std::pair<int, int>>& fuzzy) {
  std::set<std::pair<int, int>> pairs;
  for (std::size_t i = 0; i < D.size(); ++i)
    for (std::size_t j = i + 1; j < D.size(); ++j) {
      if (std::abs(D[i][j] - t) <= 1e-9 * std::max(1.0, std::abs(t)))
        fuzzy.insert({int(i), int(j)});
      else if (D[i][j] <= t)
        pairs.insert({int(i), int(j)});
    }
  return pairs;
}

QString samePairs(const NearPairs& got, const std::vector<std::vector<double>>& D, double t) {
  std::set<std::pair<int, int>> fuzzy;
  std::set<std::pair<int, int>> want = referencePairs(D, t, fuzzy);
  for (const NearPair& p : got.pairs) {
    if (p.a >= p.b)
      return QString("pair %1–%2 is not ordered a < b").arg(p.a).arg(p.b);
    if (std::abs(p.distance - D[p.a][p.b]) > 1e-9 * std::max(1.0, std::abs(D[p.a][p.b])))
      return QString("pair %1–%2: distance %3, float64 says %4")
          .arg(p.a)
          .arg(p.b)
          .arg(p.distance)
          .arg(D[p.a][p.b]);
    if (!want.erase({p.a, p.b}) && !fuzzy.count({p.a, p.b}))
      return QString("pair %1–%2 at %3 lies beyond %4").arg(p.a).arg(p.b).arg(D[p.a][p.b]).arg(t);
  }
  if (!want.empty())
    return QString("missed %1 pairs, the first %2–%3 at %4")
        .arg(want.size())
        .arg(want.begin()->first)
        .arg(want.begin()->second)
        .arg(D[want.begin()->first][want.begin()->second]);
  return {};
}

} // namespace

class TestDuplicates : public QObject {
  Q_OBJECT

private slots:
  void everyPairWithinTheThreshold_data() {
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<Backend>("backend");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("d");
    for (const Backend b : {Backend::Cpu, Backend::Cuda})
      for (const Metric m : {Metric::L2, Metric::Cosine, Metric::InnerProduct}) {
        const QString name = QString("%1 %2").arg(b == Backend::Cpu ? "cpu" : "cuda",
                                                  QString::fromUtf8(metricName(m).data()));
        QTest::newRow(qPrintable(name + " 1400x24")) << m << b << 1400 << 24;
        QTest::newRow(qPrintable(name + " 700x3")) << m << b << 700 << 3;
      }
  }

  void everyPairWithinTheThreshold() {
    QFETCH(Metric, metric);
    QFETCH(Backend, backend);
    QFETCH(int, n);
    QFETCH(int, d);
    SKIP_WITHOUT_DEVICE(backend);
    const std::vector<float> x = plantedData(n, d, std::uint64_t(n + d));
    const MatrixView<float> data{x.data(), n, d};
    const auto D = allDistances(x, n, d, metric);
    std::vector<double> nearest(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      nearest[i] = std::numeric_limits<double>::infinity();
      for (int j = 0; j < n; ++j)
        if (j != i)
          nearest[i] = std::min(nearest[i], D[i][j]);
    }
    std::vector<double> sorted = nearest;
    std::sort(sorted.begin(), sorted.end());
    // Thresholds: none, the planted copies only, a few percent of the items, many pairs.
    for (const double share : {0.0, 0.02, 0.3, 0.9}) {
      const double t = sorted[std::size_t(share * (n - 1))];
      const NearPairs got = pairsWithin(data, t, metric, on(backend));
      const QString why = samePairs(got, D, t);
      QVERIFY2(why.isEmpty(), qPrintable(QString("threshold %1: ").arg(t) + why));
      QCOMPARE(got.threshold, t);
      QCOMPARE(got.backend, backend); // asked for by name: no fallback
      QVERIFY(got.tilePairs <= got.tilePairsAll);
      // Other tiles and boxes change the work, never the pairs.
      const NearPairs other =
          pairsWithin(data, t, metric, on(backend), noJobControl(), {200, 3, 0});
      QVERIFY2(samePairs(other, D, t).isEmpty(), qPrintable(samePairs(other, D, t)));
    }
    // The planted exact copies are found at threshold 0 under every metric but inner product.
    if (metric != Metric::InnerProduct) {
      const NearPairs zero = pairsWithin(data, 0.0, metric, on(backend));
      const std::set<std::pair<int, int>> found = [&] {
        std::set<std::pair<int, int>> s;
        for (const NearPair& p : zero.pairs)
          s.insert({p.a, p.b});
        return s;
      }();
      QVERIFY(found.count({0, 40}));
      QVERIFY(found.count({97, 137}));
    }
  }

  void boxesPruneClusteredData() {
    // Eight well separated clusters of one tile each: at a small threshold most tile pairs cannot
    // hold a pair, and the result still equals the reference.
    constexpr int n = 4096, d = 8;
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(std::size_t(n) * d);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c)
        x[std::size_t(i * d + c)] = normal(rng) + 40.0f * float(i / 512 == c); // 8 clusters
    const MatrixView<float> data{x.data(), n, d};
    const NearPairs got = pairsWithin(data, 0.5, Metric::L2, on(Backend::Cpu));
    QVERIFY2(got.tilePairs * 3 < got.tilePairsAll,
             qPrintable(
                 QString("%1 of %2 tile pairs computed").arg(got.tilePairs).arg(got.tilePairsAll)));
    const QString why = samePairs(got, allDistances(x, n, d, Metric::L2), 0.5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
  }

  void aLargePlanSplitsItsTopInParallel() {
    // 300,000 points in the plane (the plan's top node split with all threads, beyond 2^18
    // places), 40 of them planted as near-copies: every pair within the threshold, against a
    // sweep along x in long double written here.
    constexpr int n = 300000, d = 2;
    constexpr double t = 0.02;
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> uniform(0.0f, 1000.0f);
    std::vector<float> x(std::size_t(n) * d);
    for (float& v : x)
      v = uniform(rng);
    for (int p = 0; p < 40; ++p) { // item 1000 + p near item p
      x[std::size_t((1000 + p) * d)] = x[std::size_t(p * d)] + 0.005f;
      x[std::size_t((1000 + p) * d + 1)] = x[std::size_t(p * d + 1)];
    }
    std::vector<std::int32_t> byX(n);
    std::iota(byX.begin(), byX.end(), 0);
    std::sort(byX.begin(), byX.end(), [&](std::int32_t a, std::int32_t b) {
      return x[std::size_t(a) * d] < x[std::size_t(b) * d];
    });
    std::set<std::pair<std::int32_t, std::int32_t>> expected;
    for (int r = 0; r < n; ++r)
      for (int q = r + 1; q < n; ++q) {
        const std::int32_t a = byX[std::size_t(r)], b = byX[std::size_t(q)];
        const long double dx = (long double)x[std::size_t(b) * d] - x[std::size_t(a) * d];
        if (dx > t)
          break;
        const long double dy = (long double)x[std::size_t(b) * d + 1] - x[std::size_t(a) * d + 1];
        if (std::sqrt(dx * dx + dy * dy) <= t)
          expected.insert({std::min(a, b), std::max(a, b)});
      }
    QVERIFY(expected.size() >= 40);
    const NearPairs got = pairsWithin({x.data(), n, d}, t, Metric::L2, on(Backend::Cpu));
    std::set<std::pair<std::int32_t, std::int32_t>> found;
    for (const NearPair& p : got.pairs)
      found.insert({p.a, p.b});
    QCOMPARE(found, expected);
  }

  void quantileThresholdsAreExact_data() {
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<Backend>("backend");
    for (const Backend b : {Backend::Cpu, Backend::Cuda})
      for (const Metric m : {Metric::L2, Metric::Cosine, Metric::InnerProduct})
        QTest::newRow(qPrintable(QString("%1 %2").arg(b == Backend::Cpu ? "cpu" : "cuda",
                                                      QString::fromUtf8(metricName(m).data()))))
            << m << b;
  }

  void quantileThresholdsAreExact() {
    // The threshold equals the quantile (linear, as NumPy) of every item's float64 nearest-other
    // distance, the nearest distances within reach are exact, and the pairs are the reference's.
    QFETCH(Metric, metric);
    QFETCH(Backend, backend);
    SKIP_WITHOUT_DEVICE(backend);
    constexpr int n = 1300, d = 16;
    const std::vector<float> x = plantedData(n, d, 77);
    const auto D = allDistances(x, n, d, metric);
    std::vector<double> nearest(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      nearest[i] = std::numeric_limits<double>::infinity();
      for (int j = 0; j < n; ++j)
        if (j != i)
          nearest[i] = std::min(nearest[i], D[i][j]);
    }
    std::vector<double> sorted = nearest;
    std::sort(sorted.begin(), sorted.end());
    for (const double q : {0.0, 0.01, 0.1, 0.37, 0.5, 1.0}) {
      const double pos = q * (n - 1), below = sorted[std::size_t(std::floor(pos))],
                   above = sorted[std::min<std::size_t>(n - 1, std::size_t(std::floor(pos)) + 1)];
      const double want = below + (pos - std::floor(pos)) * (above - below);
      const QuantilePairs got = pairsWithinQuantile({x.data(), n, d}, q, metric, on(backend));
      const double tol = 1e-9 * std::max(1.0, std::abs(want));
      QVERIFY2(std::abs(got.pairs.threshold - want) <= tol,
               qPrintable(QString("q %1: threshold %2, float64 says %3")
                              .arg(q)
                              .arg(got.pairs.threshold, 0, 'g', 17)
                              .arg(want, 0, 'g', 17)));
      QVERIFY(got.reach >= got.pairs.threshold);
      for (int i = 0; i < n; ++i) {
        if (nearest[i] < got.reach - tol)
          QVERIFY2(std::abs(got.nearest[i] - nearest[i]) <= tol,
                   qPrintable(QString("q %1, item %2: nearest %3, float64 says %4")
                                  .arg(q)
                                  .arg(i)
                                  .arg(got.nearest[i])
                                  .arg(nearest[i])));
        else if (nearest[i] > got.reach + tol)
          QVERIFY(std::isinf(got.nearest[i]));
      }
      const QString why = samePairs(got.pairs, D, got.reach);
      QVERIFY2(why.isEmpty(), qPrintable(QString("q %1: ").arg(q) + why));
    }
  }

  void quantileInterpolatesAsNumPy() {
    // numpy.quantile([4, 1, 3, 2], q) for q = 0, 0.25, 0.5, 0.9, 1: 1, 1.75, 2.5, 3.7, 4.
    const std::vector<double> v{4, 1, 3, 2};
    QCOMPARE(quantile(v, 0.0), 1.0);
    QCOMPARE(quantile(v, 0.25), 1.75);
    QCOMPARE(quantile(v, 0.5), 2.5);
    QVERIFY(std::abs(quantile(v, 0.9) - 3.7) < 1e-12);
    QCOMPARE(quantile(v, 1.0), 4.0);
    QCOMPARE(quantile({7.5}, 0.3), 7.5);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, quantile({}, 0.5));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, quantile(v, 1.5));
  }

  void cosineQuantileOfParallelRows() {
    // Rows and their multiples: float64 can put a pair at 1 − cos slightly below 0, so the
    // quantile's reach may be negative; the search must still find those pairs.
    std::vector<float> x = plantedData(400, 7, 9);
    for (int i = 0; i < 400; i += 2)
      for (int c = 0; c < 7; ++c)
        x[std::size_t((i + 1) * 7 + c)] = 3.0f * x[std::size_t(i * 7 + c)] + 0.0f;
    const QuantilePairs got =
        pairsWithinQuantile({x.data(), 400, 7}, 0.0, Metric::Cosine, on(Backend::Cpu));
    QVERIFY(std::abs(got.pairs.threshold) < 1e-12);
    QVERIFY(!got.pairs.pairs.empty());
  }

  void groupsAreConnectedComponents() {
    // 0–3–7 chained, 2–5, 9 alone with a pair beyond the threshold, 4–8 equal to it.
    const std::vector<NearPair> pairs{
        {3, 7, 0.1f}, {0, 3, 0.2f}, {2, 5, 0.0f}, {1, 9, 0.9f}, {4, 8, 0.5f}};
    const DuplicateGroups g = groupPairs(10, pairs, 0.5);
    QCOMPARE(g.groups.size(), std::size_t(3));
    QCOMPARE(g.groups[0], (std::vector<std::int32_t>{0, 3, 7}));
    QCOMPARE(g.groups[1], (std::vector<std::int32_t>{2, 5}));
    QCOMPARE(g.groups[2], (std::vector<std::int32_t>{4, 8}));
    QCOMPARE(g.groupOf, (std::vector<std::int32_t>{0, -1, 1, 0, 2, 1, -1, 0, 2, -1}));
    QCOMPARE(g.itemsInGroups(), std::int64_t(7));
    QCOMPARE(g.redundantItems(), std::int64_t(4));
    QCOMPARE(QString::fromStdString(keepOnePerGroup(g, 10)), QString("0\n1\n2\n4\n6\n9\n"));
    QCOMPARE(groupPairs(10, pairs, 0.15).groups.size(), std::size_t(2)); // 3–7 and 2–5
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, groupPairs(5, pairs, 1.0));
  }

  void groupsAreNumberedBySizeThenSmallestMember() {
    // As documented: the largest group first, groups of one size by their smallest member. The
    // pairs come in an order that numbers groups otherwise — by first pair (3–4 first), by the
    // larger member a union keeps as its root (the 11-rooted group, then 9, 6, 4) or by the
    // member a chain reaches first (10 before 0) — so each such rule gives another order.
    const std::vector<NearPair> pairs{{3, 4, 0.1},   {2, 6, 0.1},  {6, 11, 0.1}, {1, 9, 0.1},
                                      {10, 12, 0.1}, {0, 12, 0.1}, {5, 7, 0.1}};
    const DuplicateGroups g = groupPairs(13, pairs, 1.0);
    const std::vector<std::vector<std::int32_t>> want = {
        {0, 10, 12}, {2, 6, 11}, {1, 9}, {3, 4}, {5, 7}};
    QCOMPARE(g.groups, want);
    for (std::size_t group = 0; group < want.size(); ++group)
      for (const std::int32_t item : want[group])
        QCOMPARE(g.groupOf[std::size_t(item)], std::int32_t(group));
    // The files carry the same numbers: group 2 is {1, 9}.
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(13, 0.0f), 13, 1);
    const std::string tsv = duplicateGroupsTsv(g, ds);
    QVERIFY2(tsv.find("2\t1\n2\t9\n3\t3\n") != std::string::npos, tsv.c_str());
  }

  void groupsTsvCarriesTheMetadata() {
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(4 * 2, 0.0f), 4, 2);
    ds.labels = {0, 1, 0, 1};
    ds.labelNames = {"cat", "dog"};
    DuplicateGroups g = groupPairs(4, {{1, 2, 0.0f}}, 0.0);
    // Labels alone (IDX): a label column.
    QCOMPARE(QString::fromStdString(duplicateGroupsTsv(g, ds)),
             QString("group\tid\tlabel\n0\t1\tdog\n0\t2\tcat\n"));
    // Metadata (the labels' column among them): its columns as they are.
    ds.metadata.columnNames = {"kind", "caption"};
    ds.metadata.columns = {{"cat", "dog", "cat", "dog"}, {"a", "b\twith tab", "c\nline", "d"}};
    QCOMPARE(QString::fromStdString(duplicateGroupsTsv(g, ds)),
             QString("group\tid\tkind\tcaption\n0\t1\tdog\tb with tab\n0\t2\tcat\tc line\n"));
  }

  void badInputIsRefused() {
    std::vector<float> x = plantedData(50, 4, 3);
    const MatrixView<float> data{x.data(), 50, 4};
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairsWithin(data, -1.0, Metric::L2, on(Backend::Cpu)));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairsWithin(data, std::nan(""), Metric::L2, on(Backend::Cpu)));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, pairsWithin(data, 1e9, Metric::L2, on(Backend::Cpu),
                                                          noJobControl(), {512, 16, 100}));
    QVERIFY_THROWS_EXCEPTION(
        InvalidArgument, pairsWithinQuantile({x.data(), 1, 4}, 0.5, Metric::L2, on(Backend::Cpu)));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairsWithinQuantile(data, 1.5, Metric::L2, on(Backend::Cpu)));
    x[17] = std::nanf("");
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, pairsWithin(data, 1.0, Metric::L2, on(Backend::Cpu)));
    JobControl stopped;
    stopped.requestStop();
    std::vector<float> y = plantedData(50, 4, 3);
    QVERIFY_THROWS_EXCEPTION(
        Cancelled, pairsWithin({y.data(), 50, 4}, 1.0, Metric::L2, on(Backend::Cpu), stopped));
  }
};

QTEST_GUILESS_MAIN(TestDuplicates)
#include "tst_duplicates.moc"
