#include "nearscape/core/Sampling.h"

#include "util/Hash.h"

#include <algorithm>
#include <numeric>

namespace nearscape {

std::vector<std::int64_t> seededSample(std::int64_t n, std::int64_t count, std::uint64_t seed) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  std::iota(rows.begin(), rows.end(), 0);
  if (count >= n)
    return rows;
  count = std::max<std::int64_t>(count, 0);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint64_t draw = mixBits(seed * 0x9e3779b97f4a7c15ull + std::uint64_t(i));
    std::swap(rows[std::size_t(i)],
              rows[std::size_t(i + std::int64_t(draw % std::uint64_t(n - i)))]);
  }
  rows.resize(static_cast<std::size_t>(count));
  std::sort(rows.begin(), rows.end());
  return rows;
}

HeldOut holdOutRows(const MatrixView<float>& data, std::int64_t count, std::uint64_t seed,
                    std::int64_t alsoHold) {
  HeldOut h;
  h.dim = data.cols;
  std::vector<bool> isQuery(std::size_t(data.rows), false);
  for (const std::int64_t r : seededSample(data.rows, count, seed))
    isQuery[std::size_t(r)] = true;
  if (alsoHold >= 0 && alsoHold < data.rows)
    isQuery[std::size_t(alsoHold)] = true;
  for (std::int64_t r = 0; r < data.rows; ++r) {
    std::vector<float>& into = isQuery[std::size_t(r)] ? h.queries : h.base;
    into.insert(into.end(), data.row(r), data.row(r) + data.cols);
    (isQuery[std::size_t(r)] ? h.queryRows : h.baseRows).push_back(r);
  }
  return h;
}

} // namespace nearscape
