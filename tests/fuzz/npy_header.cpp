// parseNpyHeader on arbitrary bytes, in memory: what it accepts must describe data inside them.
#include "FuzzCommon.h"

#include "nearscape/io/Npy.h"

NEARSCAPE_FUZZ_TARGET(npy_header) {
  nearscape::fuzz::expectEngineErrorsOnly([&] {
    const nearscape::NpyHeader h = nearscape::parseNpyHeader(data, size, "fuzz.npy");
    std::size_t count = 1;
    for (const auto dim : h.shape)
      if (dim < 0 || __builtin_mul_overflow(count, std::size_t(dim), &count))
        std::abort();
    std::size_t bytes = 0;
    if (h.itemSize == 0 || h.dataOffset > size ||
        __builtin_mul_overflow(count, h.itemSize, &bytes) || bytes > size - h.dataOffset)
      std::abort(); // an accepted header promises only what the file holds
  });
}
