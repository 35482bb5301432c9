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
