#pragma once
// What the programs do with a dataset right after opening it (nearscape-cli info, the GUI's
// first map): scan for non-finite values, check the value range, read labels and text. Run on
// whatever a fuzzed file opened as, so that a reader returning an inconsistent Dataset (a
// shape that disagrees with its storage, labels beyond labelNames) shows up under ASan.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"

#include <cstdlib>

namespace nearscape::fuzz {

inline void exerciseDataset(const Dataset& ds) {
  const MatrixView<float> v = ds.vectors.view();
  if (v.rows < 0 || v.cols < 0 || (v.rows * v.cols > 0 && !v.data))
    std::abort();
  scanNonFinite(v);
  try {
    requireFinite(v, "fuzzed data");
  } catch (const Error&) {
  }
  volatile float sink = 0;
  if (v.rows > 0 && v.cols > 0)
    sink = sink + v.data[0] + v.data[v.rows * v.cols - 1];
  if (ds.hasLabels() && std::int64_t(ds.labels.size()) != ds.size())
    std::abort(); // labels must be one per item
  for (std::int64_t i = 0; i < std::int64_t(ds.labels.size()); ++i)
    sink = sink + float(ds.labelOf(i).size());
  for (std::int64_t i = 0; i < ds.size() && ds.textColumn >= 0; ++i)
    sink = sink + float(ds.textOf(i).size());
  if (!ds.thumbnails.empty()) {
    const auto& t = ds.thumbnails;
    if (t.pixels.rows() != ds.size() ||
        t.pixels.cols() != std::int64_t(t.width) * t.height * t.channels)
      std::abort(); // a thumbnail per item, of its declared size
    sink = sink + t.image(ds.size() - 1)[t.pixels.cols() - 1];
  }
  if (ds.truthIds.rows() > 0) {
    const auto ids = ds.truthIds.view();
    for (std::int64_t i = 0; i < ids.rows * ids.cols; ++i)
      if (ids.data[i] < -1 || ids.data[i] >= ds.size())
        std::abort(); // ground truth names rows of the data
  }
  (void)sink;
}

} // namespace nearscape::fuzz
