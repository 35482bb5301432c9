// The exact GEMM path's rows on the device: upload, packing in three precisions, column means
// (ExactRows.cuh).
#include "cuda/ExactRows.cuh"
#include "cuda/Upload.cuh"
#include "cuda/WarpRows.cuh"
#include "knn/GemmBound.h"

#include <cmath>
#include <cstring>

namespace nearscape::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

/// TF32 keeps the top 10 mantissa bits; rounding to nearest makes x − hi exact in float32.
__device__ inline float tf32High(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

/// Element j of a row (d wide) written split for 3xTF32 into `o` (3·d wide): [hi, lo, hi] in the
/// base role, [hi, hi, lo] in the query role.
__device__ inline void writeSplit(float v, int j, int d, int queryRole, float* o) {
  const float hi = tf32High(v), lo = v - hi;
  o[j] = hi;
  o[d + j] = queryRole ? hi : lo;
  o[2 * d + j] = queryRole ? lo : hi;
}

/// Packed rows split for 3xTF32: one thread an element.
__global__ void splitKernel(const float* __restrict__ packed, std::int64_t n, int d, int queryRole,
                            float* __restrict__ out) {
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n * d)
    return;
  const std::int64_t row = e / d;
  writeSplit(packed[e], int(e % d), d, queryRole, out + row * 3 * d);
}

/// How rows are packed for the GEMM: float32; [hi, lo, hi] / [hi, hi, lo] for 3xTF32; or
/// float16, scaled by a power of two and rounded to nearest.
enum PackMode { kPackFloat = 0, kPackSplit = 1, kPackHalf = 2 };

/// One warp per row: transform(raw) (centre, copy or normalise) and ‖transform‖² (in float64,
/// from the unrounded values). kPackSplit writes the row 3·d wide as [hi, lo, hi] (base role) or
/// [hi, hi, lo] (query role), so that one TF32 GEMM over 3·d sums hi·hi + lo·hi + hi·lo:
/// float32-grade dots at tensor-core speed ("3xTF32"; the dropped lo·lo term is below 2^-21
/// relative). kPackHalf writes fp16(scale·v): the tensor cores then multiply exactly and
/// accumulate in float32, twice TF32's rate with the same 11-bit significand.
__global__ void packKernel(const float* __restrict__ raw, std::int64_t n, int d,
                           const float* __restrict__ mean, int metric, int mode, int queryRole,
                           float scale, float* __restrict__ packed, __half* __restrict__ half,
                           float* __restrict__ norms) {
  const std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n)
    return;
  const float* x = raw + row * d;
  const double cosine = warpCosineScale(x, d, metric, lane);
  double s = 0;
  for (int j = lane; j < d; j += 32) {
    const float v = packedValue(x, j, mean, metric, cosine);
    if (mode == kPackHalf) {
      half[row * d + j] = __float2half_rn(v * scale);
    } else if (mode == kPackSplit) {
      writeSplit(v, j, d, queryRole, packed + row * 3 * d);
    } else {
      packed[row * d + j] = v;
    }
    s += double(v) * v;
  }
  s = warpSum(s);
  if (lane == 0)
    norms[row] = float(s);
}

/// The largest |packed value| of n rows, as float bits (non-negative floats order as unsigned).
__global__ void maxAbsKernel(const float* __restrict__ raw, std::int64_t n, int d,
                             const float* __restrict__ mean, int metric,
                             unsigned* __restrict__ maxBits) {
  const std::int64_t row = std::int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n)
    return;
  const float* x = raw + row * d;
  const double cosine = warpCosineScale(x, d, metric, lane);
  float m = 0;
  for (int j = lane; j < d; j += 32)
    m = fmaxf(m, fabsf(packedValue(x, j, mean, metric, cosine)));
  for (int off = 16; off > 0; off /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (lane == 0)
    atomicMax(maxBits, __float_as_uint(m));
}

/// Column means of n rows in float64 (L2 centres the data: smaller norms, a tighter bound).
__global__ void columnSumKernel(const float* __restrict__ raw, std::int64_t n, int d,
                                int rowsPerBlock, double* __restrict__ sums) {
  const std::int64_t begin = std::int64_t(blockIdx.y) * rowsPerBlock;
  const std::int64_t end = begin + rowsPerBlock < n ? begin + rowsPerBlock : n;
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < d; j += gridDim.x * blockDim.x) {
    double s = 0;
    for (std::int64_t i = begin; i < end; ++i)
      s += raw[i * d + j];
    atomicAdd(sums + j, s);
  }
}

__global__ void divideKernel(const double* __restrict__ sums, int d, double n,
                             float* __restrict__ mean) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < d)
    mean[j] = float(sums[j] / n);
}

} // namespace

double dotError(Precision p, int d) {
  const double u = knn::kUnitRoundoff;
  switch (p) {
  case Precision::Fp32:
    return d * u;
  case Precision::Fp16:
    return 2.0 * d * u + 1.0 / 1024 + 1.0 / (1 << 20);
  case Precision::SplitTf32:
    return 2.0 * 3 * d * u + 4.0 / (1 << 21);
  }
  return 1;
}

void uploadRaw(const MatrixView<float>& m, std::int64_t begin, std::int64_t n,
               const std::vector<std::int64_t>* rows, DeviceRows& out) {
  const int d = int(m.cols);
  out.rawOwned = DeviceBuffer<float>(std::size_t(n) * d);
  out.raw = out.rawOwned.get();
  if (rows) {
    std::vector<float> gathered(static_cast<std::size_t>(n * d));
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(gathered.data() + i * d, m.row((*rows)[i]), sizeof(float) * d);
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(out.rawOwned.get(), gathered.data(), sizeof(float) * n * d,
                                    cudaMemcpyHostToDevice));
  } else {
    copyToDevice(out.rawOwned.get(), m.row(begin), sizeof(float) * n * d);
  }
}

/// Packs the `n` raw rows of `rows` on the device for `precision` in `queryRole`.
void packRows(DeviceRows& rows, std::int64_t n, int d, const float* deviceMean, Metric metric,
              Precision precision, bool queryRole) {
  const unsigned blocks = unsigned((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rows.width = precision == Precision::SplitTf32 ? 3 * d : d;
  rows.packedOwned = DeviceBuffer<float>();
  rows.halfOwned = DeviceBuffer<__half>();
  rows.packed = nullptr;
  rows.half = nullptr;
  rows.scale = 1;
  rows.underflow = 0;
  if (precision == Precision::Fp16) {
    // The largest value goes to [2^14, 2^15]: far from float16's overflow (65,504), and only
    // values 2^28 times smaller reach its subnormals.
    DeviceBuffer<unsigned> maxBits{1};
    NEARSCAPE_CUDA_CHECK(cudaMemset(maxBits.get(), 0, sizeof(unsigned)));
    maxAbsKernel<<<blocks, kWarpsPerBlock * 32>>>(rows.raw, n, d, deviceMean, int(metric),
                                                  maxBits.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    unsigned bits = 0;
    NEARSCAPE_CUDA_CHECK(cudaMemcpy(&bits, maxBits.get(), sizeof(bits), cudaMemcpyDeviceToHost));
    float maxAbs;
    std::memcpy(&maxAbs, &bits, sizeof(maxAbs));
    if (maxAbs > 0) {
      // Beyond 2^±40 the product of two scales (the GEMM's alpha) could leave float's range.
      if (!(maxAbs >= std::ldexp(1.0f, -40) && maxAbs <= std::ldexp(1.0f, 40)))
        throw OutsideHalfRange{};
      rows.scale = std::ldexp(1.0f, 14 - std::ilogb(maxAbs));
    }
    rows.underflow = std::ldexp(1.0, -25) / rows.scale;
    rows.halfOwned = DeviceBuffer<__half>(std::size_t(n) * d);
    rows.half = rows.halfOwned.get();
  } else {
    rows.packedOwned = DeviceBuffer<float>(std::size_t(n) * rows.width);
    rows.packed = rows.packedOwned.get();
  }
  rows.normsOwned = DeviceBuffer<float>(std::size_t(n));
  rows.norms = rows.normsOwned.get();
  const int mode = precision == Precision::Fp16        ? kPackHalf
                   : precision == Precision::SplitTf32 ? kPackSplit
                                                       : kPackFloat;
  packKernel<<<blocks, kWarpsPerBlock * 32>>>(rows.raw, n, d, deviceMean, int(metric), mode,
                                              queryRole ? 1 : 0, rows.scale, rows.packedOwned.get(),
                                              rows.halfOwned.get(), rows.normsOwned.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void packRowsFloat(const float* raw, std::int64_t n, int d, const float* deviceMean, Metric metric,
                   float* packed, float* norms, cudaStream_t stream) {
  const unsigned blocks = unsigned((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  packKernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
      raw, n, d, deviceMean, int(metric), kPackFloat, 0, 1.0f, packed, nullptr, norms);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void splitRowsTf32(const float* packed, std::int64_t n, int d, bool queryRole, float* out,
                   cudaStream_t stream) {
  const std::int64_t elements = n * d;
  if (elements == 0)
    return;
  splitKernel<<<unsigned((elements + 255) / 256), 256, 0, stream>>>(packed, n, d, queryRole ? 1 : 0,
                                                                    out);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

void columnMeans(const float* raw, std::int64_t n, int d, float* mean) {
  DeviceBuffer<double> sums{std::size_t(d)};
  NEARSCAPE_CUDA_CHECK(cudaMemset(sums.get(), 0, sizeof(double) * d));
  const int rowsPerBlock = 512;
  const dim3 grid(unsigned((d + 127) / 128), unsigned((n + rowsPerBlock - 1) / rowsPerBlock));
  columnSumKernel<<<grid, 128>>>(raw, n, d, rowsPerBlock, sums.get());
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  divideKernel<<<(d + 127) / 128, 128>>>(sums.get(), d, double(n), mean);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
}

} // namespace nearscape::cuda
