#pragma once
/// @file PointGrid.h
/// Nearest map point under the mouse: a uniform grid over 2D map coordinates, so picking stays
/// O(1) on average at millions of points (DESIGN: picking through the engine, not VTK pickers).

#include "nearscape/core/MatrixView.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace nearscape {

class PointGrid {
public:
  PointGrid() = default;
  /// Indexes the first two columns of `coords` (n × ≥2, host memory; copied; n < 2^31).
  explicit PointGrid(const MatrixView<float>& coords);
  /// Indexes `xy` (n × 2, interleaved), taking it over instead of copying it.
  explicit PointGrid(std::vector<float> xy);

  /// The item nearest to (x, y) within `radius` for which `accept(item)` is true (all items
  /// when accept is empty), or -1. Ties go to the smaller id.
  std::int64_t nearest(double x, double y, double radius,
                       const std::function<bool(std::int64_t)>& accept = {}) const;

  bool empty() const { return m_xy.empty(); }

private:
  void build();
  std::int64_t cellOf(double v, double lo, std::int64_t limit) const;

  std::vector<float> m_xy; ///< n × 2
  double m_minX = 0, m_minY = 0, m_cell = 1;
  std::int64_t m_cols = 0, m_rows = 0;
  std::vector<std::int64_t> m_cellStart; ///< m_rows * m_cols + 1 offsets into m_items
  std::vector<std::int32_t> m_items;     ///< item ids sorted by cell (int32: 16 bytes an item)
};

} // namespace nearscape
