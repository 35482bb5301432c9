#include "util/VectorDistance.h"

#include <immintrin.h>

namespace nearscape::simd {
namespace {

float l2Generic(const float* a, const float* b, std::int64_t d) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t i = 0;
  for (; i + 4 <= d; i += 4) {
    const float e0 = a[i] - b[i], e1 = a[i + 1] - b[i + 1], e2 = a[i + 2] - b[i + 2],
                e3 = a[i + 3] - b[i + 3];
    s0 += e0 * e0, s1 += e1 * e1, s2 += e2 * e2, s3 += e3 * e3;
  }
  for (; i < d; ++i)
    s0 += (a[i] - b[i]) * (a[i] - b[i]);
  return (s0 + s1) + (s2 + s3);
}

float dotGeneric(const float* a, const float* b, std::int64_t d) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t i = 0;
  for (; i + 4 <= d; i += 4)
    s0 += a[i] * b[i], s1 += a[i + 1] * b[i + 1], s2 += a[i + 2] * b[i + 2],
        s3 += a[i + 3] * b[i + 3];
  for (; i < d; ++i)
    s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

__attribute__((target("avx2,fma"))) float hsum256(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

__attribute__((target("avx2,fma"))) float l2Avx2(const float* a, const float* b, std::int64_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= d; i += 16) {
    const __m256 e0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    const __m256 e1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    s0 = _mm256_fmadd_ps(e0, e0, s0);
    s1 = _mm256_fmadd_ps(e1, e1, s1);
  }
  for (; i + 8 <= d; i += 8) {
    const __m256 e = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s0 = _mm256_fmadd_ps(e, e, s0);
  }
  float s = hsum256(_mm256_add_ps(s0, s1));
  for (; i < d; ++i)
    s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

__attribute__((target("avx2,fma"))) float dotAvx2(const float* a, const float* b, std::int64_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= d; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= d; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum256(_mm256_add_ps(s0, s1));
  for (; i < d; ++i)
    s += a[i] * b[i];
  return s;
}

/// The sum of 16 lanes (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its own header).
__attribute__((target("avx512f"))) float hsum512(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0;
  for (float x : lanes)
    s += x;
  return s;
}

__attribute__((target("avx512f"))) float l2Avx512(const float* a, const float* b, std::int64_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= d; i += 32) {
    const __m512 e0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    const __m512 e1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
    s0 = _mm512_fmadd_ps(e0, e0, s0);
    s1 = _mm512_fmadd_ps(e1, e1, s1);
  }
  if (i < d) { // the tail through masks: d need not be a multiple of 16
    for (; i < d; i += 16) {
      const __mmask16 m = d - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (d - i)) - 1);
      const __m512 e =
          _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
      s0 = _mm512_fmadd_ps(e, e, s0);
    }
  }
  return hsum512(_mm512_add_ps(s0, s1));
}

__attribute__((target("avx512f"))) float dotAvx512(const float* a, const float* b, std::int64_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
  }
  for (; i < d; i += 16) {
    const __mmask16 m = d - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (d - i)) - 1);
    s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s0);
  }
  return hsum512(_mm512_add_ps(s0, s1));
}

// Float rows against 8-bit codes: a quarter of the bytes a row, which is what a graph walk's
// random rows cost (fashion-mnist, 784-d: a float row 330–430 ns from memory, docs/benchmarks.md).

float l2CodesGeneric(const float* a, const float* step, const std::uint8_t* c, std::int64_t d) {
  float s = 0;
  for (std::int64_t i = 0; i < d; ++i) {
    const float e = a[i] - step[i] * float(c[i]);
    s += e * e;
  }
  return s;
}

float dotCodesGeneric(const float* v, const std::uint8_t* c, std::int64_t d) {
  float s = 0;
  for (std::int64_t i = 0; i < d; ++i)
    s += v[i] * float(c[i]);
  return s;
}

__attribute__((target("avx2,fma"))) __m256 codes8(const std::uint8_t* c) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c))));
}

__attribute__((target("avx2,fma"))) float l2CodesAvx2(const float* a, const float* step,
                                                      const std::uint8_t* c, std::int64_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= d; i += 16) {
    const __m256 e0 =
        _mm256_fnmadd_ps(_mm256_loadu_ps(step + i), codes8(c + i), _mm256_loadu_ps(a + i));
    const __m256 e1 = _mm256_fnmadd_ps(_mm256_loadu_ps(step + i + 8), codes8(c + i + 8),
                                       _mm256_loadu_ps(a + i + 8));
    s0 = _mm256_fmadd_ps(e0, e0, s0);
    s1 = _mm256_fmadd_ps(e1, e1, s1);
  }
  float s = hsum256(_mm256_add_ps(s0, s1));
  return s + l2CodesGeneric(a + i, step + i, c + i, d - i);
}

__attribute__((target("avx2,fma"))) float dotCodesAvx2(const float* v, const std::uint8_t* c,
                                                       std::int64_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= d; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(v + i), codes8(c + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(v + i + 8), codes8(c + i + 8), s1);
  }
  float s = hsum256(_mm256_add_ps(s0, s1));
  return s + dotCodesGeneric(v + i, c + i, d - i);
}

/// 16 codes as floats; lanes past `m` zero.
__attribute__((target("avx512f,avx512bw,avx512vl"))) __m512 codes16(__mmask16 m,
                                                                    const std::uint8_t* c) {
  // The masked conversions: GCC 12's unmasked ones trip -Wmaybe-uninitialized in its header.
  return _mm512_maskz_cvtepi32_ps(m, _mm512_maskz_cvtepu8_epi32(m, _mm_maskz_loadu_epi8(m, c)));
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) float
l2CodesAvx512(const float* a, const float* step, const std::uint8_t* c, std::int64_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= d; i += 32) {
    const __m512 e0 =
        _mm512_fnmadd_ps(_mm512_loadu_ps(step + i), codes16(0xFFFF, c + i), _mm512_loadu_ps(a + i));
    const __m512 e1 = _mm512_fnmadd_ps(_mm512_loadu_ps(step + i + 16), codes16(0xFFFF, c + i + 16),
                                       _mm512_loadu_ps(a + i + 16));
    s0 = _mm512_fmadd_ps(e0, e0, s0);
    s1 = _mm512_fmadd_ps(e1, e1, s1);
  }
  for (; i < d; i += 16) {
    const __mmask16 m = d - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (d - i)) - 1);
    const __m512 e = _mm512_fnmadd_ps(_mm512_maskz_loadu_ps(m, step + i), codes16(m, c + i),
                                      _mm512_maskz_loadu_ps(m, a + i));
    s0 = _mm512_fmadd_ps(e, e, s0);
  }
  return hsum512(_mm512_add_ps(s0, s1));
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) float
dotCodesAvx512(const float* v, const std::uint8_t* c, std::int64_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(v + i), codes16(0xFFFF, c + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(v + i + 16), codes16(0xFFFF, c + i + 16), s1);
  }
  for (; i < d; i += 16) {
    const __mmask16 m = d - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (d - i)) - 1);
    s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, v + i), codes16(m, c + i), s0);
  }
  return hsum512(_mm512_add_ps(s0, s1));
}

using Kernel = float (*)(const float*, const float*, std::int64_t);
using CodesL2Kernel = float (*)(const float*, const float*, const std::uint8_t*, std::int64_t);
using CodesDotKernel = float (*)(const float*, const std::uint8_t*, std::int64_t);

struct Kernels {
  Kernel l2 = l2Generic, dot = dotGeneric;
  CodesL2Kernel l2Codes = l2CodesGeneric;
  CodesDotKernel dotCodes = dotCodesGeneric;
  const char* name = "sse2";
  Kernels() {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (__builtin_cpu_supports("avx512f"))
      l2 = l2Avx512, dot = dotAvx512, name = "avx512";
    else if (avx2)
      l2 = l2Avx2, dot = dotAvx2, name = "avx2";
    // The codes' masked byte loads need AVX-512 BW and VL.
    if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
      l2Codes = l2CodesAvx512, dotCodes = dotCodesAvx512;
    else if (avx2)
      l2Codes = l2CodesAvx2, dotCodes = dotCodesAvx2;
  }
};

const Kernels& kernels() {
  static const Kernels k;
  return k;
}

} // namespace

float l2Squared(const float* a, const float* b, std::int64_t d) {
  return kernels().l2(a, b, d);
}
float dot(const float* a, const float* b, std::int64_t d) {
  return kernels().dot(a, b, d);
}
float l2SquaredCodes(const float* a, const float* step, const std::uint8_t* codes, std::int64_t d) {
  return kernels().l2Codes(a, step, codes, d);
}
float dotCodes(const float* v, const std::uint8_t* codes, std::int64_t d) {
  return kernels().dotCodes(v, codes, d);
}
const char* kernelName() {
  return kernels().name;
}

} // namespace nearscape::simd
