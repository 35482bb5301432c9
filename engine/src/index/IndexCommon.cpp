#include "index/IndexCommon.h"

#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "nearscape/gpu/Devices.h"
#include "util/Normalise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace nearscape::index {

int resolveParameter(const std::vector<IndexParameter>& known, const std::string& name,
                     std::optional<int> value) {
  for (const IndexParameter& p : known) {
    if (p.name != name)
      continue;
    if (!value)
      return int(p.defaultValue);
    const double v = *value;
    if (!(v >= p.minimum && v <= p.maximum)) {
      std::ostringstream m;
      m << name << " = " << v << " is out of range: " << (p.integer ? "an integer in " : "") << "["
        << p.minimum << ", " << p.maximum << "]";
      throw InvalidArgument(m.str());
    }
    return *value;
  }
  throw InvalidArgument("no parameter named " + name);
}

void rejectUnknown(const std::vector<std::string>& names, const ParameterValues& values,
                   const std::string& what) {
  for (const auto& [name, value] : values)
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const std::string& n : names)
        known += (known.empty() ? "" : ", ") + n;
      throw InvalidArgument("unknown " + what + " parameter '" + name + "' (known: " + known + ")");
    }
}

std::optional<int> integerParameter(const ParameterValues& values, const std::string& name) {
  const auto it = values.find(name);
  if (it == values.end())
    return std::nullopt;
  const double v = it->second;
  if (!(v == std::floor(v)) || std::abs(v) > double(std::numeric_limits<int>::max())) {
    std::ostringstream m;
    m << name << " = " << v << " is not an integer";
    throw InvalidArgument(m.str());
  }
  return int(v);
}

WorkingVectors::WorkingVectors(const MatrixView<float>& base, Metric metric, int threads)
    : view(base) {
  if (metric != Metric::Cosine)
    return;
  normalised.resize(base.size());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < base.rows; ++i)
    normaliseRow(base.row(i), base.cols, normalised.data() + i * base.cols);
  view = {normalised.data(), base.rows, base.cols};
}

KnnResult searchResult(std::vector<std::int32_t> ids, std::vector<float> distances,
                       std::int64_t rows, int k, Backend backend, const Context& context) {
  KnnResult r;
  r.ids = Matrix<std::int32_t>(std::move(ids), rows, k);
  r.distances = Matrix<float>(std::move(distances), rows, k);
  r.backend = backend;
  Context where = context;
  where.backend = backend;
  r.report.device = describeBackend(where);
  r.report.setMethod(KnnMethod::IndexSearch);
  return r;
}

void checkSearch(const MatrixView<float>& queries, int k, std::int64_t n, std::int64_t d) {
  NEARSCAPE_EXPECTS(queries.cols == d, "queries have dimension " + std::to_string(queries.cols) +
                                           " but the index has " + std::to_string(d));
  NEARSCAPE_EXPECTS(k >= 1 && k <= n,
                    "k = " + std::to_string(k) + " is out of range [1, " + std::to_string(n) + "]");
  requireFinite(queries, "the queries");
}

} // namespace nearscape::index
