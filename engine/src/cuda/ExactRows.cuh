#pragma once
// The exact GEMM path's rows on the device (internal to the exact search): uploaded raw (the
// float64 re-check reads them) and packed for the GEMM in one of three precisions — float32,
// float16 (scaled by a power of two, rounded to nearest) or 3xTF32 (split hi/lo rows) — with
// their squared norms. Faiss §2.1 (the norm expansion), §3 (tiling).

#include "cuda/DeviceBuffer.cuh"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace nearscape::cuda {

/// How candidates are computed: plain float32, float16 (scaled), or 3xTF32 (see packRows).
enum class Precision { Fp32, Fp16, SplitTf32 };

/// Relative error of one GEMM dot product against ‖x‖‖y‖ in `precision` (knn::gemmBoundTerms's
/// dotRel). Tensor cores may accumulate with truncation, so 2u per addition. fp16 inputs are
/// rounded to nearest by packRows (2^-11 each) and multiplied exactly; 3xTF32 drops lo·lo and
/// rounds its splits.
double dotError(Precision precision, int d);

/// Thrown by packRows when data cannot be scaled into float16's range (|values| beyond 2^±40).
struct OutsideHalfRange {};

/// Rows on the device: raw (the exact re-check reads them) and packed for the GEMM. Either owns
/// its buffers or views another's (rows [offset, offset + n) of it).
struct DeviceRows {
  DeviceBuffer<float> rawOwned, packedOwned, normsOwned;
  DeviceBuffer<__half> halfOwned;
  const float* raw = nullptr;
  const float* packed = nullptr; // Fp32 and SplitTf32
  const __half* half = nullptr;  // Fp16: fp16(scale · value)
  const float* norms = nullptr;
  int width = 0;
  float scale = 1;      // a power of two
  double underflow = 0; // Fp16: the largest error of a value that underflows, unscaled

  DeviceRows view(std::int64_t offset, int d) const {
    DeviceRows v = shallow();
    v.raw = raw + offset * d;
    v.packed = packed ? packed + offset * width : nullptr;
    v.half = half ? half + offset * width : nullptr;
    v.norms = norms + offset;
    return v;
  }

private:
  DeviceRows shallow() const {
    DeviceRows v;
    v.width = width;
    v.scale = scale;
    v.underflow = underflow;
    return v;
  }
};

/// Uploads `n` raw rows (host, contiguous from `begin` or gathered by `rows`) to the device.
void uploadRaw(const MatrixView<float>& m, std::int64_t begin, std::int64_t n,
               const std::vector<std::int64_t>* rows, DeviceRows& out);

/// Packs the `n` raw rows of `rows` on the device for `precision` in `queryRole` (3xTF32 writes
/// a base row as [hi, lo, hi] and a query row as [hi, hi, lo]): L2 rows centred on
/// `deviceMean`, cosine rows normalised, inner-product rows as they are. Throws
/// OutsideHalfRange (Fp16 only), DeviceOutOfMemory, DeviceError.
void packRows(DeviceRows& rows, std::int64_t n, int d, const float* deviceMean, Metric metric,
              Precision precision, bool queryRole);

/// float32 packing alone, into caller-owned buffers (`packed` n × d, `norms` n), on `stream`.
void packRowsFloat(const float* raw, std::int64_t n, int d, const float* deviceMean, Metric metric,
                   float* packed, float* norms, cudaStream_t stream);

/// Rows already packed (n × d, device) split for 3xTF32 into `out` (n × 3·d, device) — [hi, lo,
/// hi] in the base role, [hi, hi, lo] in the query role, so that one TF32 GEMM of a query-role
/// row with a base-role row sums hi·hi + hi·lo + lo·hi (dotError(SplitTf32) bounds it) — on
/// `stream`. Throws DeviceError.
void splitRowsTf32(const float* packed, std::int64_t n, int d, bool queryRole, float* out,
                   cudaStream_t stream);

/// `mean` (d, device) = the float64 column means of the n raw rows, rounded to float.
/// Throws DeviceOutOfMemory, DeviceError.
void columnMeans(const float* raw, std::int64_t n, int d, float* mean);

} // namespace nearscape::cuda
