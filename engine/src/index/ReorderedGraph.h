#pragma once
// The CPU search's own copy of a graph index (internal): rows and edges relabelled in a
// breadth-first order of the search graph, the rows on 2 MiB pages.

#include "core/HugePages.h"
#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

namespace nearscape::index {

/// A breadth-first order of a search graph (n × degree ids, −1 padded): from each of `starts`
/// in turn, then from every node not yet reached in id order, each node's unseen neighbours in
/// edge order. Returns new → old ids, a permutation of 0 … n−1. The reordering of Coleman et al.,
/// "Graph reordering for cache-efficient near neighbor search" (NeurIPS 2022), §3: a node and
/// its neighbours get nearby labels (BFS is their "cheap" order, close to RCM for a graph of
/// equal degrees).
std::vector<std::int32_t> breadthFirstOrder(std::span<const std::int32_t> graph, std::int64_t n,
                                            int degree, std::span<const std::int32_t> starts);

/// Rows × cols floats on 2 MiB pages where the kernel gives them (core/HugePages.h).
class HugePageRows {
public:
  HugePageRows() = default;
  /// Throws std::bad_alloc.
  HugePageRows(std::int64_t rows, std::int64_t cols)
      : m_data(hugePageArray<float>(std::size_t(rows) * std::size_t(cols))), m_rows(rows),
        m_cols(cols) {}
  MatrixView<float> view() const { return {m_data.get(), m_rows, m_cols}; }
  float* row(std::int64_t i) { return m_data.get() + i * m_cols; }
  std::uint64_t bytes() const { return std::uint64_t(m_rows) * std::uint64_t(m_cols) * 4; }

private:
  // A walk jumps between rows at random; with 4 KiB pages nearly every row costs a TLB miss
  // (a page walk, two-dimensional under a hypervisor) before its first line comes.
  std::shared_ptr<float[]> m_data;
  std::int64_t m_rows = 0, m_cols = 0;
};

/// 8-bit codes of rows for the CPU walk (x ≈ low + step·code in each column, the column's range
/// in 255 steps), on 2 MiB pages: a quarter of a float row's bytes, which is what a walk's random
/// rows cost. A column of integers spanning at most 255 (image pixels) codes in steps of 1 and a
/// constant one as 0: exactly.
class RowCodes {
public:
  RowCodes() = default;
  /// Throws std::bad_alloc.
  RowCodes(const MatrixView<float>& rows, int threads);
  const std::uint8_t* row(std::int64_t i) const { return m_codes.get() + i * m_cols; }
  const std::vector<float>& low() const { return m_low; }
  const std::vector<float>& step() const { return m_step; }
  /// Whether every row decodes to itself (every column exact, as above).
  bool exact() const { return m_exact; }
  std::uint64_t bytes() const {
    return std::uint64_t(m_rows) * std::uint64_t(m_cols) + m_low.size() * 8;
  }

private:
  std::shared_ptr<std::uint8_t[]> m_codes;
  std::int64_t m_rows = 0, m_cols = 0;
  std::vector<float> m_low, m_step;
  bool m_exact = false;
};

/// The graph index relabelled by `order` (new → old, a permutation): row i of `rows` is the
/// old row order[i], `graph` and `sample` hold new ids, `original` = order maps them back.
/// The upper layer's graph (sample-local ids) needs no relabelling.
struct ReorderedGraph {
  HugePageRows rows;
  RowCodes codes;                   ///< of `rows`
  std::vector<std::int32_t> graph;  ///< n × degree, new ids
  std::vector<std::int32_t> sample; ///< the upper layer's nodes, new ids
  std::vector<std::int32_t> original;

  /// Throws std::bad_alloc.
  ReorderedGraph(const MatrixView<float>& rows, std::span<const std::int32_t> graph, int degree,
                 std::span<const std::int32_t> sample, std::vector<std::int32_t> order,
                 int threads);
  std::uint64_t bytes() const {
    return rows.bytes() + codes.bytes() + (graph.size() + sample.size() + original.size()) * 4;
  }
};

} // namespace nearscape::index
