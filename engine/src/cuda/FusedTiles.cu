// Float16 tiles scored and filtered in one kernel (FusedTiles.cuh). A block holds 128 query rows
// in shared memory and sweeps the base 128 rows at a time (the next step's rows copied in while
// the current ones are scored: cp.async, two buffers); eight warps each compute 64 × 32 dot
// products with mma.sync (float16 products, float32 sums, as the cuBLAS path's tensor cores) and
// test them against their rows' thresholds where they are, in registers. Every block sweeps the
// same base rows in the same order, so a step's rows come from L2 for all blocks but the first.
// Faiss §3 (tiling the GEMM), Dr. Top-k §4.2 (filtering against a threshold before any select).
#include "cuda/CudaCheck.cuh"
#include "cuda/FusedTiles.cuh"
#include "cuda/Select.cuh"
#include "knn/GemmBound.h"

#include <algorithm>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// Before sm_80 the sweep kernels are traps (fusedTilesFit refuses those GPUs), so the helpers
// and constants they would use go unused in that pass only; nvcc's warnings are errors here.
#pragma nv_diag_suppress 177
#endif

namespace nearscape::cuda {
namespace {

constexpr int kBlockRows = 128; // query rows of a block
constexpr int kStepCols = 128;  // base rows of a step
constexpr int kThreads = 256;   // eight warps, 2 × 4, each 64 rows × 32 columns
constexpr int kWarpRows = 64, kWarpCols = 32;
constexpr int kRowTiles = kWarpRows / 16; // mma.m16n8k16 tiles of a warp
constexpr int kColTiles = kWarpCols / 8;
constexpr int kPad = 8; // halves after each shared row: ldmatrix's 8 rows hit distinct banks
static_assert(kThreads >= kStepCols, "a thread owns one column of each step");

/// What a sweep does with its tiles: tests them against its rows' thresholds (Filter), writes
/// their dot products out (Dots), or tests each against both of its rows' thresholds — the
/// block's row and the column's row — for a graph whose pairs are each scored once (Pairs).
enum class SweepMode { Filter, Dots, Pairs };

int sharedStride(int d) {
  return d + kPad;
}

/// Pairs: work on its way to a row's list. Appends wait in shared memory and go to the lists
/// together: a global atomic's round trip (the row's count, shared by every block that appends
/// to it) would hold the block's next barrier for a microsecond at each one. So does a column's
/// full test, which needs the column row's state from global memory: a value that passed the
/// column's pre-test waits here too, and is tested when the queue is handed on, all at once.
struct Pending {
  std::int32_t row; ///< an append to `row`; −1 − col: a full test for column row col
  float value;      ///< the append's lower estimate; the test's dot product (times alpha)
  std::int32_t id;  ///< the append's candidate; the test's block row
};
constexpr int kQueue = 256;          ///< appends a block holds
constexpr int kFlushAt = kQueue / 2; ///< held after a step: handed to the lists

/// Per column of each of two buffers: ‖b‖², the pre-test's column part, and (Pairs) the
/// column's own row bound; then (Pairs) the queue of appends.
constexpr int columnArrays(SweepMode mode) {
  return mode == SweepMode::Pairs ? 3 : 2;
}

std::size_t sharedBytes(int d, SweepMode mode = SweepMode::Filter) {
  return std::size_t(kBlockRows + 2 * kStepCols) * sharedStride(d) * sizeof(__half) +
         std::size_t(columnArrays(mode)) * 2 * kStepCols * sizeof(float) +
         (mode == SweepMode::Pairs ? kQueue * sizeof(Pending) : 0);
}

/// Keys a warp can hold in the base tiles' shared memory once a sweep is over.
constexpr int keysPerWarp(int d) {
  return int(2 * kStepCols * (d + kPad) * sizeof(__half) / sizeof(std::uint32_t)) / (kThreads / 32);
}

__device__ inline unsigned sharedAddress(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}

/// 16 bytes from global to shared memory without a register; zeros where `valid` is false.
__device__ inline void copyAsync16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedAddress(dst)),
               "l"(src), "r"(valid ? 16 : 0));
}

__device__ inline void commitCopies() {
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int Pending> __device__ inline void waitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

/// Four 8 × 8 matrices of halves from shared memory; lane l names row l % 8 of matrix l / 8.
__device__ inline void loadMatrices(unsigned (&r)[4], const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(p)));
}

/// c += a · b for a 16 × 16 float16 tile a and a 16 × 8 tile b, sums in float32.
__device__ inline void multiplyAdd(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                   unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// 128 rows of a row-major float16 matrix (d wide), from row `first`, into shared memory (stride
/// ld), zeros past `valid` rows. d / 8 divides kThreads, so each thread copies the same 16-byte
/// part of every (kThreads · 8 / d)-th row.
__device__ __forceinline__ void copyRows(__half* dst, const __half* src, std::int64_t first,
                                         int valid, int d, int ld) {
  const int chunks = d / 8, rowsAtOnce = kThreads / chunks;
  const int row0 = threadIdx.x / chunks, part = threadIdx.x % chunks;
  const __half* from = src + first * d + part * 8;
#pragma unroll
  for (int row = row0; row < kStepCols; row += rowsAtOnce) {
    const bool ok = row < valid;
    copyAsync16(dst + row * ld + part * 8, from + (ok ? row : 0) * d, ok);
  }
}

struct SweepArgs {
  const __half* queries;
  int rows;
  const float* queryNorms;
  const std::int64_t* selfIds;
  const __half* base;
  const float* baseNorms;
  float maxBaseNorm2;
  std::int64_t colBegin, colEnd;
  float alpha;
  int metric;
  FusedLists out;
  float* dots; ///< the dots kernel's output (row-major, ldDots apart; column 0 is colBegin)
  int ldDots;
  // Pairs: the rows are the base's, in groups of groupRows (the last one holds the rest); a
  // block of group g scores the columns of groups [g + bandLo, g + bandHi).
  std::int64_t groupRows;
  int groups, bandLo, bandHi;
  int blockPart, blockParts; ///< Pairs: this launch's blocks are block rows part, part + parts, …
  const float* largestCoefA; ///< of all rows: the column side's pre-test margin
  OwnGroups own;             ///< Filter, Dots: columns counted in each row's own group
};

/// A block's rows in shared memory: the pre-test's right-hand side (+inf: none pass), and the
/// row state the full test reads.
struct BlockRows {
  float bound[kBlockRows], coefA[kBlockRows], coefB[kBlockRows], threshold[kBlockRows];
  float norm[kBlockRows];
  std::int64_t self[kBlockRows];
  int count[kBlockRows]; // while the block alone sweeps its rows' columns
  float largestCoefA;    // of the block's rows: the pre-test's margin, per column
  // What the full test needs of the launch, here so that the out-of-line test takes registers.
  std::int64_t firstRow, colEnd;
  Candidate* lists;
  RowState* states;
  int capacity, metric, rowsHere;
  bool sharedCounts;      ///< the block alone appends to its rows: counts in `count`
  const float* baseNorms; ///< of all rows (the queue's column tests)
  Pending* queue;         ///< Pairs: appends and column tests waiting (else null)
  int queued;             ///< appends made to the queue (those past kQueue went straight on)
};

/// Appends `c` to the list of `row` (of all rows; its count in global memory).
__device__ inline void appendNow(BlockRows& rows, std::int64_t row, Candidate c) {
  const int slot = atomicAdd(&rows.states[row].count, 1);
  if (slot < rows.capacity)
    rows.lists[row * rows.capacity + slot] = c;
}

/// Puts `p` in the block's queue; false where it is full.
__device__ inline bool enqueue(BlockRows& rows, Pending p) {
  const int at = atomicAdd(&rows.queued, 1);
  if (at >= kQueue)
    return false;
  rows.queue[at] = p;
  return true;
}

/// Pairs: the full test of block row r as a candidate of column row `col` (the cuBLAS path's
/// test, with the roles swapped, against that row's state: fixed during the sweep, its count
/// shared by every block), appended where it passes.
__device__ void testForColumn(BlockRows& rows, std::int64_t col, float colNorm, int r, float dot) {
  const RowState& state = rows.states[col];
  if (state.overflow)
    return;
  const float rowNorm = rows.norm[r];
  const float lower = knn::approxDistance(Metric(rows.metric), colNorm, rowNorm, dot) -
                      (state.coefA * sqrtf(rowNorm) + state.coefB);
  if (lower <= state.threshold)
    appendNow(rows, col, {lower, std::int32_t(rows.firstRow + r)});
}

/// Hands the queue's work on, all threads at once (their loads' and atomics' round trips
/// overlap), and empties it. Called by the whole block, after a barrier.
__device__ void flushQueue(BlockRows& rows) {
  const int held = min(rows.queued, kQueue);
  for (int i = threadIdx.x; i < held; i += blockDim.x) {
    const Pending p = rows.queue[i];
    if (p.row >= 0) {
      appendNow(rows, p.row, {p.value, p.id});
    } else {
      const std::int64_t col = -1 - std::int64_t(p.row);
      testForColumn(rows, col, rows.baseNorms[col], p.id, p.value);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0)
    rows.queued = 0;
  __syncthreads(); // before anyone reads the count again (the check after the last step)
}

/// The cuBLAS path's own test (ExactPass.cu's filter) for one value that passed the pre-test:
/// appended to its row's list when its lower estimate is within the row's threshold. Out of
/// line: rare, and inlined at every value of the unrolled loop it would bloat it.
__device__ __noinline__ void keepIfWithin(BlockRows& rows, int r, std::int64_t id, float baseNorm,
                                          float dot) {
  if (id >= rows.colEnd || rows.self[r] == id)
    return;
  const float lower = knn::approxDistance(Metric(rows.metric), rows.norm[r], baseNorm, dot) -
                      (rows.coefA[r] * sqrtf(baseNorm) + rows.coefB[r]);
  if (!(lower <= rows.threshold[r]))
    return;
  // A block alone on its rows counts in shared memory: a global atomic's round trip would hold
  // the block's next barrier for a microsecond. Where blocks of other columns append to the
  // same rows, the count is the row state's in global memory (Pairs: through the queue).
  if (!rows.sharedCounts) {
    const std::int64_t row = rows.firstRow + r;
    if (!rows.queue || !enqueue(rows, {std::int32_t(row), lower, std::int32_t(id)}))
      appendNow(rows, row, {lower, std::int32_t(id)});
    return;
  }
  const int at = atomicAdd(&rows.count[r], 1);
  if (at < rows.capacity)
    rows.lists[(rows.firstRow + r) * rows.capacity + at] = {lower, std::int32_t(id)};
}

/// Pairs: block row r, whose value passed the pre-test of column `col`'s row, waits in the queue
/// for its full test (testForColumn), or has it now where the queue is full.
__device__ __noinline__ void keepForColumn(BlockRows& rows, std::int64_t col, float colNorm, int r,
                                           float dot) {
  if (col >= rows.colEnd || r >= rows.rowsHere)
    return;
  if (!enqueue(rows, {std::int32_t(-1 - col), dot, r}))
    testForColumn(rows, col, colNorm, r, dot);
}

/// D, the rows' width, is a template parameter: the dot products' loop unrolls with every
/// shared-memory address an immediate offset, which halves the instructions of a step. Dots: the
/// same tiles write their dot products (times alpha) out instead of testing them — a first
/// tile's GEMM without cuBLAS, whose start a cold search would wait for. Pairs: a graph's dot
/// products are symmetric, so a block scores only columns of later groups and tests each value
/// for its column's row too (half the tiles of sweeping every row against every column).
template <int D, SweepMode Mode = SweepMode::Filter>
__global__ void __launch_bounds__(kThreads, 2) sweepKernel(SweepArgs a) {
  constexpr bool Dots = Mode == SweepMode::Dots, Pairs = Mode == SweepMode::Pairs;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // cp.async, mma.m16n8k16 and __reduce_add_sync need sm_80: fusedTilesFit refuses older GPUs.
  __trap();
#else
  extern __shared__ __align__(16) unsigned char shared[];
  constexpr int ld = D + kPad;
  __half* queryTile = reinterpret_cast<__half*>(shared);
  __half* baseTiles = queryTile + kBlockRows * ld; // two buffers of kStepCols rows
  // Per column of each buffer: ‖b‖², and the pre-test's column part: the block's largest
  // margin factor times ‖b‖ minus the norm expansion's term (‖b‖² for L2, 0 otherwise), −inf
  // past the last base row, so that nothing there passes.
  float* colNorm = reinterpret_cast<float*>(baseTiles + 2 * kStepCols * ld);
  float* colPart = colNorm + 2 * kStepCols;
  // Pairs: per column, its own row's pre-test bound (as rows.bound for the block's rows).
  float* colBound = colPart + 2 * kStepCols;
  __shared__ BlockRows rows;

  const Metric metric = Metric(a.metric);
  const bool l2 = metric == Metric::L2;
  const std::int64_t firstRow =
      (Pairs ? std::int64_t(blockIdx.x) * a.blockParts + a.blockPart : std::int64_t(blockIdx.x)) *
      kBlockRows;
  const int rowsHere = int(std::min<std::int64_t>(kBlockRows, a.rows - firstRow));

  // Row i keeps column j while approx_ij − m_ij ≤ t_i, i.e. (L2) ‖q‖² + ‖b‖² − 2α·dot − cA_i‖b‖
  // − cB_i ≤ t_i: the pre-test compares γα·dot + cA‖b‖ − term_j, with cA the block's largest
  // cA_i, against A_i − cB_i − t_i − slack. The slack (2^-16 of every magnitude involved, a few
  // hundred times the pre-test's float rounding) makes it a superset; what passes gets the full
  // test.
  if (threadIdx.x == 0) {
    rows.largestCoefA = 0;
    rows.firstRow = firstRow;
    rows.lists = a.out.lists;
    rows.states = a.out.states;
    rows.capacity = a.out.capacity;
    rows.metric = a.metric;
    rows.rowsHere = rowsHere;
    rows.sharedCounts = gridDim.y == 1 && !Pairs;
    rows.baseNorms = a.baseNorms;
    rows.queue = Pairs ? reinterpret_cast<Pending*>(colBound + 2 * kStepCols) : nullptr;
    rows.queued = 0;
  }
  __syncthreads();
  // A row's pre-test bound, from its state and squared norm.
  auto preTestBound = [&](const RowState& st, float qn) {
    const float rowTerm = l2 ? qn : metric == Metric::Cosine ? 1.0f : 0.0f;
    const float scale = fabsf(rowTerm) + a.maxBaseNorm2 + 2.0f * sqrtf(qn) * sqrtf(a.maxBaseNorm2) +
                        st.coefA * sqrtf(a.maxBaseNorm2) + st.coefB + fabsf(st.threshold);
    const float slack = scale * (1.0f / 65536.0f);
    return st.overflow ? INFINITY : rowTerm - st.coefB - st.threshold - slack;
  };
  for (int r = threadIdx.x; r < kBlockRows && !Dots; r += kThreads) { // Dots: no row state
    const std::int64_t row = firstRow + r;
    const RowState st = r < rowsHere ? a.out.states[row] : RowState{0, 0, 0, 0, 1};
    const float qn = r < rowsHere ? a.queryNorms[row] : 0.0f;
    rows.bound[r] = preTestBound(st, qn);
    rows.coefA[r] = st.coefA;
    rows.coefB[r] = st.coefB;
    rows.threshold[r] = st.threshold;
    rows.norm[r] = qn;
    rows.self[r] = r < rowsHere && a.selfIds ? a.selfIds[row] : -1;
    rows.count[r] = st.count;
    if (!st.overflow) // non-negative floats order as their bits
      atomicMax(reinterpret_cast<int*>(&rows.largestCoefA), __float_as_int(st.coefA));
  }

  constexpr int chunks = D / 8;
  for (int c = threadIdx.x; c < kBlockRows * chunks; c += kThreads) {
    const int row = c / chunks, part = c % chunks;
    const bool ok = row < rowsHere;
    copyAsync16(queryTile + row * ld + part * 8,
                a.queries + (firstRow + (ok ? row : 0)) * D + part * 8, ok);
  }
  __syncthreads(); // largestCoefA
  const float coefA = rows.largestCoefA;
  std::int64_t colBegin, colEnd, dotsOrigin = 0;
  if constexpr (Pairs) { // the columns of groups [g + bandLo, g + bandHi), the last one longer
    const std::int64_t g = firstRow / a.groupRows; // never the last group: it has no later one
    colBegin = (g + a.bandLo) * a.groupRows;
    colEnd = g + a.bandHi >= a.groups ? a.colEnd : (g + a.bandHi) * a.groupRows;
  } else { // column part blockIdx.y of gridDim.y (few query rows: more blocks than row blocks)
    std::int64_t lo = a.colBegin, hi = a.colEnd;
    if (a.own.groupRows > 0) { // offsets in the block's own group (its rows never straddle two)
      const std::int64_t groups = a.own.n / a.own.groupRows;
      const std::int64_t g = std::min((a.own.firstRow + firstRow) / a.own.groupRows, groups - 1);
      const std::int64_t start = g * a.own.groupRows;
      const std::int64_t end = g + 1 == groups ? a.own.n : start + a.own.groupRows;
      lo = std::min(start + a.colBegin, end);
      hi = std::min(start + a.colEnd, end);
    }
    dotsOrigin = lo;
    const std::int64_t stepsAll = (hi - lo + kStepCols - 1) / kStepCols;
    const std::int64_t partSteps = (stepsAll + gridDim.y - 1) / gridDim.y;
    colBegin = lo + blockIdx.y * partSteps * kStepCols;
    colEnd = std::min(hi, colBegin + partSteps * kStepCols);
  }
  if (threadIdx.x == 0)
    rows.colEnd = colEnd;
  const int steps = colEnd > colBegin ? int((colEnd - colBegin + kStepCols - 1) / kStepCols) : 0;
  // Thread t < kStepCols owns column t of each step; its norm is loaded a step ahead into a
  // register, so the load's latency hides behind a step of work.
  auto columnNorm = [&](int step) {
    const std::int64_t col = colBegin + std::int64_t(step) * kStepCols + threadIdx.x;
    return threadIdx.x < kStepCols && step < steps && col < colEnd ? a.baseNorms[col] : -1.0f;
  };
  float nextNorm = columnNorm(0);
  // Pairs: the columns' own row states, loaded a step ahead too.
  auto columnState = [&](int step) {
    const std::int64_t col = colBegin + std::int64_t(step) * kStepCols + threadIdx.x;
    return Pairs && threadIdx.x < kStepCols && step < steps && col < colEnd
               ? a.out.states[col]
               : RowState{0, 0, 0, 0, 1};
  };
  RowState nextState = columnState(0);
  auto stage = [&](int step) {
    const int buffer = step % 2;
    const std::int64_t first = colBegin + std::int64_t(step) * kStepCols;
    copyRows(baseTiles + buffer * kStepCols * ld, a.base, first,
             int(std::min<std::int64_t>(kStepCols, colEnd - first)), D, ld);
    commitCopies();
    if (threadIdx.x < kStepCols) {
      const float bn = nextNorm;
      colNorm[buffer * kStepCols + threadIdx.x] = bn;
      colPart[buffer * kStepCols + threadIdx.x] =
          bn >= 0.0f ? coefA * sqrtf(bn) - (l2 ? bn : 0.0f) : -INFINITY;
      if constexpr (Pairs)
        colBound[buffer * kStepCols + threadIdx.x] = preTestBound(nextState, fmaxf(bn, 0.0f));
    }
    nextNorm = columnNorm(step + 1);
    if constexpr (Pairs)
      nextState = columnState(step + 1);
  };
  if (steps > 0) {
    stage(0);
  } else { // no columns here: the query rows' copies must land before the block ends
    commitCopies();
    waitCopies<0>();
  }

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warpRow = (warp / 4) * kWarpRows, warpCol = (warp % 4) * kWarpCols;
  const float dotScale = (l2 ? 2.0f : 1.0f) * a.alpha;
  // Pairs: the block's rows as candidates of the columns' rows — the pre-test's row part (the
  // largest margin factor of all rows times ‖q‖, minus ‖q‖² for L2), −inf past the last row.
  float rowPart[kRowTiles][2];
  if constexpr (Pairs) {
    const float largest = *a.largestCoefA;
#pragma unroll
    for (int m = 0; m < kRowTiles; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = warpRow + m * 16 + lane / 4 + 8 * h;
        const float qn = rows.norm[r];
        rowPart[m][h] = r < rowsHere ? largest * sqrtf(qn) - (l2 ? qn : 0.0f) : -INFINITY;
      }
  }
  for (int step = 0; step < steps; ++step) {
    if (step + 1 < steps) {
      stage(step + 1);
      waitCopies<1>();
    } else {
      waitCopies<0>();
    }
    __syncthreads();
    const int buffer = step % 2;
    const __half* baseTile = baseTiles + buffer * kStepCols * ld;
    float acc[kRowTiles][kColTiles][4] = {};
#pragma unroll
    for (int k0 = 0; k0 < D; k0 += 16) {
      unsigned fa[kRowTiles][4];
#pragma unroll
      for (int m = 0; m < kRowTiles; ++m)
        loadMatrices(fa[m], queryTile + (warpRow + m * 16 + lane % 8 + (lane / 8) % 2 * 8) * ld +
                                k0 + lane / 16 * 8);
#pragma unroll
      for (int n = 0; n < kColTiles; n += 2) {
        unsigned fb[4];
        loadMatrices(fb, baseTile + (warpCol + n * 8 + lane % 8 + lane / 16 * 8) * ld + k0 +
                             (lane / 8) % 2 * 8);
#pragma unroll
        for (int m = 0; m < kRowTiles; ++m) {
          multiplyAdd(acc[m][n], fa[m], fb[0], fb[1]);
          multiplyAdd(acc[m][n + 1], fa[m], fb[2], fb[3]);
        }
      }
    }

    // The accumulators' layout: value e of half h of tile (m, n) is row m·16 + lane/4 + 8·h,
    // column n·8 + 2·(lane%4) + e of the warp's part. The pre-test costs each value a multiply-add
    // and a max over its row's eight; only a row whose largest passes looks at which did.
    if constexpr (Dots) {
      const std::int64_t stepFirst = colBegin + std::int64_t(step) * kStepCols;
#pragma unroll
      for (int m = 0; m < kRowTiles; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = warpRow + m * 16 + lane / 4 + 8 * h;
          if (r >= rowsHere)
            continue;
          float* out = a.dots + (firstRow + r) * a.ldDots + (stepFirst - dotsOrigin);
#pragma unroll
          for (int n = 0; n < kColTiles; ++n) {
            const int j = warpCol + n * 8 + 2 * (lane % 4);
            const std::int64_t col = stepFirst + j;
            if (col + 1 < colEnd) {
              *reinterpret_cast<float2*>(out + j) = {acc[m][n][2 * h] * a.alpha,
                                                     acc[m][n][2 * h + 1] * a.alpha};
            } else if (col < colEnd) {
              out[j] = acc[m][n][2 * h] * a.alpha;
            }
          }
        }
      __syncthreads(); // the next stage overwrites this buffer
      continue;
    }
    const float* part = colPart + buffer * kStepCols + warpCol + 2 * (lane % 4);
    float cols[kColTiles][2];
#pragma unroll
    for (int n = 0; n < kColTiles; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        cols[n][e] = part[n * 8 + e];
    // The largest pre-test value of a thread's eight in row (m, h), against the row's bound.
    auto rowPasses = [&](int m, int h) {
      float largest = -INFINITY;
#pragma unroll
      for (int n = 0; n < kColTiles; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          largest = fmaxf(largest, fmaf(acc[m][n][2 * h + e], dotScale, cols[n][e]));
      return largest >= rows.bound[warpRow + m * 16 + lane / 4 + 8 * h];
    };
    unsigned groups = 0; // bit 2m + h: row (m, h) has a value that passed
#pragma unroll
    for (int m = 0; m < kRowTiles; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        if (rowPasses(m, h))
          groups |= 1u << (2 * m + h);
    const std::int64_t stepFirst = colBegin + std::int64_t(step) * kStepCols;
    if (groups != 0) [[unlikely]] {
#pragma unroll
      for (int m = 0; m < kRowTiles; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if (!(groups & (1u << (2 * m + h))))
            continue;
          const int r = warpRow + m * 16 + lane / 4 + 8 * h;
#pragma unroll
          for (int n = 0; n < kColTiles; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (fmaf(acc[m][n][2 * h + e], dotScale, cols[n][e]) >= rows.bound[r]) {
                const int j = warpCol + n * 8 + 2 * (lane % 4) + e;
                keepIfWithin(rows, r, stepFirst + j, colNorm[buffer * kStepCols + j],
                             acc[m][n][2 * h + e] * a.alpha);
              }
        }
    }
    if constexpr (Pairs) {
      // The same values down the columns: a thread's eight rows of column (n, e), their largest
      // against the column's row bound; only a column whose largest passes looks at which did.
      const float* bound = colBound + buffer * kStepCols + warpCol + 2 * (lane % 4);
      unsigned columns = 0; // bit 2n + e
#pragma unroll
      for (int n = 0; n < kColTiles; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float largest = -INFINITY;
#pragma unroll
          for (int m = 0; m < kRowTiles; ++m)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              largest = fmaxf(largest, fmaf(acc[m][n][2 * h + e], dotScale, rowPart[m][h]));
          if (largest >= bound[n * 8 + e])
            columns |= 1u << (2 * n + e);
        }
      if (columns != 0) [[unlikely]] {
#pragma unroll
        for (int n = 0; n < kColTiles; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            if (!(columns & (1u << (2 * n + e))))
              continue;
            const int j = warpCol + n * 8 + 2 * (lane % 4) + e;
#pragma unroll
            for (int m = 0; m < kRowTiles; ++m)
#pragma unroll
              for (int h = 0; h < 2; ++h)
                if (fmaf(acc[m][n][2 * h + e], dotScale, rowPart[m][h]) >= bound[n * 8 + e])
                  keepForColumn(rows, stepFirst + j, colNorm[buffer * kStepCols + j],
                                warpRow + m * 16 + lane / 4 + 8 * h,
                                acc[m][n][2 * h + e] * a.alpha);
          }
      }
    }
    __syncthreads(); // the next stage overwrites this buffer
    if constexpr (Pairs)
      if (rows.queued >= kFlushAt) // the same for all threads: read after the barrier
        flushQueue(rows);
  }
  if constexpr (Pairs)
    if (rows.queued > 0)
      flushQueue(rows);
  if constexpr (!Dots) {
    if (!rows.sharedCounts) // other blocks append to these rows too: the prune lowers them
      return;
    for (int r = threadIdx.x; r < rowsHere; r += kThreads)
      if (!a.out.states[firstRow + r].overflow)
        a.out.states[firstRow + r].count = rows.count[r];
    // The block swept all of its rows' columns: each row's threshold becomes the k-th smallest
    // upper estimate of its list (as the prune's, without its launch and compaction), a warp a
    // row, the keys in the base tiles' shared memory, free now.
    constexpr int keyRoom = keysPerWarp(D);
    std::uint32_t* keys = reinterpret_cast<std::uint32_t*>(baseTiles) + warp * keyRoom;
    for (int r = warp; r < rowsHere; r += kThreads / 32) {
      const int count = rows.count[r];
      if (count <= a.out.k || count > min(keyRoom, a.out.capacity) || rows.bound[r] == INFINITY)
        continue; // a row past the shared keys is queued for the prune (finishSweepKernel)
      const Candidate* list = a.out.lists + (firstRow + r) * a.out.capacity;
      for (int i = lane; i < count; i += 32) {
        const Candidate c = list[i];
        const float bn = a.baseNorms[c.id];
        keys[i] = orderedBits(c.lower + 2.0f * (rows.coefA[r] * sqrtf(bn) + rows.coefB[r]));
      }
      __syncwarp();
      const float kth = fromOrderedBits(warpRadixSelect(keys, count, a.out.k));
      if (lane == 0 && kth < rows.threshold[r])
        a.out.states[firstRow + r].threshold = kth;
      __syncwarp();
    }
  }
#endif
}

/// After a sweep: rows past their list's capacity are marked overflowed, and rows holding more
/// than `pruneAbove` — or more than k beyond the `tightened` the sweep lowered thresholds for —
/// are queued for the prune.
__global__ void finishSweepKernel(RowState* states, int rows, FusedLists out, int tightened) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows)
    return;
  RowState& st = states[row];
  if (st.overflow)
    return;
  if (st.count > out.capacity) {
    st.overflow = 1;
    st.count = 0;
  } else if (st.count > out.pruneAbove || (st.count > out.k && st.count > tightened)) {
    out.pruneList[atomicAdd(out.pruneCount, 1)] = row;
  }
}

/// The kernel for rows of d dimensions (knn::gpuFusedTiles).
using SweepKernel = void (*)(SweepArgs);
template <SweepMode Mode = SweepMode::Filter> SweepKernel sweepKernelFor(int d) {
  switch (d) {
  case 32:
    return sweepKernel<32, Mode>;
  case 64:
    return sweepKernel<64, Mode>;
  case 128:
    return sweepKernel<128, Mode>;
  default:
    return sweepKernel<256, Mode>;
  }
}

/// Blocks of the columns [colBegin, colEnd) for `rows` query rows: too few rows for a full wave
/// split the columns over more blocks.
dim3 sweepGrid(int rows, std::int64_t colBegin, std::int64_t colEnd, int d) {
  const int rowBlocks = (rows + kBlockRows - 1) / kBlockRows;
  const int waveBlocks = fusedWaveRows(d) / kBlockRows;
  const std::int64_t steps = (colEnd - colBegin + kStepCols - 1) / kStepCols;
  const std::int64_t wanted = std::clamp<std::int64_t>(waveBlocks / rowBlocks, 1, steps);
  const std::int64_t partSteps = (steps + wanted - 1) / wanted;
  const int parts = int((steps + partSteps - 1) / partSteps); // none left without columns
  return dim3(unsigned(rowBlocks), unsigned(parts));
}

} // namespace

bool fusedTilesFit(int d) {
  int device = 0, major = 0, optIn = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  NEARSCAPE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  NEARSCAPE_CUDA_CHECK(
      cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return major >= 8 && std::size_t(optIn) >= sharedBytes(d) + sizeof(BlockRows);
}

bool fusedPairsFit(int d) {
  int device = 0, optIn = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  NEARSCAPE_CUDA_CHECK(
      cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return fusedTilesFit(d) &&
         std::size_t(optIn) >= sharedBytes(d, SweepMode::Pairs) + sizeof(BlockRows);
}

int fusedWaveRows(int d) {
  int device = 0, sms = 0, blocks = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  NEARSCAPE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const SweepKernel kernel = sweepKernelFor(d);
  NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(sharedBytes(d))));
  NEARSCAPE_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, sharedBytes(d)));
  return std::max(1, sms * blocks) * kBlockRows;
}

void fusedCandidates(const __half* queries, int rows, const float* queryNorms,
                     const std::int64_t* selfIds, const __half* base, const float* baseNorms,
                     float maxBaseNorm2, std::int64_t colBegin, std::int64_t colEnd, int d,
                     float alpha, Metric metric, const FusedLists& out, cudaStream_t stream,
                     OwnGroups own) {
  if (rows <= 0 || colEnd <= colBegin)
    return;
  SweepArgs args{};
  args.own = own;
  args.queries = queries;
  args.rows = rows;
  args.queryNorms = queryNorms;
  args.selfIds = selfIds;
  args.base = base;
  args.baseNorms = baseNorms;
  args.maxBaseNorm2 = maxBaseNorm2;
  args.colBegin = colBegin;
  args.colEnd = colEnd;
  args.alpha = alpha;
  args.metric = int(metric);
  args.out = out;
  // (fusedWaveRows, through sweepGrid, also sets the kernel's shared-memory attribute.)
  const dim3 grid = sweepGrid(rows, colBegin, colEnd, d);
  const int parts = int(grid.y);
  if (parts > 1) // blocks of other columns fill the same lists: the prune lowers the thresholds
    args.out.pruneAbove = std::min(out.pruneAbove, out.k);
  sweepKernelFor(d)<<<grid, kThreads, sharedBytes(d), stream>>>(args);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  // One block a row: the sweep lowered the thresholds of rows whose lists fit its shared keys.
  const int tightened = parts == 1 ? keysPerWarp(d) : 0;
  finishSweepKernel<<<(rows + 255) / 256, 256, 0, stream>>>(out.states, rows, args.out, tightened);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void fusedDots(const __half* queries, int rows, const __half* base, const float* baseNorms,
               std::int64_t colBegin, std::int64_t colEnd, int d, float alpha, float* dots,
               int ldDots, cudaStream_t stream, OwnGroups own) {
  if (rows <= 0 || colEnd <= colBegin)
    return;
  SweepArgs args{};
  args.own = own;
  args.queries = queries;
  args.rows = rows;
  args.base = base;
  args.baseNorms = baseNorms;
  args.colBegin = colBegin;
  args.colEnd = colEnd;
  args.alpha = alpha;
  args.dots = dots;
  args.ldDots = ldDots;
  const SweepKernel kernel = sweepKernelFor<SweepMode::Dots>(d);
  NEARSCAPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(sharedBytes(d))));
  kernel<<<sweepGrid(rows, colBegin, colEnd, d), kThreads, sharedBytes(d), stream>>>(args);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void fusedPairs(const __half* rows, const float* norms, std::int64_t n, float maxBaseNorm2,
                std::int64_t groupRows, int bandLo, int bandHi, int d, float alpha, Metric metric,
                const float* largestCoefA, const FusedLists& out, cudaStream_t stream, int part,
                int parts) {
  const std::int64_t groups = n / groupRows;
  if (parts < 1 || part < 0 || part >= parts)
    throw DeviceError("fusedPairs: part " + std::to_string(part) + " of " + std::to_string(parts));
  if (groupRows % kBlockRows != 0 || bandLo < 1 || bandLo >= groups) // would skip pairs
    throw DeviceError("fusedPairs: a band of groups of " + std::to_string(groupRows) +
                      " rows from " + std::to_string(bandLo) + " in " + std::to_string(n) +
                      " rows");
  SweepArgs args{};
  args.queries = rows;
  args.rows = int(n);
  args.queryNorms = norms;
  args.base = rows;
  args.baseNorms = norms;
  args.maxBaseNorm2 = maxBaseNorm2;
  args.colBegin = 0;
  args.colEnd = n;
  args.alpha = alpha;
  args.metric = int(metric);
  args.out = out;
  args.groupRows = groupRows;
  args.groups = int(groups);
  args.bandLo = bandLo;
  args.bandHi = bandHi;
  args.largestCoefA = largestCoefA;
  args.blockPart = part;
  args.blockParts = parts;
  const SweepKernel kernel = sweepKernelFor<SweepMode::Pairs>(d);
  const std::size_t bytes = sharedBytes(d, SweepMode::Pairs);
  NEARSCAPE_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // Only groups with a partner in the band have work; the earliest (the most columns) go first.
  // A share takes every parts-th block row: each group's rows half on each of two devices, so
  // the shares' work and their rows' thresholds stay alike.
  const std::int64_t blocks =
      ((groups - bandLo) * groupRows / kBlockRows - part + parts - 1) / parts;
  if (blocks > 0) {
    kernel<<<unsigned(blocks), kThreads, bytes, stream>>>(args);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
  }
  finishSweepKernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(out.states, int(n), args.out, 0);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

} // namespace nearscape::cuda
