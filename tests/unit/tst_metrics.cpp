// Cosine and inner product on every path past the exact graph: the symmetrised graph's weights,
// the spanning forest, min-max paths, bridges between components, the map, GGM merges (GNND §5.1)
// and sharded NN-Descent — each against a float64 reference written here from the definitions
// (docs/design.md, Conventions: cosine 1 − cos, inner product −⟨x, y⟩), not the engine's distance
// code.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

using namespace nearscape;

Q_DECLARE_METATYPE(nearscape::Metric)

namespace {

constexpr int kN = 700, kD = 8, kK = 10;

/// Five direction clusters whose rows' norms spread over 0.3 … 3 (log-uniform): cosine ignores
/// the norms, inner product favours the long rows, L2 wants both close — three different graphs.
std::vector<float> directionClusters(int n, int d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> logNorm(std::log(0.3f), std::log(3.0f));
  std::vector<float> centres(std::size_t(5 * d));
  for (float& c : centres)
    c = normal(rng);
  std::vector<float> x(std::size_t(n) * d);
  for (int i = 0; i < n; ++i) {
    double norm = 0;
    float* row = x.data() + std::size_t(i) * d;
    for (int c = 0; c < d; ++c) {
      row[c] = centres[std::size_t((i % 5) * d + c)] + 0.35f * normal(rng);
      norm += double(row[c]) * row[c];
    }
    const float scale = std::exp(logNorm(rng)) / float(std::sqrt(norm));
    for (int c = 0; c < d; ++c)
      row[c] *= scale;
  }
  return x;
}

double distance64(const float* a, const float* b, int d, Metric metric) {
  double dot = 0, na = 0, nb = 0, l2 = 0;
  for (int c = 0; c < d; ++c) {
    dot += double(a[c]) * double(b[c]);
    na += double(a[c]) * double(a[c]);
    nb += double(b[c]) * double(b[c]);
    l2 += (double(a[c]) - double(b[c])) * (double(a[c]) - double(b[c]));
  }
  switch (metric) {
  case Metric::Cosine:
    return 1.0 - dot / std::sqrt(na * nb);
  case Metric::InnerProduct:
    return -dot;
  case Metric::L2:
    break;
  }
  return std::sqrt(l2);
}

/// Each row's k nearest other rows in float64, (distance, id) nearest first, ties by smaller id.
std::vector<std::vector<std::pair<double, int>>> graph64(const std::vector<float>& x, int n, int d,
                                                         int k, Metric metric) {
  std::vector<std::vector<std::pair<double, int>>> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& row = out[std::size_t(i)];
    for (int j = 0; j < n; ++j)
      if (j != i)
        row.push_back(
            {distance64(x.data() + std::size_t(i) * d, x.data() + std::size_t(j) * d, d, metric),
             j});
    std::partial_sort(row.begin(), row.begin() + k, row.end());
    row.resize(std::size_t(k));
  }
  return out;
}

/// Share of the reference's ids found in `ids` (n × k), over all rows.
double recall(const MatrixView<std::int32_t>& ids,
              const std::vector<std::vector<std::pair<double, int>>>& truth) {
  std::int64_t found = 0, total = 0;
  for (std::int64_t i = 0; i < ids.rows; ++i)
    for (const auto& [dist, id] : truth[std::size_t(i)]) {
      found += std::count(ids.row(i), ids.row(i) + ids.cols, id) > 0;
      ++total;
    }
  return double(found) / double(total);
}

/// Union-find over n nodes.
struct Components64 {
  std::vector<int> parent;
  explicit Components64(int n) : parent(static_cast<std::size_t>(n)) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  int find(int v) {
    while (parent[std::size_t(v)] != v)
      v = parent[std::size_t(v)] = parent[std::size_t(parent[std::size_t(v)])];
    return v;
  }
  bool join(int a, int b) {
    a = find(a), b = find(b);
    if (a == b)
      return false;
    parent[std::size_t(a)] = b;
    return true;
  }
};

using Edges64 = std::map<std::pair<int, int>, double>;

/// Checks that `result` is a valid kNN graph of `x` whose every distance is its id's float64
/// distance; returns "" or the first problem.
QString checkGraph(const KnnResult& result, const std::vector<float>& x, int n, int d, int k,
                   Metric metric) {
  if (result.ids.rows() != n || result.ids.cols() != k || result.distances.cols() != k)
    return "wrong shape";
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < k; ++c) {
      const std::int32_t id = result.ids.row(i)[c];
      if (id < 0 || id >= n || id == i)
        return QString("row %1: id %2").arg(i).arg(id);
      if (std::count(result.ids.row(i), result.ids.row(i) + k, id) != 1)
        return QString("row %1: id %2 twice").arg(i).arg(id);
      const double want =
          distance64(x.data() + std::size_t(i) * d, x.data() + std::size_t(id) * d, d, metric);
      if (std::abs(result.distances.row(i)[c] - want) > 1e-6 * std::max(1.0, std::abs(want)))
        return QString("row %1, id %2: distance %3, float64 says %4")
            .arg(i)
            .arg(id)
            .arg(result.distances.row(i)[c])
            .arg(want);
      if (c > 0 && result.distances.row(i)[c] < result.distances.row(i)[c - 1])
        return QString("row %1 is not nearest first").arg(i);
    }
  return {};
}

} // namespace

class TestMetrics : public QObject {
  Q_OBJECT

private:
  Context cpu() const {
    Context c;
    c.backend = Backend::Cpu;
    return c;
  }

private slots:
  void initTestCase() { qRegisterMetaType<Metric>(); }

  void metrics_data() {
    QTest::addColumn<Metric>("metric");
    QTest::newRow("cos") << Metric::Cosine;
    QTest::newRow("ip") << Metric::InnerProduct;
  }

  void forestAndMinimaxPaths_data() { metrics_data(); }
  void forestAndMinimaxPaths() {
    // The graph's weights (inner product shifted by the offset that makes them non-negative),
    // the forest's total weight (float64 Kruskal here) and min-max paths between 40 pairs: each a
    // path of the graph whose largest step is the smallest possible.
    QFETCH(Metric, metric);
    const std::vector<float> x = directionClusters(kN, kD, 1);
    const MatrixView<float> v{x.data(), kN, kD};
    const auto truth = graph64(x, kN, kD, kK, metric);
    ExploreParams params;
    params.metric = metric;
    params.k = kK;
    params.method = GraphMethod::Exact;
    params.neighbours = false;
    params.map = false;
    const Exploration e = explore(v, params, cpu());
    const QString bad = checkGraph(e.graph, x, kN, kD, kK, metric);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
    QCOMPARE(recall(e.graph.ids.view(), truth), 1.0);

    Edges64 edges;
    double lowest = INFINITY;
    for (int i = 0; i < kN; ++i)
      for (const auto& [dist, j] : truth[std::size_t(i)]) {
        edges[{std::min(i, j), std::max(i, j)}] = dist;
        lowest = std::min(lowest, dist);
      }
    const double offset = metric == Metric::InnerProduct ? lowest : 0.0;
    for (auto& [edge, w] : edges)
      w -= offset;
    const UndirectedGraph& g = e.undirected;
    QVERIFY(std::abs(g.weightOffset - offset) <= 1e-5 * std::max(1.0, std::abs(offset)));
    QCOMPARE(g.edgeCount(), std::int64_t(edges.size()));
    for (std::int64_t a = 0; a < g.nodes; ++a)
      for (std::int64_t p = g.offsets[std::size_t(a)]; p < g.offsets[std::size_t(a) + 1]; ++p) {
        const int b = g.targets[std::size_t(p)];
        const auto it = edges.find({std::min(int(a), b), std::max(int(a), b)});
        QVERIFY2(it != edges.end(), qPrintable(QString("%1–%2 is no kNN edge").arg(a).arg(b)));
        QVERIFY(g.weights[std::size_t(p)] >= 0);
        QVERIFY2(std::abs(g.weights[std::size_t(p)] - it->second) <=
                     1e-5 * std::max(1.0, std::abs(offset)),
                 qPrintable(QString("%1–%2: %3 vs %4")
                                .arg(a)
                                .arg(b)
                                .arg(g.weights[std::size_t(p)])
                                .arg(it->second)));
      }

    // Kruskal in float64: the forest's weight and its trees.
    std::vector<std::pair<double, std::pair<int, int>>> sorted;
    for (const auto& [edge, w] : edges)
      sorted.push_back({w, edge});
    std::sort(sorted.begin(), sorted.end());
    Components64 forest(kN);
    double total = 0;
    int trees = kN;
    for (const auto& [w, edge] : sorted)
      if (forest.join(edge.first, edge.second)) {
        total += w;
        --trees;
      }
    QCOMPARE(e.forest->treeCount(), std::int64_t(trees));
    QVERIFY2(std::abs(e.forest->totalWeight() - total) <= 1e-5 * std::max(1.0, total),
             qPrintable(QString("%1 vs %2").arg(e.forest->totalWeight()).arg(total)));

    std::mt19937_64 rng(3);
    int found = 0;
    for (int pair = 0; pair < 40; ++pair) {
      const int a = int(rng() % kN), b = int(rng() % kN);
      const GraphPath path = minimaxPath(*e.forest, a, b);
      // The reference: add edges in weight order until a and b join.
      Components64 joined(kN);
      double bottleneck = a == b ? 0.0 : NAN;
      for (const auto& [w, edge] : sorted) {
        if (joined.find(a) == joined.find(b))
          break;
        joined.join(edge.first, edge.second);
        bottleneck = w;
      }
      if (joined.find(a) != joined.find(b)) {
        QVERIFY(!path.found());
        continue;
      }
      ++found;
      QVERIFY(path.found());
      QCOMPARE(path.nodes.front(), a);
      QCOMPARE(path.nodes.back(), b);
      double largest = 0;
      for (std::size_t s = 0; s + 1 < path.nodes.size(); ++s) {
        const int u = path.nodes[s], w = path.nodes[s + 1];
        const auto it = edges.find({std::min(u, w), std::max(u, w)});
        QVERIFY2(it != edges.end(), qPrintable(QString("step %1–%2 is no edge").arg(u).arg(w)));
        QVERIFY(std::abs(path.steps[s] - it->second) <= 1e-5 * std::max(1.0, std::abs(offset)));
        largest = std::max(largest, it->second);
      }
      if (a != b)
        QVERIFY2(std::abs(largest - bottleneck) <= 1e-6 * std::max(1.0, std::abs(offset)) &&
                     std::abs(path.bottleneck - bottleneck) <=
                         1e-5 * std::max(1.0, std::abs(offset)),
                 qPrintable(QString("pair %1–%2: bottleneck %3, the min-max is %4")
                                .arg(a)
                                .arg(b)
                                .arg(path.bottleneck)
                                .arg(bottleneck)));
    }
    QVERIFY(found >= 30);
  }

  void mapKeepsMetricNeighbours_data() { metrics_data(); }
  void mapKeepsMetricNeighbours() {
    // The map of the metric's graph: finite, and each item's nearest (in the metric, float64)
    // much closer on it than random pairs.
    QFETCH(Metric, metric);
    const std::vector<float> x = directionClusters(kN, kD, 2);
    const MatrixView<float> v{x.data(), kN, kD};
    ExploreParams params;
    params.metric = metric;
    params.k = kK;
    params.neighbours = false;
    params.forest = false;
    params.layout.epochs = 100;
    const Exploration e = explore(v, params, cpu());
    QCOMPARE(e.map.rows(), std::int64_t(kN));
    QCOMPARE(e.map.cols(), std::int64_t(2));
    for (std::int64_t i = 0; i < e.map.rows() * 2; ++i)
      QVERIFY(std::isfinite(e.map.data()[i]));
    const auto onMap = [&](int a, int b) {
      return distance64(e.map.row(a), e.map.row(b), 2, Metric::L2);
    };
    const auto truth = graph64(x, kN, kD, kK, metric);
    std::mt19937_64 rng(4);
    double near = 0, random = 0;
    for (int i = 0; i < kN; ++i)
      for (const auto& [dist, j] : truth[std::size_t(i)]) {
        near += onMap(i, j);
        random += onMap(i, int(rng() % kN));
      }
    qInfo("neighbours %.4f of the random pairs' distance on the map", near / random);
    // measured 0.11 (cos), 0.14 (ip)
    QVERIFY2(near < 0.2 * random, qPrintable(QString::number(near / random)));
  }

  void mergesAndShards_data() { metrics_data(); }
  void mergesAndShards() {
    // GGM merging the exact graphs of two halves, and NN-Descent in four shards under a memory
    // budget: near the float64 graph, every distance its id's.
    QFETCH(Metric, metric);
    const int n = 1200, split = 500;
    const std::vector<float> x = directionClusters(n, kD, 5);
    const MatrixView<float> v{x.data(), n, kD};
    const auto truth = graph64(x, n, kD, kK, metric);
    const KnnResult first = knnGraph({x.data(), split, kD}, kK, metric, cpu());
    const KnnResult second =
        knnGraph({x.data() + std::size_t(split) * kD, n - split, kD}, kK, metric, cpu());
    const KnnResult merged =
        mergeKnnGraphs(v, split, first.ids.view(), second.ids.view(), kK, metric, cpu());
    QString bad = checkGraph(merged, x, n, kD, kK, metric);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
    const double mergedRecall = recall(merged.ids.view(), truth);

    Context budget = cpu();
    budget.memoryBudget = nnDescentBytesPerItem(kD, kK) * std::uint64_t(n / 2 + 100);
    const KnnResult sharded = nnDescentGraph(v, kK, metric, budget);
    QVERIFY2(sharded.report.shards >= 3, sharded.report.describe().c_str());
    bad = checkGraph(sharded, x, n, kD, kK, metric);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
    const double shardedRecall = recall(sharded.ids.view(), truth);
    qInfo("recall@%d: GGM merge of two halves %.4f, %d shards %.4f", kK, mergedRecall,
          sharded.report.shards, shardedRecall);
    // measured 0.9994 (merge), 1.0 (shards)
    QVERIFY2(mergedRecall >= 0.99, qPrintable(QString::number(mergedRecall)));
    QVERIFY2(shardedRecall >= 0.99, qPrintable(QString::number(shardedRecall)));
  }

  void bridgesJoinByTheMetric_data() { metrics_data(); }
  void bridgesJoinByTheMetric() {
    // Two groups pointing opposite ways (norms spread as above), each connected by its 8-NN
    // graph, none between them: --bridge's one edge is the exact nearest cross pair in the
    // metric (float64 over all pairs), weighted as the graph's edges are.
    QFETCH(Metric, metric);
    const int half = 60, n = 2 * half, k = 8;
    std::mt19937_64 rng(9);
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<float> logNorm(std::log(0.3f), std::log(3.0f));
    std::vector<float> x(std::size_t(n) * kD);
    for (int i = 0; i < n; ++i) { // one blob of directions along +e0, the other along −e0
      float* row = x.data() + std::size_t(i) * kD;
      const float scale = std::exp(logNorm(rng));
      row[0] = (i < half ? 1.0f : -1.0f) * scale;
      for (int c = 1; c < kD; ++c)
        row[c] = 0.3f * normal(rng) * scale;
    }
    const MatrixView<float> v{x.data(), n, kD};
    const auto truth = graph64(x, n, kD, k, metric);
    Components64 groups(n);
    for (int i = 0; i < n; ++i)
      for (const auto& [dist, j] : truth[std::size_t(i)]) {
        QVERIFY((i < half) == (j < half)); // no kNN edge between the groups
        groups.join(i, j);
      }
    QVERIFY(groups.find(0) == groups.find(half - 1) && groups.find(half) == groups.find(n - 1));
    const KnnResult g = knnGraph(v, k, metric, cpu());
    const UndirectedGraph graph = symmetrizeKnnGraph(g.ids.view(), g.distances.view(), metric);
    QCOMPARE(connectedComponents(graph).count, 2);
    const std::vector<WeightedEdge> bridges =
        bridgeComponents(graph, nearestOutside(v, metric, cpu())).edges;
    QCOMPARE(bridges.size(), std::size_t(1));
    std::pair<double, std::pair<int, int>> nearest{INFINITY, {-1, -1}};
    for (int a = 0; a < half; ++a)
      for (int b = half; b < n; ++b)
        nearest = std::min(nearest, {distance64(x.data() + std::size_t(a) * kD,
                                                x.data() + std::size_t(b) * kD, kD, metric),
                                     {a, b}});
    const WeightedEdge& e = bridges.front();
    QCOMPARE(std::pair(std::min(e.a, e.b), std::max(e.a, e.b)), nearest.second);
    const double want = nearest.first - graph.weightOffset;
    QVERIFY2(std::abs(e.weight - want) <= 1e-5 * std::max(1.0, std::abs(want)),
             qPrintable(QString("%1 vs %2").arg(e.weight).arg(want)));
    const SpanningForest forest(withEdges(graph, bridges), cpu());
    const GraphPath path = minimaxPath(forest, 0, n - 1);
    QVERIFY(path.found());
    QVERIFY(path.bottleneck >= e.weight); // the path crosses the bridge
  }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
