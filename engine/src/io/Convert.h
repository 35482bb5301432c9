#pragma once
// Element conversions from file types to float32 (internal to the readers).

#include "nearscape/core/Error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

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

/// What float32 cannot hold of a row of float64 values (`largest`: the magnitude of the row's
/// largest finite value; NaN and ±Inf are left to requireFinite, which names them).
enum class Float64Range { Fits, Above, Below };

/// Above: a finite value beyond FLT_MAX would become ±Inf. Below: a row non-zero in float64
/// whose largest value is under float32's smallest normal would lose its direction to zero or
/// subnormals. Values tiny beside their row's largest lose no more than float32's rounding.
inline Float64Range float64RangeOf(double largest) {
  if (largest > double(FLT_MAX))
    return Float64Range::Above;
  return largest > 0 && largest < double(FLT_MIN) ? Float64Range::Below : Float64Range::Fits;
}

/// The FormatError for row `row` (0-based) of `name` that float64RangeOf refused; `largest` is
/// that row's largest magnitude for Below, the data's for Above.
inline FormatError float64RangeError(const std::string& name, Float64Range range, std::int64_t row,
                                     double largest) {
  char text[320];
  if (range == Float64Range::Above)
    std::snprintf(text, sizeof(text),
                  ": float64 values up to %.3g in magnitude (the first at row %lld, item %lld) "
                  "are beyond float32's range (%.3g); scale the data down",
                  largest, static_cast<long long>(row + 1), static_cast<long long>(row),
                  double(FLT_MAX));
  else
    std::snprintf(text, sizeof(text),
                  ": row %lld (item %lld) holds float64 values no larger than %.3g in magnitude, "
                  "below float32's smallest normal value (%.3g): converted, it would lose its "
                  "direction; scale the data up",
                  static_cast<long long>(row + 1), static_cast<long long>(row), largest,
                  double(FLT_MIN));
  return FormatError(name + text);
}

/// Converts `rows` × `cols` float64 values, the i-th given by `load(i)`, to float into `dst`,
/// refusing (FormatError naming `name` and the row, counted from `firstRow`) what float32
/// cannot hold (float64RangeOf). `dst` may be written in part when it throws.
template <typename Load>
void convertFloat64Rows(const Load& load, std::int64_t rows, std::int64_t cols, float* dst,
                        std::int64_t firstRow, const std::string& name) {
  std::int64_t above = rows, below = rows; // the first such rows; `rows` = none
  double largestAbove = 0;
#pragma omp parallel for schedule(static) reduction(min                                            \
                                                    : above, below)                                \
    reduction(max                                                                                  \
              : largestAbove) if (rows * cols > (1 << 20))
  for (std::int64_t r = 0; r < rows; ++r) {
    double largest = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double v = load(std::size_t(r * cols + c));
      dst[r * cols + c] = static_cast<float>(v);
      if (std::fabs(v) > largest && std::isfinite(v))
        largest = std::fabs(v);
    }
    const Float64Range range = float64RangeOf(largest);
    if (range == Float64Range::Above) {
      above = std::min(above, r);
      largestAbove = std::max(largestAbove, largest);
    } else if (range == Float64Range::Below) {
      below = std::min(below, r);
    }
  }
  if (above < rows)
    throw float64RangeError(name, Float64Range::Above, firstRow + above, largestAbove);
  if (below < rows) {
    double largest = 0;
    for (std::int64_t c = 0; c < cols; ++c)
      if (const double v = load(std::size_t(below * cols + c)); std::isfinite(v))
        largest = std::max(largest, std::fabs(v));
    throw float64RangeError(name, Float64Range::Below, firstRow + below, largest);
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
