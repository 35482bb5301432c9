#include "Oracle.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <thread>

namespace nearscape::test {

double oracleDistance(const float* a, const float* b, std::int64_t d, Metric metric) {
  double dot = 0, aa = 0, bb = 0, squares = 0;
  for (std::int64_t j = 0; j < d; ++j) {
    const double x = a[j], y = b[j];
    dot += x * y;
    aa += x * x;
    bb += y * y;
    squares += (x - y) * (x - y);
  }
  switch (metric) {
  case Metric::L2:
    return std::sqrt(squares);
  case Metric::InnerProduct:
    return -dot;
  case Metric::Cosine:
    return aa == 0 || bb == 0 ? 1.0 : 1.0 - dot / std::sqrt(aa * bb);
  }
  return NAN;
}

namespace {

/// Nearer first; of two at the same distance, the smaller id first.
bool before(double da, std::int32_t ia, double db, std::int32_t ib) {
  if (da != db)
    return da < db;
  return ia < ib;
}

} // namespace

double Tolerance::of(double exact) const {
  return relative * std::max(floor, std::abs(exact));
}

OracleKnn oracleKnn(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                    Metric metric, bool graph, const std::vector<std::int64_t>& rows) {
  OracleKnn out;
  out.rows = rows.empty() ? queries.rows : std::int64_t(rows.size());
  out.k = k;
  out.width = int(std::min<std::int64_t>(k + 2, base.rows - (graph ? 1 : 0)));
  out.distances.assign(std::size_t(out.rows * out.width), 0.0);
  out.ids.assign(std::size_t(out.rows * out.width), -1);
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    std::vector<std::pair<double, std::int32_t>> all;
    for (std::int64_t r; (r = next++) < out.rows;) {
      const std::int64_t q = rows.empty() ? r : rows[std::size_t(r)];
      all.clear();
      for (std::int64_t j = 0; j < base.rows; ++j)
        if (!graph || j != q)
          all.emplace_back(oracleDistance(queries.row(q), base.row(j), base.cols, metric),
                           std::int32_t(j));
      std::partial_sort(all.begin(), all.begin() + out.width, all.end(),
                        [](const auto& x, const auto& y) {
                          return before(x.first, x.second, y.first, y.second);
                        });
      for (int c = 0; c < out.width; ++c) {
        out.distances[std::size_t(r * out.width + c)] = all[std::size_t(c)].first;
        out.ids[std::size_t(r * out.width + c)] = all[std::size_t(c)].second;
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  return out;
}

std::string compareWithOracle(const KnnResult& got, const OracleKnn& oracle,
                              const MatrixView<float>& queries, const MatrixView<float>& base,
                              Metric metric, bool graph, Tolerance tolerance,
                              const std::vector<std::int64_t>& gotRows) {
  const int k = oracle.k;
  if (got.ids.cols() != k || got.distances.cols() != k)
    return "k is " + std::to_string(got.ids.cols()) + ", expected " + std::to_string(k);
  if (gotRows.empty() && got.ids.rows() != oracle.rows)
    return "rows: " + std::to_string(got.ids.rows()) + ", expected " + std::to_string(oracle.rows);
  for (std::int64_t r = 0; r < oracle.rows; ++r) {
    const std::int64_t g = gotRows.empty() ? r : gotRows[std::size_t(r)];
    // The query row: in a graph, or with the rows of a subset, the oracle's row r is query g.
    const std::int64_t q = g;
    const std::string where = "row " + std::to_string(g) + ", rank ";
    const double* want = oracle.distanceRow(r);
    const std::int32_t* wantIds = oracle.idRow(r);
    std::set<std::int32_t> seen;
    for (int c = 0; c < k; ++c) {
      const std::int32_t id = got.ids.row(g)[c];
      const double reported = got.distances.row(g)[c];
      const std::string at = where + std::to_string(c) + ": ";
      if (id < 0 || id >= base.rows)
        return at + "id " + std::to_string(id) + " out of range";
      if (graph && id == q)
        return at + "the row lists itself";
      if (!seen.insert(id).second)
        return at + "id " + std::to_string(id) + " listed twice";
      const double exact = oracleDistance(queries.row(q), base.row(id), base.cols, metric);
      if (std::abs(reported - exact) > tolerance.of(exact))
        return at + "id " + std::to_string(id) + " reported at " + std::to_string(reported) +
               ", its distance is " + std::to_string(exact);
      if (std::abs(exact - want[c]) > tolerance.of(want[c]))
        return at + "distance " + std::to_string(exact) + " (id " + std::to_string(id) +
               "), the oracle's is " + std::to_string(want[c]) + " (id " +
               std::to_string(wantIds[c]) + ")";
      if (id == wantIds[c])
        continue;
      // Another id at this rank: only where rounding may order a near tie either way. Exactly
      // equal distances have one order, the smaller id first.
      bool nearTie = false;
      for (int o = 0; o < oracle.width; ++o)
        nearTie |= want[o] != want[c] && std::abs(want[o] - want[c]) <= tolerance.of(want[c]);
      nearTie |= exact != want[c];
      if (!nearTie)
        return at + "id " + std::to_string(id) + ", the oracle's is " + std::to_string(wantIds[c]) +
               " (equal distances " + std::to_string(want[c]) + " come by the smaller id)";
    }
  }
  return {};
}

double oracleRecall(const MatrixView<std::int32_t>& found, const OracleKnn& oracle,
                    const MatrixView<float>& queries, const MatrixView<float>& base, Metric metric,
                    Tolerance tolerance) {
  const int k = oracle.k;
  std::int64_t hits = 0;
  for (std::int64_t r = 0; r < found.rows; ++r) {
    const double kth = oracle.distanceRow(r)[k - 1];
    for (int c = 0; c < k; ++c) {
      const std::int32_t id = found.row(r)[c];
      if (id >= 0 && id < base.rows &&
          oracleDistance(queries.row(r), base.row(id), base.cols, metric) <=
              kth + tolerance.of(kth))
        ++hits;
    }
  }
  return double(hits) / double(found.rows * k);
}

} // namespace nearscape::test
