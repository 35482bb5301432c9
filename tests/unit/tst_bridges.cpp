// The pairs that join a graph's components (knn/CrossNearest.h), against float64 brute force:
// exact where exact is promised, mutually nearest where the descent runs.
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <random>

Q_DECLARE_METATYPE(nearscape::Metric)

using namespace nearscape;

namespace {

constexpr int kD = 8;

struct Blobs {
  std::vector<float> x;
  std::vector<std::int32_t> label;
  std::int32_t count = 0;
  std::int64_t n = 0;
  MatrixView<float> view() const { return {x.data(), n, kD}; }
};

/// Gaussian blobs of the given sizes, centres N(0, 6²) per coordinate, unit noise (the
/// benchmark's blobs, smaller), labelled by blob; rows shuffled so that components interleave.
Blobs blobs(const std::vector<int>& sizes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  Blobs b;
  b.count = std::int32_t(sizes.size());
  for (std::int32_t c = 0; c < b.count; ++c) {
    std::vector<float> centre(kD);
    for (float& v : centre)
      v = 6.0f * normal(rng);
    for (int i = 0; i < sizes[std::size_t(c)]; ++i) {
      for (int j = 0; j < kD; ++j)
        b.x.push_back(centre[std::size_t(j)] + normal(rng));
      b.label.push_back(c);
    }
  }
  b.n = std::int64_t(b.label.size());
  // Shuffle rows (and labels) together.
  std::vector<std::int64_t> order(std::size_t(b.n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<float> x(b.x.size());
  std::vector<std::int32_t> label(b.label.size());
  for (std::int64_t i = 0; i < b.n; ++i) {
    std::copy_n(b.x.begin() + order[std::size_t(i)] * kD, kD, x.begin() + i * kD);
    label[std::size_t(i)] = b.label[std::size_t(order[std::size_t(i)])];
  }
  b.x = std::move(x);
  b.label = std::move(label);
  return b;
}

/// The exact nearest pair (float64) between component c and the rest: (distance, inside,
/// outside).
std::tuple<double, std::int64_t, std::int64_t> bruteNearest(const Blobs& b, std::int32_t c,
                                                            Metric metric) {
  std::tuple<double, std::int64_t, std::int64_t> best{std::numeric_limits<double>::infinity(), -1,
                                                      -1};
  for (std::int64_t i = 0; i < b.n; ++i)
    for (std::int64_t j = 0; j < b.n; ++j)
      if (b.label[std::size_t(i)] == c && b.label[std::size_t(j)] != c)
        best = std::min(best, {exactDistance(b.view().row(i), b.view().row(j), kD, metric), i, j});
  return best;
}

/// Row q's nearest row (float64) among those whose label is (`inside`) or is not c.
std::int64_t bruteNearestRow(const Blobs& b, std::int64_t q, std::int32_t c, bool inside,
                             Metric metric) {
  std::pair<double, std::int64_t> best{std::numeric_limits<double>::infinity(), -1};
  for (std::int64_t j = 0; j < b.n; ++j)
    if ((b.label[std::size_t(j)] == c) == inside)
      best = std::min(best, {exactDistance(b.view().row(q), b.view().row(j), kD, metric), j});
  return best.second;
}

Context cpu() {
  Context c;
  c.backend = Backend::Cpu;
  c.threads = 2;
  return c;
}

bool close(double got, double want) {
  return std::abs(got - want) <= 1e-5 * std::max(1.0, std::abs(want));
}

} // namespace

class TestBridges : public QObject {
  Q_OBJECT

private slots:
  void exactPairsEqualBruteForce_data() {
    QTest::addColumn<Metric>("metric");
    QTest::newRow("l2") << Metric::L2;
    QTest::newRow("cos") << Metric::Cosine;
    QTest::newRow("ip") << Metric::InnerProduct;
  }
  void exactPairsEqualBruteForce() {
    QFETCH(Metric, metric);
    // Components of very different sizes, one a single row.
    const Blobs b = blobs({300, 150, 90, 40, 7, 1}, 21);
    std::vector<bool> wanted(std::size_t(b.count), true);
    wanted[0] = false;
    const std::vector<CrossPair> pairs =
        nearestOutside(b.view(), metric, cpu())(b.label, b.count, wanted, noJobControl());
    QCOMPARE(std::int32_t(pairs.size()), b.count);
    QCOMPARE(pairs[0].inside, std::int64_t(-1));
    for (std::int32_t c = 1; c < b.count; ++c) {
      const auto [dist, inside, outside] = bruteNearest(b, c, metric);
      const CrossPair& p = pairs[std::size_t(c)];
      QVERIFY(p.exact);
      QVERIFY2(close(p.distance, dist),
               qPrintable(QString("component %1: %2 vs %3").arg(c).arg(p.distance).arg(dist)));
      QCOMPARE(p.inside, inside);
      QCOMPARE(p.outside, outside);
    }
  }

  void descentEndsOnMutuallyNearestPairs() {
    // Every component descends (nothing is affordable exactly): each pair is a true cross pair
    // of exact length, mutually nearest across the component's boundary, and on these blobs
    // within 10% of the exact nearest pair.
    const Blobs b = blobs({400, 300, 250, 200, 120}, 22);
    CrossNearestParams params;
    params.exactPairs = 0;
    params.smallComponent = 0;
    const std::vector<bool> wanted(std::size_t(b.count), true);
    const std::vector<CrossPair> pairs = nearestOutside(b.view(), Metric::L2, cpu(), params)(
        b.label, b.count, wanted, noJobControl());
    for (std::int32_t c = 0; c < b.count; ++c) {
      const CrossPair& p = pairs[std::size_t(c)];
      QVERIFY(!p.exact);
      QCOMPARE(b.label[std::size_t(p.inside)], c);
      QVERIFY(b.label[std::size_t(p.outside)] != c);
      QVERIFY(close(p.distance, exactDistance(b.view().row(p.inside), b.view().row(p.outside), kD,
                                              Metric::L2)));
      QCOMPARE(bruteNearestRow(b, p.inside, c, false, Metric::L2), p.outside);
      QCOMPARE(bruteNearestRow(b, p.outside, c, true, Metric::L2), p.inside);
      const double exact = std::get<0>(bruteNearest(b, c, Metric::L2));
      QVERIFY(p.distance >= exact * (1 - 1e-6));
      QVERIFY2(
          p.distance <= 1.1 * exact,
          qPrintable(QString("component %1: %2 vs exact %3").arg(c).arg(p.distance).arg(exact)));
    }
  }

  void smallComponentsStayExactBesideDescents() {
    const Blobs b = blobs({400, 300, 30, 5}, 23);
    CrossNearestParams params;
    params.exactPairs = 0; // only components of ≤ 64 rows are searched exactly
    const std::vector<bool> wanted(std::size_t(b.count), true);
    const std::vector<CrossPair> pairs = nearestOutside(b.view(), Metric::L2, cpu(), params)(
        b.label, b.count, wanted, noJobControl());
    QVERIFY(!pairs[0].exact && !pairs[1].exact);
    for (std::int32_t c : {2, 3}) {
      const auto [dist, inside, outside] = bruteNearest(b, c, Metric::L2);
      QVERIFY(pairs[std::size_t(c)].exact);
      QVERIFY(close(pairs[std::size_t(c)].distance, dist));
      QCOMPARE(pairs[std::size_t(c)].inside, inside);
    }
  }

  void bridgesConnectAndSayWhetherExact() {
    const Blobs b = blobs({200, 150, 120, 80, 60, 20}, 24);
    const KnnResult knn = knnReference(b.view(), b.view(), 5, Metric::L2, true);
    const UndirectedGraph g = symmetrizeKnnGraph(knn.ids.view(), knn.distances.view(), Metric::L2);
    QVERIFY(connectedComponents(g).count >= 4);
    const ComponentBridges exact = bridgeComponents(g, nearestOutside(b.view(), Metric::L2, cpu()));
    QVERIFY(exact.exact);
    QCOMPARE(connectedComponents(withEdges(g, exact.edges)).count, 1);
    CrossNearestParams params;
    params.exactPairs = 0;
    params.smallComponent = 0;
    std::vector<double> progress;
    JobControl job([&](double f, const std::string&) { progress.push_back(f); },
                   std::chrono::milliseconds(0));
    const ComponentBridges descended =
        bridgeComponents(g, nearestOutside(b.view(), Metric::L2, cpu(), params), job);
    QVERIFY(!descended.exact);
    QCOMPARE(connectedComponents(withEdges(g, descended.edges)).count, 1);
    for (const WeightedEdge& e : descended.edges)
      QVERIFY(close(e.weight, exactDistance(b.view().row(e.a), b.view().row(e.b), kD, Metric::L2)));
    // Honest progress: forward only, ending at 1.
    QVERIFY(!progress.empty());
    QVERIFY(std::is_sorted(progress.begin(), progress.end()));
    QCOMPARE(progress.back(), 1.0);
  }

  void stopsWhenAsked() {
    const Blobs b = blobs({300, 200}, 25);
    JobControl job;
    job.requestStop();
    const std::vector<bool> wanted{false, true};
    QVERIFY_THROWS_EXCEPTION(Cancelled,
                             nearestOutside(b.view(), Metric::L2, cpu())(b.label, 2, wanted, job));
  }
};

QTEST_GUILESS_MAIN(TestBridges)
#include "tst_bridges.moc"
