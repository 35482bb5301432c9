#pragma once
/// @file Dataset.h
/// A loaded set of vectors with whatever the source carried beside them.

#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nearscape {

/// Per-item string columns (TensorBoard-projector metadata and the like).
struct Metadata {
  std::vector<std::string> columnNames;          ///< one per column
  std::vector<std::vector<std::string>> columns; ///< columns[c][item]

  std::int64_t rows() const { return columns.empty() ? 0 : std::int64_t(columns[0].size()); }
  bool empty() const { return columns.empty(); }
  /// Index of the column named `name` (case-insensitive), or -1.
  int findColumn(std::string_view name) const;
};

/// One small image per item, stored row-major as n × (height * width * channels) bytes.
struct Thumbnails {
  int width = 0;
  int height = 0;
  int channels = 0; ///< 1 = grey, 3 = RGB
  Matrix<std::uint8_t> pixels;

  bool empty() const { return pixels.empty(); }
  const std::uint8_t* image(std::int64_t item) const { return pixels.row(item); }
};

/// Vectors (n × d float32, row-major) plus labels, metadata, thumbnails and, for ann-benchmarks
/// files, queries and ground truth. Copies share their storage.
struct Dataset {
  std::string path;          ///< the file or folder it came from
  std::string format;        ///< "npy", "fvecs", "bvecs", "ivecs", "hdf5", "tsv", "idx"
  std::string sourceDtype;   ///< element type in the file: "float32", "uint8", ...
  bool memoryMapped = false; ///< vectors point straight into a read-only mapping of the file
  Matrix<float> vectors;     ///< n × d

  std::vector<std::int32_t> labels;    ///< per item, index into labelNames; empty if none
  std::vector<std::string> labelNames; ///< one per distinct label
  std::string labelSource;             ///< where the labels came from (a file or column name)
  Metadata metadata;                   ///< extra per-item columns
  int textColumn = -1;                 ///< metadata column holding an item's text, or -1
  /// Metadata column holding image file paths (named image, path, file, filepath or
  /// image_path), or -1; relative paths are relative to `imageFolder`, the metadata file's.
  int imageColumn = -1;
  std::string imageFolder;
  Thumbnails thumbnails; ///< may be empty

  std::optional<Metric> metric;  ///< the metric the file declares, if any
  Matrix<float> queries;         ///< ann-benchmarks "test"; may be empty
  Matrix<std::int32_t> truthIds; ///< ann-benchmarks "neighbors"; may be empty
  Matrix<float> truthDistances;  ///< ann-benchmarks "distances"; may be empty

  std::string contentHash;           ///< 32 hex digits: XXH3-128 of shape + vector bytes
  std::vector<std::string> warnings; ///< what opening noticed: a sidecar skipped, a likely header

  std::int64_t size() const { return vectors.rows(); }
  std::int64_t dim() const { return vectors.cols(); }
  bool hasLabels() const { return !labels.empty(); }
  /// The label name of an item, or "" when unlabelled.
  std::string labelOf(std::int64_t item) const;
  /// The text of an item (from textColumn), or "".
  std::string textOf(std::int64_t item) const;
  /// The image file of an item (from imageColumn, made absolute), or "" when it names none.
  /// Only a path: whoever opens it reads it as an image, never runs it.
  std::string imagePathOf(std::int64_t item) const;
};

/// Where non-finite values sit in a matrix, and how large its finite values are.
struct NonFiniteScan {
  std::int64_t count = 0;     ///< NaN and ±Inf values
  std::int64_t firstRow = -1; ///< of the first one, row-major order (0-based)
  std::int64_t firstCol = -1;
  double maxAbs = 0;         ///< largest |value| among the finite ones
  double maxSquaredNorm = 0; ///< largest squared row norm of the finite rows, in float64
};

/// Counts NaN/Inf values and measures the finite ones (multithreaded over rows).
NonFiniteScan scanNonFinite(const MatrixView<float>& m);

/// The range of values whose distances float32 arithmetic computes without overflow or
/// underflow: squared norms up to 2^120 (so ‖x − y‖² ≤ 2^122 stays far below float32's 2^128),
/// and a largest |value| of at least 2^−50 unless all are zero (products of smaller values fall
/// into float32's subnormal range and lose their bits).
constexpr double kMaxSquaredNorm = 0x1p120;
constexpr double kMinLargestValue = 0x1p-50;

/// Throws InvalidArgument when `m` holds NaN/Inf (naming the count and the first one's row and
/// column, counted from 1) or values outside the range above: exact distances could not be
/// guaranteed. `what` names the data in the message (its file, where known).
void requireFinite(const MatrixView<float>& m, const std::string& what);

/// `text` safe inside a TSV cell: tabs and line breaks become spaces (they would break the
/// table's shape).
std::string tsvCell(std::string text);

/// Natural order, as a person sorts names: runs of digits compare as numbers ("item2" before
/// "item10", "v01" beside "v1"), everything else byte by byte.
bool naturalLess(std::string_view a, std::string_view b);

/// XXH3-128 of the shape and the bytes of `m`, as 32 hex digits.
std::string contentHash(const MatrixView<float>& m);

/// Replaces the labels of `dataset` from `metadata`: the column named "label" or "class", or the
/// only column. Keeps the other columns as metadata and picks a text column ("text", "title",
/// "name", "description", or the single non-label column). Throws FormatError when the row count
/// does not match the data.
void attachMetadata(Dataset& dataset, Metadata metadata, const std::string& source);

} // namespace nearscape
