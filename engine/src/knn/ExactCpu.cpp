// Exact kNN on the CPU. Candidates come from float32 GEMM tiles (OpenBLAS) with the norm
// expansion, as in the Faiss paper (§3: "exact search" with the decomposition
// ‖x − y‖² = ‖x‖² + ‖y‖² − 2⟨x, y⟩ and a GEMM per tile); instead of Faiss's fixed-size heaps each
// row keeps every candidate within the rounding-error margin of its k-th (CandidateRow.h), then
// the survivors are re-checked in float64. The kNN graph computes each pair of tiles once and
// feeds both its rows and its columns (the distance matrix is symmetric): half of Faiss's GEMM.
#include "knn/ExactCpu.h"

#include "knn/CandidateRow.h"
#include "knn/ExactCommon.h"
#include "nearscape/core/Error.h"
#include "util/Blas.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace nearscape::knn {
namespace {

struct Plan {
  std::int64_t queryTile = 0;
  std::int64_t baseTile = 0;
  bool symmetric = false; ///< graph mode computing each tile pair once
};

/// Bytes of working memory for tiles of bq × bb and `states` candidate rows.
std::uint64_t workingBytes(std::int64_t bq, std::int64_t bb, std::int64_t d, std::int64_t states,
                           std::size_t cap) {
  return std::uint64_t(bq + bb) * d * 4 + std::uint64_t(bq) * bb * 4 + 2ull * (bq + bb) * 4 +
         std::uint64_t(states) * (2 * cap * sizeof(Candidate) + sizeof(CandidateRow));
}

Plan makePlan(std::int64_t nq, std::int64_t nb, std::int64_t d, int k, bool excludeSelf,
              const Context& context, const ExactKnnParams& params) {
  const std::size_t cap = candidateCap(k);
  const std::uint64_t budget = context.memoryBudget;
  if (budget > 0 && budget < workingBytes(1, 1, d, 1, cap))
    throw InvalidArgument("the memory budget (" + std::to_string(budget) +
                          " bytes) is smaller than one row's working memory (" +
                          std::to_string(workingBytes(1, 1, d, 1, cap)) + " bytes)");
  // Without a budget: at most a quarter of a 24 GiB machine for candidate rows.
  const std::uint64_t limit = budget > 0 ? budget : (6ull << 30);
  Plan plan;
  if (excludeSelf && params.queryTile == 0 && params.baseTile == 0) {
    std::int64_t t = std::min<std::int64_t>(2048, nq);
    while (t > 64 && workingBytes(t, t, d, nq, cap) > limit)
      t /= 2;
    if (workingBytes(t, t, d, nq, cap) <= limit) {
      plan.symmetric = true;
      plan.queryTile = plan.baseTile = t;
      return plan;
    }
  }
  std::int64_t bq = params.queryTile > 0 ? params.queryTile : 4096;
  std::int64_t bb = params.baseTile > 0 ? params.baseTile : 1024;
  bq = std::min(bq, nq);
  bb = std::min(bb, nb);
  while (workingBytes(bq, bb, d, bq, cap) > limit && (bq > 1 || bb > 1)) {
    if (bq >= bb && bq > 1)
      bq = (bq + 1) / 2;
    else
      bb = (bb + 1) / 2;
  }
  plan.queryTile = bq;
  plan.baseTile = bb;
  return plan;
}

/// Feeds row i of a C tile (dots of one packed query against bb packed base rows) to its row.
template <Metric M>
inline void scanRow(const float* c, std::int64_t bb, float queryNorm, const float* baseNorms,
                    std::int64_t baseStart, std::int64_t skip, CandidateRow& row) {
  float t = row.threshold();
  for (std::int64_t j = 0; j < bb; ++j) {
    const float a = approxDistance(M, queryNorm, baseNorms[j], c[j]);
    if (a <= t && baseStart + j != skip) {
      row.push(a, std::int32_t(baseStart + j));
      t = row.threshold();
    }
  }
}

/// Feeds columns [c0, c1) of a bq × bb C tile to the rows of the base tile (symmetric graph).
template <Metric M>
inline void scanColumns(const float* C, std::int64_t bq, std::int64_t bb, std::int64_t c0,
                        std::int64_t c1, const float* queryNorms, std::int64_t queryStart,
                        const float* baseNorms, CandidateRow* baseRows) {
  constexpr int kStrip = 16;
  float t[kStrip];
  for (std::int64_t s = c0; s < c1; s += kStrip) {
    const int w = int(std::min<std::int64_t>(kStrip, c1 - s));
    for (int x = 0; x < w; ++x)
      t[x] = baseRows[s + x].threshold();
    for (std::int64_t i = 0; i < bq; ++i) {
      const float* c = C + i * bb + s;
      for (int x = 0; x < w; ++x) {
        const float a = approxDistance(M, baseNorms[s + x], queryNorms[i], c[x]);
        if (a <= t[x]) {
          baseRows[s + x].push(a, std::int32_t(queryStart + i));
          t[x] = baseRows[s + x].threshold();
        }
      }
    }
  }
}

template <Metric M>
void scanTile(const float* C, std::int64_t bq, std::int64_t bb, const float* queryNorms,
              std::int64_t queryStart, const float* baseNorms, std::int64_t baseStart,
              bool excludeSelf, CandidateRow* queryRows, CandidateRow* baseRows, int threads,
              const JobControl& job) {
  const bool columns = baseRows != nullptr;
  const std::int64_t strips = columns ? (bb + 63) / 64 : 0;
  // A few rows (single queries) are scanned on this thread: waking the others costs more, and
  // their spinning starves BLAS's threads.
#pragma omp parallel num_threads(threads) if (columns || bq >= 64)
  {
    // A tile of 2048 × 2048 takes 100–160 ms under ASan on two cores: the rows and strips look
    // for a stop, which the caller's next check turns into Cancelled (half-fed rows are dropped).
#pragma omp for schedule(dynamic, 16) nowait
    for (std::int64_t i = 0; i < bq; ++i) {
      if (job.stopRequested())
        continue;
      scanRow<M>(C + i * bb, bb, queryNorms[i], baseNorms, baseStart,
                 excludeSelf ? queryStart + i : -1, queryRows[i]);
    }
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < strips; ++s) {
      if (job.stopRequested())
        continue;
      scanColumns<M>(C, bq, bb, s * 64, std::min(bb, s * 64 + 64), queryNorms, queryStart,
                     baseNorms, baseRows);
    }
  }
}

void scanTileFor(Metric metric, const float* C, std::int64_t bq, std::int64_t bb,
                 const float* queryNorms, std::int64_t queryStart, const float* baseNorms,
                 std::int64_t baseStart, bool excludeSelf, CandidateRow* queryRows,
                 CandidateRow* baseRows, int threads, const JobControl& job) {
  switch (metric) {
  case Metric::L2:
    return scanTile<Metric::L2>(C, bq, bb, queryNorms, queryStart, baseNorms, baseStart,
                                excludeSelf, queryRows, baseRows, threads, job);
  case Metric::InnerProduct:
    return scanTile<Metric::InnerProduct>(C, bq, bb, queryNorms, queryStart, baseNorms, baseStart,
                                          excludeSelf, queryRows, baseRows, threads, job);
  case Metric::Cosine:
    return scanTile<Metric::Cosine>(C, bq, bb, queryNorms, queryStart, baseNorms, baseStart,
                                    excludeSelf, queryRows, baseRows, threads, job);
  }
}

/// Re-checks rows [begin, end): survivors exactly, overflowed rows directly.
void finishRows(const MatrixView<float>& queries, const MatrixView<float>& base, Metric metric,
                int k, bool excludeSelf, std::int64_t begin, std::int64_t end, CandidateRow* rows,
                std::int32_t* ids, float* dists, std::int64_t& fallback, std::int64_t& candidates,
                int threads, JobControl& job) {
  std::int64_t fb = 0, cand = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8) reduction(+ : fb, cand)
  for (std::int64_t i = begin; i < end; ++i) {
    if (job.stopRequested())
      continue;
    CandidateRow& row = rows[i - begin];
    row.prune();
    if (row.overflowed()) {
      ++fb;
      directRow(queries.row(i), base, metric, k, excludeSelf ? i : -1, ids + i * k, dists + i * k);
      continue;
    }
    std::vector<std::int32_t> list;
    list.reserve(row.items().size());
    for (const auto& c : row.items())
      list.push_back(c.id);
    cand += std::int64_t(list.size());
    finishRow(queries.row(i), base, metric, k, list, ids + i * k, dists + i * k);
    row.items().clear();
    row.items().shrink_to_fit();
  }
  job.check();
  fallback += fb;
  candidates += cand;
}

void gemmTile(const float* q, std::int64_t bq, const float* b, std::int64_t bb, std::int64_t d,
              float* C) {
  if (bq == 1) { // one query (a click): a GEMV reads the base once; a GEMM would copy it first
    cblas_sgemv(CblasRowMajor, CblasNoTrans, int(bb), int(d), 1.0f, b, int(d), q, 1, 0.0f, C, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(bq), int(bb), int(d), 1.0f, q, int(d), b,
              int(d), 0.0f, C, int(bb));
}

} // namespace

BaseSummary summariseBase(const MatrixView<float>& base, Metric metric, int threads,
                          bool keepPacked) {
  BaseSummary summary;
  summary.packing = makePacking(base, metric, threads);
  // Packed norms of every base row, and their maximum, for the error bounds.
  const std::int64_t nb = base.rows, d = base.cols;
  summary.norms.resize(static_cast<std::size_t>(nb));
  if (keepPacked)
    summary.packed.resize(static_cast<std::size_t>(nb * d));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t s = 0; s < nb; s += 4096) {
    const std::int64_t e = std::min(nb, s + 4096);
    if (keepPacked) {
      summary.packing.pack(base, s, e, summary.packed.data() + s * d, summary.norms.data() + s);
    } else {
      std::vector<float> own(static_cast<std::size_t>((e - s) * d));
      summary.packing.pack(base, s, e, own.data(), summary.norms.data() + s);
    }
  }
  summary.maxNorm2 = *std::max_element(summary.norms.begin(), summary.norms.end());
  return summary;
}

KnnResult exactSearchCpu(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                         Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                         const ExactKnnParams& params, const BaseSummary* summary) {
  const auto started = std::chrono::steady_clock::now();
  const int threads = effectiveThreads(context);
  const std::int64_t nq = queries.rows, nb = base.rows, d = base.cols;
  const Plan plan = makePlan(nq, nb, d, k, excludeSelf, context, params);
  BaseSummary own;
  if (!summary) {
    own = summariseBase(base, metric, threads);
    summary = &own;
  }
  const Packing& packing = summary->packing;
  const double maxBaseNorm2 = summary->maxNorm2;
  blas::setThreads(threads);
  const std::size_t cap = candidateCap(k);

  std::vector<std::int32_t> ids(static_cast<std::size_t>(nq * k));
  std::vector<float> dists(static_cast<std::size_t>(nq * k));
  std::int64_t fallback = 0, candidates = 0;
  const std::int64_t bq = plan.queryTile, bb = plan.baseTile;
  const bool kept = !summary->packed.empty() && !plan.symmetric;
  std::vector<float> qPacked(static_cast<std::size_t>(bq * d)),
      bPacked(kept ? 0 : static_cast<std::size_t>(bb * d));
  std::vector<float> qNorms(static_cast<std::size_t>(bq)),
      bNorms(kept ? 0 : static_cast<std::size_t>(bb));
  std::vector<float> C(static_cast<std::size_t>(bq * bb));

  auto initRows = [&](CandidateRow* rows, std::int64_t begin, std::int64_t end) {
    std::vector<float> scratch(static_cast<std::size_t>(d));
    for (std::int64_t i = begin; i < end; ++i) {
      float qn = 0;
      packing.pack(queries, i, i + 1, scratch.data(), &qn);
      rows[i - begin].reset(k, float(2.0 * errorBound(metric, d, qn, maxBaseNorm2, 0.0)), cap);
    }
  };

  if (plan.symmetric) {
    // Graph: tile pairs (I, J ≥ I); C = I·Jᵀ feeds I's rows and, for J ≠ I, J's rows.
    std::vector<CandidateRow> rows(static_cast<std::size_t>(nq));
    initRows(rows.data(), 0, nq);
    const std::int64_t tiles = (nq + bq - 1) / bq;
    const double pairs = double(tiles) * double(tiles + 1) / 2;
    double done = 0;
    for (std::int64_t I = 0; I < tiles; ++I) {
      const std::int64_t i0 = I * bq, i1 = std::min(nq, i0 + bq);
      packing.pack(queries, i0, i1, qPacked.data(), qNorms.data());
      for (std::int64_t J = I; J < tiles; ++J) {
        job.check();
        const std::int64_t j0 = J * bb, j1 = std::min(nb, j0 + bb);
        const float* bp = qPacked.data();
        const float* bn = qNorms.data();
        if (J != I) {
          packing.pack(base, j0, j1, bPacked.data(), bNorms.data());
          bp = bPacked.data();
          bn = bNorms.data();
        }
        gemmTile(qPacked.data(), i1 - i0, bp, j1 - j0, d, C.data());
        scanTileFor(metric, C.data(), i1 - i0, j1 - j0, qNorms.data(), i0, bn, j0, true,
                    rows.data() + i0, J != I ? rows.data() + j0 : nullptr, threads, job);
        done += 1;
        job.progress(0.95 * done / pairs, "exact kNN graph");
      }
    }
    finishRows(queries, base, metric, k, true, 0, nq, rows.data(), ids.data(), dists.data(),
               fallback, candidates, threads, job);
  } else {
    std::vector<CandidateRow> rows(static_cast<std::size_t>(bq));
    for (std::int64_t i0 = 0; i0 < nq; i0 += bq) {
      const std::int64_t i1 = std::min(nq, i0 + bq);
      packing.pack(queries, i0, i1, qPacked.data(), qNorms.data());
      initRows(rows.data(), i0, i1);
      for (std::int64_t j0 = 0; j0 < nb; j0 += bb) {
        job.check();
        const std::int64_t j1 = std::min(nb, j0 + bb);
        const float* bp = bPacked.data();
        const float* bn = bNorms.data();
        if (kept) { // the base packed once, when the index was built
          bp = summary->packed.data() + j0 * d;
          bn = summary->norms.data() + j0;
        } else {
          packing.pack(base, j0, j1, bPacked.data(), bNorms.data());
        }
        gemmTile(qPacked.data(), i1 - i0, bp, j1 - j0, d, C.data());
        scanTileFor(metric, C.data(), i1 - i0, j1 - j0, qNorms.data(), i0, bn, j0, excludeSelf,
                    rows.data(), nullptr, threads, job);
        job.progress((double(i0) + double(i1 - i0) * double(j1) / double(nb)) / double(nq),
                     excludeSelf ? "exact kNN graph" : "exact kNN search");
      }
      finishRows(queries, base, metric, k, excludeSelf, i0, i1, rows.data(), ids.data(),
                 dists.data(), fallback, candidates, threads, job);
    }
  }

  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cpu;
  result.report.device = "CPU (" + std::to_string(threads) + " threads)";
  result.report.setMethod(KnnMethod::Exact);
  result.fallbackRows = fallback;
  result.candidatesPerRow = nq > fallback ? double(candidates) / double(nq - fallback) : 0.0;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  job.progress(1.0, "done");
  return result;
}

} // namespace nearscape::knn
