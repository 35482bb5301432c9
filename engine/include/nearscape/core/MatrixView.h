#pragma once
/// @file MatrixView.h
/// Non-owning row-major views with explicit shape.

#include <cstddef>
#include <cstdint>

namespace nearscape {

/// A read-only rows × cols row-major matrix in host memory. Does not own its data.
template <typename T> struct MatrixView {
  const T* data = nullptr; ///< rows * cols elements, row-major
  std::int64_t rows = 0;   ///< number of items
  std::int64_t cols = 0;   ///< dimension

  const T* row(std::int64_t i) const { return data + i * cols; }
  std::size_t size() const { return static_cast<std::size_t>(rows * cols); }
  bool empty() const { return rows == 0 || cols == 0; }
};

using FloatMatrixView = MatrixView<float>;

} // namespace nearscape
