#pragma once
// Host arrays of hundreds of megabytes on 2 MiB pages where the kernel gives them (madvise,
// advice only). A 4 KiB page costs a fault when first touched and a walk in munmap: freeing the
// float64 lists of two GPUs' shares of a 2M-row graph (640 MB) took 30–57 ms on 4 KiB pages,
// 2 ms on 2 MiB ones; and a graph walk jumping between rows at random misses the TLB on nearly
// every row with small pages.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace nearscape {

/// `count` uninitialised values of a trivial type on huge pages. Throws std::bad_alloc.
template <typename T> std::shared_ptr<T[]> hugePageArray(std::size_t count) {
  constexpr std::size_t kHugePage = std::size_t(2) << 20;
  const std::size_t bytes =
      std::max((count * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage, kHugePage);
  T* data = static_cast<T*>(std::aligned_alloc(kHugePage, bytes));
  if (!data)
    throw std::bad_alloc();
#ifdef __linux__
  madvise(data, bytes, MADV_HUGEPAGE); // advice only: 4 KiB pages if refused
#endif
  return std::shared_ptr<T[]>(data, [](T* p) { std::free(p); });
}

} // namespace nearscape
