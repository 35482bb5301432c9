#include "index/ReorderedGraph.h"

#include <algorithm>
#include <cmath>
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
  codes = RowCodes(rows.view(), threads);
}

RowCodes::RowCodes(const MatrixView<float>& rows, int threads)
    : m_codes(hugePageArray<std::uint8_t>(std::size_t(rows.rows) * std::size_t(rows.cols))),
      m_rows(rows.rows), m_cols(rows.cols), m_low(std::size_t(rows.cols)),
      m_step(std::size_t(rows.cols)) {
  const std::int64_t n = rows.rows, d = rows.cols;
  std::vector<float> high(static_cast<std::size_t>(d));
  for (std::int64_t c = 0; c < d; ++c)
    m_low[std::size_t(c)] = high[std::size_t(c)] = n > 0 ? rows.row(0)[c] : 0.0f;
  // Each column's range, and whether it holds integers only: such a column spanning at most 255
  // codes in steps of 1, exactly (image pixels).
  const std::vector<float> firstRow = m_low;
  std::vector<char> integers(static_cast<std::size_t>(d), 1);
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> low = firstRow, up = firstRow; // this thread's rows'
    std::vector<char> whole(static_cast<std::size_t>(d), 1);
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < d; ++c) {
        const float v = rows.row(i)[c];
        low[std::size_t(c)] = std::min(low[std::size_t(c)], v);
        up[std::size_t(c)] = std::max(up[std::size_t(c)], v);
        whole[std::size_t(c)] &= char(v == std::nearbyint(v));
      }
#pragma omp critical
    for (std::int64_t c = 0; c < d; ++c) {
      m_low[std::size_t(c)] = std::min(m_low[std::size_t(c)], low[std::size_t(c)]);
      high[std::size_t(c)] = std::max(high[std::size_t(c)], up[std::size_t(c)]);
      integers[std::size_t(c)] &= whole[std::size_t(c)];
    }
  }
  m_exact = true;
  for (std::int64_t c = 0; c < d; ++c) {
    const float range = high[std::size_t(c)] - m_low[std::size_t(c)];
    const bool steps = integers[std::size_t(c)] && range <= 255.0f;
    m_step[std::size_t(c)] = steps ? 1.0f : range / 255.0f;
    m_exact = m_exact && (steps || range == 0.0f);
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint8_t* out = m_codes.get() + i * d;
    for (std::int64_t c = 0; c < d; ++c) {
      const float step = m_step[std::size_t(c)];
      const float code =
          step > 0 ? std::nearbyint((rows.row(i)[c] - m_low[std::size_t(c)]) / step) : 0.0f;
      out[c] = std::uint8_t(std::clamp(code, 0.0f, 255.0f));
    }
  }
}

} // namespace nearscape::index
