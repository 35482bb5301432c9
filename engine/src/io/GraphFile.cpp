#include "nearscape/io/GraphFile.h"

#include "io/ChecksummedFile.h"
#include "nearscape/core/Error.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/MappedFile.h"
#include "nearscape/io/Npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>
#include <utility>

namespace nearscape {
namespace {

constexpr io::Magic kMagic = {'N', 'S', 'K', 'N', 'N', 'G', 0, 0};
constexpr std::uint32_t kVersion = 1;

} // namespace

void writeGraphFile(const std::filesystem::path& path, const GraphFile& graph) {
  const std::int64_t n = graph.ids.rows(), k = graph.ids.cols();
  if (graph.distances.rows() != n || graph.distances.cols() != k)
    throw InvalidArgument("graph ids and distances have different shapes");
  const nlohmann::json header = {
      {"n", n},
      {"k", k},
      {"metric", std::string(metricName(graph.metric))},
      {"content_hash", graph.contentHash},
      {"params", nlohmann::json::parse(graph.paramsJson.empty() ? "{}" : graph.paramsJson)}};
  io::writeChecksummedFile(path, kMagic, kVersion, header,
                           {{graph.ids.data(), std::size_t(n * k) * 4},
                            {graph.distances.data(), std::size_t(n * k) * 4}});
}

std::string knnGraphProblem(const void* ids, const void* distances, std::size_t cells,
                            std::int64_t n, Metric metric) {
  // L2 and cosine distances are ≥ 0 up to rounding; inner-product ones may be negative.
  const bool nonNegative = metric != Metric::InnerProduct;
  const auto* idBytes = static_cast<const std::uint8_t*>(ids);
  const auto* distanceBytes = static_cast<const std::uint8_t*>(distances);
  for (std::size_t i = 0; i < cells; ++i) {
    std::int32_t id;
    float dist;
    std::memcpy(&id, idBytes + 4 * i, 4);
    std::memcpy(&dist, distanceBytes + 4 * i, 4);
    if (id < -1 || id >= n)
      return "graph id " + std::to_string(id) + " is out of range [-1, " + std::to_string(n) + ")";
    if (id >= 0 && (!std::isfinite(dist) || (nonNegative && dist < -1e-5f)))
      return "graph distance " + std::to_string(dist) + " (entry " + std::to_string(i + 1) +
             ") is " + (std::isfinite(dist) ? "negative" : "not finite");
  }
  return {};
}

bool isGraphFile(const std::filesystem::path& path) {
  return io::hasMagic(path, kMagic);
}

namespace {

/// A non-negative integer field of the header, or FormatError naming the file.
std::int64_t headerCount(const nlohmann::json& header, const char* key, const std::string& name) {
  const auto it = header.find(key);
  if (it == header.end() || !it->is_number_integer() ||
      (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(INT64_MAX)) ||
      it->get<std::int64_t>() < 0)
    throw FormatError(name + ": the graph header's '" + key +
                      "' is missing or not a non-negative integer");
  return it->get<std::int64_t>();
}

/// A string field of the header ("" when absent), or FormatError naming the file.
std::string headerString(const nlohmann::json& header, const char* key, const std::string& name) {
  const auto it = header.find(key);
  if (it == header.end())
    return {};
  if (!it->is_string())
    throw FormatError(name + ": the graph header's '" + key + "' is not a string");
  return it->get<std::string>();
}

/// Checks every id and distance (knnGraphProblem) in the file's own bytes, so that a hostile
/// file is refused before anything is copied.
void checkGraphBody(const std::uint8_t* body, std::size_t cells, std::int64_t n, Metric metric,
                    const std::string& name) {
  if (const std::string problem = knnGraphProblem(body, body + 4 * cells, cells, n, metric);
      !problem.empty())
    throw FormatError(name + ": " + problem);
}

/// A matrix over `bytes` inside the mapping when they are aligned for T, else a copy.
template <typename T>
Matrix<T> matrixOver(const io::ChecksummedFile& file, const std::uint8_t* bytes, std::int64_t rows,
                     std::int64_t cols) {
  const std::size_t count = std::size_t(rows) * std::size_t(cols);
  if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(T) == 0)
    return Matrix<T>(reinterpret_cast<const T*>(bytes), rows, cols, file.mapping);
  std::vector<T> values(count);
  std::memcpy(values.data(), bytes, count * sizeof(T));
  return Matrix<T>(std::move(values), rows, cols);
}

} // namespace

GraphFile readGraphFile(const std::filesystem::path& path, const std::string& expectedHash) {
  const std::string name = path.string();
  const io::ChecksummedFile file = io::readChecksummedFile(path, kMagic, kVersion, "graph file");
  const nlohmann::json& header = file.header;
  const std::int64_t n = headerCount(header, "n", name), k = headerCount(header, "k", name);
  std::size_t cells = 0, bytes = 0;
  if (__builtin_mul_overflow(std::size_t(n), std::size_t(k), &cells) ||
      __builtin_mul_overflow(cells, std::size_t(8), &bytes) || bytes != file.bodySize)
    throw FormatError(name + ": truncated or resized: the header's " + std::to_string(n) + " × " +
                      std::to_string(k) + " graph does not fit the file's " +
                      std::to_string(file.mapping->size()) + " bytes");
  if (n > INT32_MAX)
    throw FormatError(name + ": the graph has " + std::to_string(n) +
                      " rows, beyond what int32 ids can name");
  GraphFile g;
  const std::string metricText = headerString(header, "metric", name);
  const auto metric = parseMetric(metricText.empty() ? "l2" : metricText);
  if (!metric)
    throw FormatError(name + ": unknown metric '" + printableText(metricText, 40) +
                      "' in the graph header");
  g.metric = *metric;
  g.contentHash = headerString(header, "content_hash", name);
  g.paramsJson = header.contains("params") ? header["params"].dump() : "{}";
  if (!expectedHash.empty() && g.contentHash != expectedHash)
    throw FormatError(name + ": this graph was built on other data (content hash " +
                      printableText(g.contentHash, 40) + ", the data's is " + expectedHash + ")");
  checkGraphBody(file.body, cells, n, g.metric, name);
  g.ids = matrixOver<std::int32_t>(file, file.body, n, k);
  g.distances = matrixOver<float>(file, file.body + cells * 4, n, k);
  return g;
}

KnnMethod graphFileMethod(const std::string& paramsJson) {
  // The words `knn --out` writes (graphMethodName's, knn/NnDescent.h), translated at the file's
  // boundary; any other word is from a writer we do not know.
  constexpr std::pair<std::string_view, KnnMethod> kWords[] = {{"exact", KnnMethod::Exact},
                                                               {"nndescent", KnnMethod::NnDescent}};
  const auto params = nlohmann::json::parse(paramsJson, nullptr, /*allow_exceptions=*/false);
  if (!params.is_object() || !params.contains("method") || !params["method"].is_string())
    return KnnMethod::Unknown;
  const std::string label = params["method"].get<std::string>();
  if (label.ends_with("+merge"))
    return KnnMethod::GgmMerge; // GGM's merge is approximate, whatever built the parts
  const auto* word = std::find_if(std::begin(kWords), std::end(kWords),
                                  [&](const auto& w) { return w.first == label; });
  if (word == std::end(kWords))
    return KnnMethod::Unknown;
  // "exact" says what the run got; a file without it (an older one) has only the word.
  if (params.contains("exact") && params["exact"].is_boolean() &&
      params["exact"].get<bool>() != isExactMethod(word->second))
    return KnnMethod::Unknown; // the file contradicts itself: never taken as exact
  return word->second;
}

Matrix<std::int32_t> readKnnIds(const std::filesystem::path& path) {
  const std::string file = path.string();
  const auto mapped = MappedFile::open(path);
  const NpyHeader h = parseNpyHeader(mapped->data(), mapped->size(), file);
  const bool int32 = h.descr == "<i4" || h.descr == "=i4";
  Matrix<std::int32_t> ids;
  if (int32 && h.shape.size() == 2 && h.dataOffset % alignof(std::int32_t) == 0) {
    ids = Matrix<std::int32_t>(reinterpret_cast<const std::int32_t*>(mapped->data() + h.dataOffset),
                               h.shape[0], h.shape[1], mapped);
  } else { // int64, or an int32 array the mapping cannot hold aligned: converted
    const Matrix<std::int64_t> wide = readNpyIds(path);
    std::vector<std::int32_t> narrow(std::size_t(wide.rows() * wide.cols()));
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < std::int64_t(narrow.size()); ++t) // checked below, as int64
      narrow[std::size_t(t)] =
          std::int32_t(std::clamp<std::int64_t>(wide.data()[t], -2, INT32_MAX));
    ids = Matrix<std::int32_t>(std::move(narrow), wide.rows(), wide.cols());
  }
  // The ids checked on every core; the first bad one (in row order) named.
  const std::int64_t cells = ids.rows() * ids.cols(), rows = ids.rows();
  std::int64_t firstBad = cells;
#pragma omp parallel for reduction(min : firstBad) schedule(static)
  for (std::int64_t t = 0; t < cells; ++t)
    if (const std::int32_t j = ids.data()[t]; j < -1 || j >= rows)
      firstBad = std::min(firstBad, t);
  if (firstBad < cells) {
    // The file's own value: an int64 beyond int32 was clamped above.
    const std::int64_t value = int32 ? ids.data()[firstBad] : readNpyIds(path).data()[firstBad];
    throw InvalidArgument(file + ": id " + std::to_string(value) + " at row " +
                          std::to_string(firstBad / ids.cols() + 1) + ", column " +
                          std::to_string(firstBad % ids.cols() + 1) + " is out of range [-1, " +
                          std::to_string(rows) + ")");
  }
  mapped->throwIfChanged();
  return ids;
}

KnnResult readKnnGraph(const std::filesystem::path& path, const Dataset& data, Metric metric,
                       bool ofFirstRows) {
  const std::string file = path.string();
  auto checkRows = [&](std::int64_t rows) {
    if (ofFirstRows && (rows < 1 || data.size() - rows < 2))
      throw InvalidArgument(file + ": its graph covers " + std::to_string(rows) +
                            " items, so the data (" + std::to_string(data.size()) +
                            " items) must hold at least 2 more after them");
    if (!ofFirstRows && rows != data.size())
      throw InvalidArgument(file + ": the graph has " + std::to_string(rows) +
                            " rows but the data has " + std::to_string(data.size()));
  };
  KnnResult r;
  if (isGraphFile(file)) {
    GraphFile g = readGraphFile(file, ofFirstRows ? std::string() : data.contentHash);
    if (g.metric != metric)
      throw InvalidArgument(file + ": the graph was built with metric " +
                            std::string(metricName(g.metric)) + ", not " +
                            std::string(metricName(metric)));
    checkRows(g.ids.rows());
    // Items added to a graph: the graph must be of these first rows, exactly (their hash).
    if (ofFirstRows &&
        g.contentHash != contentHash({data.vectors.row(0), g.ids.rows(), data.dim()}))
      throw InvalidArgument(file + ": the graph was built on other data than the first " +
                            std::to_string(g.ids.rows()) + " rows of " + data.path +
                            " (their content hashes differ)");
    r.ids = std::move(g.ids);
    r.distances = std::move(g.distances);
    r.report.setMethod(graphFileMethod(g.paramsJson));
    return r;
  }
  const Matrix<std::int32_t> ids = readKnnIds(file);
  checkRows(ids.rows());
  std::vector<float> dists(std::size_t(ids.rows() * ids.cols()));
  // The distances, exact, on every core (10M × 15 in float64 took 55 s on one). A row's
  // neighbours lie anywhere in the data: the next row's are fetched into the cache while this
  // row's are scored, or each distance would wait for its row's memory.
  const std::size_t rowBytes = std::size_t(data.dim()) * sizeof(float);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < ids.rows(); ++i) {
    if (i + 1 < ids.rows())
      for (std::int64_t c = 0; c < ids.cols(); ++c)
        if (const std::int64_t j = ids.row(i + 1)[c]; j >= 0) {
          const auto* row = reinterpret_cast<const char*>(data.vectors.row(j));
          for (std::size_t at = 0; at < rowBytes; at += 64)
            __builtin_prefetch(row + at);
        }
    for (std::int64_t c = 0; c < ids.cols(); ++c) {
      const std::int64_t j = ids.row(i)[c];
      dists[std::size_t(i * ids.cols() + c)] =
          j < 0
              ? 0.0f
              : float(exactDistance(data.vectors.row(i), data.vectors.row(j), data.dim(), metric));
    }
  }
  r.ids = ids;
  r.distances = Matrix<float>(std::move(dists), ids.rows(), ids.cols());
  return r;
}

} // namespace nearscape
