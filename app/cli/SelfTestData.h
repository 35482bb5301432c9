#pragma once
// The self-test's tiny data set: generated, not shipped, so it is the same on every machine and
// needs no data folder. Small integers, so that every format holds it exactly.

#include "nearscape/core/Matrix.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nearscape::cli {

struct SelfTestSet {
  static constexpr int kRows = 300, kSide = 4, kDim = kSide * kSide, kClusters = 6;
  std::vector<std::uint8_t> values; ///< kRows × kDim, each 0..255
  std::vector<int> cluster;         ///< kRows: the cluster each row was drawn around
  Matrix<float> asFloat() const;
};

/// Six well-separated clusters, a fixed seed.
SelfTestSet makeSelfTestSet();

/// One file of the set in one format.
struct SelfTestFile {
  std::string format;
  std::filesystem::path path;
};

/// Writes the set into `folder` as .npy, .fvecs, .bvecs, .ivecs, .tsv, .hdf5 and IDX (plain and
/// gzip): every format openDataset reads. Throws WriteError.
std::vector<SelfTestFile> writeSelfTestFiles(const SelfTestSet& set,
                                             const std::filesystem::path& folder);

} // namespace nearscape::cli
