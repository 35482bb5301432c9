#pragma once
// The candidates of one query row during an exact search (internal).
//
// Approximate distances come from GEMM with a rounding-error bound E per row. If a_k is the k-th
// smallest approximate distance seen so far, every true top-k item has an approximate distance
// ≤ a_k + 2E (its exact distance is ≤ the exact k-th, which is ≤ a_k + E, and its approximation
// errs by ≤ E). So candidates above that threshold can be dropped, and the threshold only falls
// as more are seen. A row whose margin keeps too many candidates "overflows" and is recomputed
// directly. A row prunes first at max(64, 2k) candidates, then whenever it holds twice what the
// last prune left (never waiting past 2·cap): pruning first at 2·cap let 512 candidates through
// per row before it had any threshold.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace nearscape::knn {

struct Candidate {
  float approx;
  std::int32_t id;
};

class CandidateRow {
public:
  void reset(int k, float margin, std::size_t cap) {
    m_items.clear();
    m_k = k;
    m_margin = margin;
    m_cap = cap;
    m_threshold = std::numeric_limits<float>::infinity();
    m_overflow = false;
    m_pruneAt = std::min(2 * cap, std::max<std::size_t>(64, 2 * std::size_t(k)));
  }
  float threshold() const { return m_threshold; }
  bool overflowed() const { return m_overflow; }
  std::vector<Candidate>& items() { return m_items; }

  void push(float approx, std::int32_t id) {
    m_items.push_back({approx, id});
    if (m_items.size() >= m_pruneAt)
      prune();
  }

  /// Drops every candidate above a_k + margin; marks the row overflowed when more than `cap`
  /// remain (a loose bound or many near-ties).
  void prune() {
    if (m_overflow || m_items.size() <= std::size_t(m_k))
      return;
    std::nth_element(m_items.begin(), m_items.begin() + (m_k - 1), m_items.end(),
                     [](const Candidate& a, const Candidate& b) { return a.approx < b.approx; });
    const float kth = m_items[std::size_t(m_k - 1)].approx;
    m_threshold = std::min(m_threshold, kth + m_margin);
    const float t = m_threshold;
    m_items.erase(std::partition(m_items.begin(), m_items.end(),
                                 [t](const Candidate& c) { return c.approx <= t; }),
                  m_items.end());
    m_pruneAt = std::min(2 * m_cap, std::max(m_pruneAt, 2 * m_items.size()));
    if (m_items.size() > m_cap) {
      m_overflow = true;
      m_items.clear();
      m_items.shrink_to_fit();
      m_threshold = -std::numeric_limits<float>::infinity();
    }
  }

private:
  std::vector<Candidate> m_items;
  float m_threshold = std::numeric_limits<float>::infinity();
  float m_margin = 0;
  std::size_t m_cap = 0;
  std::size_t m_pruneAt = 0; ///< the size that triggers the next prune (≤ 2·cap)
  int m_k = 1;
  bool m_overflow = false;
};

} // namespace nearscape::knn
