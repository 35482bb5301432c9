#include "nearscape/io/DatasetReader.h"

#include "nearscape/core/Error.h"
#include "io/Readers.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace nearscape {
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

Dataset readAny(const fs::path& path, const OpenOptions& options, JobControl& job) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw IoError(path.string() + ": no such file or folder");
  if (fs::is_directory(path, ec))
    return io::readIdxFolder(path, options.loadThumbnails, job);
  std::string ext = lowerExtension(path);
  fs::path inner = path;
  if (ext == ".gz") {
    inner = path.stem();
    if (looksLikeIdx(inner))
      return io::readIdxFile(path, options.loadThumbnails, job);
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
  if (ext == ".hdf5" || ext == ".h5")
    return io::readHdf5(path);
  if (ext == ".tsv" || ext == ".txt")
    return io::readTsvVectors(path, job);
  if (looksLikeIdx(path))
    return io::readIdxFile(path, options.loadThumbnails, job);
  throw FormatError(path.string() + ": unknown format '" + ext +
                    "' (supported: .npy, .fvecs, .bvecs, .ivecs, .hdf5, .tsv, IDX files and "
                    "folders)");
}

fs::path sidecarFor(const fs::path& path) {
  if (fs::is_directory(path))
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
  fs::path meta = options.metaPath;
  if (meta.empty()) {
    const fs::path sidecar = sidecarFor(path);
    std::error_code ec;
    if (fs::exists(sidecar, ec))
      meta = sidecar;
  }
  if (!meta.empty())
    attachMetadata(ds, readMetadataTsv(meta, ds.size()), meta.string());
  job.progress(0.95, "hashing");
  ds.contentHash = contentHash(ds.vectors.view());
  job.progress(1.0, "loaded");
  return ds;
}

fs::path defaultDatasetPath() { return "/usr/share/datasets/fashion-mnist"; }

fs::path cacheDirectory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "nearscape";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "nearscape";
  return fs::temp_directory_path() / "nearscape-cache";
}

fs::path debianTextPath() { return cacheDirectory() / "debian-text" / "debian-text.npy"; }

} // namespace nearscape
