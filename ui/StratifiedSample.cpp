#include "StratifiedSample.h"

#include <algorithm>
#include <cmath>

namespace nearscape::ui {
namespace {

std::uint64_t mix(std::uint64_t x) { // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr int kStrata = 1 << 15; // 5 bits a channel

int stratumOf(const std::uint8_t* c) {
  return (c[0] >> 3) << 10 | (c[1] >> 3) << 5 | c[2] >> 3;
}

} // namespace

std::vector<std::int32_t> stratifiedSample(const std::uint8_t* rgb, std::int64_t n,
                                           const std::vector<bool>& visible, std::int64_t budget,
                                           std::uint64_t seed) {
  auto shown = [&](std::int64_t i) { return visible.empty() || visible[std::size_t(i)]; };
  // Visible items grouped by stratum (a counting sort: ids stay in order inside each).
  std::vector<std::int64_t> start(kStrata + 1, 0);
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (shown(i)) {
      ++start[std::size_t(stratumOf(rgb + 3 * i)) + 1];
      ++total;
    }
  std::vector<std::int32_t> picked;
  if (total <= budget) {
    picked.reserve(std::size_t(total));
    for (std::int64_t i = 0; i < n; ++i)
      if (shown(i))
        picked.push_back(std::int32_t(i));
    return picked;
  }
  for (int s = 0; s < kStrata; ++s)
    start[std::size_t(s) + 1] += start[std::size_t(s)];
  std::vector<std::int32_t> grouped(static_cast<std::size_t>(total));
  std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
  for (std::int64_t i = 0; i < n; ++i)
    if (shown(i))
      grouped[std::size_t(fill[std::size_t(stratumOf(rgb + 3 * i))]++)] = std::int32_t(i);

  const double share = double(budget) / double(total);
  const auto byHash = [seed](std::int32_t a, std::int32_t b) {
    const std::uint64_t ha = mix(seed ^ std::uint64_t(a)), hb = mix(seed ^ std::uint64_t(b));
    return ha != hb ? ha < hb : a < b;
  };
  picked.reserve(std::size_t(budget) + kStrata);
  for (int s = 0; s < kStrata; ++s) {
    const auto first = grouped.begin() + start[std::size_t(s)];
    const auto last = grouped.begin() + start[std::size_t(s) + 1];
    const std::int64_t size = last - first;
    if (size == 0)
      continue;
    const std::int64_t keep =
        std::min<std::int64_t>(size, std::max<std::int64_t>(1, std::llround(share * size)));
    std::nth_element(first, first + (keep - 1), last, byHash);
    picked.insert(picked.end(), first, first + keep);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

} // namespace nearscape::ui
