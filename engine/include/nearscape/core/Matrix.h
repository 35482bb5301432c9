#pragma once
/// @file Matrix.h
/// An owning (or memory-map-backed) row-major matrix.

#include "nearscape/core/MatrixView.h"

#include <memory>
#include <vector>

namespace nearscape {

/// A rows × cols row-major matrix whose storage is either owned or kept alive by a shared
/// handle (for example a memory-mapped file). Copying shares the storage.
template <typename T> class Matrix {
public:
  Matrix() = default;

  /// Takes ownership of `values` (rows * cols elements).
  Matrix(std::vector<T> values, std::int64_t rows, std::int64_t cols) : m_rows(rows), m_cols(cols) {
    auto owned = std::make_shared<std::vector<T>>(std::move(values));
    m_data = owned->data();
    m_keepAlive = std::move(owned);
  }

  /// Wraps external storage that `keepAlive` holds (a mapping, a buffer...).
  Matrix(const T* data, std::int64_t rows, std::int64_t cols, std::shared_ptr<const void> keepAlive)
      : m_data(data), m_rows(rows), m_cols(cols), m_keepAlive(std::move(keepAlive)) {}

  MatrixView<T> view() const { return {m_data, m_rows, m_cols}; }
  const T* data() const { return m_data; }
  const T* row(std::int64_t i) const { return m_data + i * m_cols; }
  std::int64_t rows() const { return m_rows; }
  std::int64_t cols() const { return m_cols; }
  bool empty() const { return m_rows == 0 || m_cols == 0; }

private:
  const T* m_data = nullptr;
  std::int64_t m_rows = 0;
  std::int64_t m_cols = 0;
  std::shared_ptr<const void> m_keepAlive;
};

} // namespace nearscape
