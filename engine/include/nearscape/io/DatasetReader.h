#pragma once
/// @file DatasetReader.h
/// Opening any supported file or folder as a Dataset.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <filesystem>
#include <string>

namespace nearscape {

struct OpenOptions {
  std::filesystem::path metaPath; ///< TSV metadata; empty = look for a `<stem>.meta.tsv` sidecar
  bool loadThumbnails = true;     ///< keep IDX images as thumbnails
};

/// Opens `path`: `.npy`, `.fvecs`, `.bvecs`, `.ivecs`, `.hdf5`/`.h5`, `.tsv` vectors, an IDX file
/// (plain or `.gz`) or a folder of IDX files (MNIST family). Float32 `.npy` is memory-mapped.
/// Throws IoError (unreadable), FormatError (malformed or unsupported), Cancelled.
Dataset openDataset(const std::filesystem::path& path, const OpenOptions& options = {},
                    JobControl& job = noJobControl());

/// Reads TensorBoard-projector metadata: one column → no header row; several → the first row is
/// a header. Throws IoError, FormatError (invalid UTF-8, ragged rows, wrong row count when
/// expectedRows ≥ 0).
Metadata readMetadataTsv(const std::filesystem::path& path, std::int64_t expectedRows = -1);

/// The path of Debian's Fashion-MNIST folder (the default data set), whether or not it exists.
std::filesystem::path defaultDatasetPath();

/// The user's cache folder for Nearscape ($XDG_CACHE_HOME/nearscape or ~/.cache/nearscape).
std::filesystem::path cacheDirectory();

/// The debian-text example data set in the cache folder (built by scripts/make-debian-text.sh).
std::filesystem::path debianTextPath();

} // namespace nearscape
