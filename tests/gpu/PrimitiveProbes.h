#pragma once
// Host entry points that run the CUDA plugin's shared device primitives (cuda/Select.cuh,
// cuda/Rerank.cuh, cuda/Primitives.cuh, knn/GemmBound.h) in small test kernels, so that
// tst_gpu_primitives can check them against CPU oracles (as Faiss tests its select kernels).
// Built only where nvcc is; each call throws nearscape::Error on a CUDA failure.

#include <cstdint>
#include <string>
#include <vector>

namespace nearscape::probes {

/// Whether a CUDA device answers; `why` gets the reason when not.
bool deviceAvailable(std::string* why);

/// blockRadixSelect (and warpRadixSelect, which must agree): the rank-th smallest (1-based) key,
/// by one block of `threads` threads.
std::uint32_t selectKey32(const std::vector<std::uint32_t>& keys, int rank, int threads);
std::uint64_t selectKey64(const std::vector<std::uint64_t>& keys, int rank, int threads);

/// orderedBits of each value, and fromOrderedBits of those bits.
std::vector<std::uint32_t> orderedBitsOf(const std::vector<float>& values);
std::vector<float> fromOrderedBitsOf(const std::vector<std::uint32_t>& bits);

/// scoreAndSort of `candidates` (ids into `base`, n × d row-major; −1 entries score +inf)
/// against `query` (d) for `metric` (Metric's value): all slots of the next power of two,
/// sorted, by one block of 8 warps (`singleWarp` false) or by one warp.
void scoreAndSortOf(const std::vector<float>& query, const std::vector<float>& base, int d,
                    int metric, const std::vector<std::int32_t>& candidates, bool singleWarp,
                    std::vector<double>& distances, std::vector<std::int32_t>& ids);

/// fillIota over n entries, copied back.
std::vector<std::int32_t> iotaOf(std::int64_t n);

/// knn::gemmBoundTerms evaluated in a kernel: {perBaseNorm, constant}.
std::vector<double> gemmBoundOnDevice(int metric, double dotRel, double queryNorm,
                                      double maxBaseNorm);

/// cuda::directRowsOnDevice for the queries `rows` of `queries` (each d long) against `base`
/// (n × d), k best each, a row's own item left out where `selfSkip`: ids and float distances,
/// rows.size() × k (slots left unwritten hold −1 and NaN).
void directRowsOnDeviceOf(const std::vector<float>& queries, const std::vector<float>& base, int d,
                          const std::vector<std::int64_t>& rows, int metric, int k, bool selfSkip,
                          std::vector<std::int32_t>& ids, std::vector<float>& distances);

} // namespace nearscape::probes
