#pragma once
// One share's side of knn::PairsExchange (ExactPass.cuh's pairsPass split over devices): the
// data's rows uploaded a slice a share and copied between the devices (uploadAcrossShares); after
// a band, its rows' thresholds offered to the other shares and each row's threshold lowered to
// the least of theirs (ThresholdExchange). Lowering is exact: a threshold is the k-th upper
// estimate of k distinct candidates one share scored, so any candidate whose lower estimate lies
// above it has k strictly nearer rows somewhere and cannot be among the row's k nearest.

#include "cuda/CandidateLists.cuh"
#include "cuda/DeviceBuffer.cuh"
#include "cuda/ExactRows.cuh"
#include "knn/PairsExchange.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace nearscape::cuda {

/// All of `data` into `out.raw` on the current device: share `part` of `parts` uploads rows
/// [n·part/parts, n·(part + 1)/parts) from the host and copies the others' slices from their
/// devices (NVLink), in one round of `exchange` every share takes first; a slice no share offers
/// (one that left) comes from the host. Two H200 uploading 1 GB each from the host at once took
/// 73 ms against 21 ms alone. The device copies run on `stream`. Throws
/// ThresholdExchange::GaveUp, DeviceOutOfMemory, DeviceError, Cancelled.
void uploadAcrossShares(const MatrixView<float>& data, knn::PairsExchange& exchange, int part,
                        int parts, cudaStream_t stream, const JobControl& job, DeviceRows& out);

/// The most shares mergeOnFirstShare takes (more: the host merges, knn::mergePairShares).
constexpr int kMaxDeviceMergeParts = 16;

/// A share's rows it searched whole (the rows a pass could not bound, redone alone), their
/// results in host arrays of n × k indexed by row.
struct WholeRows {
  const std::vector<std::int64_t>* rows = nullptr;
  const std::int32_t* ids = nullptr;
  const float* dist = nullptr;
};

/// What the first share gets back from mergeOnFirstShare.
struct MergedOnFirst {
  std::vector<std::int64_t> overflow; ///< rows no share could bound, ascending
  std::int64_t candidates = 0;        ///< the shares' candidates re-checked, summed
};

/// The shares' lists merged on the first share's device, in a last round of `exchange`: each
/// share writes its `whole` rows into its lists (`ids`, `dist64`: n × k on the current device),
/// offers them with its `overflow` (rows left unbounded) and `candidates`, and share 0 copies the
/// others' lists over (NVLink), merges each row's k nearest of the union as knn::mergePairShares
/// does on the host (its CPU twin: the same rows byte for byte), and copies the graph to
/// `outIds`/`outDist` (host, n × k). On the host the merge took 25–58 ms of a 1.7 s two-GPU
/// graph at 2M, and each share copied 240 MB of lists back for it. Share 0 gets the merged
/// overflow and candidates, the others nothing. At most kMaxDeviceMergeParts shares. Throws
/// ThresholdExchange::GaveUp (a share left without its lists), DeviceOutOfMemory, DeviceError,
/// Cancelled.
MergedOnFirst mergeOnFirstShare(knn::PairsExchange& exchange, int part, int parts, std::int64_t n,
                                int k, std::int32_t* ids, double* dist64, const WholeRows& whole,
                                const std::vector<std::int64_t>& overflow, std::int64_t candidates,
                                std::int32_t* outIds, float* outDist, cudaStream_t stream,
                                const JobControl& job);

class ThresholdExchange {
public:
  /// The share `part` of `exchange` over `n` rows, on the current device.
  ThresholdExchange(knn::PairsExchange& exchange, int part, std::int64_t n);

  /// Thrown by a round once the exchange gave up (knn::PairsExchange::gaveUp): the share
  /// stops where it is and leaves.
  struct GaveUp {};

  /// One round, between bands (every share calls it as often): waits for the others, then
  /// lowers `states` (n rows, on `stream`'s device) to their thresholds. Throws GaveUp,
  /// DeviceError, Cancelled (`job` stopped while waiting).
  void operator()(RowState* states, cudaStream_t stream, const JobControl& job);

private:
  knn::PairsExchange& m_exchange;
  int m_part;
  int m_device = 0;
  std::int64_t m_n;
  DeviceBuffer<float> m_mine, m_theirs;
  std::vector<int> m_peers; ///< devices whose memory this one reads directly (NVLink, PCIe P2P)
};

} // namespace nearscape::cuda
