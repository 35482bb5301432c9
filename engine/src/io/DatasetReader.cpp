#include "nearscape/io/DatasetReader.h"

#include "io/Convert.h"
#include "io/Readers.h"
#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace nearscape {
namespace io {

std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const std::string& name,
                             std::string_view what) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw FormatError(name + ": " + std::string(what) + " overflows");
  return product;
}

namespace {
std::uint64_t physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX; // unknown: let the allocator decide
  return std::uint64_t(pages) * std::uint64_t(pageSize);
}
} // namespace

void requireFitsInMemory(std::uint64_t bytes, const std::string& name, std::string_view what,
                         std::uint64_t budget) {
  const std::uint64_t memory = physicalMemoryBytes();
  if (bytes > memory)
    throw FormatError(name + ": " + std::string(what) + " would need " + describeBytes(bytes) +
                      " of memory, more than this machine has (" + describeBytes(memory) + ")");
  if (budget > 0 && bytes > budget)
    throw FormatError(name + ": " + std::string(what) + " would need " + describeBytes(bytes) +
                      " of memory, more than the memory budget (" + describeBytes(budget) + ")");
}

std::string describeBytes(std::uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 6) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0)
    return std::to_string(bytes) + " bytes";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g %s", value, kUnits[unit]);
  return text;
}

} // namespace io

namespace {

namespace fs = std::filesystem;

std::string lowerExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

bool looksLikeIdx(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.find("-idx") != std::string::npos || lowerExtension(path) == ".idx";
}

bool isHdf5(const fs::path& path) {
  const std::string ext = lowerExtension(path);
  return ext == ".hdf5" || ext == ".h5";
}

/// True for a folder (only IDX folders are read as such); IoError for anything that is neither a
/// folder nor a regular file (a FIFO would block the reader forever, a device never ends).
bool isFolder(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    throw IoError(path.string() + ": no such file or folder");
  if (status.type() == fs::file_type::directory)
    return true;
  requireRegularFile(path);
  return false;
}

Dataset readAny(const fs::path& path, const OpenOptions& options, JobControl& job) {
  if (isFolder(path))
    return io::readIdxFolder(path, options, job);
  std::string ext = lowerExtension(path);
  fs::path inner = path;
  if (ext == ".gz") {
    inner = path.stem();
    if (looksLikeIdx(inner))
      return io::readIdxFile(path, options, job);
    throw FormatError(path.string() + ": only IDX files may be gzip-compressed");
  }
  if (ext == ".npy")
    return io::readNpyDataset(path);
  if (ext == ".fvecs")
    return io::readVecs(path, 'f', job);
  if (ext == ".bvecs")
    return io::readVecs(path, 'b', job);
  if (ext == ".ivecs")
    return io::readVecs(path, 'i', job);
  if (isHdf5(path))
    return io::readHdf5(path, options.loadQueries);
  if (ext == ".tsv" || ext == ".txt")
    return io::readTsvVectors(path, job);
  if (looksLikeIdx(path))
    return io::readIdxFile(path, options, job);
  throw FormatError(path.string() + ": unknown format '" + ext +
                    "' (supported: .npy, .fvecs, .bvecs, .ivecs, .hdf5, .tsv, IDX files and "
                    "folders)");
}

fs::path sidecarFor(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return path / "meta.tsv";
  fs::path stem = path.stem();
  if (lowerExtension(path) == ".gz")
    stem = stem.stem();
  return path.parent_path() / (stem.string() + ".meta.tsv");
}

} // namespace

Dataset openDataset(const fs::path& path, const OpenOptions& options, JobControl& job) {
  job.progress(0.0, "opening " + path.filename().string());
  Dataset ds = readAny(path, options, job);
  job.check();
  if (!options.metaPath.empty()) { // asked for: any problem is an error
    attachMetadataFile(ds, options.metaPath);
  } else if (std::error_code ec; fs::exists(sidecarFor(path), ec)) {
    const fs::path sidecar = sidecarFor(path);
    // Found beside the data, not asked for: one that does not fit (another data set's, a stale
    // one) must not stop the data from opening. It is skipped, and the warning says why.
    try {
      attachMetadataFile(ds, sidecar);
    } catch (const Error& e) {
      ds.warnings.push_back("the metadata found beside the data was skipped: " +
                            std::string(e.what()));
    }
  }
  if (options.hash) {
    job.progress(0.95, "hashing");
    ds.contentHash = contentHash(ds.vectors.view());
  }
  job.progress(1.0, "loaded");
  return ds;
}

fs::path metadataSidecarPath(const fs::path& data) {
  return sidecarFor(data);
}

QueryShapes queryShapes(const fs::path& path) {
  return isHdf5(path) && !isFolder(path) ? io::readHdf5QueryShapes(path) : QueryShapes{};
}

fs::path defaultDatasetPath() {
  return "/usr/share/datasets/fashion-mnist";
}

fs::path cacheDirectory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "nearscape";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "nearscape";
  return fs::temp_directory_path() / "nearscape-cache";
}

fs::path debianTextPath() {
  return cacheDirectory() / "debian-text" / "debian-text.npy";
}

void convertFloat64(const double* src, std::int64_t rows, std::int64_t cols, float* dst,
                    const std::string& name) {
  convertFloat64Rows([src](std::size_t i) { return src[i]; }, rows, cols, dst, 0, name);
}

} // namespace nearscape
