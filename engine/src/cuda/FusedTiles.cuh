#pragma once
// The exact path's float16 tiles scored and filtered in one kernel (internal to the exact
// search): tensor-core dot products of a block of query rows against a sweep of base rows, each
// compared with its row's threshold in registers, so the query × base matrix never goes through
// device memory. At 1M × 1M that matrix is 4 TB of writes and reads, far more than the GEMM's
// own time; fused, the kernel is bound by the tensor cores. Candidates are appended to the same
// lists as the cuBLAS path's filter (CandidateLists.cuh), within the same rounding bound.

#include "cuda/CandidateLists.cuh"
#include "nearscape/core/Metric.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace nearscape::cuda {

/// Whether the current device runs the kernel for rows of `d` dimensions (as knn::gpuFusedTiles
/// takes): compute capability 8.0 or later (cp.async, mma.m16n8k16) and a block's shared memory
/// for 384 rows of d halves (d = 256 needs Hopper's 227 KB; d = 128 fits an A100, not an RTX).
bool fusedTilesFit(int d);

/// Whether the current device also runs the paired sweeps (fusedPairs) for rows of `d`
/// dimensions: fusedTilesFit, and shared memory for the columns' bounds and the appends' queue.
bool fusedPairsFit(int d);

/// Query rows that keep every streaming multiprocessor of the current device busy in one wave
/// (d: as knn::gpuFusedTiles takes).
int fusedWaveRows(int d);

/// Where the sweep's candidates go, and where rows that need a prune are queued.
struct FusedLists {
  RowState* states; ///< per query row; its threshold stays fixed during the sweep
  Candidate* lists; ///< capacity `capacity` a row
  int capacity;     ///< a row past it is marked overflowed
  int pruneAbove;   ///< rows holding more are queued for the prune
  int* pruneList;   ///< the queue
  int* pruneCount;  ///< its length
  /// After the sweep a row's threshold is the k-th smallest upper estimate of its list: lowered
  /// by the sweep itself where one block sweeps all of a row's columns, by the prune (rows with
  /// more than k queued) where several do.
  int k;
};

/// A graph's diagonal: each query row's columns counted from its own group's first row. The rows
/// of the graph (`n`) are in groups of `groupRows` (a multiple of 128; the last group also holds
/// the rest), the queries start at row `firstRow` (a group's first), and a query row's columns
/// [colBegin, colEnd) are offsets in its own group, cut at the group's end. groupRows = 0: the
/// columns are the base's rows themselves.
struct OwnGroups {
  std::int64_t firstRow = 0, groupRows = 0, n = 0;
};

/// Scores query rows [0, rows) of `queries` (float16, packed as for the GEMM, `d` wide) against
/// base rows [colBegin, colEnd) of `base` (or of each row's own group: `own`) and appends every
/// candidate whose lower estimate lies at or below its row's threshold. `selfIds` (may be null):
/// the base id each query may not return. `alpha` undoes the two packings' scales. Throws
/// DeviceError.
void fusedCandidates(const __half* queries, int rows, const float* queryNorms,
                     const std::int64_t* selfIds, const __half* base, const float* baseNorms,
                     float maxBaseNorm2, std::int64_t colBegin, std::int64_t colEnd, int d,
                     float alpha, Metric metric, const FusedLists& out, cudaStream_t stream,
                     OwnGroups own = {});

/// The dot products of query rows [0, rows) against base rows [colBegin, colEnd), times
/// `alpha`, into `dots` (row-major, ldDots apart, even; column 0 is base row colBegin, of the
/// row's own group with `own`): the
/// first tile's GEMM with the sweep's own tiles, so that a float16 search needs no cuBLAS (whose
/// start is much of a cold search's time: docs/benchmarks.md, session 16). Float32 sums of
/// float16 products, as cuBLAS's, within the same bound. Throws DeviceError.
void fusedDots(const __half* queries, int rows, const __half* base, const float* baseNorms,
               std::int64_t colBegin, std::int64_t colEnd, int d, float alpha, float* dots,
               int ldDots, cudaStream_t stream, OwnGroups own = {});

/// A graph's sweep band (all `n` rows of `rows` are both queries and base, packed alike): rows
/// in groups of `groupRows` (a multiple of 128; the last group also holds the rest), each row of
/// group g scored once against each row of groups [g + bandLo, g + bandHi) and every value
/// tested for both rows — each against its own row's fixed threshold, appended to its list in
/// `out` (all n rows). `largestCoefA` (device): the largest coefA of the rows' states. Rows are
/// queued for the prune when they hold more than k. With `parts` > 1 only block rows `part`,
/// `part` + parts, … of the band (128 rows each) are scored: the band's share of one device of
/// several, each pair still scored once over all of them. Throws DeviceError.
void fusedPairs(const __half* rows, const float* norms, std::int64_t n, float maxBaseNorm2,
                std::int64_t groupRows, int bandLo, int bandHi, int d, float alpha, Metric metric,
                const float* largestCoefA, const FusedLists& out, cudaStream_t stream, int part = 0,
                int parts = 1);

} // namespace nearscape::cuda
