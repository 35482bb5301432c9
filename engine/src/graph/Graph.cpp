#include "nearscape/graph/Graph.h"

#include "gpu/Dispatch.h"
#include "graph/GraphDevice.h"
#include "graph/PathSearch.h"
#include "graph/UnionFind.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <parallel/algorithm>

namespace nearscape {
namespace {

void checkNode(std::int64_t node, std::int64_t n, const char* what) {
  NEARSCAPE_EXPECTS(node >= 0 && node < n, std::string(what) + " = " + std::to_string(node) +
                                               " is out of range [0, " + std::to_string(n) + ")");
}

std::vector<WeightedEdge> edgesOf(const UndirectedGraph& g) {
  std::vector<WeightedEdge> edges;
  edges.reserve(g.targets.size() / 2);
  for (std::int64_t a = 0; a < g.nodes; ++a)
    for (std::int64_t e = g.offsets[a]; e < g.offsets[a + 1]; ++e)
      if (a < g.targets[e])
        edges.push_back({std::int32_t(a), g.targets[e], g.weights[e]});
  return edges;
}

} // namespace

namespace {

/// edge(t) of csrFromEdges for "no edge".
constexpr std::int32_t kNoEdge = std::numeric_limits<std::int32_t>::min();

/// The CSR graph of `count` edges, edge(t) for t in [0, count) (a = kNoEdge: none), on every core:
/// both directions of each edge counted and placed per row (a counting sort; the order inside a
/// row does not matter, each is sorted next), each row sorted by target (weights ascending within
/// a target) and its repeats folded by `rule`. Buffers are filled in parallel without zeroing
/// first: at 1M × 15 the serial zeroing and page faults were most of the time on 16 cores.
/// `perRow` > 0 says edge t starts at row t / perRow (a kNN graph's rows): a row's own edges then
/// go in order without atomics, and only the reverse ones are counted and placed with atomics
/// (manifold 1M × 10 on an H100 host's 16 cores: symmetrising 427–474 → 334–366 ms with the
/// rows' insertion sort).
/// Throws InvalidArgument for the first edge (by t) out of range.
template <typename EdgeAt>
UndirectedGraph csrFromEdges(std::int64_t n, std::int64_t count, EdgeAt edge, DuplicateEdges rule,
                             int workers, int perRow = 0) {
  if (perRow > 0 && count != n * perRow)
    perRow = 0; // not whole rows: the general placement
  // A row's own edges (perRow) and the entries placed into it so far, then its start.
  std::unique_ptr<std::int64_t[]> start(new std::int64_t[std::size_t(n) + 1]);
  std::unique_ptr<std::int64_t[]> own(new std::int64_t[std::size_t(n)]);
#pragma omp parallel for num_threads(workers) schedule(static)
  for (std::int64_t i = 0; i <= n; ++i)
    start[std::size_t(i)] = 0;
  std::int64_t outside = -1; // the first edge out of range, if any
  auto inRange = [&](const WeightedEdge& e, std::int64_t t) {
    if (e.a >= 0 && e.a < n && e.b >= 0 && e.b < n)
      return true;
#pragma omp critical(nearscape_edge_outside)
    outside = outside < 0 ? t : std::min(outside, t);
    return false;
  };
  if (perRow > 0) {
#pragma omp parallel for num_threads(workers) schedule(static)
    for (std::int64_t row = 0; row < n; ++row) {
      std::int64_t mine = 0;
      for (std::int64_t t = row * perRow; t < std::min(count, (row + 1) * perRow); ++t) {
        const WeightedEdge e = edge(t);
        if (e.a == kNoEdge || !inRange(e, t))
          continue;
        ++mine;
        std::atomic_ref(start[std::size_t(e.b) + 1]).fetch_add(1, std::memory_order_relaxed);
      }
      own[std::size_t(row)] = mine;
    }
  } else {
#pragma omp parallel for num_threads(workers) schedule(static)
    for (std::int64_t t = 0; t < count; ++t) {
      const WeightedEdge e = edge(t);
      if (e.a == kNoEdge || !inRange(e, t))
        continue;
      std::atomic_ref(start[std::size_t(e.a) + 1]).fetch_add(1, std::memory_order_relaxed);
      std::atomic_ref(start[std::size_t(e.b) + 1]).fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (outside >= 0) {
    const WeightedEdge e = edge(outside);
    throw InvalidArgument("edge {" + std::to_string(e.a) + ", " + std::to_string(e.b) +
                          "} is out of range");
  }
  for (std::int64_t i = 0; i < n; ++i)
    start[std::size_t(i) + 1] += start[std::size_t(i)] + (perRow > 0 ? own[std::size_t(i)] : 0);
  const std::int64_t entries = start[std::size_t(n)];
  // A plain struct, not std::pair: `new Entry[]` then leaves the memory untouched (pair's
  // constructor zeroed 240 MB on one thread at 1M × 15), and the parallel fill touches it first.
  struct Entry {
    std::int32_t first;
    float second;
    bool operator<(const Entry& o) const {
      return first != o.first ? first < o.first : second < o.second;
    }
  };
  std::unique_ptr<Entry[]> bucket(new Entry[std::size_t(entries)]);
  std::unique_ptr<std::int64_t[]>& fill = own; // reused: where a row's next entry goes
  if (perRow > 0) {
#pragma omp parallel for num_threads(workers) schedule(static)
    for (std::int64_t row = 0; row < n; ++row) {
      std::int64_t at = start[std::size_t(row)];
      for (std::int64_t t = row * perRow; t < std::min(count, (row + 1) * perRow); ++t) {
        const WeightedEdge e = edge(t);
        if (e.a != kNoEdge)
          bucket[std::size_t(at++)] = Entry{e.b, e.weight};
      }
      fill[std::size_t(row)] = at;
    }
  } else {
#pragma omp parallel for num_threads(workers) schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      fill[std::size_t(i)] = start[std::size_t(i)];
  }
#pragma omp parallel for num_threads(workers) schedule(static)
  for (std::int64_t t = 0; t < count; ++t) {
    const WeightedEdge e = edge(t);
    if (e.a == kNoEdge)
      continue;
    if (perRow == 0)
      bucket[std::size_t(std::atomic_ref(fill[std::size_t(e.a)]).fetch_add(1))] =
          Entry{e.b, e.weight};
    bucket[std::size_t(std::atomic_ref(fill[std::size_t(e.b)]).fetch_add(1))] =
        Entry{e.a, e.weight};
  }
  std::unique_ptr<std::int64_t[]> kept(new std::int64_t[std::size_t(n)]);
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1024)
  for (std::int64_t i = 0; i < n; ++i) {
    Entry* first = bucket.get() + start[std::size_t(i)];
    Entry* last = bucket.get() + start[std::size_t(i) + 1];
    if (last - first <= 32) { // a kNN graph's row: insertion sort beats std::sort's set-up
      for (Entry* p = first + (last > first ? 1 : 0); p < last; ++p) {
        const Entry v = *p;
        Entry* q = p;
        for (; q > first && v < *(q - 1); --q)
          *q = *(q - 1);
        *q = v;
      }
    } else {
      std::sort(first, last);
    }
    Entry* out = first;
    for (Entry* p = first; p != last; ++p) {
      if (out != first && (out - 1)->first == p->first) {
        float& w = (out - 1)->second;
        if (rule == DuplicateEdges::FuzzyUnion)
          w = w + p->second - w * p->second;
        continue; // KeepSmaller: the first is the smallest
      }
      *out++ = *p;
    }
    kept[std::size_t(i)] = out - first;
  }
  UndirectedGraph g;
  g.nodes = n;
  g.offsets.resize(static_cast<std::size_t>(n + 1));
  g.offsets[0] = 0;
  for (std::int64_t i = 0; i < n; ++i)
    g.offsets[std::size_t(i) + 1] = g.offsets[std::size_t(i)] + kept[std::size_t(i)];
  // Sized to what is kept (a kNN graph's mutual edges fold: about 1.3·n·k of 2·n·k entries), so
  // the graph holds no spare capacity for its life.
  g.targets.resize(static_cast<std::size_t>(g.offsets[std::size_t(n)]));
  g.weights.resize(g.targets.size());
#pragma omp parallel for num_threads(workers) schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < kept[std::size_t(i)]; ++c) {
      const Entry& e = bucket[std::size_t(start[std::size_t(i)] + c)];
      g.targets[std::size_t(g.offsets[std::size_t(i)] + c)] = e.first;
      g.weights[std::size_t(g.offsets[std::size_t(i)] + c)] = e.second;
    }
  return g;
}

} // namespace

UndirectedGraph graphFromEdges(std::int64_t n, const std::vector<WeightedEdge>& edges,
                               DuplicateEdges rule, int threads) {
  Context context;
  context.threads = threads;
  return csrFromEdges(
      n, std::int64_t(edges.size()), [&](std::int64_t t) { return edges[std::size_t(t)]; }, rule,
      effectiveThreads(context));
}

UndirectedGraph symmetrizeKnnGraph(const MatrixView<std::int32_t>& ids,
                                   const MatrixView<float>& distances, Metric metric) {
  NEARSCAPE_EXPECTS(ids.rows == distances.rows && ids.cols == distances.cols,
                    "ids and distances have different shapes");
  const std::int64_t n = ids.rows;
  float offset = 0;
  if (metric == Metric::InnerProduct) {
    offset = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids.data[i] >= 0)
        offset = std::min(offset, distances.data[i]);
    if (!std::isfinite(offset))
      offset = 0;
  }
  // Edge t is column t % k of row t / k; negative ids and self ids are no edge, ids beyond n
  // are refused with their row.
  const std::int64_t k = ids.cols, cells = std::int64_t(ids.size());
  std::int64_t firstBad = cells;
#pragma omp parallel for reduction(min : firstBad) schedule(static)
  for (std::int64_t t = 0; t < cells; ++t)
    if (ids.data[t] >= n)
      firstBad = std::min(firstBad, t);
  if (firstBad < cells)
    throw InvalidArgument("graph id " + std::to_string(ids.data[firstBad]) + " at row " +
                          std::to_string(firstBad / k) + " is out of range");
  Context context;
  UndirectedGraph g = csrFromEdges(
      n, std::int64_t(ids.size()),
      [&](std::int64_t t) {
        const std::int64_t i = t / k;
        const std::int32_t j = ids.data[t];
        if (j < 0 || j == i)
          return WeightedEdge{kNoEdge, kNoEdge, 0.0f};
        return WeightedEdge{std::int32_t(i), j, std::max(0.0f, distances.data[t] - offset)};
      },
      DuplicateEdges::KeepSmaller, effectiveThreads(context), int(k));
  g.weightOffset = offset;
  if (metric == Metric::InnerProduct)
    g.weightNote = "weights are max<x,y> - <x,y> over the graph's edges (inner product made "
                   "non-negative)";
  else
    g.weightNote = metric == Metric::L2 ? "weights are Euclidean distances"
                                        : "weights are cosine distances (1 - cos)";
  return g;
}

Components connectedComponents(const UndirectedGraph& graph) {
  graph::UnionFind uf(graph.nodes);
  for (std::int64_t a = 0; a < graph.nodes; ++a)
    for (std::int64_t e = graph.offsets[a]; e < graph.offsets[a + 1]; ++e)
      uf.unite(std::int32_t(a), graph.targets[e]);
  Components c;
  c.label.assign(static_cast<std::size_t>(graph.nodes), -1);
  std::vector<std::int32_t> labelOfRoot(static_cast<std::size_t>(graph.nodes), -1);
  for (std::int64_t i = 0; i < graph.nodes; ++i) {
    const std::int32_t root = uf.find(std::int32_t(i));
    if (labelOfRoot[root] < 0) {
      labelOfRoot[root] = c.count++;
      c.sizes.push_back(0);
    }
    c.label[i] = labelOfRoot[root];
    ++c.sizes[std::size_t(c.label[i])];
  }
  return c;
}

namespace {

std::vector<WeightedEdge> kruskalForest(const UndirectedGraph& graph, int threads,
                                        JobControl& job) {
  std::vector<WeightedEdge> edges = edgesOf(graph);
  job.progress(0.1, "MST: sorting edges");
  // On the context's cores (libstdc++'s OpenMP sort): the order is total, so the forest is the
  // same.
  __gnu_parallel::sort(
      edges.begin(), edges.end(),
      [](const WeightedEdge& x, const WeightedEdge& y) {
        return x.weight != y.weight ? x.weight < y.weight : x.a != y.a ? x.a < y.a : x.b < y.b;
      },
      __gnu_parallel::default_parallel_tag(threads));
  job.check();
  graph::UnionFind uf(graph.nodes);
  std::vector<WeightedEdge> forest;
  for (const auto& e : edges)
    if (uf.unite(e.a, e.b))
      forest.push_back(e);
  job.check();
  return forest;
}

} // namespace

SpanningForest::SpanningForest(const UndirectedGraph& graph, const Context& context,
                               JobControl& job) {
  const auto start = std::chrono::steady_clock::now();
  std::string fallback;
  m_builtOn = gpu::onGpuOrCpu<gpu::GraphDevice>(
      context,
      [&](gpu::GraphDevice& gpu) {
        gpu::DeviceForest forest = gpu.boruvkaForest(graph, context, job);
        m_edges = std::move(forest.edges);
        m_timings.device = forest.deviceSeconds;
        return std::string("CUDA (Borůvka)");
      },
      [&] {
        m_edges = kruskalForest(graph, effectiveThreads(context), job);
        return std::string("CPU (Kruskal)");
      },
      &fallback);
  if (!fallback.empty())
    m_builtOn = "CPU (Kruskal; " + fallback + ")";
  const auto rooting = std::chrono::steady_clock::now();
  m_timings.edges = std::chrono::duration<double>(rooting - start).count();
  m_parent.assign(static_cast<std::size_t>(graph.nodes), -1);
  root(job);
  m_timings.rooting =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - rooting).count();
}

void SpanningForest::root(JobControl& job) {
  const std::int64_t n = nodes();
  // Root every tree at its smallest node (BFS), recording parent, depth and the parent edge.
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(n + 1), 0);
  for (const auto& e : m_edges) {
    ++offsets[e.a + 1];
    ++offsets[e.b + 1];
  }
  for (std::int64_t i = 0; i < n; ++i)
    offsets[i + 1] += offsets[i];
  std::vector<std::int32_t> adj(m_edges.size() * 2);
  std::vector<float> adjW(m_edges.size() * 2);
  std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
  for (const auto& e : m_edges) {
    adj[fill[e.a]] = e.b;
    adjW[fill[e.a]++] = e.weight;
    adj[fill[e.b]] = e.a;
    adjW[fill[e.b]++] = e.weight;
  }
  m_parent.assign(static_cast<std::size_t>(n), -1);
  m_parentWeight.assign(static_cast<std::size_t>(n), 0);
  m_depth.assign(static_cast<std::size_t>(n), -1);
  m_root.assign(static_cast<std::size_t>(n), -1);
  std::vector<std::int32_t> queue;
  queue.reserve(static_cast<std::size_t>(n));
  for (std::int64_t s = 0; s < n; ++s) {
    if (m_depth[s] >= 0)
      continue;
    ++m_trees;
    m_depth[s] = 0;
    m_root[s] = std::int32_t(s);
    queue.clear();
    queue.push_back(std::int32_t(s));
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const std::int32_t u = queue[h];
      for (std::int64_t e = offsets[u]; e < offsets[u + 1]; ++e) {
        const std::int32_t v = adj[e];
        if (m_depth[v] >= 0)
          continue;
        m_depth[v] = m_depth[u] + 1;
        m_parent[v] = u;
        m_parentWeight[v] = adjW[e];
        m_root[v] = std::int32_t(s);
        queue.push_back(v);
      }
    }
  }
  job.progress(1.0, "MST: done");
}

double SpanningForest::totalWeight() const {
  double total = 0;
  for (const auto& e : m_edges)
    total += e.weight;
  return total;
}

std::vector<std::int32_t> SpanningForest::path(std::int32_t from, std::int32_t to) const {
  checkNode(from, nodes(), "from");
  checkNode(to, nodes(), "to");
  if (m_root[from] != m_root[to])
    return {};
  std::vector<std::int32_t> up, down; // from … meeting point, to … (excluding meeting point)
  std::int32_t a = from, b = to;
  while (m_depth[a] > m_depth[b]) {
    up.push_back(a);
    a = m_parent[a];
  }
  while (m_depth[b] > m_depth[a]) {
    down.push_back(b);
    b = m_parent[b];
  }
  while (a != b) {
    up.push_back(a);
    a = m_parent[a];
    down.push_back(b);
    b = m_parent[b];
  }
  up.push_back(a);
  up.insert(up.end(), down.rbegin(), down.rend());
  return up;
}

float SpanningForest::edgeWeight(std::int32_t x, std::int32_t y) const {
  if (m_parent[x] == y)
    return m_parentWeight[x];
  if (m_parent[y] == x)
    return m_parentWeight[y];
  throw InvalidArgument("no forest edge between " + std::to_string(x) + " and " +
                        std::to_string(y));
}

GraphPath minimaxPath(const SpanningForest& forest, std::int32_t from, std::int32_t to) {
  std::vector<std::int32_t> nodes = forest.path(from, to);
  std::vector<float> steps;
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i)
    steps.push_back(forest.edgeWeight(nodes[i], nodes[i + 1]));
  return graph::describePath(std::move(nodes), std::move(steps));
}

GraphPath shortestPath(const UndirectedGraph& graph, std::int32_t from, std::int32_t to) {
  checkNode(from, graph.nodes, "from");
  checkNode(to, graph.nodes, "to");
  return graph::bidirectionalDijkstra(graph.nodes, from, to, [&](std::int32_t u, auto&& visit) {
    for (std::int64_t e = graph.offsets[u]; e < graph.offsets[u + 1]; ++e)
      visit(graph.targets[e], graph.weights[e]);
  });
}

ComponentBridges bridgeComponents(const UndirectedGraph& graph,
                                  const NearestOutside& nearestOutside, JobControl& job) {
  ComponentBridges bridges;
  UndirectedGraph current = graph;
  for (int roundIndex = 0;; ++roundIndex) {
    const Components comps = connectedComponents(current);
    if (comps.count <= 1) {
      job.progress(1.0, "joining components");
      return bridges;
    }
    job.check();
    // Progress forward only: a round at least halves the components, so round r takes the
    // range [1 − 2^−r, 1 − 2^−(r+1)].
    const double roundFrom = 1.0 - std::ldexp(1.0, -roundIndex);
    const double roundTo = 1.0 - std::ldexp(1.0, -(roundIndex + 1));
    const auto largest = std::int32_t(std::max_element(comps.sizes.begin(), comps.sizes.end()) -
                                      comps.sizes.begin());
    // Borůvka: every component but the largest asks for the pair that joins it to the rest.
    std::vector<bool> wanted(static_cast<std::size_t>(comps.count), true);
    wanted[std::size_t(largest)] = false;
    JobControl search = job.sub(roundFrom, roundTo);
    const std::vector<CrossPair> pairs = nearestOutside(comps.label, comps.count, wanted, search);
    NEARSCAPE_EXPECTS(std::int32_t(pairs.size()) == comps.count,
                      "the nearest outside pairs' search returned another count than asked");
    std::vector<WeightedEdge> round;
    for (std::int32_t c = 0; c < comps.count; ++c) {
      const CrossPair& p = pairs[std::size_t(c)];
      if (!wanted[std::size_t(c)] || p.inside < 0)
        continue;
      NEARSCAPE_EXPECTS(p.outside >= 0 && p.outside < graph.nodes &&
                            comps.label[std::size_t(p.inside)] == c &&
                            comps.label[std::size_t(p.outside)] != c,
                        "the nearest outside pairs' search returned a pair inside a component");
      // a: the component's member, b: the row outside it.
      round.push_back({std::int32_t(p.inside), std::int32_t(p.outside),
                       std::max(0.0f, p.distance - graph.weightOffset)});
      bridges.exact = bridges.exact && p.exact;
    }
    // Two components that chose each other by the same pair add it once.
    const auto key = [](const WeightedEdge& e) {
      return std::pair(std::min(e.a, e.b), std::max(e.a, e.b));
    };
    std::stable_sort(round.begin(), round.end(),
                     [&](const WeightedEdge& x, const WeightedEdge& y) { return key(x) < key(y); });
    round.erase(
        std::unique(round.begin(), round.end(),
                    [&](const WeightedEdge& x, const WeightedEdge& y) { return key(x) == key(y); }),
        round.end());
    NEARSCAPE_EXPECTS(!round.empty(), "no pair joins the graph's components");
    bridges.edges.insert(bridges.edges.end(), round.begin(), round.end());
    current = withEdges(current, round);
  }
}

UndirectedGraph withEdges(const UndirectedGraph& graph, const std::vector<WeightedEdge>& extra) {
  std::vector<WeightedEdge> edges = edgesOf(graph);
  edges.insert(edges.end(), extra.begin(), extra.end());
  UndirectedGraph g = graphFromEdges(graph.nodes, std::move(edges));
  g.weightNote = graph.weightNote;
  g.weightOffset = graph.weightOffset;
  return g;
}

} // namespace nearscape
