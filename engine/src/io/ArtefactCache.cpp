#include "nearscape/io/ArtefactCache.h"

#include "io/ChecksummedFile.h"
#include "nearscape/core/Error.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/GraphFile.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace nearscape {
namespace fs = std::filesystem;
namespace {

constexpr io::Magic kMatrixMagic = {'N', 'S', 'M', 'A', 'T', 'R', 'X', 0};
constexpr std::uint32_t kMatrixVersion = 1;
constexpr const char* kGraphExtension = ".nsgraph";
constexpr const char* kMatrixExtension = ".nsmatrix";
constexpr const char* kBlobExtension = ".nsblob";
constexpr io::Magic kBlobMagic = {'N', 'S', 'B', 'L', 'O', 'B', 0, 0};
constexpr std::uint32_t kBlobVersion = 1;

/// 16 hex digits of the parameters: file names stay short whatever the parameters hold.
std::string digest(const std::string& text) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  return hex;
}

/// Marks an entry as just used (the eviction order).
void touch(const fs::path& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

void removeQuietly(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

bool isEntry(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == kGraphExtension || ext == kMatrixExtension || ext == kBlobExtension;
}

} // namespace

ArtefactCache::ArtefactCache(fs::path folder, std::uint64_t maxBytes)
    : m_folder(std::move(folder)), m_maxBytes(maxBytes) {}

fs::path ArtefactCache::defaultFolder() {
  if (const char* folder = std::getenv("NEARSCAPE_ARTEFACT_CACHE"); folder && *folder)
    return folder; // tests and scripts keep their own
  return cacheDirectory() / "artefacts";
}

fs::path ArtefactCache::entryPath(const Dataset& data, const std::string& what,
                                  const std::string& params, const char* extension) const {
  return m_folder /
         (data.contentHash + "-" + what + "-" + digest(what + "\n" + params) + extension);
}

std::optional<KnnResult> ArtefactCache::loadGraph(const Dataset& data, Metric metric,
                                                  const std::string& params) const {
  const fs::path path =
      entryPath(data, "graph-" + std::string(metricName(metric)), params, kGraphExtension);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return std::nullopt;
  touch(path); // before it is mapped: a later time would read as a rewrite under the read
  try {
    GraphFile g = readGraphFile(path, data.contentHash);
    if (g.metric != metric || g.ids.rows() != data.size() ||
        g.paramsJson != nlohmann::json(params).dump())
      throw FormatError("stale");
    KnnResult r;
    r.ids = Matrix<std::int32_t>(
        std::vector<std::int32_t>(g.ids.data(), g.ids.data() + g.ids.view().size()), g.ids.rows(),
        g.ids.cols());
    r.distances = Matrix<float>(
        std::vector<float>(g.distances.data(), g.distances.data() + g.distances.view().size()),
        g.distances.rows(), g.distances.cols());
    r.report.device = "cache";
    return r;
  } catch (const Error&) { // corrupt, truncated or stale: recompute, and drop it
    removeQuietly(path);
    return std::nullopt;
  }
}

void ArtefactCache::storeGraph(const Dataset& data, Metric metric, const std::string& params,
                               const KnnResult& graph) const {
  try {
    std::error_code ec;
    fs::create_directories(m_folder, ec);
    GraphFile g;
    g.ids = graph.ids;
    g.distances = graph.distances;
    g.metric = metric;
    g.contentHash = data.contentHash;
    g.paramsJson = nlohmann::json(params).dump(); // the graph file's params are JSON
    writeGraphFile(
        entryPath(data, "graph-" + std::string(metricName(metric)), params, kGraphExtension), g);
    evict();
  } catch (const Error&) {
  }
}

std::optional<Matrix<float>> ArtefactCache::loadMatrix(const Dataset& data, const std::string& what,
                                                       const std::string& params,
                                                       std::int64_t cols) const {
  const fs::path path = entryPath(data, what, params, kMatrixExtension);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return std::nullopt;
  touch(path); // before it is mapped: a later time would read as a rewrite under the read
  try {
    const io::ChecksummedFile file =
        io::readChecksummedFile(path, kMatrixMagic, kMatrixVersion, "cache entry");
    const auto& h = file.header;
    if (h.value("content_hash", std::string()) != data.contentHash ||
        h.value("what", std::string()) != what || h.value("params", std::string()) != params ||
        h.value("rows", std::int64_t(-1)) != data.size() ||
        h.value("cols", std::int64_t(-1)) != cols ||
        file.bodySize != std::size_t(data.size()) * std::size_t(cols) * sizeof(float))
      throw FormatError("stale");
    std::vector<float> values(std::size_t(data.size()) * std::size_t(cols));
    std::memcpy(values.data(), file.body, file.bodySize);
    for (float v : values)
      if (!std::isfinite(v))
        throw FormatError("not finite");
    return Matrix<float>(std::move(values), data.size(), cols);
  } catch (const std::exception&) { // corrupt, truncated, stale or unreadable JSON: recompute
    removeQuietly(path);
    return std::nullopt;
  }
}

void ArtefactCache::storeMatrix(const Dataset& data, const std::string& what,
                                const std::string& params, const MatrixView<float>& m) const {
  try {
    std::error_code ec;
    fs::create_directories(m_folder, ec);
    const nlohmann::json header = {{"content_hash", data.contentHash},
                                   {"what", what},
                                   {"params", params},
                                   {"rows", m.rows},
                                   {"cols", m.cols}};
    io::writeChecksummedFile(entryPath(data, what, params, kMatrixExtension), kMatrixMagic,
                             kMatrixVersion, header, {{m.data, m.size() * sizeof(float)}});
    evict();
  } catch (const Error&) {
  }
}

std::optional<std::string> ArtefactCache::loadBlob(const std::string& key) const {
  const fs::path path = m_folder / ("blob-" + digest(key) + kBlobExtension);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return std::nullopt;
  touch(path); // before it is mapped: a later time would read as a rewrite under the read
  try {
    const io::ChecksummedFile file =
        io::readChecksummedFile(path, kBlobMagic, kBlobVersion, "cache entry");
    if (file.header.value("key", std::string()) != key) // another key with the same digest
      return std::nullopt;
    return std::string(reinterpret_cast<const char*>(file.body), file.bodySize);
  } catch (const std::exception&) { // corrupt or truncated: drop it
    removeQuietly(path);
    return std::nullopt;
  }
}

void ArtefactCache::storeBlob(const std::string& key, const std::string& bytes) const {
  // Eviction lists the whole folder: every few hundred stores, not every one (thumbnails come
  // by the thousand).
  static std::atomic<unsigned> stores{0};
  try {
    std::error_code ec;
    fs::create_directories(m_folder, ec);
    io::writeChecksummedFile(m_folder / ("blob-" + digest(key) + kBlobExtension), kBlobMagic,
                             kBlobVersion, {{"key", key}}, {{bytes.data(), bytes.size()}});
    if (++stores % 256 == 0)
      evict();
  } catch (const Error&) {
  }
}

std::uint64_t ArtefactCache::bytes() const {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(m_folder, ec))
    if (isEntry(e.path()) && e.is_regular_file(ec))
      total += e.file_size(ec);
  return total;
}

std::int64_t ArtefactCache::entries() const {
  std::int64_t count = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(m_folder, ec))
    count += isEntry(e.path()) && e.is_regular_file(ec);
  return count;
}

void ArtefactCache::clear() const {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(m_folder, ec))
    if (isEntry(e.path()) && !fs::remove(e.path(), ec) && ec)
      throw IoError(e.path().string() + ": cannot remove: " + ec.message());
}

void ArtefactCache::evict() const {
  struct Entry {
    fs::path path;
    std::uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> all;
  std::uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(m_folder, ec)) {
    if (!isEntry(e.path()) || !e.is_regular_file(ec))
      continue;
    all.push_back({e.path(), e.file_size(ec), e.last_write_time(ec)});
    total += all.back().bytes;
  }
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : all) {
    if (total <= m_maxBytes)
      break;
    removeQuietly(e.path);
    total -= e.bytes;
  }
}

} // namespace nearscape
