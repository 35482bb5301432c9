// The explore pipeline: its stages in order and equal to running them by hand, a supplied stage
// never recomputed, progress that never goes back, and a stop mid-pipeline ending in Cancelled.
#include "DeviceSkip.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cstring>
#include <random>

Q_DECLARE_METATYPE(nearscape::Backend)

using namespace nearscape;

namespace {

/// `clusters` Gaussian blobs of `n` items in d dimensions, seeded; far apart when `spread` is
/// large.
std::vector<float> blobs(int n, int d, int clusters, float spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> centres(std::size_t(clusters * d));
  for (auto& c : centres)
    c = spread * normal(rng);
  std::vector<float> x(std::size_t(n) * std::size_t(d));
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < d; ++c)
      x[std::size_t(i * d + c)] = centres[std::size_t((i % clusters) * d + c)] + normal(rng);
  return x;
}

Context contextFor(Backend backend) {
  Context c;
  c.backend = backend;
  c.seed = 11;
  return c;
}

bool sameFloats(const Matrix<float>& a, const Matrix<float>& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), std::size_t(a.view().size()) * sizeof(float)) == 0;
}

} // namespace

class TestExplore : public QObject {
  Q_OBJECT

private slots:
  void stagesRunInOrderAsByHand_data() {
    QTest::addColumn<Backend>("backend");
    QTest::addColumn<int>("dim");
    QTest::newRow("cpu 2D") << Backend::Cpu << 2;
    QTest::newRow("cpu 3D") << Backend::Cpu << 3;
    QTest::newRow("cuda 2D") << Backend::Cuda << 2;
  }
  void stagesRunInOrderAsByHand() {
    QFETCH(Backend, backend);
    QFETCH(int, dim);
    SKIP_WITHOUT_DEVICE(backend);
    const int n = 800, d = 10;
    const std::vector<float> x = blobs(n, d, 4, 6.0f, 1);
    const MatrixView<float> data{x.data(), n, d};
    const Context context = contextFor(backend);
    ExploreParams params;
    params.k = 10;
    params.layout.dim = dim;
    params.layout.epochs = 40;
    std::vector<ExploreStage> order;
    int layoutReports = 0;
    ExploreStages stages;
    stages.onStage = [&](ExploreStage stage, const Exploration& so) {
      order.push_back(stage);
      if (stage == ExploreStage::Graph) // later stages not yet run
        QVERIFY(!so.neighbours && so.map.empty() && !so.forest);
    };
    stages.onLayout = [&](const MatrixView<float>& positions, double) {
      QCOMPARE(positions.rows, std::int64_t(n));
      QCOMPARE(positions.cols, std::int64_t(dim));
      ++layoutReports;
    };
    const Exploration e = explore(data, params, context, noJobControl(), stages);
    QCOMPARE(order, (std::vector<ExploreStage>{ExploreStage::Graph, ExploreStage::Neighbours,
                                               ExploreStage::Map, ExploreStage::Forest}));
    QVERIFY(layoutReports >= 1);
    QVERIFY(!e.graphSupplied && !e.startSupplied && !e.mapSupplied);

    // Each stage equals the engine call it stands for.
    QCOMPARE(e.method, GraphMethod::Exact); // small data: exact is the cheaper way
    const KnnResult g = knnGraph(data, params.k, Metric::L2, context);
    QVERIFY(std::memcmp(e.graph.ids.data(), g.ids.data(), sizeof(std::int32_t) * n * 10) == 0);
    const KnnResult one = e.neighbours->search({data.row(5), 1, d}, 3);
    QCOMPARE(one.ids.row(0)[0], 5);
    PcaParams pca;
    pca.components = dim;
    pca.maxSampleRows = ExploreParams{}.pca.maxSampleRows;
    const PcaResult start = computePca(data, pca, context);
    QVERIFY(sameFloats(e.start, start.coordinates));
    const Matrix<float> map = layoutGraph(g.ids.view(), g.distances.view(),
                                          start.coordinates.view(), params.layout, context);
    QVERIFY(sameFloats(e.map, map));
    const UndirectedGraph undirected =
        symmetrizeKnnGraph(g.ids.view(), g.distances.view(), Metric::L2);
    const SpanningForest forest(undirected, context);
    QCOMPARE(e.undirected.edgeCount(), undirected.edgeCount());
    QCOMPARE(e.forest->totalWeight(), forest.totalWeight());
    QCOMPARE(e.forest->edges().size(), forest.edges().size());
    QVERIFY(e.bridges.empty());
  }

  void suppliedStagesAreNotRecomputed() {
    const int n = 500, d = 8;
    const std::vector<float> x = blobs(n, d, 3, 5.0f, 2);
    const MatrixView<float> data{x.data(), n, d};
    const Context context = contextFor(Backend::Cpu);
    ExploreParams params;
    params.k = 12;
    params.layout.epochs = 30;
    const KnnResult given = knnGraph(data, 6, Metric::L2, context); // another k than params.k

    // A supplied graph is used as it is (its storage shared, not rebuilt).
    int graphAsked = 0, layoutReports = 0, startAsked = 0;
    ExploreStages stages;
    stages.graph = [&](const Exploration&) {
      ++graphAsked;
      return std::optional<KnnResult>(given);
    };
    stages.onLayout = [&](const MatrixView<float>&, double) { ++layoutReports; };
    const Exploration a = explore(data, params, context, noJobControl(), stages);
    QCOMPARE(graphAsked, 1);
    QVERIFY(a.graphSupplied);
    QCOMPARE(a.graph.ids.data(), given.ids.data());
    QCOMPARE(a.graph.ids.cols(), std::int64_t(6));
    QVERIFY(layoutReports > 0);

    // A supplied map: neither its start nor the layout runs.
    layoutReports = 0;
    stages.map = [&](const Exploration&) { return std::optional<Matrix<float>>(a.map); };
    stages.start = [&](const Exploration&) {
      ++startAsked;
      return std::optional<Matrix<float>>();
    };
    const Exploration b = explore(data, params, context, noJobControl(), stages);
    QVERIFY(b.mapSupplied && !b.startSupplied);
    QCOMPARE(b.map.data(), a.map.data());
    QCOMPARE(startAsked, 0);
    QCOMPARE(layoutReports, 0);
    QVERIFY(b.start.empty());

    // A supplied start: the layout starts from it (no PCA), as layoutGraph would.
    std::vector<float> origin(std::size_t(n) * 2);
    for (std::size_t i = 0; i < origin.size(); ++i)
      origin[i] = float(i % 17) - 8.0f;
    stages.map = {};
    stages.start = [&](const Exploration&) {
      ++startAsked;
      return std::optional<Matrix<float>>(Matrix<float>(origin, n, 2));
    };
    const Exploration c = explore(data, params, context, noJobControl(), stages);
    QCOMPARE(startAsked, 1);
    QVERIFY(c.startSupplied && !c.mapSupplied);
    const Matrix<float> byHand = layoutGraph(given.ids.view(), given.distances.view(),
                                             {origin.data(), n, 2}, params.layout, context);
    QVERIFY(sameFloats(c.map, byHand));
  }

  void stagesTurnedOff() {
    const int n = 300, d = 6;
    const std::vector<float> x = blobs(n, d, 2, 4.0f, 3);
    ExploreParams params;
    params.k = 5;
    params.neighbours = params.map = params.forest = false;
    std::vector<ExploreStage> order;
    ExploreStages stages;
    stages.onStage = [&](ExploreStage stage, const Exploration&) { order.push_back(stage); };
    const Exploration e =
        explore({x.data(), n, d}, params, contextFor(Backend::Cpu), noJobControl(), stages);
    QCOMPARE(order, std::vector<ExploreStage>{ExploreStage::Graph});
    QCOMPARE(e.graph.ids.rows(), std::int64_t(n));
    QVERIFY(!e.neighbours && e.map.empty() && e.start.empty() && !e.forest);
    QCOMPARE(e.undirected.nodes, std::int64_t(0));
  }

  void bridgeJoinsComponents() {
    // Two far-apart blobs and a small k: two components, joined by bridge edges.
    const int n = 400, d = 4;
    std::vector<float> x = blobs(n, d, 2, 0.0f, 4);
    for (int i = 0; i < n; i += 2)
      x[std::size_t(i * d)] += 1000.0f;
    ExploreParams params;
    params.k = 5;
    params.neighbours = params.map = false;
    const Context context = contextFor(Backend::Cpu);
    const Exploration apart = explore({x.data(), n, d}, params, context);
    QCOMPARE(apart.forest->treeCount(), std::int64_t(2));
    params.bridge = true;
    const Exploration joined = explore({x.data(), n, d}, params, context);
    QCOMPARE(joined.forest->treeCount(), std::int64_t(1));
    QCOMPARE(joined.bridges.size(), std::size_t(1));
    QCOMPARE(joined.undirected.edgeCount(), apart.undirected.edgeCount() + 1);
    QVERIFY(minimaxPath(*joined.forest, 0, 1).found());
  }

  void workBesideTheForestSeesTheBridgedGraph() {
    const int n = 400, d = 4;
    std::vector<float> x = blobs(n, d, 2, 0.0f, 4);
    for (int i = 0; i < n; i += 2)
      x[std::size_t(i * d)] += 1000.0f;
    ExploreParams params;
    params.k = 5;
    params.neighbours = params.map = false;
    params.bridge = true;
    ExploreStages stages;
    std::int64_t edges = -1;
    GraphPath shortest;
    stages.besideForest = [&](const UndirectedGraph& g) {
      edges = g.edgeCount();
      shortest = shortestPath(g, 0, 1); // items 0 and 1 lie in different blobs: the bridge
    };
    const Exploration e =
        explore({x.data(), n, d}, params, contextFor(Backend::Cpu), noJobControl(), stages);
    QCOMPARE(edges, e.undirected.edgeCount());
    QVERIFY(shortest.found());
    QCOMPARE(shortest.total, shortestPath(e.undirected, 0, 1).total);
    // What the work throws ends the pipeline with it.
    stages.besideForest = [](const UndirectedGraph&) { throw InvalidArgument("beside"); };
    QVERIFY_THROWS_EXCEPTION(
        InvalidArgument,
        explore({x.data(), n, d}, params, contextFor(Backend::Cpu), noJobControl(), stages));
  }

  void progressNeverGoesBack() {
    const int n = 1200, d = 12;
    const std::vector<float> x = blobs(n, d, 5, 5.0f, 5);
    ExploreParams params;
    params.k = 10;
    params.bridge = true;
    params.layout.epochs = 50;
    std::vector<double> seen;
    JobControl job([&](double f, const std::string&) { seen.push_back(f); },
                   std::chrono::milliseconds(0));
    (void)explore({x.data(), n, d}, params, contextFor(Backend::Cpu), job);
    QVERIFY(seen.size() > 20);
    QCOMPARE(seen.front(), 0.0);
    for (std::size_t i = 1; i < seen.size(); ++i)
      QVERIFY2(seen[i] >= seen[i - 1],
               qPrintable(QString("progress %1 after %2").arg(seen[i]).arg(seen[i - 1])));
    QCOMPARE(seen.back(), 1.0);

    // With a supplied graph and stages turned off: still 0 → 1, forward only.
    seen.clear();
    params.neighbours = false;
    const KnnResult g = knnGraph({x.data(), n, d}, 10, Metric::L2, contextFor(Backend::Cpu));
    ExploreStages stages;
    stages.graph = [&](const Exploration&) { return std::optional<KnnResult>(g); };
    (void)explore({x.data(), n, d}, params, contextFor(Backend::Cpu), job, stages);
    for (std::size_t i = 1; i < seen.size(); ++i)
      QVERIFY(seen[i] >= seen[i - 1]);
    QCOMPARE(seen.back(), 1.0);
  }

  void cancelledMidPipeline_data() {
    QTest::addColumn<int>("stopAt"); // 0: after the graph; 1: inside the layout; 2: before
    QTest::newRow("after the graph") << 0;
    QTest::newRow("inside the layout") << 1;
    QTest::newRow("before it starts") << 2;
  }
  void cancelledMidPipeline() {
    QFETCH(int, stopAt);
    const int n = 1000, d = 8;
    const std::vector<float> x = blobs(n, d, 4, 5.0f, 6);
    ExploreParams params;
    params.k = 10;
    params.layout.epochs = 200;
    JobControl job;
    if (stopAt == 2)
      job.requestStop();
    std::vector<ExploreStage> order;
    int layoutReports = 0;
    ExploreStages stages;
    stages.onStage = [&](ExploreStage stage, const Exploration&) {
      order.push_back(stage);
      if (stopAt == 0 && stage == ExploreStage::Graph)
        job.requestStop();
    };
    stages.onLayout = [&](const MatrixView<float>&, double) {
      if (stopAt == 1 && ++layoutReports == 2)
        job.requestStop();
    };
    QVERIFY_THROWS_EXCEPTION(
        Cancelled, explore({x.data(), n, d}, params, contextFor(Backend::Cpu), job, stages));
    // Nothing after the stop finished.
    if (stopAt == 0)
      QCOMPARE(order, std::vector<ExploreStage>{ExploreStage::Graph});
    if (stopAt == 1)
      QCOMPARE(order, (std::vector<ExploreStage>{ExploreStage::Graph, ExploreStage::Neighbours}));
    if (stopAt == 2)
      QVERIFY(order.empty());
  }

  void badRequestsAreRefused() {
    const int n = 200, d = 5;
    const std::vector<float> x = blobs(n, d, 2, 4.0f, 7);
    const MatrixView<float> data{x.data(), n, d};
    const Context cpu = contextFor(Backend::Cpu);
    ExploreParams params;
    params.k = 5;
    params.layout.dim = 4;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, explore(data, params, cpu));
    params.layout.dim = 2;
    params.k = n; // beyond n − 1
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, explore(data, params, cpu));
    params.k = 5;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, explore({x.data(), 1, d}, params, cpu));
    ExploreStages stages;
    stages.map = [&](const Exploration&) { // n × 3 for a 2D map
      return std::optional<Matrix<float>>(Matrix<float>(std::vector<float>(n * 3), n, 3));
    };
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, explore(data, params, cpu, noJobControl(), stages));
    stages.map = {};
    stages.graph = [&](const Exploration&) { // a graph of other data
      return std::optional<KnnResult>(knnGraph({x.data(), n / 2, d}, 5, Metric::L2, cpu));
    };
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, explore(data, params, cpu, noJobControl(), stages));
  }
};

QTEST_APPLESS_MAIN(TestExplore)
#include "tst_explore.moc"
