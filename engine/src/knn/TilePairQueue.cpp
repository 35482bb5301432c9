#include "knn/TilePairQueue.h"

#include <algorithm>

namespace nearscape::knn {

TilePairQueue::TilePairQueue(std::int64_t tiles)
    : m_busy(static_cast<std::size_t>(std::max<std::int64_t>(tiles, 0)), 0) {
  if (tiles <= 0)
    return;
  m_order.reserve(static_cast<std::size_t>(tiles * (tiles + 1) / 2));
  for (std::int64_t t = 0; t < tiles; ++t)
    m_order.emplace_back(t, t);
  // Circle method over an even count (a ghost tile when odd): tile m − 1 stays put, the others
  // turn; round r pairs m − 1 with r and (r + s) with (r − s) mod (m − 1).
  const std::int64_t m = tiles + (tiles % 2);
  for (std::int64_t r = 0; r + 1 < m; ++r) {
    auto add = [&](std::int64_t x, std::int64_t y) {
      if (x < tiles && y < tiles)
        m_order.emplace_back(std::min(x, y), std::max(x, y));
    };
    add(r, m - 1);
    for (std::int64_t s = 1; s < m / 2; ++s)
      add((r + s) % (m - 1), (r - s + (m - 1)) % (m - 1));
  }
  m_taken.assign(m_order.size(), 0);
}

bool TilePairQueue::take(std::int64_t& a, std::int64_t& b) {
  std::unique_lock lock(m_mutex);
  for (;;) {
    while (m_head < m_order.size() && m_taken[m_head])
      ++m_head;
    if (m_stopped || m_head == m_order.size())
      return false;
    for (std::size_t p = m_head; p < m_order.size(); ++p) {
      const auto [x, y] = m_order[p];
      if (m_taken[p] || m_busy[std::size_t(x)] || m_busy[std::size_t(y)])
        continue;
      m_taken[p] = 1;
      m_busy[std::size_t(x)] = m_busy[std::size_t(y)] = 1;
      a = x;
      b = y;
      return true;
    }
    m_freed.wait(lock);
  }
}

void TilePairQueue::release(std::int64_t a, std::int64_t b) {
  {
    std::lock_guard lock(m_mutex);
    m_busy[std::size_t(a)] = m_busy[std::size_t(b)] = 0;
  }
  m_freed.notify_all();
}

void TilePairQueue::stop() {
  {
    std::lock_guard lock(m_mutex);
    m_stopped = true;
  }
  m_freed.notify_all();
}

} // namespace nearscape::knn
