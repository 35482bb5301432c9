#pragma once
// Selection primitives shared by the kernels: float bits that order like the values, a
// block-wide radix select (Dr. Top-k §2.2: the k-th smallest found digit by digit, 8 bits a
// digit, most significant first, by counting each digit's values in a shared histogram), and a
// warp's radix select of one bit a digit, for a few hundred keys without a block's barriers.
// Tested against a CPU oracle in tests/gpu/tst_gpu_primitives.

#include <cstdint>

namespace nearscape::cuda {

/// Float bits that order like the values: for finite floats and ±infinity, a < b exactly when
/// orderedBits(a) < orderedBits(b) as unsigned integers (−0 sorts just below +0).
__device__ __forceinline__ std::uint32_t orderedBits(float f) {
  const std::uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/// The float whose orderedBits are `u`.
__device__ __forceinline__ float fromOrderedBits(std::uint32_t u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

/// The `rank`-th smallest (1-based, counting repeated keys once each) of the keys keyOf(i),
/// i in [0, count), 1 ≤ rank ≤ count. Key is std::uint32_t or std::uint64_t. Every thread of
/// the block must call it (it synchronises the block) and every thread gets the key. Shared
/// memory: a 256-bin histogram and three words, reused by every call of the same Key type.
template <typename Key, typename KeyOf>
__device__ Key blockRadixSelect(int count, int rank, KeyOf keyOf) {
  __shared__ unsigned histogram[256];
  __shared__ Key prefix, mask;
  __shared__ int remaining; // the wanted key's rank among the keys that match `prefix`
  if (threadIdx.x == 0) {
    prefix = 0;
    mask = 0;
    remaining = rank;
  }
  for (int shift = int(8 * sizeof(Key)) - 8; shift >= 0; shift -= 8) {
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
      histogram[b] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      const Key key = keyOf(i);
      if ((key & mask) == prefix)
        atomicAdd(&histogram[unsigned(key >> shift) & 0xffu], 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      int r = remaining;
      unsigned digit = 0;
      while (digit < 255 && int(histogram[digit]) < r)
        r -= int(histogram[digit++]);
      remaining = r;
      prefix |= Key(digit) << shift;
      mask |= Key(0xffu) << shift;
    }
    __syncthreads();
  }
  const Key kth = prefix;
  __syncthreads(); // the next call may reset the shared words only once every thread read them
  return kth;
}

/// The sum of `v` over the warp's 32 lanes, in every lane.
__device__ inline int warpSum(int v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, v);
#else // the package's older architectures
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
#endif
}

/// The radix select of the two below: `zerosUnder(high, prefix)` counts the lane's keys whose
/// bits under `high` equal `prefix`.
template <typename Key, typename ZerosUnder>
__device__ Key warpRadixSelectBy(int rank, ZerosUnder zerosUnder) {
  Key prefix = 0;
  for (int bit = int(8 * sizeof(Key)) - 1; bit >= 0; --bit) {
    const Key high = ~Key(0) << bit; // the bits decided so far and this one, which prefix has 0
    const int zeros = warpSum(zerosUnder(high, prefix));
    if (zeros < rank) {
      rank -= zeros;
      prefix |= Key(1) << bit;
    }
  }
  return prefix;
}

/// The `rank`-th smallest (1-based, repeated keys counted once each) of keys[0, count), read
/// from memory the warp shares (shared or global), 1 ≤ rank ≤ count. Every lane of the warp
/// calls it and gets the key; no block barrier.
template <typename Key> __device__ Key warpRadixSelect(const Key* keys, int count, int rank) {
  const int lane = threadIdx.x % 32;
  return warpRadixSelectBy<Key>(rank, [&](Key high, Key prefix) {
    int zeros = 0;
    for (int i = lane; i < count; i += 32)
      zeros += (keys[i] & high) == prefix ? 1 : 0;
    return zeros;
  });
}

/// The same over keys the lanes hold in registers, N each (fill past the end with ~0: never
/// chosen while rank ≤ the keys there are).
template <int N>
__device__ std::uint32_t warpRadixSelect(const std::uint32_t (&keys)[N], int rank) {
  return warpRadixSelectBy<std::uint32_t>(rank, [&](std::uint32_t high, std::uint32_t prefix) {
    int zeros = 0;
#pragma unroll
    for (int j = 0; j < N; ++j)
      zeros += (keys[j] & high) == prefix ? 1 : 0;
    return zeros;
  });
}

} // namespace nearscape::cuda
