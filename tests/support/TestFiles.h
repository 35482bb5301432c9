#pragma once
// Small helpers that write test inputs byte by byte, independent of the engine's own writers.

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace nearscape::test {

/// True in an AddressSanitizer build (the asan and fuzz presets): its shadow memory needs far
/// more address space than any `ulimit -v` a test sets, and its redzones raise peak memory.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

/// Writes `bytes` to `path` (overwriting); QFAILs through the return value.
bool writeBytes(const QString& path, const QByteArray& bytes);
QByteArray readBytes(const QString& path);

/// A .npy file with any descr and shape, version 1.0 header; `data` is the raw payload.
QByteArray npyBytes(const std::string& descr, const std::vector<std::int64_t>& shape,
                    const QByteArray& data, bool fortran = false);

template <typename T> QByteArray rawBytes(const std::vector<T>& values) {
  return QByteArray(reinterpret_cast<const char*>(values.data()),
                    qsizetype(values.size() * sizeof(T)));
}

/// An IDX payload: magic (type, rank), big-endian dims, then `data`.
QByteArray idxBytes(int type, const std::vector<std::uint32_t>& dims, const QByteArray& data);

/// gzip-compresses `bytes` into `path`.
bool writeGzip(const QString& path, const QByteArray& bytes);

/// An ann-benchmarks style HDF5 file: `train` (n × d float32) and the root attribute
/// `distance`, a fixed-length string or, as h5py writes it, a variable-length UTF-8 one.
bool writeAnnHdf5(const QString& path, const std::vector<float>& train, std::uint64_t n,
                  std::uint64_t d, const std::string& distance, bool variableLength);

/// Seeded uniform floats in [-1, 1).
std::vector<float> randomFloats(std::size_t count, std::uint64_t seed);

} // namespace nearscape::test
