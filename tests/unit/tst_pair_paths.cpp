// One pair's paths straight from a kNN graph's ids (graph/PairPaths.h) against the whole
// pipeline they replace for `path --graph ids.npy`: symmetrizeKnnGraph, Kruskal's SpanningForest
// and shortestPath; and the edges' float64 distances against exactDistance.
#include "graph/EdgeDistance.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cmath>
#include <random>

Q_DECLARE_METATYPE(nearscape::Metric)

using namespace nearscape;

namespace {

struct KnnIds {
  std::vector<float> points;
  std::vector<std::int32_t> ids;
  std::int64_t n = 0, d = 0, k = 0;
  MatrixView<float> data() const { return {points.data(), n, d}; }
  MatrixView<std::int32_t> view() const { return {ids.data(), n, k}; }
};

/// Seeded points in `clusters` far-apart groups (so the graph may split), with `copies` rows
/// repeated (ties at weight 0), and ids of each row's k nearest by exactDistance with some
/// cells spoilt: −1, the row itself, a neighbour listed twice.
KnnIds makeGraph(std::int64_t n, std::int64_t d, std::int64_t k, int clusters, int copies,
                 Metric metric, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  KnnIds g;
  g.n = n, g.d = d, g.k = k;
  g.points.resize(std::size_t(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < d; ++c)
      g.points[std::size_t(i * d + c)] = normal(rng) + (c == 0 ? 40.0f * float(i % clusters) : 1);
  for (int c = 0; c < copies; ++c) {
    const std::int64_t to = std::int64_t(rng() % std::uint64_t(n)),
                       from = std::int64_t(rng() % std::uint64_t(n));
    std::copy_n(g.points.begin() + from * d, d, g.points.begin() + to * d);
  }
  g.ids.resize(std::size_t(n * k));
  std::vector<std::pair<double, std::int32_t>> order;
  for (std::int64_t i = 0; i < n; ++i) {
    order.clear();
    for (std::int64_t j = 0; j < n; ++j)
      if (j != i)
        order.push_back({exactDistance(g.points.data() + i * d, g.points.data() + j * d, d, metric),
                         std::int32_t(j)});
    std::partial_sort(order.begin(), order.begin() + k, order.end());
    for (std::int64_t c = 0; c < k; ++c)
      g.ids[std::size_t(i * k + c)] = order[std::size_t(c)].second;
    switch (rng() % 8) {
    case 0:
      g.ids[std::size_t(i * k + k - 1)] = -1;
      break;
    case 1:
      g.ids[std::size_t(i * k + rng() % std::uint64_t(k))] = std::int32_t(i);
      break;
    case 2:
      g.ids[std::size_t(i * k + k - 1)] = g.ids[std::size_t(i * k)];
      break;
    default:
      break;
    }
  }
  return g;
}

/// The same graph through the pipeline pairPathsOnKnnIds replaces.
std::vector<float> exactDistances(const KnnIds& g, Metric metric) {
  std::vector<float> out(g.ids.size(), 0.0f);
  for (std::int64_t i = 0; i < g.n; ++i)
    for (std::int64_t c = 0; c < g.k; ++c)
      if (const std::int32_t j = g.ids[std::size_t(i * g.k + c)]; j >= 0)
        out[std::size_t(i * g.k + c)] = float(exactDistance(
            g.points.data() + i * g.d, g.points.data() + std::int64_t(j) * g.d, g.d, metric));
  return out;
}

Context cpu(int threads) {
  Context c;
  c.backend = Backend::Cpu;
  c.threads = threads;
  return c;
}

} // namespace

class TestPairPaths : public QObject {
  Q_OBJECT

private slots:
  void pathsEqualTheWholePipeline_data() {
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<int>("clusters");
    QTest::addColumn<int>("copies");
    QTest::addColumn<int>("threads");
    QTest::newRow("l2, connected, 2 threads") << Metric::L2 << 1 << 0 << 2;
    QTest::newRow("l2, 3 groups, copies") << Metric::L2 << 3 << 40 << 2;
    QTest::newRow("l2, copies, 1 thread") << Metric::L2 << 1 << 40 << 1;
    QTest::newRow("ip, copies") << Metric::InnerProduct << 1 << 30 << 2;
    QTest::newRow("cos, 2 groups") << Metric::Cosine << 2 << 10 << 2;
  }
  void pathsEqualTheWholePipeline() {
    // The same forest, so the same min-max path node for node, the same shortest path, the same
    // components and edges as symmetrizeKnnGraph → SpanningForest (Kruskal) → shortestPath; and
    // the min-max bottleneck is the graph's (a brute-force (max, min) closure).
    QFETCH(Metric, metric);
    QFETCH(int, clusters);
    QFETCH(int, copies);
    QFETCH(int, threads);
    const KnnIds g = makeGraph(240, 13, 5, clusters, copies, metric, 4300 + clusters + copies);
    const std::vector<float> dist = exactDistances(g, metric);
    const UndirectedGraph sym = symmetrizeKnnGraph(g.view(), {dist.data(), g.n, g.k}, metric);
    const SpanningForest forest(sym, cpu(threads));
    // The min-max value of every pair, by a (max, min) closure over the symmetrised graph.
    const auto n = std::size_t(g.n);
    std::vector<double> closure(n * n, INFINITY);
    for (std::size_t i = 0; i < n; ++i) {
      closure[i * n + i] = 0;
      for (std::int64_t e = sym.offsets[i]; e < sym.offsets[i + 1]; ++e)
        closure[i * n + std::size_t(sym.targets[std::size_t(e)])] = sym.weights[std::size_t(e)];
    }
    for (std::size_t m = 0; m < n; ++m)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          closure[i * n + j] =
              std::min(closure[i * n + j], std::max(closure[i * n + m], closure[m * n + j]));
    int found = 0;
    for (auto [from, to] :
         {std::pair{0, 239}, std::pair{7, 8}, std::pair{5, 5}, std::pair{3, 100},
          std::pair{120, 17}, std::pair{239, 1}, std::pair{0, 150}, std::pair{1, 238}}) {
      const PairPaths p = pairPathsOnKnnIds(g.data(), g.view(), metric, from, to, cpu(threads));
      const GraphPath minimax = minimaxPath(forest, from, to);
      QCOMPARE(p.minimax.nodes, minimax.nodes);
      QCOMPARE(p.minimax.steps, minimax.steps);
      const double best = closure[std::size_t(from) * n + std::size_t(to)];
      QCOMPARE(p.minimax.found(), !std::isinf(best));
      if (p.minimax.found())
        QCOMPARE(double(p.minimax.bottleneck), best);
      const GraphPath shortest = shortestPath(sym, from, to);
      QCOMPARE(p.shortest.nodes, shortest.nodes);
      QCOMPARE(p.shortest.total, shortest.total);
      QCOMPARE(p.components, connectedComponents(sym).count);
      QCOMPARE(p.components, forest.treeCount());
      QCOMPARE(p.edges, sym.edgeCount());
      QCOMPARE(p.weightOffset, sym.weightOffset);
      QCOMPARE(p.weightNote, sym.weightNote);
      found += p.minimax.found() && p.minimax.nodes.size() > 2;
    }
    QVERIFY(found > 0); // some pair walks through the graph
  }

  void badInputIsRefused() {
    KnnIds g = makeGraph(30, 4, 3, 1, 0, Metric::L2, 7);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairPathsOnKnnIds(g.data(), g.view(), Metric::L2, 0, 30));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairPathsOnKnnIds(g.data(), g.view(), Metric::L2, -1, 3));
    const MatrixView<float> fewer{g.points.data(), 29, 4};
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, pairPathsOnKnnIds(fewer, g.view(), Metric::L2, 0, 3));
    g.ids[17] = 30;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairPathsOnKnnIds(g.data(), g.view(), Metric::L2, 0, 3));
    g.ids[17] = -2;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             pairPathsOnKnnIds(g.data(), g.view(), Metric::L2, 0, 3));
  }

  void stopsWhenAsked() {
    const KnnIds g = makeGraph(200, 4, 4, 1, 0, Metric::L2, 8);
    JobControl job;
    job.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled,
                             pairPathsOnKnnIds(g.data(), g.view(), Metric::L2, 0, 5, cpu(2), job));
  }

  void edgeDistanceIsExact_data() {
    QTest::addColumn<Metric>("metric");
    QTest::newRow("l2") << Metric::L2;
    QTest::newRow("ip") << Metric::InnerProduct;
    QTest::newRow("cos") << Metric::Cosine;
  }
  void edgeDistanceIsExact() {
    // Float64 sums in another order than exactDistance's: equal to float64 rounding, for every
    // width's tail (d mod 8), batched or one at a time; a zero vector is at cosine distance 1.
    QFETCH(Metric, metric);
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<float> value(-3, 3);
    for (std::int64_t d : {1, 5, 8, 13, 64, 129}) {
      std::vector<float> a(static_cast<std::size_t>(d)), b(static_cast<std::size_t>(3 * d));
      for (auto& v : a)
        v = value(rng);
      for (auto& v : b)
        v = value(rng);
      const float* rows[3] = {b.data(), b.data() + d, b.data() + 2 * d};
      double batch[3];
      graph::edgeDistances(a.data(), rows, 3, d, metric, batch);
      for (int r = 0; r < 3; ++r) {
        const double exact = exactDistance(a.data(), rows[r], d, metric);
        QVERIFY2(std::abs(batch[r] - exact) <= 1e-12 * std::max(1.0, std::abs(exact)),
                 qPrintable(QString("d %1: %2 vs %3").arg(d).arg(batch[r]).arg(exact)));
        QCOMPARE(graph::edgeDistance(a.data(), rows[r], d, metric), batch[r]);
      }
      const double self = graph::edgeDistance(a.data(), a.data(), d, metric);
      if (metric == Metric::InnerProduct)
        QVERIFY(std::abs(self - exactDistance(a.data(), a.data(), d, metric)) <= 1e-12 * -self);
      else
        QCOMPARE(self, 0.0); // a copy lies at distance 0 exactly
    }
    if (metric == Metric::Cosine) {
      const std::vector<float> zero(8, 0.0f), one(8, 1.0f);
      QCOMPARE(graph::edgeDistance(zero.data(), one.data(), 8, metric), 1.0);
    }
    QVERIFY(QByteArray(graph::edgeDistanceKernel()).size() > 0);
  }
};

QTEST_GUILESS_MAIN(TestPairPaths)
#include "tst_pair_paths.moc"
