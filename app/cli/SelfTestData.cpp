#include "SelfTestData.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/Npy.h"

#include <hdf5.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <random>

namespace nearscape::cli {
namespace {

namespace fs = std::filesystem;

void writeBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out.flush())
    throw WriteError(path.string() + ": cannot write");
}

template <typename T> void append(std::string& bytes, T value) {
  bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void appendBigEndian(std::string& bytes, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    bytes.push_back(char((value >> shift) & 0xff));
}

/// TEXMEX records: the dimension, then the row as float32 ('f'), uint8 ('b') or int32 ('i').
std::string vecs(const SelfTestSet& set, char kind) {
  std::string bytes;
  for (int i = 0; i < set.kRows; ++i) {
    append(bytes, std::int32_t(set.kDim));
    for (int j = 0; j < set.kDim; ++j) {
      const std::uint8_t v = set.values[std::size_t(i) * set.kDim + j];
      if (kind == 'f')
        append(bytes, float(v));
      else if (kind == 'b')
        append(bytes, v);
      else
        append(bytes, std::int32_t(v));
    }
  }
  return bytes;
}

std::string tsv(const SelfTestSet& set) {
  std::string text;
  for (int i = 0; i < set.kRows; ++i)
    for (int j = 0; j < set.kDim; ++j)
      text += std::to_string(set.values[std::size_t(i) * set.kDim + j]) +
              (j + 1 == set.kDim ? "\n" : "\t");
  return text;
}

/// MNIST's layout: magic 0x00000803 (ubyte, 3 dims), the dims big-endian, then the images.
std::string idxImages(const SelfTestSet& set) {
  std::string bytes;
  appendBigEndian(bytes, 0x00000803u);
  for (int dim : {set.kRows, set.kSide, set.kSide})
    appendBigEndian(bytes, std::uint32_t(dim));
  bytes.append(reinterpret_cast<const char*>(set.values.data()), set.values.size());
  return bytes;
}

void writeGzip(const fs::path& path, const std::string& bytes) {
  gzFile out = gzopen(path.c_str(), "wb");
  const bool ok = out && gzwrite(out, bytes.data(), unsigned(bytes.size())) == int(bytes.size());
  if (!out || gzclose(out) != Z_OK || !ok)
    throw WriteError(path.string() + ": cannot write");
}

/// An ann-benchmarks file: `train` (float32) and the `distance` attribute.
void writeHdf5(const fs::path& path, const Matrix<float>& data) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    throw WriteError(path.string() + ": cannot create");
  const hsize_t dims[2] = {hsize_t(data.rows()), hsize_t(data.cols())};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t set =
      H5Dcreate2(file, "train", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok =
      set >= 0 && H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0;
  const char* metric = "euclidean";
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, std::strlen(metric));
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(file, "distance", text, scalar, H5P_DEFAULT, H5P_DEFAULT);
  ok = ok && attr >= 0 && H5Awrite(attr, text, metric) >= 0;
  H5Aclose(attr);
  H5Sclose(scalar);
  H5Tclose(text);
  H5Dclose(set);
  H5Sclose(space);
  if (H5Fclose(file) < 0 || !ok)
    throw WriteError(path.string() + ": cannot write");
}

} // namespace

Matrix<float> SelfTestSet::asFloat() const {
  return Matrix<float>(std::vector<float>(values.begin(), values.end()), kRows, kDim);
}

SelfTestSet makeSelfTestSet() {
  SelfTestSet set;
  std::mt19937 rng(20261123); // raw mt19937 output is the same everywhere; distributions are not
  std::vector<int> centres(std::size_t(set.kClusters) * set.kDim);
  for (int& c : centres)
    c = 40 + int(rng() % 176);
  for (int i = 0; i < set.kRows; ++i) {
    const int c = i % set.kClusters;
    set.cluster.push_back(c);
    for (int j = 0; j < set.kDim; ++j)
      set.values.push_back(
          std::uint8_t(centres[std::size_t(c) * set.kDim + j] + int(rng() % 41) - 20));
  }
  return set;
}

std::vector<SelfTestFile> writeSelfTestFiles(const SelfTestSet& set, const fs::path& folder) {
  std::vector<SelfTestFile> files = {
      {"npy", folder / "selftest.npy"},
      {"fvecs", folder / "selftest.fvecs"},
      {"bvecs", folder / "selftest.bvecs"},
      {"ivecs", folder / "selftest.ivecs"},
      {"tsv", folder / "selftest.tsv"},
      {"hdf5", folder / "selftest.hdf5"},
      {"idx", folder / "selftest-images-idx3-ubyte"},
      {"idx.gz", folder / "selftest-images-idx3-ubyte.gz"},
  };
  const Matrix<float> data = set.asFloat();
  writeNpy(files[0].path, data.view());
  writeBytes(files[1].path, vecs(set, 'f'));
  writeBytes(files[2].path, vecs(set, 'b'));
  writeBytes(files[3].path, vecs(set, 'i'));
  writeBytes(files[4].path, tsv(set));
  writeHdf5(files[5].path, data);
  writeBytes(files[6].path, idxImages(set));
  writeGzip(files[7].path, idxImages(set));
  return files;
}

} // namespace nearscape::cli
