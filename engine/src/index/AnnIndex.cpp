#include "nearscape/index/AnnIndex.h"

#include "index/GraphIndex.h"
#include "index/IvfFlatIndex.h"
#include "io/ChecksummedFile.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"

#include <sstream>

namespace nearscape {
namespace {

constexpr io::Magic kMagic = {'N', 'S', 'I', 'N', 'D', 'E', 'X', 0};
constexpr std::uint32_t kVersion = 1;

void requireKind(std::string_view kind) {
  for (const std::string& k : indexKinds())
    if (k == kind)
      return;
  throw InvalidArgument("unknown index kind '" + std::string(kind) + "' (known: graph, ivf)");
}

ParameterValues describeOf(std::monostate) {
  return {};
}
ParameterValues describeOf(const GraphIndexParams& p) {
  return index::GraphIndex::describe(p);
}
ParameterValues describeOf(const IvfFlatParams& p) {
  return index::IvfFlatIndex::describe(p);
}
ParameterValues describeOf(const GraphSearchParams& p) {
  return index::GraphIndex::describe(p);
}
ParameterValues describeOf(const IvfSearchParams& p) {
  return index::IvfFlatIndex::describe(p);
}

} // namespace

std::string formatParameters(const ParameterValues& values) {
  std::ostringstream out;
  for (const auto& [name, value] : values)
    out << (out.tellp() > 0 ? "," : "") << name << '=' << value;
  return out.str();
}

std::vector<std::string> indexKinds() {
  return {"graph", "ivf"};
}

std::string_view indexKind(const IndexBuildParams& params) {
  return std::holds_alternative<GraphIndexParams>(params) ? "graph" : "ivf";
}

std::vector<IndexParameter> indexBuildParameters(std::string_view kind, std::int64_t n) {
  requireKind(kind);
  return kind == "graph" ? index::GraphIndex::buildParameters(n)
                         : index::IvfFlatIndex::buildParameters(n);
}

IndexBuildParams parseIndexBuildParams(std::string_view kind, const ParameterValues& values) {
  requireKind(kind);
  if (kind == "graph")
    return index::GraphIndex::parseBuild(values);
  return index::IvfFlatIndex::parseBuild(values);
}

IndexSearchParams parseIndexSearchParams(std::string_view kind, const ParameterValues& values) {
  requireKind(kind);
  if (kind == "graph")
    return index::GraphIndex::parseSearch(values);
  return index::IvfFlatIndex::parseSearch(values);
}

ParameterValues describeParameters(const IndexBuildParams& params) {
  return std::visit([](const auto& p) { return describeOf(p); }, params);
}

ParameterValues describeParameters(const IndexSearchParams& params) {
  return std::visit([](const auto& p) { return describeOf(p); }, params);
}

std::unique_ptr<AnnIndex> buildIndex(const MatrixView<float>& base, Metric metric,
                                     const IndexBuildParams& params, const Context& context,
                                     JobControl& job) {
  NEARSCAPE_EXPECTS(!base.empty(), "the data is empty");
  requireFinite(base, "the data");
  if (const auto* graph = std::get_if<GraphIndexParams>(&params))
    return index::GraphIndex::build(base, metric, *graph, context, job);
  return index::IvfFlatIndex::build(base, metric, std::get<IvfFlatParams>(params), context, job);
}

void AnnIndex::save(const std::filesystem::path& path, const std::string& contentHash) const {
  nlohmann::json build = nlohmann::json::object();
  for (const auto& [name, value] : buildValues())
    build[name] = value;
  nlohmann::json header = {{"kind", std::string(kind())},
                           {"n", size()},
                           {"d", dim()},
                           {"metric", std::string(metricName(metric()))},
                           {"content_hash", contentHash},
                           {"build", build},
                           {"build_seconds", buildSeconds()}};
  std::vector<io::Bytes> bytes;
  for (const Section& s : sections())
    bytes.push_back({s.data, s.bytes});
  io::writeChecksummedFile(path, kMagic, kVersion, header, bytes);
}

std::unique_ptr<AnnIndex> loadIndex(const std::filesystem::path& path,
                                    const MatrixView<float>& base, const std::string& contentHash,
                                    const Context& context) {
  const std::string name = path.string();
  const io::ChecksummedFile file = io::readChecksummedFile(path, kMagic, kVersion, "index file");
  const nlohmann::json& h = file.header;
  try {
    const std::string kind = h.at("kind").get<std::string>();
    const auto metric = parseMetric(h.at("metric").get<std::string>());
    if (!metric)
      throw FormatError(name + ": unknown metric in the index header");
    const std::string hash = h.value("content_hash", std::string());
    if (!contentHash.empty() && hash != contentHash)
      throw FormatError(name + ": this index was built on other data (content hash " + hash +
                        ", the data's is " + contentHash + ")");
    if (h.at("n").get<std::int64_t>() != base.rows || h.at("d").get<std::int64_t>() != base.cols)
      throw FormatError(name + ": the index was built on " +
                        std::to_string(h.at("n").get<std::int64_t>()) + " × " +
                        std::to_string(h.at("d").get<std::int64_t>()) + " data, not " +
                        std::to_string(base.rows) + " × " + std::to_string(base.cols));
    requireFinite(base, "the data");
    if (kind == "graph")
      return index::GraphIndex::load(file, base, *metric, context);
    if (kind == "ivf")
      return index::IvfFlatIndex::load(file, base, *metric, context);
    throw FormatError(name + ": unknown index kind '" + kind + "'");
  } catch (const nlohmann::json::exception&) {
    throw FormatError(name + ": the index header lacks a field or has a wrong type");
  } catch (const FormatError& e) {
    const std::string what = e.what();
    throw FormatError(what.rfind(name, 0) == 0 ? what : name + ": " + what);
  }
}

} // namespace nearscape
