#pragma once
// Feeding a GEMM tile's approximate distances to the candidate rows of an exact search (internal).
//
// Blocks of 16 entries are first compared with their thresholds together (a loop the compiler
// vectorises), and only a block holding an entry within a threshold is fed entry by entry. After
// a row's first tile nearly every block is ruled out, so a tile is scanned at about the speed of
// reading it; the entry-by-entry scan it replaces took 4 ns an entry, 1.3 of the 6.4 core-seconds
// of fashion-mnist 20k's graph on 2 cores (docs/benchmarks.md, issue 43, session 25).

#include "knn/CandidateRow.h"
#include "nearscape/core/Metric.h"

#include <cstdint>

namespace nearscape::knn {

/// Which code compares the blocks: AVX-512 bit masks where the CPU has them (`best`), or the
/// portable loop every x86-64 and other CPU runs (`portable`; tests compare the two).
enum class ScanKernel { best, portable };

/// Feeds one row of a C tile (`c`: the dots of one packed query with `cols` packed base rows) to
/// `row`: each entry within the row's threshold, as id baseStart + j, except id `skip` (or −1).
void feedRow(Metric metric, const float* c, std::int64_t cols, float queryNorm,
             const float* baseNorms, std::int64_t baseStart, std::int64_t skip, CandidateRow& row,
             ScanKernel kernel = ScanKernel::best);

/// Feeds a tile pair's C (rows × cols, row stride ldc: the dots of tile A's packed rows with tile
/// B's) to both tiles' rows, for the kNN graph (the distance matrix is symmetric): entry (i, j)
/// goes to aRows[i] as id bStart + j and to bRows[j] as id aStart + i, each when within that
/// row's threshold. `upper`: A and B are one tile (aRows == bRows) and only entries j > i are
/// read — the upper triangle a SYRK writes; each pair is seen once and no row meets itself.
/// `columnThresholds`: scratch of `cols` floats. The caller owns every row of both tiles while
/// this runs. Rows not yet pruned (their threshold still +∞) are pruned at the end, so that the
/// next tile meets a finite threshold.
void feedPair(Metric metric, const float* C, std::int64_t rows, std::int64_t cols, std::int64_t ldc,
              const float* aNorms, std::int64_t aStart, const float* bNorms, std::int64_t bStart,
              bool upper, CandidateRow* aRows, CandidateRow* bRows, float* columnThresholds,
              ScanKernel kernel = ScanKernel::best);

} // namespace nearscape::knn
