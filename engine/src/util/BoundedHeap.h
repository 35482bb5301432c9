#pragma once
// The k smallest items of a stream, kept in a max-heap (the k-th smallest on top): the exact
// scans' and the map's neighbour lists.

#include <algorithm>
#include <vector>

namespace nearscape {

/// Offers `item` to `heap`, a max-heap under `<` holding at most k items: it enters while the
/// heap has room, or in place of the largest when smaller than it.
template <typename T> void keepSmallest(std::vector<T>& heap, const T& item, int k) {
  if (int(heap.size()) < k) {
    heap.push_back(item);
    std::push_heap(heap.begin(), heap.end());
  } else if (item < heap.front()) {
    std::pop_heap(heap.begin(), heap.end());
    heap.back() = item;
    std::push_heap(heap.begin(), heap.end());
  }
}

} // namespace nearscape
