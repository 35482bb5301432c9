#include "nearscape/graph/PairPaths.h"

#include "graph/EdgeDistance.h"
#include "graph/PathSearch.h"
#include "graph/UnionFind.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <span>

namespace nearscape {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The kNN graph as its ids give it: cell t = i·k + c lists j = ids[t] as row i's neighbour.
struct KnnCells {
  const std::int32_t* ids;
  std::int64_t n, k;

  const std::int32_t* row(std::int64_t i) const { return ids + i * k; }
  /// Whether row i lists j.
  bool lists(std::int64_t i, std::int32_t j) const {
    const std::int32_t* r = row(i);
    for (std::int64_t c = 0; c < k; ++c)
      if (r[c] == j)
        return true;
    return false;
  }
  /// Whether cell c of row i is the one that carries its undirected edge: an edge {a, b} (a < b,
  /// no self edge, no −1) belongs to the first cell of row a listing b, else to the first of row
  /// b listing a. Each edge of the symmetrised graph has exactly one.
  bool carriesEdge(std::int64_t i, std::int64_t c) const {
    const std::int32_t* r = row(i);
    const std::int32_t j = r[c];
    if (j < 0 || j == i)
      return false;
    for (std::int64_t before = 0; before < c; ++before)
      if (r[before] == j)
        return false; // listed before in this row
    return j > i || !lists(j, std::int32_t(i));
  }
  /// The cell carrying the edge {u, v} (an edge of the graph).
  std::int64_t carrier(std::int32_t u, std::int32_t v) const {
    const std::int32_t a = std::min(u, v), b = std::max(u, v);
    for (std::int64_t c = 0; c < k; ++c)
      if (row(a)[c] == b)
        return a * k + c;
    for (std::int64_t c = 0; c < k; ++c)
      if (row(b)[c] == a)
        return b * k + c;
    return -1; // not an edge: never asked
  }
};

/// The weight of each edge in the cell carrying it (KnnCells::carriesEdge), its float64
/// distance rounded to float (−∞ for NaN); other cells hold NaN, but for inner products an item's
/// own cell, which symmetrizeKnnGraph's offset counts.
struct CellWeights {
  std::unique_ptr<float[]> weight;
  std::int64_t edges = 0;
  float offset = 0; ///< symmetrizeKnnGraph's: the least distance for inner products, else 0
};

CellWeights weighCells(const MatrixView<float>& data, const KnnCells& g, Metric metric, int threads,
                       JobControl& job) {
  const std::int64_t n = g.n, k = g.k, d = data.cols;
  CellWeights out;
  out.weight.reset(new float[std::size_t(n * k)]);
  float least = std::numeric_limits<float>::infinity();
  std::int64_t edges = 0;
  constexpr std::int64_t kChunk = 4096; // rows between checks for a stop
#pragma omp parallel num_threads(threads) reduction(min : least) reduction(+ : edges)
  {
    std::vector<const float*> rows(std::size_t(k) + 1);
    std::vector<std::int64_t> cells(std::size_t(k) + 1);
    std::vector<double> distances(std::size_t(k) + 1);
    // Which cells carry an edge, for the row whose data is fetched and the row weighed next
    // (by row parity): found once, when fetching.
    std::vector<std::uint8_t> carries(std::size_t(2 * k) + 2);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t chunk = 0; chunk < (n + kChunk - 1) / kChunk; ++chunk) {
      if (job.stopRequested())
        continue;
      const std::int64_t first = chunk * kChunk, last = std::min(n, first + kChunk);
      // A row's neighbours lie anywhere in the data, and each load would wait for memory: two
      // rows ahead the ids that say whether a pair is mutual are fetched, one row ahead the data
      // rows of the edges it carries, then this row is weighed. (The prefetches stay in this
      // body: GCC takes a function of nothing but prefetches, or a lambda, for one without
      // effects, and drops the calls.)
      for (std::int64_t ahead = first; ahead < last + 2; ++ahead) {
        if (ahead < last)
          for (std::int64_t c = 0; c < k; ++c)
            if (const std::int32_t j = g.row(ahead)[c]; j >= 0 && j < ahead) {
              __builtin_prefetch(g.row(j));
              __builtin_prefetch(g.row(j) + k - 1);
            }
        if (const std::int64_t next = ahead - 1; next >= first && next < last)
          for (std::int64_t c = 0; c < k; ++c)
            if ((carries[std::size_t((next & 1) * k + c)] = g.carriesEdge(next, c))) {
              const auto* bytes = reinterpret_cast<const char*>(data.row(g.row(next)[c]));
              for (std::int64_t at = 0; at < d * std::int64_t(sizeof(float)); at += 64)
                __builtin_prefetch(bytes + at);
            }
        const std::int64_t i = ahead - 2;
        if (i < first)
          continue;
        int count = 0;
        for (std::int64_t c = 0; c < k; ++c) {
          const std::int64_t t = i * k + c;
          out.weight[std::size_t(t)] = std::numeric_limits<float>::quiet_NaN();
          const std::int32_t j = g.ids[t];
          if (carries[std::size_t((i & 1) * k + c)] || (metric == Metric::InnerProduct && j == i)) {
            rows[std::size_t(count)] = data.row(j);
            cells[std::size_t(count++)] = t;
            edges += j != i;
          }
        }
        graph::edgeDistances(data.row(i), rows.data(), count, d, metric, distances.data());
        for (int r = 0; r < count; ++r) {
          const float w = float(distances[std::size_t(r)]);
          least = std::min(least, w); // a NaN is passed over, as in symmetrizeKnnGraph
          // NaN marks the cells without an edge; a NaN distance (NaN data) is weighed 0 there,
          // which −∞ gives here.
          out.weight[std::size_t(cells[std::size_t(r)])] =
              std::isnan(w) ? -std::numeric_limits<float>::infinity() : w;
        }
      }
    }
  }
  job.check();
  out.edges = edges;
  if (metric == Metric::InnerProduct && std::isfinite(least))
    out.offset = least;
  return out;
}

/// symmetrizeKnnGraph's weight of a distance.
float edgeWeight(float distance, float offset) {
  return std::max(0.0f, distance - offset);
}

/// `keys` (weight bits << 32 | cell) sorted by their upper 32 bits, stably: LSD radix sort in
/// three passes of 11 bits (a pass whose digit all keys share is skipped). The cells enter in
/// ascending order, so equal weights stay in cell order.
void sortByWeight(std::unique_ptr<std::uint64_t[]>& keys, std::int64_t m) {
  constexpr int kBits = 11, kBuckets = 1 << kBits;
  std::unique_ptr<std::uint64_t[]> other(new std::uint64_t[std::size_t(m)]);
  std::vector<std::int64_t> count(kBuckets + 1);
  for (int shift = 32; shift < 64; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (std::int64_t q = 0; q < m; ++q)
      ++count[((keys[std::size_t(q)] >> shift) & (kBuckets - 1)) + 1];
    if (std::count(count.begin(), count.end(), m) == 1)
      continue; // one digit for all: this pass would copy
    for (int b = 0; b < kBuckets; ++b)
      count[std::size_t(b) + 1] += count[std::size_t(b)];
    for (std::int64_t q = 0; q < m; ++q) {
      const std::uint64_t key = keys[std::size_t(q)];
      other[std::size_t(count[(key >> shift) & (kBuckets - 1)]++)] = key;
    }
    std::swap(keys, other);
  }
}

/// Kruskal's forest of the edges (weights sorted, ties by (a, b): SpanningForest's order), and the
/// forest's path from `from` to `to`.
struct KruskalResult {
  GraphPath path;
  std::int64_t components = 0;
  double pathSeconds = 0; ///< of the walk along the forest
};

/// Each edge's sort key, weight bits << 32 | its cell (non-negative floats order as their bits),
/// in cell order, on every thread: each block of rows counts its edges, then fills its share.
std::unique_ptr<std::uint64_t[]> edgeKeys(const KnnCells& g, const CellWeights& cw, int threads) {
  const std::int64_t n = g.n, k = g.k, blocks = std::min<std::int64_t>(n, 64);
  std::unique_ptr<std::uint64_t[]> keys(new std::uint64_t[std::size_t(cw.edges)]);
  std::vector<std::int64_t> start(std::size_t(blocks) + 1, 0);
  auto carried = [&](std::int64_t i, std::int64_t t) {
    return !std::isnan(cw.weight[std::size_t(t)]) && g.ids[t] != i;
  };
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t i = b * n / blocks; i < (b + 1) * n / blocks; ++i)
        for (std::int64_t t = i * k; t < (i + 1) * k; ++t)
          start[std::size_t(b) + 1] += carried(i, t);
#pragma omp single
    std::partial_sum(start.begin(), start.end(), start.begin());
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::int64_t at = start[std::size_t(b)];
      for (std::int64_t i = b * n / blocks; i < (b + 1) * n / blocks; ++i)
        for (std::int64_t t = i * k; t < (i + 1) * k; ++t)
          if (carried(i, t))
            keys[std::size_t(at++)] = std::uint64_t(std::bit_cast<std::uint32_t>(
                                          edgeWeight(cw.weight[std::size_t(t)], cw.offset)))
                                          << 32 |
                                      std::uint64_t(t);
    }
  }
  NEARSCAPE_EXPECTS(start.back() == cw.edges, "the edges' count changed between two passes");
  return keys;
}

KruskalResult kruskalPath(const KnnCells& g, const CellWeights& cw,
                          std::unique_ptr<std::uint64_t[]> keys, std::int32_t from, std::int32_t to,
                          JobControl& job) {
  const std::int64_t n = g.n, k = g.k, m = cw.edges;
  sortByWeight(keys, m);
  job.check();
  // The cell's row by a multiplication (Lemire, Kaser & Kurz, "Faster remainder by direct
  // computation", 2019: exact for 32-bit numerators and divisors): 7.5M divisions took 70 ms.
  const std::uint64_t inverse = k > 1 ? ~std::uint64_t(0) / std::uint64_t(k) + 1 : 0;
  auto ends = [&](std::uint64_t key) {
    const std::uint64_t t = key & 0xffffffffu;
    const auto i =
        k > 1 ? std::int32_t((static_cast<unsigned __int128>(inverse) * t) >> 64) : std::int32_t(t);
    const std::int32_t j = g.ids[t];
    return std::pair(std::min(i, j), std::max(i, j));
  };
  // The scan, with equal weights taken by (a, b) as SpanningForest orders them: a run of ties
  // is sorted as it comes (runs are short but for duplicate items, weight 0). Each key's cell
  // names a row of ids anywhere: those of the keys 16 ahead are fetched meanwhile.
  constexpr std::int64_t kAhead = 16;
  graph::UnionFind uf(n);
  std::vector<WeightedEdge> forest;
  forest.reserve(std::size_t(n));
  std::vector<std::pair<std::int32_t, std::int32_t>> run;
  std::int64_t joinedAt = from == to ? 0 : -1; // the forest's size when from and to joined
  for (std::int64_t q = 0; q < m;) {
    const std::uint32_t bits = std::uint32_t(keys[std::size_t(q)] >> 32);
    const float weight = std::bit_cast<float>(bits);
    run.clear();
    for (; q < m && std::uint32_t(keys[std::size_t(q)] >> 32) == bits; ++q) {
      if (q + kAhead < m)
        __builtin_prefetch(g.ids + (keys[std::size_t(q + kAhead)] & 0xffffffffu));
      if (q + kAhead / 2 < m) { // its ids fetched 8 keys ago: the roots' first step
        const auto [a, b] = ends(keys[std::size_t(q + kAhead / 2)]);
        uf.prefetch(a);
        uf.prefetch(b);
      }
      run.push_back(ends(keys[std::size_t(q)]));
    }
    if (run.size() > 1)
      std::sort(run.begin(), run.end());
    for (const auto& [a, b] : run)
      if (uf.unite(a, b)) {
        forest.push_back({a, b, weight});
        if (joinedAt < 0 && uf.find(from) == uf.find(to))
          joinedAt = std::int64_t(forest.size());
      }
  }
  keys.reset();
  job.check();
  KruskalResult r;
  r.components = n - std::int64_t(forest.size());
  if (joinedAt < 0)
    return r;
  const auto walk = std::chrono::steady_clock::now();
  // The forest's path: a breadth-first walk from `from` over the forest's edges until `to`, those
  // found before the two joined (the rest cannot lie on it). 32-bit offsets; filling moves each
  // node's start to the next one's, so a node's edges end up in [end[u − 1], end[u]).
  const std::span<const WeightedEdge> before(forest.data(), std::size_t(joinedAt));
  std::vector<std::uint32_t> end(std::size_t(n) + 1, 0);
  for (const WeightedEdge& e : before) {
    ++end[std::size_t(e.a) + 1];
    ++end[std::size_t(e.b) + 1];
  }
  std::partial_sum(end.begin(), end.end(), end.begin());
  std::vector<std::int32_t> next(before.size() * 2);
  std::vector<float> nextW(before.size() * 2);
  for (const WeightedEdge& e : before) {
    next[end[std::size_t(e.a)]] = e.b;
    nextW[end[std::size_t(e.a)]++] = e.weight;
    next[end[std::size_t(e.b)]] = e.a;
    nextW[end[std::size_t(e.b)]++] = e.weight;
  }
  std::vector<std::int32_t> parent(std::size_t(n), -1);
  std::vector<float> parentW(std::size_t(n), 0);
  std::vector<std::int32_t> queue{from};
  parent[std::size_t(from)] = from;
  for (std::size_t h = 0; h < queue.size() && parent[std::size_t(to)] < 0; ++h) {
    const std::int32_t u = queue[h];
    for (std::uint32_t e = u > 0 ? end[std::size_t(u) - 1] : 0; e < end[std::size_t(u)]; ++e)
      if (const std::int32_t v = next[e]; parent[std::size_t(v)] < 0) {
        parent[std::size_t(v)] = u;
        parentW[std::size_t(v)] = nextW[e];
        queue.push_back(v);
      }
  }
  std::vector<std::int32_t> nodes{to};
  std::vector<float> steps;
  for (std::int32_t v = to; v != from; v = parent[std::size_t(v)]) {
    steps.push_back(parentW[std::size_t(v)]);
    nodes.push_back(parent[std::size_t(v)]);
  }
  std::reverse(nodes.begin(), nodes.end());
  std::reverse(steps.begin(), steps.end());
  r.path = graph::describePath(std::move(nodes), std::move(steps));
  r.pathSeconds = secondsSince(walk);
  return r;
}

/// The shortest path: each row's cells listed by the row they name (a counting sort, in cell
/// order, so a row's listers ascend), then Dijkstra over each item's neighbours in both
/// directions, merged in ascending order as a CSR row holds them.
GraphPath dijkstraPath(const KnnCells& g, const CellWeights& cw, std::int32_t from, std::int32_t to,
                       JobControl& job) {
  const std::int64_t n = g.n, k = g.k, cells = n * k;
  // 32-bit offsets (cells < 2^32): the counts' random steps then hit a cache half as large.
  // Filling moves each row's start to the next one's, so no copy of the starts is kept: row u's
  // listers end up in [end[u − 1], end[u]).
  std::unique_ptr<std::uint32_t[]> end(new std::uint32_t[std::size_t(n) + 1]);
  std::fill(end.get(), end.get() + n + 1, 0u);
  for (std::int64_t t = 0; t < cells; ++t)
    if (const std::int32_t j = g.ids[t]; j >= 0)
      ++end[std::size_t(j) + 1];
  std::partial_sum(end.get(), end.get() + n + 1, end.get());
  std::unique_ptr<std::int32_t[]> listers(new std::int32_t[std::size_t(end[std::size_t(n)])]);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < k; ++c)
      if (const std::int32_t j = g.row(i)[c]; j >= 0)
        listers[end[std::size_t(j)]++] = std::int32_t(i);
  job.check();
  std::vector<std::int32_t> around;
  return graph::bidirectionalDijkstra(n, from, to, [&](std::int32_t u, auto&& visit) {
    around.clear();
    for (std::int64_t c = 0; c < k; ++c)
      around.push_back(g.row(u)[c]);
    around.insert(around.end(), listers.get() + (u > 0 ? end[std::size_t(u) - 1] : 0),
                  listers.get() + end[std::size_t(u)]);
    std::sort(around.begin(), around.end());
    around.erase(std::unique(around.begin(), around.end()), around.end());
    for (const std::int32_t v : around)
      if (v >= 0 && v != u)
        visit(v, edgeWeight(cw.weight[std::size_t(g.carrier(u, v))], cw.offset));
  });
}

void checkItem(std::int32_t item, std::int64_t n, const char* what) {
  NEARSCAPE_EXPECTS(item >= 0 && item < n, std::string(what) + " = " + std::to_string(item) +
                                               " is out of range [0, " + std::to_string(n) + ")");
}

} // namespace

PairPaths pairPathsOnKnnIds(const MatrixView<float>& data, const MatrixView<std::int32_t>& ids,
                            Metric metric, std::int32_t from, std::int32_t to,
                            const Context& context, JobControl& job) {
  const std::int64_t n = ids.rows, k = ids.cols;
  NEARSCAPE_EXPECTS(data.rows == n, "the graph has " + std::to_string(n) +
                                        " rows but the data has " + std::to_string(data.rows));
  NEARSCAPE_EXPECTS(n * k <= std::int64_t(std::numeric_limits<std::uint32_t>::max()),
                    "the graph has more than 2^32 − 1 cells");
  checkItem(from, n, "from");
  checkItem(to, n, "to");
  std::int64_t firstBad = n * k;
#pragma omp parallel for num_threads(effectiveThreads(context)) reduction(min : firstBad)
  for (std::int64_t t = 0; t < n * k; ++t)
    if (ids.data[t] < -1 || ids.data[t] >= n)
      firstBad = std::min(firstBad, t);
  if (firstBad < n * k)
    throw InvalidArgument("graph id " + std::to_string(ids.data[firstBad]) + " at row " +
                          std::to_string(firstBad / k) + " is out of range");
  const KnnCells g{ids.data, n, k};
  const int threads = effectiveThreads(context);
  LogLaps lap(context, "path on the graph's ids:");
  PairPaths out;
  job.progress(0.0, "edge weights");
  auto t = std::chrono::steady_clock::now();
  const CellWeights cw = weighCells(data, g, metric, threads, job);
  out.seconds.weights = secondsSince(t);
  out.edges = cw.edges;
  out.weightOffset = cw.offset;
  lap("weights (" + std::to_string(cw.edges) + " edges, " + graph::edgeDistanceKernel() + ")");
  job.progress(0.6, "spanning forest");
  t = std::chrono::steady_clock::now();
  // Kruskal's sort and scan on this thread, the reverse lists and Dijkstra beside it: each is a
  // serial walk through memory, so two threads halve the wall time.
  auto shortest = [&] {
    const auto started = std::chrono::steady_clock::now();
    GraphPath p = dijkstraPath(g, cw, from, to, job);
    out.seconds.shortest = secondsSince(started);
    return p;
  };
  std::future<GraphPath> beside;
  std::unique_ptr<std::uint64_t[]> keys = edgeKeys(g, cw, threads);
  if (threads > 1)
    beside = std::async(std::launch::async, shortest);
  KruskalResult forest = kruskalPath(g, cw, std::move(keys), from, to, job);
  out.seconds.forest = secondsSince(t) - forest.pathSeconds;
  out.seconds.path = forest.pathSeconds;
  lap("forest (Kruskal) and its path");
  out.shortest = beside.valid() ? beside.get() : shortest();
  lap("shortest path (beside the forest)");
  out.minimax = std::move(forest.path);
  out.components = forest.components;
  if (metric == Metric::InnerProduct)
    out.weightNote = "weights are max<x,y> - <x,y> over the graph's edges (inner product made "
                     "non-negative)";
  else
    out.weightNote = metric == Metric::L2 ? "weights are Euclidean distances"
                                          : "weights are cosine distances (1 - cos)";
  job.progress(1.0, "paths");
  return out;
}

} // namespace nearscape
