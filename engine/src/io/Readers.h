#pragma once
// One reader per format, behind openDataset (internal to the engine), and the limits every
// reader applies to what a file's header can make us allocate.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/io/DatasetReader.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace nearscape::io {

Dataset readNpyDataset(const std::filesystem::path& path);
/// .fvecs, .bvecs or .ivecs, chosen by `kind` ('f', 'b', 'i').
Dataset readVecs(const std::filesystem::path& path, char kind, JobControl& job);
/// An ann-benchmarks file: "train" always; "test", "neighbors" and "distances" only with
/// `loadQueries` (they are often as large as the data and most commands never use them).
Dataset readHdf5(const std::filesystem::path& path, bool loadQueries);
/// The shapes of an ann-benchmarks file's "test" and "neighbors", from its headers alone.
QueryShapes readHdf5QueryShapes(const std::filesystem::path& path);
Dataset readTsvVectors(const std::filesystem::path& path, JobControl& job);
/// One IDX file (plain or .gz) with its sibling labels file when there is one. The data the
/// header declares is checked against `options.memoryBudget` and the machine before anything of
/// that size is allocated; a gzip file's every member is checked (CRC-32 and length).
Dataset readIdxFile(const std::filesystem::path& path, const OpenOptions& options, JobControl& job);
/// A folder of IDX files: train-* first, then t10k-*, images paired with labels.
Dataset readIdxFolder(const std::filesystem::path& folder, const OpenOptions& options,
                      JobControl& job);

/// True when every byte sequence in `text` is valid UTF-8; else the offset of the first bad byte.
bool isValidUtf8(std::string_view text, std::size_t* badOffset = nullptr);

/// The most a deflate (gzip) stream can expand: one 258-byte match per ~2 bits of input bounds
/// it at 1032:1 (zlib's technical notes). A header promising more than this times the
/// compressed size describes data the file cannot hold.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

/// a · b, or FormatError "<name>: <what> overflows" when the product does not fit 64 bits.
std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const std::string& name,
                             std::string_view what);

/// Refuses (FormatError naming the file) to allocate `bytes` for `what` when they exceed this
/// machine's physical memory, or `budget` when it is not 0 (the context's memory budget): a
/// header asking for more would end in std::bad_alloc or swapping.
void requireFitsInMemory(std::uint64_t bytes, const std::string& name, std::string_view what,
                         std::uint64_t budget = 0);

/// "1.5 GB"-style text for messages.
std::string describeBytes(std::uint64_t bytes);

} // namespace nearscape::io
