#pragma once
/// @file DatasetReader.h
/// Opening any supported file or folder as a Dataset.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace nearscape {

struct OpenOptions {
  std::filesystem::path metaPath; ///< TSV metadata; empty = look for a `<stem>.meta.tsv` sidecar
  bool loadThumbnails = true;     ///< keep IDX images as thumbnails
  /// Read an ann-benchmarks file's queries and ground truth ("test", "neighbors", "distances")
  /// into Dataset::queries/truthIds/truthDistances. Off by default: no command uses them, and
  /// they can be as large as the data (queryShapes tells their shapes without reading them).
  bool loadQueries = false;
  /// Compute Dataset::contentHash (XXH3-128 over every byte; empty when off). Off where only some
  /// rows are read: an MPI rank other than 0 touches only its slice of a memory-mapped file.
  bool hash = true;
  /// Bytes the data may take once read (Context::memoryBudget); 0: what the machine has. A file
  /// whose header declares more is refused before anything of that size is allocated (IDX).
  std::uint64_t memoryBudget = 0;
};

/// The shapes of the queries and ground truth a file carries beside its vectors; 0 × 0 when absent.
struct QueryShapes {
  std::int64_t queryRows = 0, queryCols = 0;
  std::int64_t truthRows = 0, truthCols = 0;
};

/// Opens `path`: `.npy`, `.fvecs`, `.bvecs`, `.ivecs`, `.hdf5`/`.h5`, `.tsv` vectors, an IDX file
/// (plain or `.gz`) or a folder of IDX files (MNIST family). Float32 `.npy` is memory-mapped.
/// Throws IoError (unreadable), FormatError (malformed or unsupported), Cancelled.
Dataset openDataset(const std::filesystem::path& path, const OpenOptions& options = {},
                    JobControl& job = noJobControl());

/// Converts `rows` × `cols` row-major float64 values at `src` to float32 into `dst`, as every
/// reader converts a float64 file: values float32 cannot hold (beyond ±3.4e38, or a non-zero row
/// whose largest value is under float32's smallest normal) are refused with a FormatError naming
/// `name` and the row, never rounded to ±Inf or zero. For arrays given in memory (Python).
void convertFloat64(const double* src, std::int64_t rows, std::int64_t cols, float* dst,
                    const std::string& name);

/// The metadata sidecar openDataset looks for beside `data`: `<stem>.meta.tsv` (x.npy, x.fvecs.gz
/// → x.meta.tsv), or `meta.tsv` in an IDX folder. Only a name: it may not exist.
std::filesystem::path metadataSidecarPath(const std::filesystem::path& data);

/// The shapes of an ann-benchmarks HDF5 file's "test" and "neighbors" datasets, read from its
/// headers alone (nothing is loaded); all 0 for other formats. Throws IoError, FormatError.
QueryShapes queryShapes(const std::filesystem::path& path);

/// Reads TensorBoard-projector metadata: one column → no header row; several → the first row is
/// a header. A leading UTF-8 byte-order mark is skipped. Throws IoError, FormatError (invalid
/// UTF-8, ragged rows, wrong row count when expectedRows ≥ 0, more than kMaxMetadataColumns
/// columns or a field longer than kMaxMetadataFieldBytes).
/// Limits on metadata, far beyond real files (TensorBoard's projector shows a handful of columns;
/// a long description is kilobytes) but small enough that a hostile file cannot make us hold
/// gigabytes of empty strings: each cell costs ~32 bytes in memory for 1 byte of tab on disk.
constexpr std::size_t kMaxMetadataColumns = 256;
constexpr std::size_t kMaxMetadataFieldBytes = std::size_t(4) << 20;

Metadata readMetadataTsv(const std::filesystem::path& path, std::int64_t expectedRows = -1);

/// For metadata of one column (read without a header row, TensorBoard's rule), a warning when
/// its first value looks like a header all the same: a column name ("label", "class", "text",
/// "name", "path", …, in any case) found nowhere else in the column, or a word above values that
/// are all numbers. The rule stands (the value stays item 0's, row counts keep matching); the
/// warning says so and how to make the line a header or drop it. Empty when nothing looks
/// wrong. `source` names the file in the message.
std::string oneColumnHeaderHint(const Metadata& metadata, const std::string& source);

/// Reads the metadata file `path` for `dataset` (readMetadataTsv, its row count checked) and
/// attaches it (attachMetadata), adding oneColumnHeaderHint's warning, if any, to
/// `dataset.warnings`. Throws as those do.
void attachMetadataFile(Dataset& dataset, const std::filesystem::path& path);

/// `text` (from a file: a label, a header, a value) made safe to print on a terminal or in a
/// message: control characters, escape sequences and invisible code points (BOM, zero-width and
/// bidi marks) become visible escapes such as \x1b or \u{feff}, invalid UTF-8 bytes become
/// \xHH; cut to about `maxBytes` bytes with "…" (npos: no cut).
std::string printableText(std::string_view text, std::size_t maxBytes = std::string::npos);

/// The path of Debian's Fashion-MNIST folder (the default data set), whether or not it exists.
std::filesystem::path defaultDatasetPath();

/// The user's cache folder for Nearscape ($XDG_CACHE_HOME/nearscape or ~/.cache/nearscape).
std::filesystem::path cacheDirectory();

/// The debian-text example data set in the cache folder (built by scripts/make-debian-text.sh).
std::filesystem::path debianTextPath();

} // namespace nearscape
