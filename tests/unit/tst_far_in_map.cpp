// Far in the map (layout/FarInMap.h): map ranks against brute force, and a rule that flags a
// minority of neighbours on a map that keeps few of them.
#include "nearscape/Nearscape.h"

#include <QTest>

#include <numeric>
#include <random>

using namespace nearscape;

class TestFarInMap : public QObject {
  Q_OBJECT

private slots:
  void ranksCountStrictlyNearerPoints() {
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<int> grid(0, 9); // integer coordinates: many ties
    const int n = 400;
    std::vector<float> map(std::size_t(2 * n));
    for (float& v : map)
      v = float(grid(rng));
    const MatrixView<float> p{map.data(), n, 2};
    const std::vector<std::int32_t> others{5, 17, 3, 399, 17, 250};
    const std::vector<std::int64_t> ranks = mapRanks(p, 42, others);
    for (std::size_t o = 0; o < others.size(); ++o) {
      auto d2 = [&](std::int64_t a, std::int64_t b) {
        const double x = p.row(a)[0] - p.row(b)[0], y = p.row(a)[1] - p.row(b)[1];
        return x * x + y * y;
      };
      std::int64_t nearer = 0;
      for (int j = 0; j < n; ++j)
        nearer += j != 42 && d2(42, j) < d2(42, others[o]) ? 1 : 0;
      QCOMPARE(ranks[o], nearer);
    }
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, mapRanks(p, 42, {n}));
  }

  void aPoorMapFlagsAMinority() {
    // True neighbours: points along a line, neighbours its next ones. The map: random positions,
    // which keep almost none of them among an item's 10 nearest map points.
    const int n = 2000, k = 10;
    std::mt19937_64 rng(4);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> map(std::size_t(2 * n));
    for (float& v : map)
      v = uniform(rng);
    // Half the items keep their neighbours close on the map (a map that is right in places).
    std::vector<std::int32_t> truth(std::size_t(n) * k);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < k; ++c)
        truth[std::size_t(i) * k + std::size_t(c)] = (i + 1 + c) % n;
    for (int i = 0; i < n / 2; ++i)
      for (int c = 1; c <= k; ++c) {
        const int j = (i + c) % n;
        map[std::size_t(2 * j)] = map[std::size_t(2 * i)] + 1e-4f * float(c);
        map[std::size_t(2 * j + 1)] = map[std::size_t(2 * i + 1)];
      }
    const MatrixView<float> p{map.data(), n, 2};
    std::vector<std::int64_t> items(static_cast<std::size_t>(n));
    std::iota(items.begin(), items.end(), 0);
    const std::int64_t limit = farInMapRankLimit(p, items, {truth.data(), n, k}, 0.2);
    QVERIFY(limit >= k - 1);
    std::int64_t beyondK = 0, flagged = 0;
    for (int i = 0; i < n; ++i) {
      const std::vector<std::int32_t> nb(truth.begin() + i * k, truth.begin() + (i + 1) * k);
      for (const std::int64_t r : mapRanks(p, i, nb)) {
        beyondK += r >= k ? 1 : 0;
        flagged += r > limit ? 1 : 0;
      }
    }
    // The old rule (beyond the k nearest map points) flags most links; this one a fifth at most.
    QVERIFY2(beyondK > n * k / 3, qPrintable(QString::number(beyondK)));
    QVERIFY2(flagged <= n * k / 5, qPrintable(QString::number(flagged)));
    QVERIFY(flagged > 0);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             farInMapRankLimit(p, items, {truth.data(), n, k}, 1.0));
  }
};

QTEST_GUILESS_MAIN(TestFarInMap)
#include "tst_far_in_map.moc"
