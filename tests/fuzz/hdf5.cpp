// ann-benchmarks HDF5 files through our reader's checks: openDataset (with loadQueries: every
// dataset the reader knows) and queryShapes over well-formed files that this target writes with
// libhdf5 from a description. The input is, for each of train, test, neighbors, distances, a
// flags byte (bit 0 present, bits 1-3 the type, bit 4 chunked + deflate, bit 5 declared but
// never written, bit 6 rank 1 or 3 instead of 2, bit 7 with bit 5: dimensions × 65,536), rows
// and columns (a byte each); then the 'distance' attribute (a kind byte: none, fixed, variable
// UTF-8, variable ASCII, an array of two strings, an integer, space-padded; a length byte, its
// characters); the values are the bytes that remain, repeated. So the reader's own checks
// (shapes, types, storage against declared sizes, ids against rows, the attribute's forms) meet
// every combination, not only those a corrupt file reaches.
//
// Corrupt bytes given to libhdf5 itself are the target hdf5_raw's: they find bugs in Debian's
// libhdf5 1.10.8 (README "Hardening"), not in Nearscape, so CI does not run it.
#include "DatasetChecks.h"
#include "FuzzCommon.h"

#include "nearscape/io/DatasetReader.h"

#include <hdf5.h>

#include <string>
#include <vector>

namespace {

struct Cursor {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t byte() {
    if (n == 0)
      return 0;
    --n;
    return *p++;
  }
};

hid_t typeFor(int code) {
  static const hid_t* const kTypes[8] = {&H5T_IEEE_F32LE_g, &H5T_IEEE_F64LE_g, &H5T_STD_I32LE_g,
                                         &H5T_STD_I64LE_g,  &H5T_STD_U8LE_g,   &H5T_STD_I8LE_g,
                                         &H5T_STD_U16BE_g,  &H5T_IEEE_F32BE_g};
  H5open();
  return *kTypes[code & 7];
}

void writeDataset(hid_t file, const char* name, Cursor& c,
                  const std::vector<std::uint8_t>& values) {
  const std::uint8_t flags = c.byte();
  const hsize_t rows = c.byte(), cols = c.byte();
  if (!(flags & 1))
    return;
  const hid_t type = typeFor(flags >> 1);
  const bool chunked = flags & 0x10, unwritten = flags & 0x20, otherRank = flags & 0x40;
  const hsize_t scale = unwritten && (flags & 0x80) ? 65536 : 1;
  hsize_t dims[3] = {rows * scale, cols * scale, 2};
  const int rank = otherRank ? (rows % 2 ? 1 : 3) : 2;
  const hid_t space = H5Screate_simple(rank, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunked) {
    hsize_t chunk[3] = {dims[0] ? std::min<hsize_t>(dims[0], 16) : 1,
                        dims[1] ? std::min<hsize_t>(dims[1], 16) : 1, 2};
    H5Pset_chunk(dcpl, rank, chunk);
    H5Pset_deflate(dcpl, 6);
  }
  const hid_t ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds >= 0 && !unwritten) {
    hsize_t count = 1;
    for (int i = 0; i < rank; ++i)
      count *= dims[i];
    const std::size_t bytes = std::size_t(count) * H5Tget_size(type);
    std::vector<std::uint8_t> buffer(bytes);
    for (std::size_t i = 0; i < bytes && !values.empty(); ++i)
      buffer[i] = values[i % values.size()];
    if (bytes)
      H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data());
  }
  if (ds >= 0)
    H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

void writeDistance(hid_t file, Cursor& c) {
  const int kind = c.byte() % 7;
  const std::size_t length = c.byte() % 48;
  std::string text;
  for (std::size_t i = 0; i < length; ++i)
    text.push_back(char(c.byte()));
  if (kind == 0)
    return;
  hid_t type = -1, space = -1;
  const void* buffer = nullptr;
  const char* vlen = text.c_str();
  std::string two = text + std::string(text.size() + 1, 'x');
  int integer = int(length);
  if (kind == 5) {
    type = H5Tcopy(H5T_NATIVE_INT);
    space = H5Screate(H5S_SCALAR);
    buffer = &integer;
  } else {
    type = H5Tcopy(H5T_C_S1);
    if (kind == 2 || kind == 3) {
      H5Tset_size(type, H5T_VARIABLE);
      H5Tset_cset(type, kind == 2 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
      buffer = &vlen;
      space = H5Screate(H5S_SCALAR);
    } else {
      H5Tset_size(type, text.size() + 1);
      if (kind == 6)
        H5Tset_strpad(type, H5T_STR_SPACEPAD);
      const hsize_t n = kind == 4 ? 2 : 1;
      space = kind == 4 ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_SCALAR);
      buffer = kind == 4 ? two.data() : text.c_str();
    }
  }
  const hid_t attr = H5Acreate2(file, "distance", type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr >= 0) {
    H5Awrite(attr, type, buffer);
    H5Aclose(attr);
  }
  H5Sclose(space);
  H5Tclose(type);
}

} // namespace

NEARSCAPE_FUZZ_TARGET(hdf5) {
  using namespace nearscape;
  const std::filesystem::path path = fuzz::scratchFolder() / "fuzz.hdf5";
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    std::abort();
  Cursor c{data, size};
  Cursor header = c;
  // The description first (4 × 3 bytes, then the attribute), the values after it.
  for (int i = 0; i < 12; ++i)
    c.byte();
  c.byte();
  const std::size_t attrLength = c.byte() % 48;
  for (std::size_t i = 0; i < attrLength; ++i)
    c.byte();
  const std::vector<std::uint8_t> values(c.p, c.p + c.n);
  for (const char* name : {"train", "test", "neighbors", "distances"})
    writeDataset(file, name, header, values);
  writeDistance(file, header);
  H5Fclose(file);
  fuzz::expectEngineErrorsOnly([&] {
    OpenOptions options;
    options.loadQueries = true;
    fuzz::exerciseDataset(openDataset(path, options));
  });
  fuzz::expectEngineErrorsOnly([&] { queryShapes(path); });
}
