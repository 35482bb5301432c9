#include "index/ReorderedGraph.h"

#include <cstring>

namespace nearscape::index {

std::vector<std::int32_t> breadthFirstOrder(std::span<const std::int32_t> graph, std::int64_t n,
                                            int degree, std::span<const std::int32_t> starts) {
  std::vector<std::int32_t> order;
  order.reserve(std::size_t(n));
  std::vector<bool> seen(std::size_t(n), false);
  auto from = [&](std::int32_t start) {
    if (seen[std::size_t(start)])
      return;
    seen[std::size_t(start)] = true;
    order.push_back(start);
    // `order` is the queue: the nodes after `at` wait to be expanded.
    for (std::size_t at = order.size() - 1; at < order.size(); ++at) {
      const std::int32_t* edges = graph.data() + std::size_t(order[at]) * std::size_t(degree);
      for (int j = 0; j < degree; ++j)
        if (const std::int32_t y = edges[j]; y >= 0 && !seen[std::size_t(y)]) {
          seen[std::size_t(y)] = true;
          order.push_back(y);
        }
    }
  };
  for (const std::int32_t s : starts)
    from(s);
  for (std::int64_t i = 0; i < n; ++i)
    from(std::int32_t(i));
  return order;
}

ReorderedGraph::ReorderedGraph(const MatrixView<float>& from,
                               std::span<const std::int32_t> fromGraph, int degree,
                               std::span<const std::int32_t> fromSample,
                               std::vector<std::int32_t> order, int threads)
    : rows(from.rows, from.cols), graph(fromGraph.size()), original(std::move(order)) {
  const std::int64_t n = from.rows;
  std::vector<std::int32_t> label(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    label[std::size_t(original[std::size_t(i)])] = std::int32_t(i);
  const std::size_t deg = std::size_t(degree);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t old = std::size_t(original[std::size_t(i)]);
    std::memcpy(rows.row(i), from.row(std::int64_t(old)), std::size_t(from.cols) * 4);
    for (std::size_t j = 0; j < deg; ++j) {
      const std::int32_t y = fromGraph[old * deg + j];
      graph[std::size_t(i) * deg + j] = y < 0 ? y : label[std::size_t(y)];
    }
  }
  for (const std::int32_t s : fromSample)
    sample.push_back(label[std::size_t(s)]);
}

} // namespace nearscape::index
