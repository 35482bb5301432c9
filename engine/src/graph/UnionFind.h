#pragma once
// Union-find over int32 node ids with path halving; the smaller root stays a root, so the
// components (and Kruskal's forest with ordered ties) come out the same on every run.

#include <cstdint>
#include <memory>
#include <numeric>
#include <utility>

namespace nearscape::graph {

class UnionFind {
public:
  // Not a std::vector: its zeroing would touch all n entries once more before iota.
  explicit UnionFind(std::int64_t n) : m_parent(new std::int32_t[std::size_t(n)]) {
    std::iota(m_parent.get(), m_parent.get() + n, 0);
  }
  std::int32_t find(std::int32_t x) {
    while (m_parent[x] != x) {
      m_parent[x] = m_parent[m_parent[x]]; // path halving
      x = m_parent[x];
    }
    return x;
  }
  /// Brings x's entry towards the cache ahead of a find (Kruskal's scan reads them at random).
  void prefetch(std::int32_t x) const { __builtin_prefetch(m_parent.get() + x); }
  bool unite(std::int32_t a, std::int32_t b) {
    a = find(a);
    b = find(b);
    if (a == b)
      return false;
    if (a > b)
      std::swap(a, b);
    m_parent[b] = a;
    return true;
  }

private:
  std::unique_ptr<std::int32_t[]> m_parent;
};

} // namespace nearscape::graph
