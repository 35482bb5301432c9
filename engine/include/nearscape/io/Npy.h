#pragma once
/// @file Npy.h
/// NumPy `.npy` reading and atomic writing.

#include "nearscape/core/Matrix.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nearscape {

/// The parsed header of a `.npy` file.
struct NpyHeader {
  std::string descr; ///< e.g. "<f4"
  bool fortranOrder = false;
  std::vector<std::int64_t> shape;
  std::size_t dataOffset = 0; ///< bytes from the start of the file
  std::size_t itemSize = 0;
};

/// Parses the header of `bytes` (the whole file's bytes, `fileSize` long). Throws FormatError for
/// a bad magic, unsupported version, malformed dictionary, Fortran order, or a shape whose size
/// overflows or exceeds the file. `name` is used in messages.
NpyHeader parseNpyHeader(const std::uint8_t* bytes, std::size_t fileSize, const std::string& name);

/// Reads a 1-D or 2-D array as float32 (float32 little-endian is memory-mapped, float16, float64,
/// uint8, int8 are converted). A 1-D array becomes n × 1. Sets `dtypeOut` to the source type.
/// Throws IoError, FormatError.
Matrix<float> readNpyFloat(const std::filesystem::path& path, std::string* dtypeOut = nullptr,
                           bool* mappedOut = nullptr);

/// Reads a 2-D int32 or int64 array (ids) as int64. Throws IoError, FormatError.
Matrix<std::int64_t> readNpyIds(const std::filesystem::path& path);

/// Writes a rows × cols array atomically (temporary file in the same folder, then rename).
/// Throws IoError.
void writeNpy(const std::filesystem::path& path, const MatrixView<float>& m);
void writeNpy(const std::filesystem::path& path, const MatrixView<std::int32_t>& m);
void writeNpy(const std::filesystem::path& path, const MatrixView<std::int64_t>& m);

} // namespace nearscape
