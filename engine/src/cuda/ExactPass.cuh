#pragma once
// One pass of the exact GEMM path over a set of query rows (internal to the exact search):
// GEMM tiles of candidates, each row keeping every candidate within its proven rounding bound
// of its k-th (knn::gemmBoundTerms; threshold filtering in the spirit of Dr. Top-k's delegate
// filtering, §4.2), pruned by a radix select, re-checked in float64 and sorted on the device.

#include "cuda/ExactRows.cuh"
#include "cuda/PhaseClock.cuh"
#include "cuda/Resources.cuh"
#include "nearscape/core/JobControl.h"

#include <cstdint>
#include <vector>

namespace nearscape::knn {
class PairsExchange; // knn/PairsExchange.h
}

namespace nearscape::cuda {

/// Candidates a row may hold after a prune: the pass takes k ≤ kMaxCap / 4.
constexpr int kMaxCap = 8192;

/// Query and base rows of one GEMM tile. `fused`: float16 passes score the base rows after the
/// first tile with the fused kernel (FusedTiles.cuh) where it applies, in sweeps of
/// kFusedSweep rows.
struct Tiles {
  int bq;
  int bb;
  bool fused = false;
  int fusedBq = 0; ///< query rows of a fused pass (a wave of blocks); 0: bq
  /// Candidates a row's list holds in pairsPass (every row's list is resident); 0: fusedCap(k).
  /// Smaller where the lists would not fit otherwise (10M rows at 2,048 take 164 GB).
  int pairsCap = 0;
};

/// Base rows of the widest fused sweep: a few milliseconds of work between checks for a stop.
constexpr std::int64_t kFusedSweep = 131072;

/// Candidates a row may hold after a prune in a fused pass: 8× the cuBLAS path's. Manifold 1M ×
/// 128 has 0.6% of its rows past 4×, 0.02% past 8× (docs/benchmarks.md); they are scanned
/// directly, or take 3xTF32 where they are many (ExactKnn.cu).
int fusedCap(int k);

/// What one pass over a set of query rows produced.
struct PassResult {
  std::vector<std::int64_t> overflow; ///< local query rows whose margin kept too many candidates
  std::int64_t candidates = 0;        ///< candidates re-checked, summed over the other rows
  bool fused = false;                 ///< the fused kernel scored tiles after the first
};

/// Exact search of the `nq` query rows in `q` against `base` (both packed for `precision`);
/// writes row i's result to outIds/outDist row targets[i] (host; targetOffset + i when
/// `targets` is empty). `selfIds` (device, may be null): the base id each query may not return.
/// Rows whose bound keeps too many candidates are returned in `overflow`, unwritten.
/// Throws DeviceOutOfMemory, DeviceError, Cancelled.
PassResult searchPass(const DeviceRows& q, std::int64_t nq, const std::int64_t* selfIds,
                      const DeviceRows& base, std::int64_t nb, int d, float maxBaseNorm2,
                      Metric metric, Precision precision, int k, Tiles tiles, Resources& resources,
                      const std::vector<std::int64_t>& targets, std::int64_t targetOffset,
                      std::int32_t* outIds, float* outDist, JobControl& job, double progressFrom,
                      double progressSpan, PhaseClock& clock);

/// Device bytes of a pass's tile buffers (C, candidate lists, results).
std::uint64_t tileBytes(Tiles tiles, int k);

/// Candidates a row's list holds in pairsPass: tiles.pairsCap, else fusedCap(k).
int pairsCapOf(Tiles tiles, int k);

/// Rows of a group of pairsPass: the base tile's width, in whole 128-row blocks.
std::int64_t pairGroupRows(Tiles tiles);

/// Device bytes pairsPass takes for a graph of `n` rows: every row's list at once, and the
/// diagonal's tile. `share`: a share's (its distances written in float64).
std::uint64_t pairsBytes(std::int64_t n, Tiles tiles, int k, bool share = false);

/// One device's share of pairsPass's pairs where several devices split them: block row part,
/// part + parts, … of each band (fusedPairs). With `exchange` each device sweeps its own run of
/// the diagonal's groups too, and after the diagonal and each band but the last the rows'
/// thresholds are lowered to the least over the shares (ShareExchange.cuh); without, every
/// device sweeps the whole diagonal (a group's rows against their own group: the first
/// thresholds). Each row's list is then the k nearest of the pairs this device scored, its
/// distances written in float64 to `dist64` (host, n × k; outDist unused) so that the shares
/// merge by the very (distance, id) order one device sorts by.
struct PairsSplit {
  int part = 0;
  int parts = 1;
  double* dist64 = nullptr;               ///< host, n × k: the rows' float64 distances
  knn::PairsExchange* exchange = nullptr; ///< where the shares meet between bands (may be null)
  /// Set (with an exchange): the lists stay on the device for mergeOnFirstShare — ids and
  /// float64 distances moved here, nothing copied back but on share 0, whose outIds/outDist
  /// (the merged graph's) are faulted in meanwhile.
  DeviceBuffer<std::int32_t>* deviceIds = nullptr;
  DeviceBuffer<double>* deviceDist64 = nullptr;
};

/// A graph's exact float16 search (the `n` rows of `rows` are queries and base, packed alike;
/// each row may not return itself) with each pair of rows scored once: rows in groups of
/// pairGroupRows, each group first against itself (dots and filter on its first quarter of
/// columns: the rows' first thresholds; fused sweeps over the rest), then in bands of groups each
/// twice as far as the last (fusedPairs), with a prune after each; re-checked in float64 as
/// searchPass. `split`: this device's share of several (PairsSplit). Needs n ≥ 2 groups and
/// pairsBytes(n, tiles, k) of device memory. Writes row i to outIds/outDist row i (host); rows
/// whose bound keeps too many candidates are returned in `overflow`, their rows unspecified. Throws
/// DeviceOutOfMemory, DeviceError, Cancelled.
PassResult pairsPass(const DeviceRows& rows, std::int64_t n, int d, float maxBaseNorm2,
                     Metric metric, int k, Tiles tiles, Resources& resources, std::int32_t* outIds,
                     float* outDist, JobControl& job, double progressFrom, double progressSpan,
                     PhaseClock& clock, const PairsSplit& split = {});

} // namespace nearscape::cuda
