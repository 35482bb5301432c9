#include "util/RowValues.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace nearscape::simd {
namespace {

/// |x|'s bits, and whether x is finite (its exponent not all ones).
inline std::uint32_t absBits(float x, bool& finite) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= 0x7fffffffu;
  finite = bits < 0x7f800000u;
  return bits;
}

/// Adds values [from, d) of x to `r` one at a time.
void addScalar(const float* x, std::int64_t from, std::int64_t d, RowValues& r) {
  for (std::int64_t c = from; c < d; ++c) {
    bool finite = false;
    const std::uint32_t bits = absBits(x[c], finite);
    if (!finite) {
      ++r.nonFinite;
      continue;
    }
    float v;
    std::memcpy(&v, &bits, sizeof v);
    r.largest = std::max(r.largest, v);
    r.squared += v * v;
  }
}

/// Branch-free on the values' bits, so that the compiler vectorises it for the baseline.
RowValues rowValuesGeneric(const float* x, std::int64_t d) {
  float squared = 0, largest = 0;
  std::int64_t bad = 0;
#pragma omp simd reduction(+ : squared, bad) reduction(max : largest)
  for (std::int64_t c = 0; c < d; ++c) {
    bool finite = false;
    const std::uint32_t bits = absBits(x[c], finite);
    const std::uint32_t keptBits = finite ? bits : 0u;
    float v;
    std::memcpy(&v, &keptBits, sizeof v);
    bad += finite ? 0 : 1;
    largest = std::max(largest, v);
    squared += v * v;
  }
  return {bad, largest, squared};
}

/// AVX2's running sums: per lane, the squared norm and largest |value| (two of each, for two
/// chains of adds) and the non-finite values seen.
struct Avx2Sums {
  __m256 squared[2], largest[2];
  __m256i bad;
};

/// Eight values at `at` into chain `chain`: non-finite lanes count and add zero.
__attribute__((target("avx2,fma"))) inline void addEight(const float* at, int chain,
                                                         Avx2Sums& sums) {
  const __m256i bits = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)),
                                        _mm256_set1_epi32(0x7fffffff));
  const __m256i finite = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000), bits); // all ones
  const __m256 v = _mm256_castsi256_ps(_mm256_and_si256(bits, finite));
  sums.bad = _mm256_sub_epi32(sums.bad, _mm256_xor_si256(finite, _mm256_set1_epi32(-1)));
  sums.largest[chain] = _mm256_max_ps(sums.largest[chain], v);
  sums.squared[chain] = _mm256_fmadd_ps(v, v, sums.squared[chain]);
}

__attribute__((target("avx2,fma"))) RowValues rowValuesAvx2(const float* x, std::int64_t d) {
  Avx2Sums sums;
  sums.squared[0] = sums.squared[1] = sums.largest[0] = sums.largest[1] = _mm256_setzero_ps();
  sums.bad = _mm256_setzero_si256();
  std::int64_t c = 0;
  for (; c + 16 <= d; c += 16) {
    addEight(x + c, 0, sums);
    addEight(x + c + 8, 1, sums);
  }
  if (c + 8 <= d) {
    addEight(x + c, 0, sums);
    c += 8;
  }
  alignas(32) float squared[8], largest[8];
  alignas(32) std::int32_t bad[8];
  _mm256_store_ps(squared, _mm256_add_ps(sums.squared[0], sums.squared[1]));
  _mm256_store_ps(largest, _mm256_max_ps(sums.largest[0], sums.largest[1]));
  _mm256_store_si256(reinterpret_cast<__m256i*>(bad), sums.bad);
  RowValues r;
  r.squared = ((squared[0] + squared[1]) + (squared[2] + squared[3])) +
              ((squared[4] + squared[5]) + (squared[6] + squared[7]));
  for (int lane = 0; lane < 8; ++lane) {
    r.largest = std::max(r.largest, largest[lane]);
    r.nonFinite += bad[lane];
  }
  addScalar(x, c, d, r);
  return r;
}

RowValuesKernel pick() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? rowValuesAvx2
                                                                         : rowValuesGeneric;
}

} // namespace

RowValuesKernel rowValuesKernel() {
  static const RowValuesKernel kernel = pick();
  return kernel;
}

RowValuesKernel rowValuesBaseline() {
  return rowValuesGeneric;
}

} // namespace nearscape::simd
