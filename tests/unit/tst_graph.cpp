// Min-max paths, the spanning forest, shortest paths and bridging, against brute force.
#include "DeviceSkip.h"
#include "Oracle.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <random>

Q_DECLARE_METATYPE(nearscape::Backend)

using namespace nearscape;

namespace {

struct RandomGraph {
  std::vector<std::int32_t> ids;
  std::vector<float> dists;
  std::vector<float> points;
  int n = 0, k = 0;
};

/// A kNN graph of random 2-D points (exact, from the test support's float64 oracle).
RandomGraph randomKnn(int n, int k, std::uint64_t seed, float spread = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, spread);
  RandomGraph g;
  g.n = n;
  g.k = k;
  g.points.resize(std::size_t(2 * n));
  for (auto& v : g.points)
    v = normal(rng);
  const MatrixView<float> v{g.points.data(), n, 2};
  const test::OracleKnn ref = test::oracleKnn(v, v, k, Metric::L2, true);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < k; ++c) {
      g.ids.push_back(ref.idRow(r)[c]);
      g.dists.push_back(float(ref.distanceRow(r)[c]));
    }
  return g;
}

/// All-pairs min-max values by Floyd-Warshall on (max, min).
std::vector<double> bruteMinimax(const UndirectedGraph& g) {
  const std::int64_t n = g.nodes;
  std::vector<double> b(std::size_t(n * n), INFINITY);
  for (std::int64_t i = 0; i < n; ++i) {
    b[i * n + i] = 0;
    for (std::int64_t e = g.offsets[i]; e < g.offsets[i + 1]; ++e)
      b[i * n + g.targets[e]] = std::min<double>(b[i * n + g.targets[e]], g.weights[e]);
  }
  for (std::int64_t m = 0; m < n; ++m)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        b[i * n + j] = std::min(b[i * n + j], std::max(b[i * n + m], b[m * n + j]));
  return b;
}

Context on(Backend backend) {
  Context c;
  c.backend = backend;
  return c;
}

void addBackendRows(const char* name) {
  for (Backend b : {Backend::Cpu, Backend::Cuda})
    QTest::newRow(
        qPrintable(QString("%1 %2").arg(name).arg(QString::fromUtf8(backendName(b).data()))))
        << b;
}

float edgeWeight(const UndirectedGraph& g, std::int32_t a, std::int32_t b) {
  for (std::int64_t e = g.offsets[a]; e < g.offsets[a + 1]; ++e)
    if (g.targets[e] == b)
      return g.weights[e];
  return -1;
}

} // namespace

class TestGraph : public QObject {
  Q_OBJECT

private slots:
  void symmetrizeAddsReverseEdges() {
    std::vector<std::int32_t> ids = {1, 2, 0, 1, 0, 1};
    std::vector<float> d = {1, 2, 1, 3, 2, 3};
    const UndirectedGraph g = symmetrizeKnnGraph({ids.data(), 3, 2}, {d.data(), 3, 2}, Metric::L2);
    QCOMPARE(g.edgeCount(), 3);
    QCOMPARE(edgeWeight(g, 2, 1), 3.0f);
    std::vector<std::int32_t> bad = {5, 0, 0, 1, 0, 1};
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             symmetrizeKnnGraph({bad.data(), 3, 2}, {d.data(), 3, 2}, Metric::L2));
  }

  void minimaxMatchesBruteForce_data() {
    QTest::addColumn<int>("seed");
    QTest::addColumn<Backend>("backend");
    for (int s = 1; s <= 4; ++s)
      for (Backend b : {Backend::Cpu, Backend::Cuda})
        QTest::newRow(
            qPrintable(QString("seed %1 %2").arg(s).arg(QString::fromUtf8(backendName(b).data()))))
            << s << b;
  }
  void minimaxMatchesBruteForce() {
    QFETCH(int, seed);
    QFETCH(Backend, backend);
    SKIP_WITHOUT_DEVICE(backend);
    const RandomGraph r = randomKnn(70, 3, std::uint64_t(seed), 1.0f);
    const UndirectedGraph g =
        symmetrizeKnnGraph({r.ids.data(), r.n, r.k}, {r.dists.data(), r.n, r.k}, Metric::L2);
    const SpanningForest forest(g, on(backend));
    const auto brute = bruteMinimax(g);
    for (std::int32_t a = 0; a < r.n; ++a)
      for (std::int32_t b = 0; b < r.n; ++b) {
        const GraphPath p = minimaxPath(forest, a, b);
        const double expected = brute[std::size_t(a) * r.n + b];
        if (!std::isfinite(expected)) {
          QVERIFY(!p.found());
          continue;
        }
        QVERIFY(p.found());
        QCOMPARE(p.nodes.front(), a);
        QCOMPARE(p.nodes.back(), b);
        QCOMPARE(double(p.bottleneck), expected);
        for (std::size_t i = 0; i + 1 < p.nodes.size(); ++i)
          QCOMPARE(edgeWeight(g, p.nodes[i], p.nodes[i + 1]), p.steps[i]); // a real graph path
        if (!p.steps.empty())
          QCOMPARE(p.steps[std::size_t(p.bottleneckIndex)], p.bottleneck);
      }
  }

  void forestWeightEqualsPrim_data() {
    QTest::addColumn<Backend>("backend");
    addBackendRows("forest");
  }
  void forestWeightEqualsPrim() {
    QFETCH(Backend, backend);
    SKIP_WITHOUT_DEVICE(backend);
    const RandomGraph r = randomKnn(400, 6, 9, 1.0f);
    const UndirectedGraph g =
        symmetrizeKnnGraph({r.ids.data(), r.n, r.k}, {r.dists.data(), r.n, r.k}, Metric::L2);
    const SpanningForest forest(g, on(backend));
    // Prim from every unvisited node (a forest), as an independent oracle.
    std::vector<bool> in(std::size_t(g.nodes), false);
    double prim = 0;
    std::int64_t trees = 0;
    for (std::int64_t s = 0; s < g.nodes; ++s) {
      if (in[s])
        continue;
      ++trees;
      using Item = std::pair<float, std::int32_t>;
      std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
      heap.push({0.0f, std::int32_t(s)});
      while (!heap.empty()) {
        const auto [w, u] = heap.top();
        heap.pop();
        if (in[u])
          continue;
        in[u] = true;
        prim += w;
        for (std::int64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e)
          if (!in[g.targets[e]])
            heap.push({g.weights[e], g.targets[e]});
      }
    }
    QVERIFY(std::abs(forest.totalWeight() - prim) <= 1e-9 * prim);
    QCOMPARE(forest.treeCount(), trees);
    QCOMPARE(std::int64_t(forest.edges().size()), g.nodes - trees);
  }

  void cpuForestWithHeavyTies_data() {
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("edges");
    QTest::addColumn<int>("distinctWeights");
    QTest::newRow("ties everywhere") << 3000 << 9000 << 3;
    QTest::newRow("some ties, many components") << 5000 << 3000 << 50;
    QTest::newRow("one weight") << 400 << 2000 << 1;
  }
  void cpuForestWithHeavyTies() {
    // The CPU forest against a Kruskal written here: same weight and trees, and its edges are
    // graph edges that join every component without a cycle.
    QFETCH(int, nodes);
    QFETCH(int, edges);
    QFETCH(int, distinctWeights);
    std::mt19937_64 rng(std::uint64_t(nodes) * 31 + std::uint64_t(edges));
    std::uniform_int_distribution<int> node(0, nodes - 1), weight(0, distinctWeights - 1);
    std::vector<WeightedEdge> list;
    for (int e = 0; e < edges; ++e) {
      const int a = node(rng), b = node(rng);
      if (a != b)
        list.push_back({a, b, float(weight(rng)) * 0.25f + 0.5f});
    }
    const UndirectedGraph g = graphFromEdges(nodes, list);
    const SpanningForest forest(g, on(Backend::Cpu));
    std::vector<int> parent(static_cast<std::size_t>(nodes));
    auto find = [&](int v) {
      while (parent[std::size_t(v)] != v)
        v = parent[std::size_t(v)] = parent[std::size_t(parent[std::size_t(v)])];
      return v;
    };
    std::iota(parent.begin(), parent.end(), 0);
    std::vector<WeightedEdge> sorted = list;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& x, const auto& y) { return x.weight < y.weight; });
    double kruskal = 0;
    std::int64_t trees = nodes;
    for (const auto& e : sorted)
      if (const int a = find(e.a), b = find(e.b); a != b) {
        parent[std::size_t(a)] = b;
        kruskal += e.weight;
        --trees;
      }
    QCOMPARE(forest.totalWeight(), kruskal);
    QCOMPARE(forest.treeCount(), trees);
    QCOMPARE(std::int64_t(forest.edges().size()), std::int64_t(nodes) - trees);
    std::iota(parent.begin(), parent.end(), 0);
    for (const auto& e : forest.edges()) {
      bool inGraph = false; // a graph edge, at its weight
      for (std::int64_t x = g.offsets[e.a]; x < g.offsets[e.a + 1]; ++x)
        inGraph |= g.targets[std::size_t(x)] == e.b && g.weights[std::size_t(x)] == e.weight;
      QVERIFY(inGraph);
      const int a = find(e.a), b = find(e.b);
      QVERIFY2(a != b, "the forest has a cycle");
      parent[std::size_t(a)] = b;
    }
    // Acyclic, nodes − components edges, each inside a component: it spans every component.
  }

  void gpuForestEqualsKruskal_data() {
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("edges");
    QTest::addColumn<int>("distinctWeights");
    QTest::newRow("ties everywhere") << 3000 << 9000 << 3;
    QTest::newRow("some ties, many components") << 5000 << 3000 << 50;
    QTest::newRow("sparse weights, one component") << 20000 << 200000 << 1000000;
    QTest::newRow("isolated nodes only") << 50 << 0 << 1;
  }
  void gpuForestEqualsKruskal() {
    QFETCH(int, nodes);
    QFETCH(int, edges);
    QFETCH(int, distinctWeights);
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    std::mt19937_64 rng(std::uint64_t(nodes) * 31 + std::uint64_t(edges));
    std::uniform_int_distribution<int> node(0, nodes - 1), weight(0, distinctWeights - 1);
    std::vector<WeightedEdge> list;
    for (int e = 0; e < edges; ++e) {
      const int a = node(rng), b = node(rng);
      if (a != b)
        list.push_back({a, b, float(weight(rng)) * 0.25f});
    }
    const UndirectedGraph g = graphFromEdges(nodes, list);
    const SpanningForest cpu(g, on(Backend::Cpu)), gpu(g, on(Backend::Cuda));
    QCOMPARE(QString::fromStdString(gpu.builtOn()), QString("CUDA (Borůvka)"));
    QCOMPARE(gpu.treeCount(), cpu.treeCount());
    QCOMPARE(gpu.totalWeight(), cpu.totalWeight());
    // Ties are broken alike, so the forests are the same edges (in any order).
    auto sorted = [](std::vector<WeightedEdge> v) {
      for (auto& e : v)
        if (e.a > e.b)
          std::swap(e.a, e.b);
      std::sort(v.begin(), v.end(), [](const WeightedEdge& x, const WeightedEdge& y) {
        return x.a != y.a ? x.a < y.a : x.b < y.b;
      });
      return v;
    };
    const auto c = sorted(cpu.edges()), d = sorted(gpu.edges());
    QCOMPARE(d.size(), c.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
      QCOMPARE(d[i].a, c[i].a);
      QCOMPARE(d[i].b, c[i].b);
      QCOMPARE(d[i].weight, c[i].weight);
    }
    for (std::int32_t v = 0; v < nodes; v += 97) // paths are walks of the same tree
      QCOMPARE(gpu.path(0, v), cpu.path(0, v));
  }

  void shortestPathMatchesBruteForce() {
    const RandomGraph r = randomKnn(60, 3, 11, 1.0f);
    const UndirectedGraph g =
        symmetrizeKnnGraph({r.ids.data(), r.n, r.k}, {r.dists.data(), r.n, r.k}, Metric::L2);
    // Floyd-Warshall on sums.
    const std::int64_t n = g.nodes;
    std::vector<double> s(std::size_t(n * n), INFINITY);
    for (std::int64_t i = 0; i < n; ++i) {
      s[i * n + i] = 0;
      for (std::int64_t e = g.offsets[i]; e < g.offsets[i + 1]; ++e)
        s[i * n + g.targets[e]] = std::min<double>(s[i * n + g.targets[e]], g.weights[e]);
    }
    for (std::int64_t m = 0; m < n; ++m)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          s[i * n + j] = std::min(s[i * n + j], s[i * n + m] + s[m * n + j]);
    const SpanningForest forest(g);
    for (std::int32_t a = 0; a < n; a += 7)
      for (std::int32_t b = 0; b < n; ++b) {
        const GraphPath p = shortestPath(g, a, b);
        if (!std::isfinite(s[a * n + b])) {
          QVERIFY(!p.found());
          continue;
        }
        QVERIFY(std::abs(p.total - s[a * n + b]) <= 1e-5 * (1 + s[a * n + b]));
        // A walk from a to b whose every step is an edge of g of the step's weight.
        QCOMPARE(p.nodes.front(), a);
        QCOMPARE(p.nodes.back(), b);
        QCOMPARE(p.steps.size() + 1, p.nodes.size());
        for (std::size_t i = 0; i < p.steps.size(); ++i) {
          bool edge = false;
          for (std::int64_t e = g.offsets[p.nodes[i]]; e < g.offsets[p.nodes[i] + 1]; ++e)
            edge |= g.targets[e] == p.nodes[i + 1] && g.weights[e] == p.steps[i];
          QVERIFY(edge);
        }
        const GraphPath mm = minimaxPath(forest, a, b);
        QVERIFY(p.total <= mm.total + 1e-5);            // shortest never longer in total
        QVERIFY(mm.bottleneck <= p.bottleneck + 1e-6f); // min-max never has a larger step
      }
  }

  void samePointAndBadIds() {
    const RandomGraph r = randomKnn(30, 3, 12);
    const UndirectedGraph g =
        symmetrizeKnnGraph({r.ids.data(), r.n, r.k}, {r.dists.data(), r.n, r.k}, Metric::L2);
    const SpanningForest forest(g);
    const GraphPath p = minimaxPath(forest, 4, 4);
    QCOMPARE(p.nodes, std::vector<std::int32_t>{4});
    QVERIFY(p.steps.empty());
    QCOMPARE(p.bottleneck, 0.0f);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, minimaxPath(forest, 0, 30));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, minimaxPath(forest, -1, 3));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, shortestPath(g, 0, 99));
  }

  void bridgingConnectsWithExactNearestEdges() {
    // Three far-apart clusters: their 3-NN graphs are disconnected.
    std::mt19937_64 rng(13);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    const int per = 40, n = 3 * per;
    std::vector<float> pts(std::size_t(2 * n));
    for (int i = 0; i < n; ++i) {
      pts[2 * i] = normal(rng) + 100.0f * (i / per);
      pts[2 * i + 1] = normal(rng) + (i / per == 2 ? 50.0f : 0.0f);
    }
    const MatrixView<float> v{pts.data(), n, 2};
    const KnnResult knn = knnReference(v, v, 3, Metric::L2, true);
    const UndirectedGraph g = symmetrizeKnnGraph(knn.ids.view(), knn.distances.view(), Metric::L2);
    QCOMPARE(connectedComponents(g).count, 3);
    const SpanningForest before(g);
    QVERIFY(!minimaxPath(before, 0, n - 1).found());

    const auto bridges = bridgeComponents(g, nearestOutside(v, Metric::L2, on(Backend::Cpu))).edges;
    const UndirectedGraph joined = withEdges(g, bridges);
    QCOMPARE(connectedComponents(joined).count, 1);
    const SpanningForest after(joined);
    QVERIFY(minimaxPath(after, 0, n - 1).found());
    // Every bridge is the exact nearest pair between its component and the rest.
    const Components comps = connectedComponents(g);
    for (const auto& e : bridges) {
      const std::int32_t c = comps.label[e.a];
      double best = INFINITY;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (comps.label[i] == c && comps.label[j] != c)
            best = std::min(best, exactDistance(v.row(i), v.row(j), 2, Metric::L2));
      QVERIFY(std::abs(e.weight - best) <= 1e-5 * best);
    }
  }

  void innerProductWeightsAreNonNegative() {
    const RandomGraph r = randomKnn(200, 5, 14);
    const MatrixView<float> v{r.points.data(), r.n, 2};
    const KnnResult knn = knnReference(v, v, 5, Metric::InnerProduct, true);
    const UndirectedGraph g =
        symmetrizeKnnGraph(knn.ids.view(), knn.distances.view(), Metric::InnerProduct);
    QVERIFY(!g.weightNote.empty());
    for (float w : g.weights)
      QVERIFY(w >= 0);
    QCOMPARE(*std::min_element(g.weights.begin(), g.weights.end()), 0.0f);
  }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "tst_graph.moc"
