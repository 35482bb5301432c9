#pragma once
// The tile pairs of a symmetric kNN graph, handed out to worker threads (internal).

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace nearscape::knn {

/// The pairs (A, B), A ≤ B, of `tiles` tiles, handed out so that no two pairs in work at once
/// share a tile: a pair's scan writes the candidate rows of both its tiles, so the workers need
/// no lock on the rows. Each worker then runs its own single-threaded GEMM and scan: on 2 cores
/// that beat two-threaded GEMMs with the scans between them, whose threads spun and yielded
/// while the others worked (docs/benchmarks.md, issue 43, session 25). The order is the diagonal
/// pairs, then the rounds of a round-robin tournament (the circle method: the pairs of one round
/// are disjoint), so the next pair in order is nearly always free.
class TilePairQueue {
public:
  explicit TilePairQueue(std::int64_t tiles);

  /// Claims the next pair whose tiles are both free, waiting while every pair left shares a
  /// tile with a pair in work. false when none is left or after stop().
  bool take(std::int64_t& a, std::int64_t& b);
  /// Returns the tiles of a pair taken.
  void release(std::int64_t a, std::int64_t b);
  /// Hands out no more pairs (a stop was asked for).
  void stop();

  std::int64_t pairs() const { return std::int64_t(m_order.size()); }
  /// The order pairs are handed out in while one worker takes them (for tests).
  const std::vector<std::pair<std::int64_t, std::int64_t>>& order() const { return m_order; }

private:
  std::vector<std::pair<std::int64_t, std::int64_t>> m_order;
  std::vector<char> m_taken;
  std::vector<char> m_busy; ///< per tile: in a pair in work
  std::size_t m_head = 0;   ///< every pair before it is taken
  bool m_stopped = false;
  std::mutex m_mutex;
  std::condition_variable m_freed;
};

} // namespace nearscape::knn
