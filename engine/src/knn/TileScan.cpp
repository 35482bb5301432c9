#include "knn/TileScan.h"

#include "knn/GemmBound.h"

#include <cmath>

namespace nearscape::knn {
namespace {

constexpr std::int64_t kBlock = 16;

template <Metric M>
inline float approx(float queryNorm, float baseNorm, float dot) {
  return approxDistance(M, queryNorm, baseNorm, dot);
}

template <Metric M>
void feedRowOf(const float* c, std::int64_t cols, float queryNorm, const float* baseNorms,
               std::int64_t baseStart, std::int64_t skip, CandidateRow& row) {
  float t = row.threshold();
  std::int64_t j = 0;
  auto feed = [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t x = from; x < to; ++x) {
      const float a = approx<M>(queryNorm, baseNorms[x], c[x]);
      if (a <= t && baseStart + x != skip) {
        row.push(a, std::int32_t(baseStart + x));
        t = row.threshold();
      }
    }
  };
  for (; j + kBlock <= cols; j += kBlock) {
    int hits = 0; // a count, not a flag: the sum vectorises
    for (std::int64_t x = j; x < j + kBlock; ++x)
      hits += approx<M>(queryNorm, baseNorms[x], c[x]) <= t;
    if (hits > 0)
      feed(j, j + kBlock);
  }
  feed(j, cols);
}

template <Metric M>
void feedPairOf(const float* C, std::int64_t rows, std::int64_t cols, std::int64_t ldc,
                const float* aNorms, std::int64_t aStart, const float* bNorms, std::int64_t bStart,
                bool upper, CandidateRow* aRows, CandidateRow* bRows, float* tc) {
  for (std::int64_t j = 0; j < cols; ++j)
    tc[j] = bRows[j].threshold();
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* c = C + i * ldc;
    const float qn = aNorms[i];
    CandidateRow& row = aRows[i];
    float t = row.threshold();
    auto feed = [&](std::int64_t from, std::int64_t to) {
      for (std::int64_t x = from; x < to; ++x) {
        const float a = approx<M>(qn, bNorms[x], c[x]);
        if (a <= t) {
          row.push(a, std::int32_t(bStart + x));
          t = row.threshold();
        }
        if (a <= tc[x]) {
          bRows[x].push(a, std::int32_t(aStart + i));
          tc[x] = bRows[x].threshold();
        }
      }
    };
    std::int64_t j = upper ? i + 1 : 0;
    for (; j + kBlock <= cols; j += kBlock) {
      int hits = 0;
      for (std::int64_t x = j; x < j + kBlock; ++x) {
        const float a = approx<M>(qn, bNorms[x], c[x]);
        hits += (a <= t) + (a <= tc[x]);
      }
      if (hits > 0)
        feed(j, j + kBlock);
    }
    feed(j, cols);
  }
  auto settle = [](CandidateRow& row) {
    if (std::isinf(row.threshold()) && row.threshold() > 0)
      row.prune();
  };
  for (std::int64_t i = 0; i < rows; ++i)
    settle(aRows[i]);
  if (!upper)
    for (std::int64_t j = 0; j < cols; ++j)
      settle(bRows[j]);
}

} // namespace

void feedRow(Metric metric, const float* c, std::int64_t cols, float queryNorm,
             const float* baseNorms, std::int64_t baseStart, std::int64_t skip,
             CandidateRow& row) {
  switch (metric) {
  case Metric::L2:
    return feedRowOf<Metric::L2>(c, cols, queryNorm, baseNorms, baseStart, skip, row);
  case Metric::InnerProduct:
    return feedRowOf<Metric::InnerProduct>(c, cols, queryNorm, baseNorms, baseStart, skip, row);
  case Metric::Cosine:
    return feedRowOf<Metric::Cosine>(c, cols, queryNorm, baseNorms, baseStart, skip, row);
  }
}

void feedPair(Metric metric, const float* C, std::int64_t rows, std::int64_t cols,
              std::int64_t ldc, const float* aNorms, std::int64_t aStart, const float* bNorms,
              std::int64_t bStart, bool upper, CandidateRow* aRows, CandidateRow* bRows,
              float* columnThresholds) {
  switch (metric) {
  case Metric::L2:
    return feedPairOf<Metric::L2>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart, upper,
                                  aRows, bRows, columnThresholds);
  case Metric::InnerProduct:
    return feedPairOf<Metric::InnerProduct>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart,
                                            upper, aRows, bRows, columnThresholds);
  case Metric::Cosine:
    return feedPairOf<Metric::Cosine>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart, upper,
                                      aRows, bRows, columnThresholds);
  }
}

} // namespace nearscape::knn
