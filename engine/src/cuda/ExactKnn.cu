// Exact kNN on CUDA: the precision cascade, streaming and the entry point. Candidates come from
// cuBLAS GEMM tiles in float16 (scaled, rounded to nearest) or 3xTF32 (Faiss §3 tiling; reduced
// precision allowed for candidates only) with the norm expansion (ExactRows.cuh); each pass
// keeps every candidate within its proven rounding bound and re-checks the survivors in float64
// on the GPU (ExactPass.cuh). Rows whose bound keeps too many candidates are scanned directly
// (DirectRows.cuh, or on the CPU). The same bound as the CPU backend (knn/GemmBound.h,
// knn/CandidateRow.h).
#include "core/HugePages.h"
#include "cuda/CudaKnn.h"
#include "cuda/DirectRows.cuh"
#include "cuda/ExactPass.cuh"
#include "cuda/ExactRows.cuh"
#include "cuda/FusedTiles.cuh"
#include "cuda/Resources.cuh"
#include "cuda/ShareExchange.cuh"
#include "cuda/Upload.cuh"
#include "knn/ExactCommon.h"
#include "knn/PairsExchange.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <iterator>
#include <limits>
#include <memory>
#include <string>

namespace nearscape::cuda {
namespace {

constexpr std::int64_t kNoSelf = std::numeric_limits<std::int64_t>::min();
constexpr int kPairsMaxK = 32; ///< the largest k of pairsPass

/// How one device run sits inside a larger search (a streamed chunk) or stands alone.
struct RunOptions {
  bool sameRows = false;             ///< the queries are the base's rows: packed once
  std::int64_t selfOffset = kNoSelf; ///< query i may not return base row i + selfOffset
  const float* deviceBase = nullptr; ///< the base's raw rows, already on the device
  double progressFrom = 0, progressSpan = 1;
  /// A share of a graph split over devices (pairsShare): written here where the paired sweeps
  /// apply, and nothing else done; else left empty and the run returns an empty result.
  gpu::PairsShare* share = nullptr;
  int part = 0, parts = 1;                ///< the share's place
  knn::PairsExchange* exchange = nullptr; ///< where the shares meet between bands (may be null)

  /// The base row query i may not return, or −1.
  std::int64_t selfOf(std::int64_t i, std::int64_t nb) const {
    if (selfOffset == kNoSelf)
      return -1;
    const std::int64_t s = i + selfOffset;
    return s >= 0 && s < nb ? s : -1;
  }
};

std::uint64_t deviceBudget(const Context& context);
std::uint64_t rowBytes(int d);

/// (row, base row) pairs up to which a direct scan on the device (DirectRows.cuh: 24 bytes a
/// pair, 400 MB here) takes the rows a float16 pass left rather than a 3xTF32 pass, which packs
/// the whole base again and runs a cuBLAS GEMM a tile (about 10 ms for a few rows of manifold
/// 1M × 128, and in a cold process a wait for cuBLAS's start).
constexpr std::uint64_t kDirectMaxPairs = std::uint64_t(1) << 24;
/// Rows up to which the direct scan takes them: it sorts a row at a time.
constexpr std::size_t kDirectMaxRows = 64;

/// Whether `rows` rows left by a float16 pass are scanned directly on the device.
bool directRowsFit(std::size_t rows, std::int64_t nb, const Context& context) {
  const std::uint64_t pairs = std::uint64_t(rows) * std::uint64_t(nb);
  return rows <= kDirectMaxRows && pairs <= kDirectMaxPairs &&
         pairs * kDirectPairBytes <= deviceBudget(context) / 4;
}

/// Where a share's lists go (RunOptions::share).
struct ShareLists {
  /// Merged on the first share's device (mergeOnFirstShare): its lists stay there.
  DeviceBuffer<std::int32_t> deviceIds;
  DeviceBuffer<double> deviceDist64;
  /// Else merged on the host (knn::mergePairShares): copied back here, n × k.
  std::shared_ptr<std::int32_t[]> ids;
  std::shared_ptr<double[]> dist64;
};

/// Whether a share's lists merge on the first share's device: where they meet (an exchange) and
/// the merge's memory a row — the others' lists and the graph beside the first's own — is no more
/// than the sweeps' shortest lists took a row before it (freed by then), so that it fits wherever
/// the sweeps did. The same on every share: it depends on k and the shares alone.
bool mergesOnDevice(const RunOptions& options, int k) {
  const std::size_t mergeBytes =
      12 * std::size_t(k) * std::size_t(options.parts - 1) + 8 * std::size_t(k) + 1;
  return options.exchange && options.parts <= kMaxDeviceMergeParts &&
         mergeBytes <= knn::candidateCap(k) * sizeof(Candidate);
}

/// A share's paired sweeps (RunOptions::share): each row's k nearest of the pairs this device
/// scores, into `lists`; on share 0 of a merge on the device, `graphIds`/`graphDist` (host,
/// n × k: the merged graph's) are faulted in meanwhile.
PassResult pairsShareRun(const DeviceRows& rows, std::int64_t n, int d, float maxBaseNorm2,
                         Metric metric, int k, Tiles tiles, Resources& resources,
                         const RunOptions& options, JobControl& job, PhaseClock& clock,
                         ShareLists& lists, std::int32_t* graphIds, float* graphDist) {
  const double from = options.progressFrom + options.progressSpan * 0.05,
               span = options.progressSpan * 0.9;
  if (mergesOnDevice(options, k))
    return pairsPass(rows, n, d, maxBaseNorm2, metric, k, tiles, resources, graphIds, graphDist,
                     job, from, span, clock,
                     PairsSplit{options.part, options.parts, nullptr, options.exchange,
                                &lists.deviceIds, &lists.deviceDist64});
  lists.ids = hugePageArray<std::int32_t>(std::size_t(n * k)); // freed after the merge: huge pages
  lists.dist64 = hugePageArray<double>(std::size_t(n * k));
  return pairsPass(rows, n, d, maxBaseNorm2, metric, k, tiles, resources, lists.ids.get(), nullptr,
                   job, from, span, clock,
                   PairsSplit{options.part, options.parts, lists.dist64.get(), options.exchange});
}

/// The rows a share searched whole on its device: those its pass could not bound (`searched`)
/// but the ones still left (`left`, the caller's), ascending.
std::vector<std::int64_t> wholeRows(const std::vector<std::int64_t>& searched,
                                    const std::vector<std::int64_t>& left) {
  std::vector<std::int64_t> done = searched, rest = left, whole;
  std::sort(done.begin(), done.end());
  std::sort(rest.begin(), rest.end());
  std::set_difference(done.begin(), done.end(), rest.begin(), rest.end(),
                      std::back_inserter(whole));
  return whole;
}

/// Fills the share from its pass: the rows it searched whole (wholeRows; their rows in
/// `runIds`/`runDists`) are complete, written as they are; the rows left (`left`) are the
/// caller's.
void finishShare(gpu::PairsShare& share, std::int64_t n, int k,
                 const std::shared_ptr<std::int32_t[]>& ids,
                 const std::shared_ptr<double[]>& dist64, const std::vector<std::int64_t>& searched,
                 const std::vector<std::int64_t>& left, const std::int32_t* runIds,
                 const float* runDists) {
  share.complete = wholeRows(searched, left);
  std::vector<std::int64_t> rest = left;
  std::sort(rest.begin(), rest.end());
  for (const std::int64_t row : share.complete)
    for (int c = 0; c < k; ++c) {
      ids[std::size_t(row * k + c)] = runIds[row * k + c];
      dist64[std::size_t(row * k + c)] = double(runDists[row * k + c]);
    }
  share.overflow = rest;
  share.ids = Matrix<std::int32_t>(ids.get(), n, k, ids);
  share.distances = Matrix<double>(dist64.get(), n, k, dist64);
}

KnnResult runOnDevice(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, const RunOptions& options, const Context& context,
                      JobControl& job, const ExactKnnParams& params, Tiles tiles) {
  const auto started = std::chrono::steady_clock::now();
  PhaseClock clock{"exact", context};
  const ResourceLease resources = leaseResources(context);
  clock.mark("set device");
  const std::int64_t nq = queries.rows, nb = base.rows;
  const int d = int(base.cols);
  const int threads = effectiveThreads(context);
  // Left unset (every row is written below): zero-filling 1M × 96 on one thread cost 0.4 s.
  const std::shared_ptr<std::int32_t[]> idsOwned(new std::int32_t[std::size_t(nq * k)]);
  const std::shared_ptr<float[]> distsOwned(new float[std::size_t(nq * k)]);
  std::int32_t* const ids = idsOwned.get();
  float* const dists = distsOwned.get();
  std::int64_t candidates = 0;
  bool fusedTiles = false;

  // The base goes up once; it is packed again on the device when the precision changes.
  DeviceRows deviceBase;
  if (options.deviceBase)
    deviceBase.raw = options.deviceBase;
  else if (options.share && options.exchange)
    uploadAcrossShares(base, *options.exchange, options.part, options.parts, resources->stream(),
                       job, deviceBase);
  else
    uploadRaw(base, 0, nb, nullptr, deviceBase);
  clock.mark("upload");
  DeviceBuffer<float> mean{std::size_t(d)};
  if (metric == Metric::L2) {
    columnMeans(deviceBase.raw, nb, d, mean.get());
  }
  clock.mark("mean");
  float maxBaseNorm2 = 0;
  auto packBase = [&](Precision p) {
    packRows(deviceBase, nb, d, mean.get(), metric, p, false);
    std::vector<float> norms(static_cast<std::size_t>(nb));
    NEARSCAPE_CUDA_CHECK(
        cudaMemcpy(norms.data(), deviceBase.norms, sizeof(float) * nb, cudaMemcpyDeviceToHost));
    maxBaseNorm2 = *std::max_element(norms.begin(), norms.end());
    clock.mark("pack base");
  };
  // A pass over query rows [begin, end), or over `rows` when given; returns the overflowed rows.
  auto pass = [&](Precision p, std::int64_t begin, std::int64_t end,
                  const std::vector<std::int64_t>* rows, double from, double span) {
    const std::int64_t n = rows ? std::int64_t(rows->size()) : end - begin;
    DeviceRows q;
    if (options.sameRows && !rows && p != Precision::SplitTf32) {
      q = deviceBase.view(begin, d); // the graph's queries are the base, packed alike
    } else {
      if (options.sameRows && !rows) {
        q.raw = deviceBase.raw + begin * d;
      } else {
        uploadRaw(queries, begin, n, rows, q);
      }
      packRows(q, n, d, mean.get(), metric, p, true);
    }
    DeviceBuffer<std::int64_t> selfIds;
    if (options.selfOffset != kNoSelf) {
      std::vector<std::int64_t> self(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        self[i] = options.selfOf(rows ? (*rows)[i] : begin + i, nb);
      selfIds = DeviceBuffer<std::int64_t>(std::size_t(n));
      NEARSCAPE_CUDA_CHECK(
          cudaMemcpy(selfIds.get(), self.data(), sizeof(std::int64_t) * n, cudaMemcpyHostToDevice));
    }
    clock.mark("queries");
    const PassResult r = searchPass(
        q, n, selfIds.get(), deviceBase, nb, d, maxBaseNorm2, metric, p, k, tiles, *resources,
        rows ? *rows : std::vector<std::int64_t>{}, begin, ids, dists, job,
        options.progressFrom + options.progressSpan * from, options.progressSpan * span, clock);
    candidates += r.candidates;
    fusedTiles = fusedTiles || r.fused;
    std::vector<std::int64_t> overflow;
    for (const auto local : r.overflow)
      overflow.push_back(rows ? (*rows)[std::size_t(local)] : begin + local);
    return overflow;
  };

  std::vector<std::int64_t> remaining;
  std::int64_t scannedDirectly = 0; // rows left by the float16 pass, scanned on the device
  // A share's lists (RunOptions::share), and the rows its pass could not bound.
  ShareLists shareLists;
  std::vector<std::int64_t> unbounded;
  std::string how;
  if (!params.reducedPrecision) {
    if (options.share)
      return {};
    packBase(Precision::Fp32);
    remaining = pass(Precision::Fp32, 0, nq, nullptr, 0.0, 1.0);
    how = "float32 candidates";
  } else {
    // One float16 pass is about 16× cheaper than float32 (tensor cores at twice TF32's rate,
    // half the bytes) but its bound is loose: on data of high intrinsic dimension (many
    // near-equal distances) most rows would overflow. A probe of the first rows decides; rows
    // that still overflow are scanned directly, or redone with 3xTF32 where they are many.
    try {
      packBase(Precision::Fp16);
      const std::int64_t probe =
          std::min<std::int64_t>(nq, std::clamp<std::int64_t>(nq / 16, 64, 2048));
      remaining = pass(Precision::Fp16, 0, probe, nullptr, 0.0, 0.05);
      const bool halfWorks = remaining.size() * 50 <= std::size_t(probe); // ≤ 2% overflow
      if (options.share && !halfWorks)
        return {}; // the caller splits the rows instead
      if (halfWorks) {
        // A graph's pairs scored once for both rows, where its lists fit: all rows again. Up to
        // k = 32 (the delegates' first thresholds): manifold 1M × 128 on an H100, k = 10: 0.73
        // against 0.95 s; k = 96 appends so many candidates a band that it took 1.96 against
        // 1.44 s (docs/benchmarks.md).
        // Not in a streamed chunk: its budget is the stream's, partly held by its buffers.
        // Every row's list is resident: where they do not fit at fusedCap(k), shorter ones (no
        // shorter than the cuBLAS path's) — a row past its list is redone below, as any row its
        // bound leaves. Manifold 10M × 96 at 2,048 would take 164 GB; at 1,024, 82.
        auto pairsFit = [&] {
          return pairsBytes(nb, tiles, k, options.share != nullptr) +
                     std::uint64_t(nb) * rowBytes(d) <=
                 deviceBudget(context);
        };
        tiles.pairsCap = fusedCap(k);
        while (!pairsFit() && tiles.pairsCap / 2 >= int(knn::candidateCap(k)))
          tiles.pairsCap /= 2;
        const bool pairs = options.sameRows && options.selfOffset == 0 && !options.deviceBase &&
                           tiles.fused && params.pairedSweeps && nq == nb && k <= kPairsMaxK &&
                           nb >= 2 * pairGroupRows(tiles) && fusedPairsFit(d) && pairsFit();
        if (options.share && !pairs)
          return {};
        if (pairs) {
          const PassResult r =
              options.share
                  ? pairsShareRun(deviceBase, nb, d, maxBaseNorm2, metric, k, tiles, *resources,
                                  options, job, clock, shareLists, ids, dists)
                  : pairsPass(deviceBase, nb, d, maxBaseNorm2, metric, k, tiles, *resources, ids,
                              dists, job, options.progressFrom + options.progressSpan * 0.05,
                              options.progressSpan * 0.9, clock);
          remaining = r.overflow;
          unbounded = r.overflow;
          candidates = r.candidates;
          fusedTiles = true;
        } else if (probe < nq) {
          const auto more = pass(Precision::Fp16, probe, nq, nullptr, 0.05, 0.9);
          remaining.insert(remaining.end(), more.begin(), more.end());
        }
        how = pairs        ? "float16 candidates, fused tiles, each pair once"
              : fusedTiles ? "float16 candidates, fused tiles"
                           : "float16 candidates";
        if (!remaining.empty() && directRowsFit(remaining.size(), nb, context)) {
          job.check(); // a direct scan has no checks of its own
          how += "; " + std::to_string(remaining.size()) + " rows scanned directly";
          try {
            directRowsOnDevice(
                deviceBase.raw, nb, d, queries, remaining, metric, k,
                [&](std::int64_t i) { return options.selfOf(i, nb); }, ids, dists,
                resources->stream());
            scannedDirectly = std::int64_t(remaining.size());
            remaining.clear();
          } catch (const DeviceOutOfMemory&) {
            cudaGetLastError(); // the CPU's direct scan below takes the rows
          }
          clock.mark("direct rows");
        } else if (!remaining.empty()) {
          how += "; 3xTF32 for " + std::to_string(remaining.size()) + " rows";
          packBase(Precision::SplitTf32);
          const auto redo = remaining;
          remaining = pass(Precision::SplitTf32, 0, 0, &redo, 0.95, 0.05);
        }
      } else {
        packBase(Precision::SplitTf32);
        auto again = remaining;
        remaining = probe < nq ? pass(Precision::SplitTf32, probe, nq, nullptr, 0.05, 0.9)
                               : std::vector<std::int64_t>{};
        if (!again.empty()) {
          const auto more = pass(Precision::SplitTf32, 0, 0, &again, 0.95, 0.05);
          remaining.insert(remaining.end(), more.begin(), more.end());
        }
        how = "3xTF32 candidates";
      }
    } catch (const OutsideHalfRange&) {
      if (options.share)
        return {};
      packBase(Precision::SplitTf32);
      remaining = pass(Precision::SplitTf32, 0, nq, nullptr, 0.0, 1.0);
      how = "3xTF32 candidates (values beyond float16's range)";
    }
  }

  if (options.share) { // the rows still left go back to the caller, which has the CPU's scan
    gpu::PairsShare& share = *options.share;
    if (shareLists.deviceIds.size() > 0) {
      std::vector<std::int64_t> whole = wholeRows(unbounded, remaining);
      MergedOnFirst merged = mergeOnFirstShare(
          *options.exchange, options.part, options.parts, nb, k, shareLists.deviceIds.get(),
          shareLists.deviceDist64.get(), WholeRows{&whole, ids, dists}, remaining, candidates, ids,
          dists, resources->stream(), job);
      clock.mark("merge");
      share.mergedOnFirst = true;
      if (options.part == 0) {
        share.graphIds = idsOwned;
        share.graphDistances = distsOwned;
        share.overflow = std::move(merged.overflow);
        share.candidates = merged.candidates;
      }
    } else {
      finishShare(share, nb, k, shareLists.ids, shareLists.dist64, unbounded, remaining, ids,
                  dists);
      share.candidates = candidates;
    }
    share.report.device = resources->properties().name;
    share.report.setMethod(KnnMethod::Exact);
    share.report.precision = how;
    job.progress(options.progressFrom + options.progressSpan, "exact kNN (GPU)");
    return {};
  }

  // Rows whose bound kept too many candidates even so: a direct exact scan on the CPU.
  job.check();
  knn::directRows(
      queries, remaining, base, metric, k, [&](std::int64_t i) { return options.selfOf(i, nb); },
      ids, dists, threads);
  job.check();
  clock.mark("cpu rows");

  KnnResult result;
  result.ids = Matrix<std::int32_t>(ids, nq, k, idsOwned);
  result.distances = Matrix<float>(dists, nq, k, distsOwned);
  result.backend = Backend::Cuda;
  result.report.device = resources->properties().name;
  result.report.setMethod(KnnMethod::Exact);
  result.report.precision = how;
  result.fallbackRows = scannedDirectly + std::int64_t(remaining.size());
  result.candidatesPerRow =
      nq > result.fallbackRows ? double(candidates) / double(nq - result.fallbackRows) : 0.0;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  clock.mark("finish");
  job.progress(options.progressFrom + options.progressSpan, "exact kNN (GPU)");
  return result;
}

/// Whether float16 passes may sweep with the fused kernel (cuda/FusedTiles.cuh) on this device.
bool fusedApplies(int d, int k, const ExactKnnParams& params) {
  return params.fusedTiles && params.reducedPrecision && knn::gpuFusedTiles(d, k) &&
         fusedTilesFit(d);
}

/// Device bytes a resident row may take: raw, packed (3xTF32: 12 bytes a value at worst), norm.
std::uint64_t rowBytes(int d) {
  return 16ull * std::uint64_t(d) + 8;
}

/// The device memory a search may use: the budget when one is set, within what is free.
std::uint64_t deviceBudget(const Context& context) {
  std::size_t free = 0, total = 0;
  NEARSCAPE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::uint64_t usable = std::uint64_t(free) / 10 * 9;
  return context.memoryBudget > 0 ? std::min<std::uint64_t>(context.memoryBudget, usable) : usable;
}

/// Merges a chunk's exact top-k (base ids from `idOffset`) into the running top-k of the same
/// rows: both sorted by (distance, id), the chunks disjoint.
void mergeChunk(const KnnResult& part, std::int64_t rowOffset, std::int64_t idOffset, int k,
                std::vector<std::int32_t>& ids, std::vector<float>& dists) {
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < part.ids.rows(); ++r) {
    std::int32_t* id = ids.data() + (rowOffset + r) * k;
    float* dist = dists.data() + (rowOffset + r) * k;
    const std::int32_t* pid = part.ids.row(r);
    const float* pdist = part.distances.row(r);
    std::vector<std::int32_t> mid(static_cast<std::size_t>(k));
    std::vector<float> mdist(static_cast<std::size_t>(k));
    int a = 0, b = 0;
    for (int c = 0; c < k; ++c) {
      const std::int32_t bid = std::int32_t(pid[b] + idOffset);
      const bool takeA = id[a] >= 0 && (dist[a] < pdist[b] || (dist[a] == pdist[b] && id[a] < bid));
      mid[c] = takeA ? id[a] : bid;
      mdist[c] = takeA ? dist[a++] : pdist[b++];
    }
    std::copy(mid.begin(), mid.end(), id);
    std::copy(mdist.begin(), mdist.end(), dist);
  }
}

/// Data beyond the device's memory or the budget: the base goes up in chunks from host memory,
/// the next chunk's copy (its own host thread and stream) overlapping the current chunk's work;
/// each block of queries is searched against each chunk exactly, and the chunks' top-k are
/// merged (ties by id). Chunks hold at least 2(k + 1) rows, so every chunk yields k results.
KnnResult streamOnDevice(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                         Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                         const ExactKnnParams& params, std::uint64_t budget) {
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t nq = queries.rows, nb = base.rows;
  const int d = int(base.cols);
  Tiles tiles{8192, 8192};
  tiles.fused = fusedApplies(d, k, params);
  while (tileBytes(tiles, k) > budget / 4 && tiles.bq > 256) {
    tiles.bq /= 2;
    tiles.bb /= 2;
  }
  const std::uint64_t left = budget > tileBytes(tiles, k) ? budget - tileBytes(tiles, k) : 0;
  // A third for a block of queries (raw and packed), two thirds for two raw chunks and one
  // packed.
  const std::int64_t blockRows = std::int64_t(left / 3 / rowBytes(d));
  const std::int64_t chunkRows = std::int64_t(left / 3 * 2 / (rowBytes(d) + 8ull * d));
  if (blockRows < 1 || chunkRows < 2 * (std::int64_t(k) + 1))
    throw DeviceOutOfMemory("the GPU memory budget (" + std::to_string(budget) +
                            " bytes) holds too few rows to stream the base in chunks");
  const std::int64_t chunks = (nb + chunkRows - 1) / chunkRows;
  const std::int64_t blocks = (nq + blockRows - 1) / blockRows;
  auto chunkAt = [&](std::int64_t c) { return nb * c / chunks; };
  auto blockAt = [&](std::int64_t b) { return nq * b / blocks; };
  auto rows = [&](const MatrixView<float>& m, std::int64_t a, std::int64_t b) {
    return MatrixView<float>{m.row(a), b - a, m.cols};
  };

  const std::int64_t largest = (nb + chunks - 1) / chunks + 1;
  DeviceBuffer<float> raw[2] = {DeviceBuffer<float>(std::size_t(largest) * d),
                                DeviceBuffer<float>(std::size_t(largest) * d)};
  std::int64_t holds[2] = {-1, -1}; // the chunk each buffer holds
  auto upload = [&](std::int64_t c) {
    const int slot = int(c % 2);
    if (holds[slot] == c)
      return;
    holds[slot] = -1;
    NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
    copyToDevice(raw[slot].get(), base.row(chunkAt(c)),
                 sizeof(float) * std::size_t(chunkAt(c + 1) - chunkAt(c)) * std::size_t(d));
    holds[slot] = c;
  };

  std::vector<std::int32_t> ids(static_cast<std::size_t>(nq * k), -1);
  std::vector<float> dists(ids.size(), std::numeric_limits<float>::infinity());
  RunReport report; // the first chunk's: device, method, precision
  std::int64_t fallbackRows = 0;
  double candidates = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t q0 = blockAt(b), q1 = blockAt(b + 1);
    upload(0);
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::future<void> next;
      if (c + 1 < chunks)
        next = std::async(std::launch::async, upload, c + 1);
      const std::int64_t c0 = chunkAt(c), c1 = chunkAt(c + 1);
      RunOptions options;
      options.deviceBase = raw[c % 2].get();
      options.sameRows = excludeSelf && q0 == c0 && q1 == c1;
      options.selfOffset = excludeSelf ? q0 - c0 : kNoSelf;
      options.progressFrom = double(b * chunks + c) / double(blocks * chunks);
      options.progressSpan = 1.0 / double(blocks * chunks);
      const KnnResult part = runOnDevice(rows(queries, q0, q1), rows(base, c0, c1), k, metric,
                                         options, context, job, params, tiles);
      mergeChunk(part, q0, c0, k, ids, dists);
      fallbackRows += part.fallbackRows;
      candidates += part.candidatesPerRow * double(q1 - q0);
      if (report.device.empty())
        report = part.report;
      if (next.valid())
        next.get();
    }
  }
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), nq, k);
  result.distances = Matrix<float>(std::move(dists), nq, k);
  result.backend = Backend::Cuda;
  result.report = report;
  result.report.streamedChunks = int(chunks);
  if (blocks > 1)
    result.report.detail = std::to_string(blocks) + " query blocks";
  result.fallbackRows = fallbackRows;
  result.candidatesPerRow = candidates / double(nq); // summed over the chunks
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

/// The tiles of a search on this device: 8,192 a side (or as asked), fused where it applies.
Tiles searchTiles(int d, int k, const ExactKnnParams& params) {
  // Large tiles: fewer, larger GEMMs, and a first tile's threshold drawn from more columns
  // (H200, fashion-mnist graph: 8,192² 0.052 s, 4,096 × 16,384 0.056 s, 4,096² 0.085 s).
  Tiles tiles{params.queryTile > 0 ? int(params.queryTile) : 8192,
              params.baseTile > 0 ? int(params.baseTile) : 8192};
  // Fused sweeps want a full wave of blocks: every one of them reads each base row from L2.
  tiles.fused = fusedApplies(d, k, params);
  if (tiles.fused && params.queryTile == 0)
    tiles.fusedBq = std::max(tiles.bq, fusedWaveRows(d));
  return tiles;
}

} // namespace

std::optional<gpu::PairsShare> pairsShare(const MatrixView<float>& data, int k, Metric metric,
                                          int part, int parts, const Context& context,
                                          JobControl& job, const ExactKnnParams& params,
                                          knn::PairsExchange* exchange) {
  // Whatever the way out, the other shares stop waiting for this one; where it has no result
  // for the caller, they stop too (the caller's graph needs every share).
  struct Leave {
    knn::PairsExchange* exchange;
    int part;
    bool withResult = false;
    ~Leave() {
      if (exchange)
        exchange->leave(part, withResult);
    }
  } leave{exchange, part};
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  const int d = int(data.cols);
  const Tiles tiles = searchTiles(d, k, params);
  // What runOnDevice asks of the paired sweeps that needs no data; the probe and the memory
  // are its own.
  if (!params.reducedPrecision || !params.pairedSweeps || !tiles.fused || k > kPairsMaxK ||
      data.rows < 2 * pairGroupRows(tiles) || !fusedPairsFit(d))
    return std::nullopt;
  gpu::PairsShare share;
  RunOptions options;
  options.sameRows = true;
  options.selfOffset = 0;
  options.share = &share;
  options.part = part;
  options.parts = parts;
  options.exchange = exchange;
  try {
    runOnDevice(data, data, k, metric, options, context, job, params, tiles);
  } catch (const DeviceOutOfMemory&) {
    cudaGetLastError();
    return std::nullopt; // the rows' split streams or tiles what does not fit
  } catch (const ThresholdExchange::GaveUp&) {
    return std::nullopt; // a cheaper way pays (the caller's probe, beside this share)
  }
  // Ran beside the caller's probe of a cheaper way (STEP's clusters): wanted only where it
  // does not pay.
  if ((share.ids.rows() == 0 && !share.mergedOnFirst) || (exchange && !exchange->awaitGo(job)))
    return std::nullopt;
  leave.withResult = true;
  return share;
}

KnnResult exactSearch(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                      Metric metric, bool excludeSelf, const Context& context, JobControl& job,
                      const ExactKnnParams& params) {
  if (int(knn::candidateCap(k)) > kMaxCap)
    throw Unsupported("the GPU exact search takes k ≤ " + std::to_string(kMaxCap / 4) + " for now");
  NEARSCAPE_CUDA_CHECK(cudaSetDevice(context.device));
  const int d = int(base.cols);
  Tiles tiles = searchTiles(d, k, params);
  auto needed = [&] {
    return std::uint64_t(base.rows) * rowBytes(d) +
           (excludeSelf ? 0 : std::uint64_t(queries.rows) * rowBytes(d)) + tileBytes(tiles, k);
  };
  // A wave of query rows costs gigabytes of lists: under a budget, fewer rows before streaming.
  while (needed() > deviceBudget(context) && tiles.fusedBq > tiles.bq)
    tiles.fusedBq = std::max(tiles.bq, tiles.fusedBq / 2);
  if (needed() > deviceBudget(context))
    return streamOnDevice(queries, base, k, metric, excludeSelf, context, job, params,
                          deviceBudget(context));
  RunOptions options;
  options.sameRows = excludeSelf;
  options.selfOffset = excludeSelf ? 0 : kNoSelf;
  // Out of device memory all the same (other users of the GPU): smaller query tiles, then the
  // base streamed within half of what is free; the caller falls back to the CPU after.
  for (;;) {
    try {
      return runOnDevice(queries, base, k, metric, options, context, job, params, tiles);
    } catch (const DeviceOutOfMemory&) {
      cudaGetLastError();
      if (tiles.fusedBq > tiles.bq) {
        tiles.fusedBq = std::max(tiles.bq, tiles.fusedBq / 4);
        continue;
      }
      if (tiles.bq <= 256)
        break;
      tiles.bq /= 4;
      tiles.fusedBq = 0;
    }
  }
  return streamOnDevice(queries, base, k, metric, excludeSelf, context, job, params,
                        deviceBudget(context) / 2);
}

} // namespace nearscape::cuda
