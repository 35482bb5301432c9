// The graph index's search graph (CAGRA §3.2's rank-based pruning, reverse edges, merge): the CPU
// pruning and its GPU twin against an oracle written here from the rule's definition, on random
// lists with duplicates, self ids and gaps, and on a real kNN graph; the GPU's whole graph against
// the CPU's; the optimised graph's structure. GPU rows QSKIP without a device.
#include "DeviceSkip.h"
#include "gpu/Dispatch.h"
#include "index/IndexDevice.h"
#include "index/ReorderedGraph.h"
#include "index/SearchGraph.h"
#include "nearscape/knn/Knn.h"

#include <QTest>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

using namespace nearscape;

namespace {

/// The rule from its definition, naively: node x's distinct neighbours y (ids ≥ 0, not x) at
/// their first rank r(y); y's detours count the pairs (i, p) with list[i] a neighbour and
/// knn[list[i]][p] == y, both i and p below r(y); keep `degree` by (detours, rank).
std::vector<std::int32_t> oraclePrune(const std::vector<std::int32_t>& knn, std::int64_t n, int K,
                                      int degree) {
  std::vector<std::int32_t> out(std::size_t(n) * std::size_t(degree), -1);
  for (std::int64_t x = 0; x < n; ++x) {
    const std::int32_t* list = knn.data() + x * K;
    std::map<std::int32_t, int> firstRank;
    for (int j = K - 1; j >= 0; --j)
      if (list[j] >= 0 && list[j] != x)
        firstRank[list[j]] = j;
    std::vector<std::pair<std::pair<int, int>, std::int32_t>> keyed; // ((detours, rank), id)
    for (const auto& [y, r] : firstRank) {
      int detours = 0;
      for (int i = 0; i < r; ++i) {
        if (list[i] < 0 || list[i] == x)
          continue;
        for (int p = 0; p < r; ++p)
          detours += knn[std::size_t(list[i]) * std::size_t(K) + std::size_t(p)] == y;
      }
      keyed.push_back({{detours, r}, y});
    }
    std::sort(keyed.begin(), keyed.end());
    for (int j = 0; j < std::min<int>(degree, int(keyed.size())); ++j)
      out[std::size_t(x) * std::size_t(degree) + std::size_t(j)] = keyed[std::size_t(j)].second;
  }
  return out;
}

/// Lists of random ids with the awkward cases: −1 gaps, the row itself, an id listed twice.
std::vector<std::int32_t> randomLists(std::int64_t n, int K, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> id(0, std::int32_t(n - 1));
  std::vector<std::int32_t> knn(std::size_t(n) * std::size_t(K));
  for (std::int64_t x = 0; x < n; ++x)
    for (int j = 0; j < K; ++j) {
      const int kind = int(rng() % 20);
      std::int32_t& v = knn[std::size_t(x * K + j)];
      v = kind == 0 ? -1 : kind == 1 ? std::int32_t(x) : id(rng);
      if (kind == 2 && j > 0)
        v = knn[std::size_t(x * K + j - 1)]; // a duplicate at the next rank
    }
  return knn;
}

/// A real kNN graph: seeded Gaussian clusters, the exact K nearest of each row.
std::vector<std::int32_t> realLists(std::int64_t n, int d, int K) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> g;
  std::vector<float> x(std::size_t(n) * std::size_t(d));
  for (std::int64_t i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j)
      x[std::size_t(i * d + j)] = g(rng) + float(i % 5) * 3.0f;
  Context cpu;
  cpu.backend = Backend::Cpu;
  const KnnResult r = knnGraph({x.data(), n, d}, K, Metric::L2, cpu);
  return {r.ids.data(), r.ids.data() + r.ids.rows() * r.ids.cols()};
}

std::vector<std::int32_t> devicePrune(const std::vector<std::int32_t>& knn, std::int64_t n, int K,
                                      int degree) {
  Context gpu;
  gpu.backend = Backend::Cuda;
  return gpu::requireDevice<gpu::IndexDevice>().pruneByDetours({knn.data(), n, K}, degree, gpu);
}

} // namespace

class TestSearchGraph : public QObject {
  Q_OBJECT

private slots:
  void pruningFollowsTheRule_data() {
    QTest::addColumn<bool>("real");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("degree");
    QTest::newRow("random lists, K 12 → 7") << false << 300 << 12 << 7;
    QTest::newRow("random lists, K 40 → 40") << false << 200 << 40 << 40;
    QTest::newRow("random lists, K 5 → 9 (fewer than asked)") << false << 100 << 5 << 9;
    QTest::newRow("kNN graph, K 32 → 16") << true << 1500 << 32 << 16;
  }
  void pruningFollowsTheRule() {
    QFETCH(bool, real);
    QFETCH(int, n);
    QFETCH(int, K);
    QFETCH(int, degree);
    const auto knn = real ? realLists(n, 8, K) : randomLists(n, K, std::uint64_t(n * K));
    const auto expected = oraclePrune(knn, n, K, degree);
    const auto cpu = index::pruneByDetoursCpu({knn.data(), n, K}, degree, 2);
    QCOMPARE(cpu, expected);
    // Not every row keeps all of its list: the rule is doing something.
    std::int64_t kept =
        std::count_if(cpu.begin(), cpu.end(), [](std::int32_t v) { return v >= 0; });
    QVERIFY(kept > 0);
  }

  void devicePruningEqualsTheCpus_data() { pruningFollowsTheRule_data(); }
  void devicePruningEqualsTheCpus() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    QFETCH(bool, real);
    QFETCH(int, n);
    QFETCH(int, K);
    QFETCH(int, degree);
    const auto knn = real ? realLists(n, 8, K) : randomLists(n, K, std::uint64_t(n * K));
    QCOMPARE(devicePrune(knn, n, K, degree), oraclePrune(knn, n, K, degree));
    // The whole graph (reverse edges and merge too) equals the CPU's.
    Context gpu;
    gpu.backend = Backend::Cuda;
    QCOMPARE(
        gpu::requireDevice<gpu::IndexDevice>().optimiseSearchGraph({knn.data(), n, K}, degree, gpu),
        index::optimiseSearchGraphCpu({knn.data(), n, K}, degree, 2));
  }

  void breadthFirstOrderByHand() {
    // 0 → 2, 4; 2 → 5; 4 → 2, 1; 3 → 6 (not reached from 0); 1, 5 and 6 → none.
    const std::vector<std::int32_t> g = {2, 4, -1, -1, 5, -1, 6, -1, 2, 1, -1, -1, -1, -1};
    const std::vector<std::int32_t> starts = {0};
    // From 0: 0, its neighbours 2, 4, then 2's 5, 4's 1; then 3 (the smallest id left) and 6.
    QCOMPARE(index::breadthFirstOrder(g, 7, 2, starts),
             (std::vector<std::int32_t>{0, 2, 4, 5, 1, 3, 6}));
    const std::vector<std::int32_t> fromThree = {3, 4};
    QCOMPARE(index::breadthFirstOrder(g, 7, 2, fromThree),
             (std::vector<std::int32_t>{3, 6, 4, 2, 1, 5, 0}));
  }

  void reorderedGraphRelabelsEveryPart() {
    // A real graph relabelled by its breadth-first order: row i of the copy is row order[i],
    // every edge and sample id maps back to the original's, and the order is a permutation.
    const std::int64_t n = 600;
    const int d = 8, degree = 12;
    std::mt19937_64 rng(3);
    std::normal_distribution<float> g;
    std::vector<float> x(std::size_t(n) * d);
    for (float& v : x)
      v = g(rng);
    const std::vector<std::int32_t> knn = realLists(n, d, 24);
    const std::vector<std::int32_t> graph =
        index::optimiseSearchGraphCpu({knn.data(), n, 24}, degree, 2);
    const std::vector<std::int32_t> sample = {17, 3, 599, 42};
    std::vector<std::int32_t> order = index::breadthFirstOrder(graph, n, degree, sample);
    QCOMPARE(order.front(), 17);
    std::vector<std::int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (std::int64_t i = 0; i < n; ++i)
      QCOMPARE(sorted[std::size_t(i)], std::int32_t(i));
    const index::ReorderedGraph r({x.data(), n, d}, graph, degree, sample, order, 2);
    QCOMPARE(r.original, order);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int32_t old = r.original[std::size_t(i)];
      QVERIFY(std::equal(x.data() + old * d, x.data() + (old + 1) * d, r.rows.view().row(i)));
      for (int j = 0; j < degree; ++j) {
        const std::int32_t now = r.graph[std::size_t(i) * degree + std::size_t(j)];
        const std::int32_t was = graph[std::size_t(old) * degree + std::size_t(j)];
        QCOMPARE(now < 0 ? now : r.original[std::size_t(now)], was);
      }
    }
    for (std::size_t s = 0; s < sample.size(); ++s)
      QCOMPARE(r.original[std::size_t(r.sample[s])], sample[s]);
    // Neighbours get nearby labels: the mean label gap along an edge is far below a random
    // order's (n / 3).
    double gap = 0;
    std::int64_t edges = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (int j = 0; j < degree; ++j)
        if (const std::int32_t y = r.graph[std::size_t(i) * degree + std::size_t(j)]; y >= 0)
          gap += std::abs(double(y) - double(i)), ++edges;
    QVERIFY2(gap / double(edges) < double(n) / 6, qPrintable(QString::number(gap / edges)));
  }

  void optimisedGraphIsWellFormed() {
    const std::int64_t n = 1500;
    const int K = 32, degree = 16;
    const auto knn = realLists(n, 8, K);
    Context cpu;
    cpu.backend = Backend::Cpu;
    const auto graph = index::optimiseSearchGraph({knn.data(), n, K}, degree, cpu);
    QCOMPARE(std::int64_t(graph.size()), n * degree);
    std::int64_t reverseOnly = 0;
    for (std::int64_t x = 0; x < n; ++x) {
      std::set<std::int32_t> seen;
      const std::set<std::int32_t> own(knn.begin() + x * K, knn.begin() + (x + 1) * K);
      for (int j = 0; j < degree; ++j) {
        const std::int32_t y = graph[std::size_t(x * degree + j)];
        if (y < 0)
          continue;
        QVERIFY(y < n);
        QVERIFY2(y != x, "a self loop");
        QVERIFY2(seen.insert(y).second, "an edge listed twice");
        // Every edge is a kNN edge of x or the reverse of one (step 2).
        const bool forward = own.count(y) > 0;
        const bool backward =
            std::count(knn.begin() + y * K, knn.begin() + (y + 1) * K, std::int32_t(x)) > 0;
        QVERIFY(forward || backward);
        reverseOnly += !forward;
      }
      QVERIFY2(seen.size() >= std::size_t(degree / 2), "a row lost its kept edges");
    }
    QVERIFY2(reverseOnly > 0, "no reverse edge was merged in");
    if (queryDevice(0).usable) {
      Context gpu;
      gpu.backend = Backend::Cuda;
      QCOMPARE(index::optimiseSearchGraph({knn.data(), n, K}, degree, gpu), graph);
    }
  }
};

QTEST_GUILESS_MAIN(TestSearchGraph)
#include "tst_search_graph.moc"
