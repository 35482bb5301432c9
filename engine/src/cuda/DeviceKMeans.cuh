#pragma once
// k-means on the device for the clusters that steer a search (STEP's pruning, GNND's head start):
// a seeded sample, Lloyd's iterations with TF32 GEMM scores and atomic sums, then every row's
// nearest centroid; rows reordered cluster by cluster. Only speed depends on its quality. Work and
// temporaries go in the order of the `stream` argument, which the cuBLAS handle is bound to; or,
// with nullptr, on the default stream with plain allocations, the handle on a blocking stream
// (a lease's) that the default stream orders with.

#include "cuda/Cublas.cuh"
#include "cuda/DeviceBuffer.cuh"

#include <cstdint>
#include <vector>

namespace nearscape::cuda {

/// Centroids on the device and the GEMM that assigns rows to them (TF32 scores: good enough to
/// steer, never to decide a result).
struct Clustering {
  int count = 0;
  DeviceBuffer<float> centroids; ///< count × d
  DeviceBuffer<float> norms;     ///< count

  /// labels[i] = the nearest centroid of rows[i] (n × d rows on the device).
  void assign(cublasHandle_t cublas, const float* rows, std::int64_t n, int d, std::int32_t* labels,
              cudaStream_t stream) const;
  /// norms = the centroids' squared norms (after the centroids changed).
  void refreshNorms(int d, cudaStream_t stream);
};

/// Seeded k-means of the n × d device rows into `clusters` clusters (a sample of about 64 rows a
/// cluster, 6 iterations). Throws DeviceOutOfMemory, Error.
Clustering cluster(cublasHandle_t cublas, const float* rows, std::int64_t n, int d, int clusters,
                   std::uint64_t seed, cudaStream_t stream);

/// Rows on the device in the order of their cluster: the rows, their original ids, and where
/// each cluster begins.
struct ClusterOrder {
  DeviceBuffer<float> rows;
  DeviceBuffer<std::int32_t> ids, labels;
  DeviceBuffer<std::int64_t> offsets;
  std::vector<std::int64_t> hostOffsets;
};

/// Rows [begin, end) of a cluster order, all of one cluster: a block's work.
struct ClusterBlock {
  std::int32_t cluster;
  std::int32_t begin, end;
};

/// Each cluster of `offsets` (clusters + 1, as ClusterOrder::hostOffsets) in blocks of at most
/// `rows` rows.
std::vector<ClusterBlock> clusterBlocks(const std::vector<std::int64_t>& offsets, int rows);

/// Orders n rows by their device `labels` (stable: ties by row); gathers the rows too when
/// `rows` is given. Throws DeviceOutOfMemory, Error.
ClusterOrder orderByCluster(const float* rows, const std::int32_t* labels, std::int64_t n, int d,
                            int clusters, cudaStream_t stream);

/// out[i] = in[ids[i]] for n rows of d floats on the device.
void gatherRows(const float* in, const std::int32_t* ids, std::int64_t n, int d, float* out,
                cudaStream_t stream);

} // namespace nearscape::cuda
