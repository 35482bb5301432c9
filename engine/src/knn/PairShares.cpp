#include "knn/PairShares.h"

#include "core/HugePages.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <limits>
#include <string>

namespace nearscape::knn {

MergedShares mergePairShares(const std::vector<gpu::PairsShare>& shares, int threads) {
  NEARSCAPE_EXPECTS(!shares.empty() && shares.size() < 128, "no shares, or too many, to merge");
  const std::int64_t n = shares.front().ids.rows();
  const int k = int(shares.front().ids.cols());
  for (const gpu::PairsShare& s : shares)
    NEARSCAPE_EXPECTS(s.ids.rows() == n && s.ids.cols() == k && s.distances.rows() == n &&
                          s.distances.cols() == k,
                      "a share of " + std::to_string(s.ids.rows()) + " × " +
                          std::to_string(s.ids.cols()) + " rows beside one of " +
                          std::to_string(n) + " × " + std::to_string(k));
  MergedShares merged;
  // Left unset and first touched by the threads that write them (zero-filling 2M × 10 on one
  // thread took about 35 ms of a 2-GPU graph's merge).
  merged.ids = hugePageArray<std::int32_t>(std::size_t(n) * std::size_t(k));
  merged.distances = hugePageArray<float>(std::size_t(n) * std::size_t(k));
  std::vector<std::int8_t> tooFew(std::size_t(n), 0); // rows left with fewer than k distinct ids
  const std::size_t parts = shares.size();
  std::vector<const std::vector<std::int64_t>*> whole, overflow;
  for (const gpu::PairsShare& s : shares) {
    whole.push_back(&s.complete);
    overflow.push_back(&s.overflow);
  }
  const std::vector<std::int8_t> wholeIn = firstShareWhole(n, whole);
#pragma omp parallel num_threads(threads)
  {
    std::vector<int> at(parts); // a cursor per share into its sorted row
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < n; ++r) {
      std::int32_t* outIds = merged.ids.get() + r * k;
      float* outDist = merged.distances.get() + r * k;
      if (wholeIn[std::size_t(r)] >= 0) {
        const gpu::PairsShare& whole = shares[std::size_t(wholeIn[std::size_t(r)])];
        for (int c = 0; c < k; ++c) {
          outIds[c] = whole.ids.row(r)[c];
          outDist[c] = float(whole.distances.row(r)[c]);
        }
        continue;
      }
      // Each step takes the least (distance, id) of the shares' heads.
      std::fill(at.begin(), at.end(), 0);
      int kept = 0;
      while (kept < k) {
        std::size_t best = parts;
        double bestDist = 0;
        std::int32_t bestId = 0;
        for (std::size_t p = 0; p < parts; ++p) {
          const std::int32_t* ids = shares[p].ids.row(r);
          const double* dist = shares[p].distances.row(r);
          while (at[p] < k && (ids[at[p]] < 0 || ids[at[p]] >= n))
            ++at[p]; // padding: the share's row held fewer than k candidates
          if (at[p] == k)
            continue;
          const double d = dist[at[p]];
          const std::int32_t id = ids[at[p]];
          if (best == parts || d < bestDist || (d == bestDist && id < bestId)) {
            best = p;
            bestDist = d;
            bestId = id;
          }
        }
        if (best == parts)
          break;
        ++at[best];
        // Found by several shares: the same pair scored the same way, met again later or now.
        if (std::find(outIds, outIds + kept, bestId) != outIds + kept)
          continue;
        outIds[kept] = bestId;
        outDist[kept] = float(bestDist);
        ++kept;
      }
      if (kept < k) {
        tooFew[std::size_t(r)] = 1;
        std::fill(outIds + kept, outIds + k, -1);
        std::fill(outDist + kept, outDist + k, std::numeric_limits<float>::infinity());
      }
    }
  }
  for (const gpu::PairsShare& s : shares)
    merged.candidates += s.candidates;
  merged.overflow = rowsLeftUnbounded(wholeIn, overflow, tooFew);
  return merged;
}

std::vector<std::int8_t>
firstShareWhole(std::int64_t n, const std::vector<const std::vector<std::int64_t>*>& whole) {
  std::vector<std::int8_t> wholeIn(std::size_t(std::max<std::int64_t>(n, 0)), -1);
  for (std::size_t p = 0; p < whole.size(); ++p)
    for (const std::int64_t row : *whole[p])
      if (row >= 0 && row < n && wholeIn[std::size_t(row)] < 0)
        wholeIn[std::size_t(row)] = std::int8_t(p);
  return wholeIn;
}

std::vector<std::int64_t>
rowsLeftUnbounded(const std::vector<std::int8_t>& wholeIn,
                  const std::vector<const std::vector<std::int64_t>*>& overflow,
                  const std::vector<std::int8_t>& tooFew) {
  const std::int64_t n = std::int64_t(wholeIn.size());
  std::vector<char> listed(std::size_t(n), 0);
  for (const std::vector<std::int64_t>* rows : overflow)
    for (const std::int64_t row : *rows)
      if (row >= 0 && row < n)
        listed[std::size_t(row)] = 1;
  std::vector<std::int64_t> left;
  for (std::int64_t r = 0; r < n; ++r)
    if (wholeIn[std::size_t(r)] < 0 && (listed[std::size_t(r)] || tooFew[std::size_t(r)]))
      left.push_back(r);
  return left;
}

} // namespace nearscape::knn
