// Exact kNN on the CPU. Candidates come from float32 GEMM tiles (OpenBLAS) with the norm
// expansion, as in the Faiss paper (§3: "exact search" with the decomposition
// ‖x − y‖² = ‖x‖² + ‖y‖² − 2⟨x, y⟩ and a GEMM per tile); instead of Faiss's fixed-size heaps each
// row keeps every candidate within the rounding-error margin of its k-th (CandidateRow.h), then
// the survivors are re-checked in float64. The kNN graph computes each pair of tiles once and
// feeds both its rows and its columns (the distance matrix is symmetric): half of Faiss's GEMM.
#include "knn/ExactCpu.h"

#include "knn/CandidateRow.h"
#include "knn/ExactCommon.h"
#include "knn/TilePairQueue.h"
#include "knn/TileScan.h"
#include "nearscape/core/Error.h"
#include "util/Blas.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <omp.h>

namespace nearscape::knn {
namespace {

struct Plan {
  std::int64_t queryTile = 0;
  std::int64_t baseTile = 0;
  bool symmetric = false; ///< graph mode computing each tile pair once
  int workers = 1;        ///< symmetric: threads that each take whole tile pairs
  bool packAll = false;   ///< symmetric: the base packed once, not at each pair
};

/// Bytes of working memory for tiles of bq × bb and `states` candidate rows.
std::uint64_t workingBytes(std::int64_t bq, std::int64_t bb, std::int64_t d, std::int64_t states,
                           std::size_t cap) {
  return std::uint64_t(bq + bb) * d * 4 + std::uint64_t(bq) * bb * 4 + 2ull * (bq + bb) * 4 +
         std::uint64_t(states) * (2 * cap * sizeof(Candidate) + sizeof(CandidateRow));
}

/// The symmetric graph's tile: 2,048 rows, fewer where that leaves under two tile pairs in work
/// per thread at once (each worker owns both tiles of its pair), never under 256 (smaller GEMMs
/// run slower than the cores allow).
std::int64_t pairTile(std::int64_t n, int threads) {
  const std::int64_t perThreads = (n + 2 * threads - 1) / (2 * std::int64_t(threads));
  return std::min<std::int64_t>(n,
                                std::clamp<std::int64_t>((perThreads + 63) / 64 * 64, 256, 2048));
}

/// Workers for `tiles` tiles: one a thread while each can own two tiles.
int pairWorkers(std::int64_t tiles, int threads) {
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, tiles / 2)));
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
    const int threads = effectiveThreads(context);
    std::int64_t t = pairTile(nq, threads);
    auto bytes = [&](std::int64_t tile) { // each worker: two packed tiles and its C
      const int w = pairWorkers((nq + tile - 1) / tile, threads);
      return std::uint64_t(w) * (workingBytes(tile, tile, d, 0, cap) + std::uint64_t(tile) * 4) +
             workingBytes(0, 0, d, nq, cap);
    };
    while (t > 64 && bytes(t) > limit)
      t /= 2;
    if (bytes(t) <= limit) {
      plan.symmetric = true;
      plan.queryTile = plan.baseTile = t;
      plan.workers = pairWorkers((nq + t - 1) / t, threads);
      plan.packAll = bytes(t) + std::uint64_t(nq) * d * 4 <= limit;
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

/// Feeds a bq × bb C tile's rows to their candidate rows (a search's tile, or a graph's with
/// explicit tiles).
void scanTile(Metric metric, const float* C, std::int64_t bq, std::int64_t bb,
              const float* queryNorms, std::int64_t queryStart, const float* baseNorms,
              std::int64_t baseStart, bool excludeSelf, CandidateRow* queryRows, int threads,
              const JobControl& job) {
  // A few rows (single queries) are scanned on this thread: waking the others costs more, and
  // their spinning starves BLAS's threads.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (bq >= 64)
  for (std::int64_t i = 0; i < bq; ++i) {
    // A tile of 2048 × 2048 takes 100–160 ms under ASan on two cores: the rows look for a stop,
    // which the caller's next check turns into Cancelled (half-fed rows are dropped).
    if (job.stopRequested())
      continue;
    feedRow(metric, C + i * bb, bb, queryNorms[i], baseNorms, baseStart,
            excludeSelf ? queryStart + i : -1, queryRows[i]);
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

/// The symmetric graph: every tile pair (A, B ≥ A) scored once, C = A·Bᵀ feeding the rows of
/// both (a tile with itself through SYRK's upper triangle: half a GEMM). Each of plan.workers
/// threads takes whole pairs from a TilePairQueue and runs their GEMM on one BLAS thread and
/// their scan itself; with a single worker, BLAS gets every thread.
void scorePairs(const MatrixView<float>& base, const BaseSummary& summary, Metric metric,
                const Plan& plan, int threads, CandidateRow* rows, JobControl& job) {
  const std::int64_t n = base.rows, d = base.cols, t = plan.queryTile;
  const std::int64_t tiles = (n + t - 1) / t;
  TilePairQueue queue(tiles);
  const float* norms = summary.norms.data();
  const bool packed = !summary.packed.empty();
  blas::setThreads(plan.workers > 1 ? 1 : threads);
  std::atomic<std::int64_t> done{0};
#pragma omp parallel num_threads(plan.workers)
  {
    std::vector<float> a(packed ? 0 : static_cast<std::size_t>(t * d)), b(a.size()),
        scratchNorms(static_cast<std::size_t>(t)), columnThresholds(scratchNorms.size()),
        C(static_cast<std::size_t>(t * t));
    auto tile = [&](std::int64_t first, std::int64_t last, std::vector<float>& out) {
      if (packed)
        return summary.packed.data() + first * d;
      summary.packing.pack(base, first, last, out.data(), scratchNorms.data());
      return static_cast<const float*>(out.data());
    };
    std::int64_t A = 0, B = 0;
    while (queue.take(A, B)) {
      const std::int64_t a0 = A * t, a1 = std::min(n, a0 + t), b0 = B * t, b1 = std::min(n, b0 + t);
      const float* ap = tile(a0, a1, a);
      if (A == B) {
        cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, int(a1 - a0), int(d), 1.0f, ap, int(d),
                    0.0f, C.data(), int(a1 - a0));
      } else {
        gemmTile(ap, a1 - a0, tile(b0, b1, b), b1 - b0, d, C.data());
      }
      feedPair(metric, C.data(), a1 - a0, b1 - b0, b1 - b0, norms + a0, a0, norms + b0, b0, A == B,
               rows + a0, rows + b0, columnThresholds.data());
      queue.release(A, B);
      const std::int64_t finished = ++done;
      if (job.stopRequested())
        queue.stop(); // the caller's check turns it into Cancelled (half-fed rows are dropped)
      else if (omp_get_thread_num() == 0)
        job.progress(0.95 * double(finished) / double(queue.pairs()), "exact kNN graph");
    }
  }
  job.check();
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
    own = summariseBase(base, metric, threads, plan.symmetric && plan.packAll);
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
  std::vector<float> qPacked(plan.symmetric ? 0 : static_cast<std::size_t>(bq * d)),
      bPacked(kept || plan.symmetric ? 0 : static_cast<std::size_t>(bb * d));
  std::vector<float> qNorms(plan.symmetric ? 0 : static_cast<std::size_t>(bq)),
      bNorms(kept || plan.symmetric ? 0 : static_cast<std::size_t>(bb));
  std::vector<float> C(plan.symmetric ? 0 : static_cast<std::size_t>(bq * bb));

  auto initRows = [&](CandidateRow* rows, std::int64_t begin, std::int64_t end) {
    std::vector<float> scratch(static_cast<std::size_t>(d));
    for (std::int64_t i = begin; i < end; ++i) {
      float qn = 0;
      packing.pack(queries, i, i + 1, scratch.data(), &qn);
      rows[i - begin].reset(k, float(2.0 * errorBound(metric, d, qn, maxBaseNorm2, 0.0)), cap);
    }
  };

  if (plan.symmetric) {
    // Graph: queries are the base, so the base's packed norms are the queries' too.
    std::vector<CandidateRow> rows(static_cast<std::size_t>(nq));
    for (std::int64_t i = 0; i < nq; ++i)
      rows[std::size_t(i)].reset(
          k, float(2.0 * errorBound(metric, d, summary->norms[std::size_t(i)], maxBaseNorm2, 0.0)),
          cap);
    scorePairs(base, *summary, metric, plan, threads, rows.data(), job);
    blas::setThreads(threads);
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
        scanTile(metric, C.data(), i1 - i0, j1 - j0, qNorms.data(), i0, bn, j0, excludeSelf,
                 rows.data(), threads, job);
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
