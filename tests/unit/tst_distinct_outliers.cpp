// LOF with k-distinct distances (analysis/DistinctOutliers.h): a group of identical rows larger
// than k next to a planted outlier, against a float64 LOF of the de-duplicated data.
#include "nearscape/Nearscape.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace nearscape;

namespace {

constexpr int kD = 3, kK = 10;

Context cpu() {
  Context c;
  c.backend = Backend::Cpu;
  c.threads = 2;
  return c;
}

/// Plain float64 LOF (MinPts = k) over `x` (n × kD): the oracle.
std::vector<double> lof64(const std::vector<float>& x, int n, int k) {
  std::vector<std::vector<std::pair<double, int>>> nn(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      if (j != i)
        nn[std::size_t(i)].push_back(
            {exactDistance(x.data() + i * kD, x.data() + j * kD, kD, Metric::L2), j});
    std::sort(nn[std::size_t(i)].begin(), nn[std::size_t(i)].end());
    nn[std::size_t(i)].resize(std::size_t(k));
  }
  std::vector<double> lrd(static_cast<std::size_t>(n)), lof(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    double reach = 0;
    for (const auto& [dist, o] : nn[std::size_t(p)])
      reach += std::max(nn[std::size_t(o)].back().first, dist);
    lrd[std::size_t(p)] = 1.0 / (reach / k + 1e-10);
  }
  for (int p = 0; p < n; ++p) {
    double sum = 0;
    for (const auto& [dist, o] : nn[std::size_t(p)])
      sum += lrd[std::size_t(o)];
    lof[std::size_t(p)] = sum / k / lrd[std::size_t(p)];
  }
  return lof;
}

struct Planted {
  std::vector<float> x;  ///< unique rows first, then the copies
  int unique = 0, n = 0; ///< rows of the de-duplicated data, all rows
  int outlier = 0;       ///< the planted outlier's row
};

/// 300 Gaussian rows, a planted outlier, and 40 copies of row 7 (a group of 41 > k).
Planted planted() {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal;
  Planted p;
  for (int i = 0; i < 300 * kD; ++i)
    p.x.push_back(normal(rng));
  p.outlier = 300;
  p.x.insert(p.x.end(), {9.0f, 0.0f, 0.0f});
  p.unique = 301;
  for (int c = 0; c < 40; ++c)
    p.x.insert(p.x.end(), p.x.begin() + 7 * kD, p.x.begin() + 8 * kD);
  p.n = int(p.x.size() / kD);
  return p;
}

} // namespace

class TestDistinctOutliers : public QObject {
  Q_OBJECT

private slots:
  void groupsIdenticalRows() {
    const std::vector<float> x{1, 2, 3, 4, 1, 2, 0, 0, 3, 4, -0.0f, 0};
    const DistinctRows d = distinctRows({x.data(), 6, 2});
    QCOMPARE(d.group, (std::vector<std::int64_t>{0, 1, 0, 2, 1, 3})); // −0 is kept apart
    QCOMPARE(d.first, (std::vector<std::int64_t>{0, 1, 3, 5}));
    QVERIFY(d.repeats());
    QVERIFY(!distinctRows({x.data(), 2, 2}).repeats());
  }

  void duplicatesDoNotDrownThePlantedOutlier() {
    const Planted p = planted();
    const MatrixView<float> v{p.x.data(), p.n, kD};
    // Plain LOF: the copies' reachability distances are 0, their neighbours' scores explode.
    const KnnResult g = knnGraph(v, kK, Metric::L2, cpu());
    const std::vector<float> plain = localOutlierFactor(g.ids.view(), g.distances.view(), kK);
    QVERIFY(*std::max_element(plain.begin(), plain.end()) > 1e6);
    QVERIFY(topItems(plain, 1).front() != p.outlier);

    const OutlierScores s = distinctLocalOutlierFactor(v, kK, Metric::L2, cpu(), noJobControl());
    QCOMPARE(s.distinct, std::int64_t(p.unique));
    QCOMPARE(topItems(s.scores, 1).front(), std::int64_t(p.outlier));
    const std::vector<double> want = lof64(p.x, p.unique, kK); // the de-duplicated data's LOF
    for (int i = 0; i < p.n; ++i) {
      QVERIFY(std::isfinite(s.scores[std::size_t(i)]));
      const int row = i < p.unique ? i : 7; // each copy scores as its group
      QVERIFY2(std::abs(s.scores[std::size_t(i)] - want[std::size_t(row)]) <=
                   1e-4 * want[std::size_t(row)],
               qPrintable(QString("row %1: %2 vs %3")
                              .arg(i)
                              .arg(s.scores[std::size_t(i)])
                              .arg(want[std::size_t(row)])));
    }
  }

  void withoutRepeatsItIsPlainLof() {
    Planted p = planted();
    const MatrixView<float> v{p.x.data(), p.unique, kD};
    const KnnResult g = knnGraph(v, kK, Metric::L2, cpu());
    const OutlierScores s =
        distinctLocalOutlierFactor(v, kK, Metric::L2, cpu(), noJobControl(), &g);
    QCOMPARE(s.scores, localOutlierFactor(g.ids.view(), g.distances.view(), kK));
  }

  void tooFewDistinctRowsIsAnError() {
    std::vector<float> x(60 * kD, 1.0f);
    for (int i = 0; i < 5 * kD; ++i)
      x[std::size_t(i)] = float(i);
    QVERIFY_THROWS_EXCEPTION(
        InvalidArgument,
        distinctLocalOutlierFactor({x.data(), 60, kD}, kK, Metric::L2, cpu(), noJobControl()));
  }
};

QTEST_GUILESS_MAIN(TestDistinctOutliers)
#include "tst_distinct_outliers.moc"
