#pragma once
// The path searches that SpanningForest's users and pairPathsOnKnnIds share (internal): a
// path's description and the bidirectional Dijkstra over any adjacency.

#include "nearscape/graph/Graph.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace nearscape::graph {

/// A path from its nodes and steps: total, bottleneck and its (first) index.
inline GraphPath describePath(std::vector<std::int32_t> nodes, std::vector<float> steps) {
  GraphPath p;
  p.nodes = std::move(nodes);
  p.steps = std::move(steps);
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    p.total += p.steps[i];
    if (p.bottleneckIndex < 0 || p.steps[i] > p.bottleneck) {
      p.bottleneck = p.steps[i];
      p.bottleneckIndex = std::int64_t(i);
    }
  }
  return p;
}

/// The least-total-weight path from `from` to `to` among `n` nodes whose edges
/// `forEachNeighbour(u, visit)` lists (visit(v, weight) for each, targets ascending: ties then
/// resolve as in a CSR graph). Bidirectional Dijkstra: a search from each end, the side with the
/// nearer frontier stepping next, until the two frontiers' sum reaches the best path seen across
/// them. Two balls of half the radius hold far fewer nodes than one of the whole (manifold 1M,
/// 10-NN: one search from `from` took 0.36–0.47 s). Empty when none exists; from and to checked
/// by the caller.
template <typename ForEachNeighbour>
GraphPath bidirectionalDijkstra(std::int64_t n, std::int32_t from, std::int32_t to,
                                ForEachNeighbour&& forEachNeighbour) {
  if (from == to)
    return describePath({from}, {});
  using Item = std::pair<double, std::int32_t>;
  struct Side {
    std::vector<double> dist;
    std::vector<std::int32_t> prev;
    std::vector<float> prevW;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    double top() const {
      return heap.empty() ? std::numeric_limits<double>::infinity() : heap.top().first;
    }
  };
  Side sides[2];
  for (int s = 0; s < 2; ++s) {
    sides[s].dist.assign(std::size_t(n), std::numeric_limits<double>::infinity());
    sides[s].prev.assign(std::size_t(n), -1);
    sides[s].prevW.assign(std::size_t(n), 0);
  }
  sides[0].dist[from] = 0;
  sides[0].heap.push({0, from});
  sides[1].dist[to] = 0;
  sides[1].heap.push({0, to});
  double best = std::numeric_limits<double>::infinity();
  std::int32_t meetA = -1, meetB = -1; // the best path's edge: meetA on from's side, meetB on to's
  float meetW = 0;
  while (sides[0].top() + sides[1].top() < best) {
    const int s = sides[0].top() <= sides[1].top() ? 0 : 1;
    Side& here = sides[s];
    const Side& there = sides[1 - s];
    // Not a structured binding: clang before 16 (the sanitizer builds) cannot capture one.
    const double d = here.heap.top().first;
    const std::int32_t u = here.heap.top().second;
    here.heap.pop();
    if (d > here.dist[u])
      continue;
    forEachNeighbour(u, [&](std::int32_t v, float w) {
      const double nd = d + w;
      if (nd < here.dist[v]) {
        here.dist[v] = nd;
        here.prev[v] = u;
        here.prevW[v] = w;
        here.heap.push({nd, v});
      }
      if (const double through = nd + there.dist[v]; through < best) {
        best = through;
        meetA = s == 0 ? u : v;
        meetB = s == 0 ? v : u;
        meetW = w;
      }
    });
  }
  if (meetA < 0)
    return {};
  std::vector<std::int32_t> nodes;
  std::vector<float> steps;
  for (std::int32_t v = meetA; v != from; v = sides[0].prev[v]) {
    nodes.push_back(v);
    steps.push_back(sides[0].prevW[v]);
  }
  nodes.push_back(from);
  std::reverse(nodes.begin(), nodes.end());
  std::reverse(steps.begin(), steps.end());
  steps.push_back(meetW);
  for (std::int32_t v = meetB; v != -1; v = sides[1].prev[v]) {
    nodes.push_back(v);
    if (v == to)
      break;
    steps.push_back(sides[1].prevW[v]);
  }
  return describePath(std::move(nodes), std::move(steps));
}

} // namespace nearscape::graph
