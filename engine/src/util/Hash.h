#pragma once
// Counter-based randomness: the same stream for a seed whatever the threads (internal).

#include <cstdint>

namespace nearscape {

/// splitmix64's finaliser: a well-mixed 64-bit value from any 64-bit input. constexpr, so CUDA
/// kernels call the same function (--expt-relaxed-constexpr).
constexpr std::uint64_t mixBits(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace nearscape
