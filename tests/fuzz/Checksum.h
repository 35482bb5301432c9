#pragma once
// Our graph and index files end with the XXH3-64 of every byte before it. A fuzzer's mutation
// almost never keeps that right, so the targets recompute it: the input reaches the header and
// body checks behind the checksum instead of stopping at it.

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace nearscape::fuzz {

inline std::string withValidChecksum(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size >= 24) {
    const std::uint64_t sum = XXH3_64bits(bytes.data(), size - 8);
    std::memcpy(bytes.data() + size - 8, &sum, 8);
  }
  return bytes;
}

} // namespace nearscape::fuzz
