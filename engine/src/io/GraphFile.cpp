#include "nearscape/io/GraphFile.h"

#include "nearscape/core/Error.h"
#include "io/ChecksummedFile.h"
#include "nearscape/io/MappedFile.h"
#include "nearscape/io/Npy.h"

#include <nlohmann/json.hpp>

#include <cstring>

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

bool isGraphFile(const std::filesystem::path& path) { return io::hasMagic(path, kMagic); }

GraphFile readGraphFile(const std::filesystem::path& path, const std::string& expectedHash) {
  const std::string name = path.string();
  const io::ChecksummedFile file = io::readChecksummedFile(path, kMagic, kVersion, "graph file");
  const nlohmann::json& header = file.header;
  std::int64_t n = 0, k = 0;
  try {
    n = header.at("n").get<std::int64_t>();
    k = header.at("k").get<std::int64_t>();
  } catch (const std::exception&) {
    throw FormatError(name + ": the graph header lacks n or k");
  }
  std::size_t cells = 0, bytes = 0;
  if (n < 0 || k < 0 || __builtin_mul_overflow(std::size_t(n), std::size_t(k), &cells) ||
      __builtin_mul_overflow(cells, std::size_t(8), &bytes) || bytes != file.bodySize)
    throw FormatError(name + ": truncated or resized: the header's " + std::to_string(n) + " × " +
                      std::to_string(k) + " graph does not fit the file's " +
                      std::to_string(file.mapping->size()) + " bytes");
  GraphFile g;
  const auto metric = parseMetric(header.value("metric", std::string("l2")));
  if (!metric)
    throw FormatError(name + ": unknown metric in the graph header");
  g.metric = *metric;
  g.contentHash = header.value("content_hash", std::string());
  g.paramsJson = header.contains("params") ? header["params"].dump() : "{}";
  if (!expectedHash.empty() && g.contentHash != expectedHash)
    throw FormatError(name + ": this graph was built on other data (content hash " +
                      g.contentHash + ", the data's is " + expectedHash + ")");
  std::vector<std::int32_t> ids(cells);
  std::vector<float> dists(cells);
  std::memcpy(ids.data(), file.body, cells * 4);
  std::memcpy(dists.data(), file.body + cells * 4, cells * 4);
  for (std::size_t i = 0; i < cells; ++i)
    if (ids[i] < -1 || ids[i] >= n)
      throw FormatError(name + ": graph id " + std::to_string(ids[i]) + " is out of range");
  g.ids = Matrix<std::int32_t>(std::move(ids), n, k);
  g.distances = Matrix<float>(std::move(dists), n, k);
  return g;
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
    r.ids = std::move(g.ids);
    r.distances = std::move(g.distances);
    return r;
  }
  const Matrix<std::int64_t> ids = readNpyIds(file);
  checkRows(ids.rows());
  std::vector<std::int32_t> ids32(static_cast<std::size_t>(ids.rows() * ids.cols()));
  std::vector<float> dists(ids32.size());
  for (std::int64_t i = 0; i < ids.rows(); ++i)
    for (std::int64_t c = 0; c < ids.cols(); ++c) {
      const std::int64_t j = ids.row(i)[c];
      if (j < -1 || j >= ids.rows())
        throw InvalidArgument(file + ": id " + std::to_string(j) + " at row " + std::to_string(i) +
                              " is out of range");
      ids32[std::size_t(i * ids.cols() + c)] = std::int32_t(j);
      dists[std::size_t(i * ids.cols() + c)] =
          j < 0 ? 0.0f
                : float(exactDistance(data.vectors.row(i), data.vectors.row(j), data.dim(), metric));
    }
  r.ids = Matrix<std::int32_t>(std::move(ids32), ids.rows(), ids.cols());
  r.distances = Matrix<float>(std::move(dists), ids.rows(), ids.cols());
  return r;
}

} // namespace nearscape
