#include "nearscape/io/ArtefactCache.h"

#include "io/ChecksummedFile.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"
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

std::string shortNumber(float value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", double(value));
  return text;
}

bool isEntry(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == kGraphExtension || ext == kMatrixExtension || ext == kBlobExtension;
}

} // namespace

ArtefactCache::ArtefactCache(fs::path folder, std::uint64_t maxBytes, Context log)
    : m_folder(std::move(folder)), m_maxBytes(maxBytes), m_log(std::move(log)) {}

void ArtefactCache::drop(const fs::path& entry, const std::string& why) const {
  std::string reason = why; // the file's readers name it first: once is enough
  if (const std::string named = entry.string() + ": "; reason.rfind(named, 0) == 0)
    reason.erase(0, named.size());
  logMessage(m_log, LogLevel::Warning,
             "cache entry " + entry.string() + " dropped (" + reason + "); computing it again");
  removeQuietly(entry);
}

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

namespace {

/// A cached graph's params: the entry's key, and how the graph was built in the words of
/// `knn --out` (graphFileMethod reads them back), so that an exact graph (STEP's too) comes back
/// exact and is never built a second time for map trust or outliers.
std::string graphParams(const std::string& key, const RunReport& report) {
  const std::string word = report.exact()                           ? "exact"
                           : report.method() == KnnMethod::GgmMerge ? "nndescent+merge"
                                                                    : "nndescent";
  return nlohmann::json{{"key", key}, {"method", word}, {"exact", report.exact()}}.dump();
}

/// The key of a cached graph's params; empty for anything else (an entry of an older build).
std::string graphKeyOf(const std::string& paramsJson) {
  const auto params = nlohmann::json::parse(paramsJson, nullptr, /*allow_exceptions=*/false);
  if (!params.is_object() || !params.contains("key") || !params["key"].is_string())
    return {};
  return params["key"].get<std::string>();
}

} // namespace

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
    if (g.metric != metric || g.ids.rows() != data.size() || graphKeyOf(g.paramsJson) != params)
      throw FormatError("stale");
    KnnResult r;
    r.ids = Matrix<std::int32_t>(
        std::vector<std::int32_t>(g.ids.data(), g.ids.data() + g.ids.view().size()), g.ids.rows(),
        g.ids.cols());
    r.distances = Matrix<float>(
        std::vector<float>(g.distances.data(), g.distances.data() + g.distances.view().size()),
        g.distances.rows(), g.distances.cols());
    r.report.device = "cache";
    r.report.setMethod(graphFileMethod(g.paramsJson));
    return r;
  } catch (const Error& e) { // corrupt, truncated or stale: recompute, and drop it
    drop(path, e.what());
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
    g.paramsJson = graphParams(params, graph.report);
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
      throw FormatError("stale: written for other data, parameters or shape");
    std::vector<float> values(std::size_t(data.size()) * std::size_t(cols));
    std::memcpy(values.data(), file.body, file.bodySize);
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!(std::abs(values[i]) <= kMaxCoordinate)) // NaN fails too
        throw FormatError("row " + std::to_string(i / std::size_t(cols) + 1) + " holds " +
                          shortNumber(values[i]) + ", not a coordinate within ±" +
                          shortNumber(kMaxCoordinate));
    return Matrix<float>(std::move(values), data.size(), cols);
  } catch (const std::exception& e) { // corrupt, truncated, stale or unreadable JSON: recompute
    drop(path, e.what());
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

std::vector<fs::path> ArtefactCache::clear() const {
  std::vector<fs::path> folders;
  std::string failures;
  std::error_code ec;
  fs::directory_iterator it(m_folder, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw WriteError(m_folder.string() + ": cannot list the cache: " + ec.message());
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    if (!isEntry(path))
      continue;
    std::error_code kind;
    if (it->is_directory(kind) && !it->is_symlink(kind)) {
      folders.push_back(path);
      continue;
    }
    std::error_code removed;
    if (!fs::remove(path, removed) && removed)
      failures += (failures.empty() ? "" : "; ") + path.string() + ": " + removed.message();
  }
  if (ec)
    failures += (failures.empty() ? "" : "; ") + m_folder.string() + ": " + ec.message();
  if (!failures.empty())
    throw WriteError("cannot remove from the cache: " + failures);
  return folders;
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
