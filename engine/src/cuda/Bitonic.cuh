#pragma once
// A bitonic sorting network over entries [0, size) in shared memory (size a power of two), run by
// a warp or a block: the threads take entries first, first + step, … and compare one pair each
// per stage.

namespace nearscape::cuda {

/// `less(i, j)`: entry i must come before entry j; `swap(i, j)` exchanges them; `sync()` is the
/// barrier between stages (__syncwarp for a warp, __syncthreads for a block).
template <typename Less, typename Swap, typename Sync>
__device__ void bitonicSort(int size, int first, int step, Less less, Swap swap, Sync sync) {
  for (int span = 2; span <= size; span <<= 1)
    for (int stride = span / 2; stride > 0; stride >>= 1) {
      for (int i = first; i < size; i += step) {
        const int j = i ^ stride;
        if (j > i && ((i & span) == 0 ? less(j, i) : less(i, j)))
          swap(i, j);
      }
      sync();
    }
}

/// a[i] ↔ a[j].
template <typename T> __device__ __forceinline__ void swapAt(T* a, int i, int j) {
  const T t = a[i];
  a[i] = a[j];
  a[j] = t;
}

} // namespace nearscape::cuda
