#include "graph/EdgeDistance.h"

#include <cmath>
#include <immintrin.h>

namespace nearscape::graph {
namespace {

constexpr int kLanes = 8;

/// The lanes' sums folded in one fixed order.
inline double fold(const double* lane) {
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/// The distance from per-lane sums (`s[0]`: Σ t² or Σ a·b; for cosine `s[1]` Σ a², `s[2]` Σ b²)
/// after adding the last d mod 8 elements, each to the lane the blocks would have put it in.
template <Metric M>
inline double finish(double (&s)[3][kLanes], const float* a, const float* b, std::int64_t from,
                     std::int64_t d) {
  for (std::int64_t j = from; j < d; ++j) {
    const int lane = int(j % kLanes);
    const double x = a[j], y = b[j];
    if constexpr (M == Metric::L2) {
      const double t = x - y;
      s[0][lane] = std::fma(t, t, s[0][lane]);
    } else {
      s[0][lane] = std::fma(x, y, s[0][lane]);
      if constexpr (M == Metric::Cosine) {
        s[1][lane] = std::fma(x, x, s[1][lane]);
        s[2][lane] = std::fma(y, y, s[2][lane]);
      }
    }
  }
  if constexpr (M == Metric::L2) {
    return std::sqrt(fold(s[0]));
  } else if constexpr (M == Metric::InnerProduct) {
    return -fold(s[0]);
  } else {
    const double ab = fold(s[0]), aa = fold(s[1]), bb = fold(s[2]);
    if (aa == 0 || bb == 0)
      return 1.0;                         // a zero vector: cos taken as 0
    return 1.0 - ab / std::sqrt(aa * bb); // exactDistance's form: a copy lies at 0
  }
}

template <Metric M>
void rowGeneric(const float* a, const float* const* rows, int count, std::int64_t d, double* out) {
  const std::int64_t blocks = d / kLanes;
  for (int r = 0; r < count; ++r) {
    const float* b = rows[r];
    double s[3][kLanes] = {};
    for (std::int64_t q = 0; q < blocks; ++q)
      for (int lane = 0; lane < kLanes; ++lane) {
        const double x = a[q * kLanes + lane], y = b[q * kLanes + lane];
        if constexpr (M == Metric::L2) {
          const double t = x - y;
          s[0][lane] = std::fma(t, t, s[0][lane]);
        } else {
          s[0][lane] = std::fma(x, y, s[0][lane]);
          if constexpr (M == Metric::Cosine) {
            s[1][lane] = std::fma(x, x, s[1][lane]);
            s[2][lane] = std::fma(y, y, s[2][lane]);
          }
        }
      }
    out[r] = finish<M>(s, a, b, blocks * kLanes, d);
  }
}

template <Metric M>
__attribute__((target("avx2,fma"))) void rowAvx2(const float* a, const float* const* rows,
                                                 int count, std::int64_t d, double* out) {
  const std::int64_t blocks = d / kLanes;
  for (int r = 0; r < count; ++r) {
    const float* b = rows[r];
    __m256d s[3][2];
    for (auto& set : s)
      set[0] = set[1] = _mm256_setzero_pd();
    for (std::int64_t q = 0; q < blocks; ++q)
      for (int half = 0; half < 2; ++half) {
        const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(a + q * kLanes + 4 * half));
        const __m256d y = _mm256_cvtps_pd(_mm_loadu_ps(b + q * kLanes + 4 * half));
        if constexpr (M == Metric::L2) {
          const __m256d t = _mm256_sub_pd(x, y);
          s[0][half] = _mm256_fmadd_pd(t, t, s[0][half]);
        } else {
          s[0][half] = _mm256_fmadd_pd(x, y, s[0][half]);
          if constexpr (M == Metric::Cosine) {
            s[1][half] = _mm256_fmadd_pd(x, x, s[1][half]);
            s[2][half] = _mm256_fmadd_pd(y, y, s[2][half]);
          }
        }
      }
    // Not on the stack: GCC 12 takes a vector function's local array as 64-byte aligned and
    // stores to it with aligned moves, which fault on ASan's fake stack (its use-after-return
    // frames keep a smaller alignment).
    thread_local double lanes[3][kLanes];
    for (int set = 0; set < 3; ++set) {
      _mm256_storeu_pd(lanes[set], s[set][0]);
      _mm256_storeu_pd(lanes[set] + 4, s[set][1]);
    }
    out[r] = finish<M>(lanes, a, b, blocks * kLanes, d);
  }
}

template <Metric M>
__attribute__((target("avx512f,fma"))) void rowAvx512(const float* a, const float* const* rows,
                                                      int count, std::int64_t d, double* out) {
  const std::int64_t blocks = d / kLanes;
  for (int r = 0; r < count; ++r) {
    const float* b = rows[r];
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd(), s2 = _mm512_setzero_pd();
    // maskz with every lane set: the plain conversion's undefined start trips GCC 12's
    // -Wmaybe-uninitialized in its own header.
    for (std::int64_t q = 0; q < blocks; ++q) {
      const __m512d x = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(a + q * kLanes));
      const __m512d y = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(b + q * kLanes));
      if constexpr (M == Metric::L2) {
        const __m512d t = _mm512_sub_pd(x, y);
        s0 = _mm512_fmadd_pd(t, t, s0);
      } else {
        s0 = _mm512_fmadd_pd(x, y, s0);
        if constexpr (M == Metric::Cosine) {
          s1 = _mm512_fmadd_pd(x, x, s1);
          s2 = _mm512_fmadd_pd(y, y, s2);
        }
      }
    }
    // Not on the stack: GCC 12 takes a vector function's local array as 64-byte aligned and
    // stores to it with aligned moves, which fault on ASan's fake stack (its use-after-return
    // frames keep a smaller alignment).
    thread_local double lanes[3][kLanes];
    _mm512_storeu_pd(lanes[0], s0);
    _mm512_storeu_pd(lanes[1], s1);
    _mm512_storeu_pd(lanes[2], s2);
    out[r] = finish<M>(lanes, a, b, blocks * kLanes, d);
  }
}

using RowKernel = void (*)(const float*, const float* const*, int, std::int64_t, double*);

struct Kernel {
  RowKernel l2, ip, cosine;
  const char* name;
};

Kernel pickKernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
    return {rowAvx512<Metric::L2>, rowAvx512<Metric::InnerProduct>, rowAvx512<Metric::Cosine>,
            "avx512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {rowAvx2<Metric::L2>, rowAvx2<Metric::InnerProduct>, rowAvx2<Metric::Cosine>, "avx2"};
  return {rowGeneric<Metric::L2>, rowGeneric<Metric::InnerProduct>, rowGeneric<Metric::Cosine>,
          "generic"};
}

const Kernel& kernel() {
  static const Kernel picked = pickKernel();
  return picked;
}

} // namespace

void edgeDistances(const float* a, const float* const* rows, int count, std::int64_t d,
                   Metric metric, double* out) {
  const Kernel& k = kernel();
  (metric == Metric::L2             ? k.l2
   : metric == Metric::InnerProduct ? k.ip
                                    : k.cosine)(a, rows, count, d, out);
}

double edgeDistance(const float* a, const float* b, std::int64_t d, Metric metric) {
  double out = 0;
  edgeDistances(a, &b, 1, d, metric, &out);
  return out;
}

const char* edgeDistanceKernel() {
  return kernel().name;
}

} // namespace nearscape::graph
