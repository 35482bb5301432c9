#pragma once
// Element conversions from file types to float32 (internal to the readers).

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nearscape {

/// Converts `count` little-endian values of type T at `src` (any alignment) to float.
template <typename T> void convertToFloat(const std::uint8_t* src, std::size_t count, float* dst) {
#pragma omp parallel for schedule(static) if (count > (1u << 20))
  for (std::size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

/// IEEE 754 binary16 → binary32, subnormals, infinities and NaN included.
inline float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline void convertHalfToFloat(const std::uint8_t* src, std::size_t count, float* dst) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = halfToFloat(h);
  }
}

} // namespace nearscape
