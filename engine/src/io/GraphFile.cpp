#include "nearscape/io/GraphFile.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/AtomicFile.h"
#include "nearscape/io/MappedFile.h"
#include "nearscape/io/Npy.h"

#include <nlohmann/json.hpp>
#include <xxhash.h>

#include <cstring>
#include <fstream>

namespace nearscape {
namespace {

constexpr char kMagic[8] = {'N', 'S', 'K', 'N', 'N', 'G', 0, 0};
constexpr std::uint32_t kVersion = 1;

} // namespace

void writeGraphFile(const std::filesystem::path& path, const GraphFile& graph) {
  const std::int64_t n = graph.ids.rows(), k = graph.ids.cols();
  if (graph.distances.rows() != n || graph.distances.cols() != k)
    throw InvalidArgument("graph ids and distances have different shapes");
  nlohmann::json header = {{"n", n},
                           {"k", k},
                           {"metric", std::string(metricName(graph.metric))},
                           {"content_hash", graph.contentHash},
                           {"params", nlohmann::json::parse(graph.paramsJson.empty() ? "{}" : graph.paramsJson)}};
  const std::string text = header.dump();
  writeFileAtomically(path, [&](std::FILE* f) {
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    auto put = [&](const void* data, std::size_t bytes) {
      if (bytes && std::fwrite(data, 1, bytes, f) != bytes) {
        XXH3_freeState(state);
        throw IoError(path.string() + ": write failed");
      }
      XXH3_64bits_update(state, data, bytes);
    };
    const std::uint32_t version = kVersion, length = std::uint32_t(text.size());
    put(kMagic, sizeof kMagic);
    put(&version, 4);
    put(&length, 4);
    put(text.data(), text.size());
    put(graph.ids.data(), std::size_t(n * k) * 4);
    put(graph.distances.data(), std::size_t(n * k) * 4);
    const std::uint64_t checksum = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    if (std::fwrite(&checksum, 8, 1, f) != 1)
      throw IoError(path.string() + ": write failed");
  });
}

bool isGraphFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  return in.read(magic, 8) && std::memcmp(magic, kMagic, 8) == 0;
}

GraphFile readGraphFile(const std::filesystem::path& path, const std::string& expectedHash) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const std::uint8_t* p = file->data();
  const std::size_t size = file->size();
  if (size < 16 || std::memcmp(p, kMagic, 8) != 0)
    throw FormatError(name + ": not a Nearscape graph file (bad magic)");
  std::uint32_t version = 0, length = 0;
  std::memcpy(&version, p + 8, 4);
  std::memcpy(&length, p + 12, 4);
  if (version != kVersion)
    throw FormatError(name + ": graph file version " + std::to_string(version) +
                      " is not supported (this build reads version " + std::to_string(kVersion) + ")");
  if (std::size_t(length) > size - 16)
    throw FormatError(name + ": truncated graph header");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(p + 16, p + 16 + length);
  } catch (const std::exception&) {
    throw FormatError(name + ": malformed graph header");
  }
  std::int64_t n = 0, k = 0;
  try {
    n = header.at("n").get<std::int64_t>();
    k = header.at("k").get<std::int64_t>();
  } catch (const std::exception&) {
    throw FormatError(name + ": the graph header lacks n or k");
  }
  std::size_t cells = 0, bytes = 0;
  if (n < 0 || k < 0 || __builtin_mul_overflow(std::size_t(n), std::size_t(k), &cells) ||
      __builtin_mul_overflow(cells, std::size_t(8), &bytes) || bytes + 8 != size - 16 - length)
    throw FormatError(name + ": truncated or resized: the header's " + std::to_string(n) + " × " +
                      std::to_string(k) + " graph does not fit the file's " +
                      std::to_string(size) + " bytes");
  std::uint64_t stored = 0;
  std::memcpy(&stored, p + size - 8, 8);
  if (XXH3_64bits(p, size - 8) != stored)
    throw FormatError(name + ": checksum mismatch: the graph file is corrupted");
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
  const std::uint8_t* body = p + 16 + length;
  std::vector<std::int32_t> ids(cells);
  std::vector<float> dists(cells);
  std::memcpy(ids.data(), body, cells * 4);
  std::memcpy(dists.data(), body + cells * 4, cells * 4);
  for (std::size_t i = 0; i < cells; ++i)
    if (ids[i] < -1 || ids[i] >= n)
      throw FormatError(name + ": graph id " + std::to_string(ids[i]) + " is out of range");
  g.ids = Matrix<std::int32_t>(std::move(ids), n, k);
  g.distances = Matrix<float>(std::move(dists), n, k);
  return g;
}

KnnResult readKnnGraph(const std::filesystem::path& path, const Dataset& data, Metric metric) {
  const std::string file = path.string();
  KnnResult r;
  if (isGraphFile(file)) {
    GraphFile g = readGraphFile(file, data.contentHash);
    if (g.metric != metric)
      throw InvalidArgument(file + ": the graph was built with metric " +
                            std::string(metricName(g.metric)) + ", not " +
                            std::string(metricName(metric)));
    r.ids = std::move(g.ids);
    r.distances = std::move(g.distances);
    return r;
  }
  const Matrix<std::int64_t> ids = readNpyIds(file);
  if (ids.rows() != data.size())
    throw InvalidArgument(file + ": the graph has " + std::to_string(ids.rows()) +
                          " rows but the data has " + std::to_string(data.size()));
  std::vector<std::int32_t> ids32(static_cast<std::size_t>(ids.rows() * ids.cols()));
  std::vector<float> dists(ids32.size());
  for (std::int64_t i = 0; i < ids.rows(); ++i)
    for (std::int64_t c = 0; c < ids.cols(); ++c) {
      const std::int64_t j = ids.row(i)[c];
      if (j < -1 || j >= data.size())
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
