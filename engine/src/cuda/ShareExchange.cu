#include "cuda/ShareExchange.cuh"

#include "cuda/CudaCheck.cuh"
#include "cuda/Upload.cuh"
#include "knn/PairShares.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

namespace nearscape::cuda {
namespace {

__global__ void takeThresholdsKernel(const RowState* states, float* out, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = states[i].threshold;
}

__global__ void lowerThresholdsKernel(RowState* states, const float* theirs, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && theirs[i] < states[i].threshold)
    states[i].threshold = theirs[i];
}

/// Writes a share's rows searched whole (`rows`, their k results packed) into its lists.
__global__ void writeWholeRowsKernel(const std::int64_t* rows, const std::int32_t* rowIds,
                                     const float* rowDist, std::int64_t count, int k,
                                     std::int32_t* ids, double* dist64) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count * k)
    return;
  const std::int64_t at = rows[i / k] * k + i % k;
  ids[at] = rowIds[i];
  dist64[at] = double(rowDist[i]);
}

struct MergeInputs {
  const std::int32_t* ids[kMaxDeviceMergeParts];
  const double* dist64[kMaxDeviceMergeParts];
};

/// Row r's k nearest of the shares' lists, as knn::mergePairShares: a row one share searched
/// whole (`wholeIn`) is that share's; else the least (distance, id) of the shares' heads in
/// turn, padding (ids outside [0, n)) skipped and an id met again dropped; fewer than k: the rest
/// −1 and infinity, and `tooFew`.
__global__ void mergeSharesKernel(MergeInputs in, int parts, std::int64_t n, int k,
                                  const std::int8_t* wholeIn, std::int32_t* outIds, float* outDist,
                                  std::int8_t* tooFew) {
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= n)
    return;
  std::int32_t* out = outIds + r * k;
  float* outD = outDist + r * k;
  const int whole = wholeIn[r];
  if (whole >= 0) {
    for (int c = 0; c < k; ++c) {
      out[c] = in.ids[whole][r * k + c];
      outD[c] = float(in.dist64[whole][r * k + c]);
    }
    tooFew[r] = 0;
    return;
  }
  int at[kMaxDeviceMergeParts];
  for (int p = 0; p < parts; ++p)
    at[p] = 0;
  int kept = 0;
  while (kept < k) {
    int best = -1;
    double bestDist = 0;
    std::int32_t bestId = 0;
    for (int p = 0; p < parts; ++p) {
      const std::int32_t* ids = in.ids[p] + r * k;
      while (at[p] < k && (ids[at[p]] < 0 || ids[at[p]] >= n))
        ++at[p];
      if (at[p] == k)
        continue;
      const double d = in.dist64[p][r * k + at[p]];
      const std::int32_t id = ids[at[p]];
      if (best < 0 || d < bestDist || (d == bestDist && id < bestId)) {
        best = p;
        bestDist = d;
        bestId = id;
      }
    }
    if (best < 0)
      break;
    ++at[best];
    bool met = false;
    for (int c = 0; c < kept; ++c)
      met = met || out[c] == bestId;
    if (met)
      continue;
    out[kept] = bestId;
    outD[kept] = float(bestDist);
    ++kept;
  }
  tooFew[r] = kept < k;
  for (int c = kept; c < k; ++c) {
    out[c] = -1;
    outD[c] = __int_as_float(0x7f800000); // +infinity
  }
}

unsigned blocksFor(std::int64_t n) {
  return unsigned((n + 255) / 256);
}

/// Lets `device` read `other`'s memory directly where they allow it (NVLink, PCIe P2P), once;
/// else the driver stages peer copies through the host.
void enablePeer(int device, int other, std::vector<int>& enabled) {
  if (other == device || std::find(enabled.begin(), enabled.end(), other) != enabled.end())
    return;
  int can = 0;
  NEARSCAPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, other));
  if (can && cudaDeviceEnablePeerAccess(other, 0) != cudaSuccess)
    cudaGetLastError(); // already enabled (by another share's pass): fine
  enabled.push_back(other);
}

/// Copies `bytes` from `from` on `fromDevice` to `to` on `device` (the current one).
void copyFromDevice(void* to, int device, const void* from, int fromDevice, std::size_t bytes,
                    cudaStream_t stream) {
  if (fromDevice == device)
    NEARSCAPE_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
  else
    NEARSCAPE_CUDA_CHECK(cudaMemcpyPeerAsync(to, device, from, fromDevice, bytes, stream));
}

/// Runs `read` (the others' offers, copied on `stream`), then doneReading whatever `read`
/// throws, then rethrows it: nobody waits in vain for a share that failed while reading, and no
/// copy it queued is still reading another's buffer once that one goes on.
template <typename Read>
void readThenDone(knn::PairsExchange& exchange, int part, cudaStream_t stream, Read&& read) {
  std::exception_ptr failed;
  try {
    read();
  } catch (...) {
    failed = std::current_exception();
    cudaStreamSynchronize(stream); // its own error, if any, is the one rethrown
    cudaGetLastError();
  }
  exchange.doneReading(part);
  if (failed)
    std::rethrow_exception(failed);
}

} // namespace

void uploadAcrossShares(const MatrixView<float>& data, knn::PairsExchange& exchange, int part,
                        int parts, cudaStream_t stream, const JobControl& job, DeviceRows& out) {
  const std::int64_t n = data.rows;
  const int d = int(data.cols);
  auto begin = [&](int p) { return n * p / parts; };
  out.rawOwned = DeviceBuffer<float>(std::size_t(n) * std::size_t(d));
  out.raw = out.rawOwned.get();
  float* const raw = out.rawOwned.get();
  auto fromHost = [&](int p) {
    copyToDevice(raw + begin(p) * d, data.row(begin(p)),
                 sizeof(float) * std::size_t(begin(p + 1) - begin(p)) * std::size_t(d));
  };
  fromHost(part);
  int device = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  std::vector<bool> copied(std::size_t(parts), false); // made before the round: nothing throws
  copied[std::size_t(part)] = true;                    // between meet and doneReading but read
  if (exchange.gaveUp())
    throw ThresholdExchange::GaveUp{};
  const std::vector<knn::PairsExchange::Offer> offers = exchange.meet(part, {device, raw}, job);
  readThenDone(exchange, part, stream, [&] {
    std::vector<int> peers;
    for (const knn::PairsExchange::Offer& offer : offers) {
      const int p = offer.part;
      enablePeer(device, offer.device, peers);
      copyFromDevice(raw + begin(p) * d, device,
                     static_cast<const float*>(offer.data) + begin(p) * d, offer.device,
                     sizeof(float) * std::size_t(begin(p + 1) - begin(p)) * std::size_t(d), stream);
      copied[std::size_t(p)] = true;
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  for (int p = 0; p < parts; ++p)
    if (!copied[std::size_t(p)])
      fromHost(p);
}

ThresholdExchange::ThresholdExchange(knn::PairsExchange& exchange, int part, std::int64_t n)
    : m_exchange(exchange), m_part(part), m_n(n), m_mine(std::size_t(n)), m_theirs(std::size_t(n)) {
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&m_device));
}

void ThresholdExchange::operator()(RowState* states, cudaStream_t stream, const JobControl& job) {
  if (m_exchange.gaveUp()) // a cheaper way pays, or another share left without its result
    throw GaveUp{};
  takeThresholdsKernel<<<blocksFor(m_n), 256, 0, stream>>>(states, m_mine.get(), m_n);
  NEARSCAPE_CUDA_CHECK_LAUNCH();
  NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream)); // offered whole
  const std::vector<knn::PairsExchange::Offer> offers =
      m_exchange.meet(m_part, {m_device, m_mine.get()}, job);
  // Every share reads the others' offers before any of them changes its own again.
  readThenDone(m_exchange, m_part, stream, [&] {
    for (const knn::PairsExchange::Offer& offer : offers) {
      enablePeer(m_device, offer.device, m_peers);
      copyFromDevice(m_theirs.get(), m_device, offer.data, offer.device,
                     sizeof(float) * std::size_t(m_n), stream);
      lowerThresholdsKernel<<<blocksFor(m_n), 256, 0, stream>>>(states, m_theirs.get(), m_n);
      NEARSCAPE_CUDA_CHECK_LAUNCH();
    }
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

namespace {
/// A share's offer in the merge round: its lists on its device and what the host keeps.
struct ShareLists {
  int device;
  const std::int32_t* ids;
  const double* dist64;
  const std::vector<std::int64_t>* whole;
  const std::vector<std::int64_t>* overflow;
  std::int64_t candidates;
};
} // namespace

MergedOnFirst mergeOnFirstShare(knn::PairsExchange& exchange, int part, int parts, std::int64_t n,
                                int k, std::int32_t* ids, double* dist64, const WholeRows& whole,
                                const std::vector<std::int64_t>& overflow, std::int64_t candidates,
                                std::int32_t* outIds, float* outDist, cudaStream_t stream,
                                const JobControl& job) {
  if (parts > kMaxDeviceMergeParts || parts < 1 || part < 0 || part >= parts)
    throw DeviceError("mergeOnFirstShare: share " + std::to_string(part) + " of " +
                      std::to_string(parts));
  const std::vector<std::int64_t> none;
  const std::vector<std::int64_t>& wholeRows = whole.rows ? *whole.rows : none;
  if (!wholeRows.empty()) {
    const std::size_t count = wholeRows.size();
    std::vector<std::int32_t> rowIds(count * std::size_t(k));
    std::vector<float> rowDist(count * std::size_t(k));
    for (std::size_t i = 0; i < count; ++i) {
      std::copy_n(whole.ids + wholeRows[i] * k, k, rowIds.data() + i * k);
      std::copy_n(whole.dist + wholeRows[i] * k, k, rowDist.data() + i * k);
    }
    const DeviceBuffer<std::int64_t> rows = uploaded(wholeRows.data(), count);
    const DeviceBuffer<std::int32_t> dIds = uploaded(rowIds.data(), rowIds.size());
    const DeviceBuffer<float> dDist = uploaded(rowDist.data(), rowDist.size());
    writeWholeRowsKernel<<<blocksFor(std::int64_t(count) * k), 256, 0, stream>>>(
        rows.get(), dIds.get(), dDist.get(), std::int64_t(count), k, ids, dist64);
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream)); // offered whole; the uploads freed
  }
  int device = 0;
  NEARSCAPE_CUDA_CHECK(cudaGetDevice(&device));
  if (exchange.gaveUp())
    throw ThresholdExchange::GaveUp{};
  const ShareLists mine{device, ids, dist64, &wholeRows, &overflow, candidates};
  const std::vector<knn::PairsExchange::Offer> offers = exchange.meet(part, {device, &mine}, job);
  MergedOnFirst merged;
  bool missing = exchange.gaveUp() || int(offers.size()) != parts - 1;
  readThenDone(exchange, part, stream, [&] {
    if (part != 0 || missing)
      return; // share 0 merges; the others wait here until it has read their lists
    std::vector<const ShareLists*> lists(std::size_t(parts), nullptr);
    lists[0] = &mine;
    for (const knn::PairsExchange::Offer& offer : offers)
      lists[std::size_t(offer.part)] = static_cast<const ShareLists*>(offer.data);
    const std::size_t listSize = std::size_t(n) * std::size_t(k);
    // The others' lists, copied over; then the graph and its rows left short, here.
    DeviceBuffer<std::int32_t> theirIds{listSize * std::size_t(parts - 1)};
    DeviceBuffer<double> theirDist{listSize * std::size_t(parts - 1)};
    MergeInputs in{};
    std::vector<int> peers;
    for (int p = 0; p < parts; ++p) {
      const ShareLists& from = *lists[std::size_t(p)];
      if (p == 0) {
        in.ids[0] = from.ids;
        in.dist64[0] = from.dist64;
        continue;
      }
      enablePeer(device, from.device, peers);
      std::int32_t* toIds = theirIds.get() + listSize * std::size_t(p - 1);
      double* toDist = theirDist.get() + listSize * std::size_t(p - 1);
      copyFromDevice(toIds, device, from.ids, from.device, sizeof(std::int32_t) * listSize, stream);
      copyFromDevice(toDist, device, from.dist64, from.device, sizeof(double) * listSize, stream);
      in.ids[p] = toIds;
      in.dist64[p] = toDist;
    }
    // A row one share searched whole is that share's (the first such, as on the host).
    std::vector<const std::vector<std::int64_t>*> whole, overflows;
    for (const ShareLists* from : lists) {
      whole.push_back(from->whole);
      overflows.push_back(from->overflow);
      merged.candidates += from->candidates;
    }
    const std::vector<std::int8_t> wholeIn = knn::firstShareWhole(n, whole);
    const DeviceBuffer<std::int8_t> dWholeIn = uploaded(wholeIn.data(), wholeIn.size());
    DeviceBuffer<std::int32_t> graphIds{listSize};
    DeviceBuffer<float> graphDist{listSize};
    DeviceBuffer<std::int8_t> tooFew{std::size_t(n)};
    mergeSharesKernel<<<blocksFor(n), 256, 0, stream>>>(
        in, parts, n, k, dWholeIn.get(), graphIds.get(), graphDist.get(), tooFew.get());
    NEARSCAPE_CUDA_CHECK_LAUNCH();
    NEARSCAPE_CUDA_CHECK(cudaStreamSynchronize(stream)); // the others' lists read: they may go
    copyToHost(outIds, graphIds.get(), sizeof(std::int32_t) * listSize);
    copyToHost(outDist, graphDist.get(), sizeof(float) * listSize);
    std::vector<std::int8_t> shortRows(static_cast<std::size_t>(n));
    copyToHost(shortRows.data(), tooFew.get(), std::size_t(n));
    merged.overflow = knn::rowsLeftUnbounded(wholeIn, overflows, shortRows);
  });
  if (missing)
    throw ThresholdExchange::GaveUp{}; // a share left without its lists: no graph here
  return merged;
}

} // namespace nearscape::cuda
