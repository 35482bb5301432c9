#pragma once
// The last step of every exact or refined candidate list: each candidate scored exactly (float64,
// a warp per candidate), then the list sorted by (distance, id) in shared memory with a bitonic
// network. Shared by the exact GEMM path, the resident base's top-k and GNND's finish.
// Tested against a CPU oracle in tests/gpu/tst_gpu_primitives.

#include "cuda/Bitonic.cuh"

#include <cstdint>

namespace nearscape::cuda {

/// A candidate's exact distance and id; padding slots hold {+inf, kPadId}.
struct Scored {
  double dist;
  std::int32_t id;
};

/// The id of padding slots: after every real id in the (distance, id) order.
constexpr std::int32_t kPadId = 0x7fffffff;

/// Fills slots [0, size) (size a power of two) of `dist`/`id` with score(c) — warp `warp` of
/// `warps` scores slots warp, warp + warps, …, with all 32 lanes calling score(c) (it may use
/// the warp's lanes together: warpExactDistance) and lane 0 storing — then sorts the slots by
/// (distance, id) with ids compared as unsigned, so −1 sorts last. The sort's threads are
/// first, first + step, …; `sync` is the barrier (__syncthreads for a block, __syncwarp for one
/// warp).
template <typename Score, typename Sync>
__device__ void scoreAndSort(int size, int warp, int warps, int first, int step, double* dist,
                             std::int32_t* id, Score score, Sync sync) {
  const int lane = threadIdx.x % 32;
  for (int c = warp; c < size; c += warps) {
    const Scored s = score(c);
    if (lane == 0) {
      dist[c] = s.dist;
      id[c] = s.id;
    }
  }
  sync();
  bitonicSort(
      size, first, step,
      [&](int a, int b) {
        return dist[a] < dist[b] ||
               (dist[a] == dist[b] && std::uint32_t(id[a]) < std::uint32_t(id[b]));
      },
      [&](int a, int b) {
        swapAt(dist, a, b);
        swapAt(id, a, b);
      },
      sync);
}

/// The smallest power of two ≥ max(n, 1).
__host__ __device__ inline int nextPowerOfTwo(int n) {
  int size = 1;
  while (size < n)
    size *= 2;
  return size;
}

} // namespace nearscape::cuda
