#include "nearscape/layout/PointGrid.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nearscape {

PointGrid::PointGrid(const MatrixView<float>& coords) {
  const std::int64_t n = coords.rows;
  if (n == 0 || coords.cols < 2)
    return;
  m_xy.resize(static_cast<std::size_t>(2 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    m_xy[2 * i] = coords.row(i)[0];
    m_xy[2 * i + 1] = coords.row(i)[1];
  }
  build();
}

PointGrid::PointGrid(std::vector<float> xy) : m_xy(std::move(xy)) {
  m_xy.resize(m_xy.size() / 2 * 2);
  build();
}

void PointGrid::build() {
  const std::int64_t n = std::int64_t(m_xy.size() / 2);
  if (n == 0)
    return;
  double maxX = -INFINITY, maxY = -INFINITY;
  m_minX = INFINITY;
  m_minY = INFINITY;
  for (std::int64_t i = 0; i < n; ++i) {
    const float x = m_xy[2 * i], y = m_xy[2 * i + 1];
    m_minX = std::min<double>(m_minX, x);
    m_minY = std::min<double>(m_minY, y);
    maxX = std::max<double>(maxX, x);
    maxY = std::max<double>(maxY, y);
  }
  // About two points per cell on average.
  const double w = std::max(maxX - m_minX, 1e-12), h = std::max(maxY - m_minY, 1e-12);
  m_cell = std::sqrt(w * h * 2.0 / double(n));
  if (!(m_cell > 0))
    m_cell = 1;
  m_cols = std::min<std::int64_t>(std::int64_t(w / m_cell) + 1, 1 << 14);
  m_rows = std::min<std::int64_t>(std::int64_t(h / m_cell) + 1, 1 << 14);
  m_cell = std::max(w / double(m_cols), h / double(m_rows)) * (1 + 1e-9);
  m_cellStart.assign(static_cast<std::size_t>(m_rows * m_cols + 1), 0);
  // At most 2^28 cells: their numbers fit 32 bits, as the items' ids do.
  std::vector<std::int32_t> cellOfItem(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t c =
        cellOf(m_xy[2 * i + 1], m_minY, m_rows) * m_cols + cellOf(m_xy[2 * i], m_minX, m_cols);
    cellOfItem[i] = std::int32_t(c);
    ++m_cellStart[c + 1];
  }
  for (std::size_t c = 1; c < m_cellStart.size(); ++c)
    m_cellStart[c] += m_cellStart[c - 1];
  m_items.resize(static_cast<std::size_t>(n));
  std::vector<std::int64_t> fill(m_cellStart.begin(), m_cellStart.end() - 1);
  for (std::int64_t i = 0; i < n; ++i)
    m_items[fill[cellOfItem[i]]++] = std::int32_t(i);
}

std::int64_t PointGrid::cellOf(double v, double lo, std::int64_t limit) const {
  const double cell = std::floor((v - lo) / m_cell);
  if (!(cell > 0)) // also NaN
    return 0;
  return cell >= double(limit) ? limit - 1 : std::int64_t(cell);
}

std::int64_t PointGrid::nearest(double x, double y, double radius,
                                const std::function<bool(std::int64_t)>& accept) const {
  if (m_xy.empty() || !(radius >= 0))
    return -1;
  const std::int64_t c0 = cellOf(x - radius, m_minX, m_cols),
                     c1 = cellOf(x + radius, m_minX, m_cols);
  const std::int64_t r0 = cellOf(y - radius, m_minY, m_rows),
                     r1 = cellOf(y + radius, m_minY, m_rows);
  std::int64_t best = -1;
  double bestD = radius * radius;
  for (std::int64_t r = r0; r <= r1; ++r)
    for (std::int64_t c = c0; c <= c1; ++c) {
      const std::int64_t cell = r * m_cols + c;
      for (std::int64_t k = m_cellStart[cell]; k < m_cellStart[cell + 1]; ++k) {
        const std::int64_t i = m_items[k];
        const double dx = m_xy[2 * i] - x, dy = m_xy[2 * i + 1] - y;
        const double d = dx * dx + dy * dy;
        if ((d < bestD || (d == bestD && (best < 0 || i < best))) && (!accept || accept(i))) {
          bestD = d;
          best = i;
        }
      }
    }
  return best;
}

} // namespace nearscape
