#pragma once
// Pieces every ANN index shares (internal): parameter lookup, the metric's working form, and the
// conversion of working scores into docs/design.md's distances.

#include "nearscape/core/Error.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/index/AnnIndex.h"
#include "util/VectorDistance.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nearscape::index {

/// `value` checked against the range of the parameter `name` in `known`, or its default when
/// empty. Throws InvalidArgument for an out-of-range value.
int resolveParameter(const std::vector<IndexParameter>& known, const std::string& name,
                     std::optional<int> value);

/// Throws InvalidArgument when `values` names a parameter not in `names` (`what`: "graph build").
void rejectUnknown(const std::vector<std::string>& names, const ParameterValues& values,
                   const std::string& what);

/// The search parameters of the kind `T` in `params` (defaults for std::monostate).
/// Throws InvalidArgument for another kind's parameters.
template <typename T> T searchParamsOf(const IndexSearchParams& params, std::string_view kind) {
  if (const T* given = std::get_if<T>(&params))
    return *given;
  if (!std::holds_alternative<std::monostate>(params))
    throw InvalidArgument("another index kind's search parameters given to a " + std::string(kind) +
                          " index");
  return T{};
}

/// The value `values` holds under `name` as an integer, or nothing when absent.
/// Throws InvalidArgument for a value that is not an integer (or beyond int).
std::optional<int> integerParameter(const ParameterValues& values, const std::string& name);

/// The vectors an index searches: the base itself, or for cosine a normalised copy (a zero row
/// stays zero: cos = 0 with everything, as the exact search says).
struct WorkingVectors {
  std::vector<float> normalised; ///< cosine only
  MatrixView<float> view;

  WorkingVectors(const MatrixView<float>& base, Metric metric, int threads);
  WorkingVectors(const WorkingVectors&) = delete; // `view` may point into `normalised`
  WorkingVectors& operator=(const WorkingVectors&) = delete;
  std::uint64_t bytes() const { return normalised.size() * sizeof(float); }
};

/// The working score (smaller = nearer) of a working query against a working base row:
/// squared L2, or −dot for inner product and cosine (rows normalised).
inline float workingScore(Metric metric, const float* q, const float* x, std::int64_t d) {
  return metric == Metric::L2 ? simd::l2Squared(q, x, d) : -simd::dot(q, x, d);
}

/// The reported distance (docs/design.md, Conventions) from a working score.
inline float reportedDistance(Metric metric, float score) {
  switch (metric) {
  case Metric::L2:
    return std::sqrt(std::max(score, 0.0f));
  case Metric::InnerProduct:
    return score;
  case Metric::Cosine:
    return 1.0f + score;
  }
  return score;
}

/// The k best (score, id) pairs seen, ties to the smaller id: a sorted array, which beats a heap
/// at the k of a search (≤ a few hundred).
class TopK {
public:
  explicit TopK(int k) : m_k(k) { m_items.reserve(std::size_t(k) + 1); }
  float worst() const {
    return int(m_items.size()) < m_k ? std::numeric_limits<float>::infinity()
                                     : m_items.back().score;
  }
  void push(float score, std::int32_t id) {
    if (int(m_items.size()) == m_k && !less(score, id, m_items.back()))
      return;
    auto it = m_items.end();
    while (it != m_items.begin() && less(score, id, *(it - 1)))
      --it;
    m_items.insert(it, {score, id});
    if (int(m_items.size()) > m_k)
      m_items.pop_back();
  }
  /// Writes ids and distances (padding with −1 and +inf) and clears.
  void emit(Metric metric, std::int32_t* ids, float* distances) {
    for (int j = 0; j < m_k; ++j) {
      const bool has = j < int(m_items.size());
      ids[j] = has ? m_items[std::size_t(j)].id : -1;
      distances[j] = has ? reportedDistance(metric, m_items[std::size_t(j)].score)
                         : std::numeric_limits<float>::infinity();
    }
    m_items.clear();
  }

private:
  struct Item {
    float score;
    std::int32_t id;
  };
  static bool less(float s, std::int32_t id, const Item& b) {
    return s < b.score || (s == b.score && id < b.id);
  }
  int m_k;
  std::vector<Item> m_items;
};

/// Checks a search call's k and queries against an index of n rows and dimension d.
void checkSearch(const MatrixView<float>& queries, int k, std::int64_t n, std::int64_t d);

/// A search's result from its rows × k ids and distances.
KnnResult searchResult(std::vector<std::int32_t> ids, std::vector<float> distances,
                       std::int64_t rows, int k, Backend backend, const Context& context);

} // namespace nearscape::index
