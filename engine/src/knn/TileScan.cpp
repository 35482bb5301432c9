#include "knn/TileScan.h"

#include "knn/GemmBound.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nearscape::knn {
namespace {

constexpr std::int64_t kBlock = 16;

template <Metric M> inline float approx(float queryNorm, float baseNorm, float dot) {
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

#if defined(__x86_64__)
/// The approximate distances of 16 entries, as approxDistance computes each (no contraction:
/// the same rounding as the scalar formula).
template <Metric M>
__attribute__((target("avx512f"))) inline __m512 approx16(__m512 queryNorm, const float* baseNorms,
                                                          const float* c) {
  const __m512 dot = _mm512_loadu_ps(c);
  if constexpr (M == Metric::L2)
    return _mm512_sub_ps(_mm512_add_ps(queryNorm, _mm512_loadu_ps(baseNorms)),
                         _mm512_add_ps(dot, dot));
  else if constexpr (M == Metric::InnerProduct)
    return _mm512_sub_ps(_mm512_setzero_ps(), dot);
  else
    return _mm512_sub_ps(_mm512_set1_ps(1.0f), dot);
}

/// feedRowOf with AVX-512: a block's entries within the threshold as a bit mask, each fed alone.
template <Metric M>
__attribute__((target("avx512f"))) void
feedRowAvx512(const float* c, std::int64_t cols, float queryNorm, const float* baseNorms,
              std::int64_t baseStart, std::int64_t skip, CandidateRow& row) {
  float t = row.threshold();
  const __m512 qn = _mm512_set1_ps(queryNorm);
  alignas(64) float a[kBlock];
  std::int64_t j = 0;
  for (; j + kBlock <= cols; j += kBlock) {
    const __m512 v = approx16<M>(qn, baseNorms + j, c + j);
    __mmask16 hits = _mm512_cmp_ps_mask(v, _mm512_set1_ps(t), _CMP_LE_OQ);
    if (!hits)
      continue;
    _mm512_store_ps(a, v);
    for (; hits; hits &= hits - 1) {
      const int x = __builtin_ctz(hits);
      if (a[x] <= t && baseStart + j + x != skip) { // t may have fallen since the mask
        row.push(a[x], std::int32_t(baseStart + j + x));
        t = row.threshold();
      }
    }
  }
  for (; j < cols; ++j) {
    const float v = approx<M>(queryNorm, baseNorms[j], c[j]);
    if (v <= t && baseStart + j != skip) {
      row.push(v, std::int32_t(baseStart + j));
      t = row.threshold();
    }
  }
}

/// feedPairOf's rows and columns with AVX-512: one pass, two bit masks a block.
template <Metric M>
__attribute__((target("avx512f"))) void
feedPairAvx512(const float* C, std::int64_t rows, std::int64_t cols, std::int64_t ldc,
               const float* aNorms, std::int64_t aStart, const float* bNorms, std::int64_t bStart,
               bool upper, CandidateRow* aRows, CandidateRow* bRows, float* tc) {
  for (std::int64_t j = 0; j < cols; ++j)
    tc[j] = bRows[j].threshold();
  alignas(64) float a[kBlock];
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* c = C + i * ldc;
    CandidateRow& row = aRows[i];
    float t = row.threshold();
    const __m512 qn = _mm512_set1_ps(aNorms[i]);
    auto feedOne = [&](std::int64_t x, float v) {
      if (v <= t) {
        row.push(v, std::int32_t(bStart + x));
        t = row.threshold();
      }
      if (v <= tc[x]) {
        bRows[x].push(v, std::int32_t(aStart + i));
        tc[x] = bRows[x].threshold();
      }
    };
    std::int64_t j = upper ? i + 1 : 0;
    for (; j + kBlock <= cols; j += kBlock) {
      const __m512 v = approx16<M>(qn, bNorms + j, c + j);
      __mmask16 hits = _mm512_cmp_ps_mask(v, _mm512_set1_ps(t), _CMP_LE_OQ) |
                       _mm512_cmp_ps_mask(v, _mm512_loadu_ps(tc + j), _CMP_LE_OQ);
      if (!hits)
        continue;
      _mm512_store_ps(a, v);
      for (; hits; hits &= hits - 1) {
        const int x = __builtin_ctz(hits);
        feedOne(j + x, a[x]);
      }
    }
    for (; j < cols; ++j)
      feedOne(j, approx<M>(aNorms[i], bNorms[j], c[j]));
  }
  auto settle = [](CandidateRow& r) {
    if (std::isinf(r.threshold()) && r.threshold() > 0)
      r.prune();
  };
  for (std::int64_t i = 0; i < rows; ++i)
    settle(aRows[i]);
  if (!upper)
    for (std::int64_t j = 0; j < cols; ++j)
      settle(bRows[j]);
}

bool hasAvx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}
#endif

template <Metric M>
void feedRowFor(const float* c, std::int64_t cols, float queryNorm, const float* baseNorms,
                std::int64_t baseStart, std::int64_t skip, CandidateRow& row, ScanKernel kernel) {
#if defined(__x86_64__)
  if (kernel == ScanKernel::best && hasAvx512())
    return feedRowAvx512<M>(c, cols, queryNorm, baseNorms, baseStart, skip, row);
#endif
  feedRowOf<M>(c, cols, queryNorm, baseNorms, baseStart, skip, row);
}

template <Metric M>
void feedPairFor(const float* C, std::int64_t rows, std::int64_t cols, std::int64_t ldc,
                 const float* aNorms, std::int64_t aStart, const float* bNorms, std::int64_t bStart,
                 bool upper, CandidateRow* aRows, CandidateRow* bRows, float* tc,
                 ScanKernel kernel) {
#if defined(__x86_64__)
  if (kernel == ScanKernel::best && hasAvx512())
    return feedPairAvx512<M>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart, upper, aRows,
                             bRows, tc);
#endif
  feedPairOf<M>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart, upper, aRows, bRows, tc);
}

} // namespace

void feedRow(Metric metric, const float* c, std::int64_t cols, float queryNorm,
             const float* baseNorms, std::int64_t baseStart, std::int64_t skip, CandidateRow& row,
             ScanKernel kernel) {
  switch (metric) {
  case Metric::L2:
    return feedRowFor<Metric::L2>(c, cols, queryNorm, baseNorms, baseStart, skip, row, kernel);
  case Metric::InnerProduct:
    return feedRowFor<Metric::InnerProduct>(c, cols, queryNorm, baseNorms, baseStart, skip, row,
                                            kernel);
  case Metric::Cosine:
    return feedRowFor<Metric::Cosine>(c, cols, queryNorm, baseNorms, baseStart, skip, row, kernel);
  }
}

void feedPair(Metric metric, const float* C, std::int64_t rows, std::int64_t cols, std::int64_t ldc,
              const float* aNorms, std::int64_t aStart, const float* bNorms, std::int64_t bStart,
              bool upper, CandidateRow* aRows, CandidateRow* bRows, float* columnThresholds,
              ScanKernel kernel) {
  switch (metric) {
  case Metric::L2:
    return feedPairFor<Metric::L2>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart, upper, aRows,
                                   bRows, columnThresholds, kernel);
  case Metric::InnerProduct:
    return feedPairFor<Metric::InnerProduct>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart,
                                             upper, aRows, bRows, columnThresholds, kernel);
  case Metric::Cosine:
    return feedPairFor<Metric::Cosine>(C, rows, cols, ldc, aNorms, aStart, bNorms, bStart, upper,
                                       aRows, bRows, columnThresholds, kernel);
  }
}

} // namespace nearscape::knn
