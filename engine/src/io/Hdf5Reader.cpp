// ann-benchmarks HDF5 files: "train" (the data), "test" (queries), "neighbors" and "distances"
// (ground truth), and the root attribute "distance" (the metric).
//
// The file is untrusted: every dataset's declared shape is checked against the bytes the file
// really stores for it before anything is allocated (an unwritten dataset reads as fill values,
// so a 1 KB file could otherwise declare terabytes), data in external files or virtual datasets
// is refused (a file must not make us open other paths), and the "distance" attribute is read
// whatever string type it has, one string only.
#include "io/Convert.h"
#include "io/Readers.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace nearscape::io {
namespace {

// Debian's libhdf5 is not built thread-safe: one HDF5 call sequence at a time.
std::mutex& hdf5Mutex() {
  static std::mutex m;
  return m;
}

class Handle {
public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : m_id(id), m_close(close) {}
  ~Handle() {
    if (m_id >= 0)
      m_close(m_id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : m_id(other.m_id), m_close(other.m_close) { other.m_id = -1; }
  hid_t get() const { return m_id; }
  bool valid() const { return m_id >= 0; }
  void reset(hid_t id) {
    if (m_id >= 0)
      m_close(m_id);
    m_id = id;
  }

private:
  hid_t m_id;
  herr_t (*m_close)(hid_t);
};

/// An open HDF5 file and what messages need to know about it.
struct Hdf5File {
  std::string name;
  std::uint64_t fileSize = 0;
  Handle file{-1, H5Fclose};
};

void openFile(const std::filesystem::path& path, Hdf5File& f) {
  f.name = path.string();
  // Stat first: HDF5 opens by name, and a FIFO or a device must never be opened.
  ::close(openRegularFile(path, &f.fileSize));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // errors become our exceptions, not stderr noise
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw FormatError(f.name + ": not an HDF5 file (or truncated)");
  f.file.reset(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.file.valid())
    throw FormatError(f.name + ": cannot open as HDF5 (truncated or corrupt)");
}

/// A rank-2 numeric dataset kept in this file; its shape read, not yet checked against what the
/// file stores (requireStored does, before reading).
struct Dataset2D {
  Handle id{-1, H5Dclose};
  std::uint64_t rows = 0, cols = 0;
  std::uint64_t fileBytes = 0; ///< declared: rows · cols · the file type's size
  bool wide = false;           ///< floating point wider than float32 (float64)
};

bool hasDataset(const Hdf5File& f, const char* dataset) {
  return H5Lexists(f.file.get(), dataset, H5P_DEFAULT) > 0;
}

void requireLocalStorage(const Hdf5File& f, hid_t ds, const char* dataset) {
  Handle plist(H5Dget_create_plist(ds), H5Pclose);
  if (!plist.valid())
    throw FormatError(f.name + ": cannot read the layout of dataset '" + dataset + "'");
  const H5D_layout_t layout = H5Pget_layout(plist.get());
  if (layout == H5D_VIRTUAL || H5Pget_external_count(plist.get()) > 0)
    throw FormatError(f.name + ": dataset '" + dataset +
                      "' keeps its data in other files "
                      "(external or virtual storage), which Nearscape does not follow");
  if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT)
    throw FormatError(f.name + ": dataset '" + dataset + "' has an unknown storage layout");
}

/// The most logical bytes `stored` bytes of this dataset can hold: as many, or up to the
/// deflate ratio when its chunks are compressed.
std::uint64_t storableBytes(hid_t ds, std::uint64_t stored) {
  Handle plist(H5Dget_create_plist(ds), H5Pclose);
  const bool filtered =
      H5Pget_layout(plist.get()) == H5D_CHUNKED && H5Pget_nfilters(plist.get()) > 0;
  std::uint64_t limit = stored;
  if (filtered && __builtin_mul_overflow(stored, kMaxDeflateRatio, &limit))
    limit = UINT64_MAX;
  return limit;
}

/// Refuses a dataset whose declared size the file does not store (unwritten or truncated).
void requireStored(const Hdf5File& f, hid_t ds, const char* dataset, std::uint64_t declared) {
  const std::uint64_t stored = H5Dget_storage_size(ds);
  if (stored > f.fileSize)
    throw FormatError(f.name + ": truncated: dataset '" + dataset + "' stores " +
                      describeBytes(stored) + " but the file holds " + describeBytes(f.fileSize));
  if (declared > storableBytes(ds, stored))
    throw FormatError(f.name + ": dataset '" + dataset + "' declares " + describeBytes(declared) +
                      " of values but the file stores only " + describeBytes(stored) +
                      " of them (unwritten or truncated)");
}

Dataset2D openDataset2D(const Hdf5File& f, const char* dataset) {
  Dataset2D d;
  d.id.reset(H5Dopen2(f.file.get(), dataset, H5P_DEFAULT));
  if (!d.id.valid())
    throw FormatError(f.name + ": cannot open dataset '" + dataset + "'");
  Handle space(H5Dget_space(d.id.get()), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank != 2)
    throw FormatError(f.name + ": dataset '" + dataset + "' has rank " + std::to_string(rank) +
                      ", expected 2");
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  Handle type(H5Dget_type(d.id.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw FormatError(f.name + ": dataset '" + dataset + "' is not numeric");
  requireLocalStorage(f, d.id.get(), dataset);
  const std::string what = std::string("the shape of dataset '") + dataset + "'";
  const std::uint64_t count = checkedProduct(dims[0], dims[1], f.name, what);
  d.fileBytes = checkedProduct(count, H5Tget_size(type.get()), f.name, what);
  if (count > std::uint64_t(INT64_MAX) / 8)
    throw FormatError(f.name + ": " + what + " overflows");
  d.rows = dims[0];
  d.cols = dims[1];
  d.wide = cls == H5T_FLOAT && H5Tget_size(type.get()) > sizeof(float);
  return d;
}

/// A float64 dataset read as doubles a block of rows at a time, each block converted with
/// float32's range checked: HDF5's own conversion makes ±Inf or zero of what float32 cannot hold.
void readWideRows(const Hdf5File& f, const Dataset2D& d, const char* dataset, float* out) {
  const hsize_t block = std::max<hsize_t>(1, (hsize_t(1) << 20) / d.cols); // ~8 MB of doubles
  std::vector<double> buffer(std::size_t(std::min<hsize_t>(block, d.rows) * d.cols));
  Handle fileSpace(H5Dget_space(d.id.get()), H5Sclose);
  const std::string name = f.name + ": dataset '" + dataset + "'";
  for (hsize_t row = 0; row < d.rows; row += block) {
    const hsize_t start[2] = {row, 0}, count[2] = {std::min<hsize_t>(block, d.rows - row), d.cols};
    Handle memSpace(H5Screate_simple(2, count, nullptr), H5Sclose);
    if (!fileSpace.valid() || !memSpace.valid() ||
        H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(d.id.get(), H5T_NATIVE_DOUBLE, memSpace.get(), fileSpace.get(), H5P_DEFAULT,
                buffer.data()) < 0)
      throw FormatError(name + ": cannot read (truncated or corrupt)");
    convertFloat64Rows([&buffer](std::size_t i) { return buffer[i]; }, std::int64_t(count[0]),
                       std::int64_t(d.cols), out + row * d.cols, std::int64_t(row), name);
  }
}

template <typename T>
Matrix<T> readMatrix(const Hdf5File& f, const char* dataset, hid_t memType, bool required) {
  if (!hasDataset(f, dataset)) {
    if (required)
      throw FormatError(f.name + ": no '" + dataset + "' dataset (not an ann-benchmarks file?)");
    return {};
  }
  const Dataset2D d = openDataset2D(f, dataset);
  requireStored(f, d.id.get(), dataset, d.fileBytes);
  const std::uint64_t count = d.rows * d.cols;
  if (required && count == 0)
    throw FormatError(f.name + ": dataset '" + dataset + "' is empty");
  requireFitsInMemory(count * sizeof(T), f.name, std::string("dataset '") + dataset + "'");
  std::vector<T> values(count);
  if constexpr (std::is_same_v<T, float>) {
    if (d.wide && count > 0) {
      readWideRows(f, d, dataset, values.data());
      return Matrix<T>(std::move(values), std::int64_t(d.rows), std::int64_t(d.cols));
    }
  }
  if (count > 0 && H5Dread(d.id.get(), memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw FormatError(f.name + ": cannot read dataset '" + dataset + "' (truncated or corrupt)");
  return Matrix<T>(std::move(values), std::int64_t(d.rows), std::int64_t(d.cols));
}

/// {rows, cols} of a dataset from its header, {0, 0} when absent.
std::pair<std::int64_t, std::int64_t> shapeOf(const Hdf5File& f, const char* dataset) {
  if (!hasDataset(f, dataset))
    return {0, 0};
  const Dataset2D d = openDataset2D(f, dataset);
  return {std::int64_t(d.rows), std::int64_t(d.cols)};
}

// The "distance" attribute: h5py writes a variable-length UTF-8 string, other tools a fixed-length
// ASCII one; a one-element array of either is read too. Anything else is refused, never guessed.
constexpr std::size_t kMaxAttributeBytes = 4096;

std::string readVariableString(const std::string& name, hid_t attr, hid_t fileType) {
  Handle memType(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(memType.get(), H5T_VARIABLE);
  H5Tset_cset(memType.get(), H5Tget_cset(fileType)); // ASCII ↔ UTF-8 has no conversion path
  char* value = nullptr;
  if (H5Aread(attr, memType.get(), &value) < 0)
    throw FormatError(name + ": cannot read the 'distance' attribute (corrupt)");
  if (!value)
    return {};
  std::string s(value, strnlen(value, kMaxAttributeBytes + 1));
  H5free_memory(value);
  return s;
}

std::string readFixedString(const std::string& name, hid_t attr, hid_t fileType) {
  const std::size_t size = H5Tget_size(fileType);
  if (size == 0 || size > kMaxAttributeBytes)
    throw FormatError(name + ": the 'distance' attribute is not a short string");
  std::string s(size, '\0');
  if (H5Aread(attr, fileType, s.data()) < 0)
    throw FormatError(name + ": cannot read the 'distance' attribute (corrupt)");
  s.resize(strnlen(s.data(), size));
  if (H5Tget_strpad(fileType) == H5T_STR_SPACEPAD)
    s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

std::string readDistanceAttribute(const Hdf5File& f) {
  if (H5Aexists(f.file.get(), "distance") <= 0)
    return {};
  Handle attr(H5Aopen(f.file.get(), "distance", H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (!attr.valid() || !type.valid() || !space.valid())
    throw FormatError(f.name + ": cannot read the 'distance' attribute (corrupt)");
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw FormatError(f.name + ": the 'distance' attribute is not a string");
  // Reading into one string's buffer what holds several would overrun it: one element only.
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points != 1)
    throw FormatError(f.name + ": the 'distance' attribute holds " + std::to_string(points) +
                      " strings, expected one (the metric's name)");
  return H5Tis_variable_str(type.get()) > 0 ? readVariableString(f.name, attr.get(), type.get())
                                            : readFixedString(f.name, attr.get(), type.get());
}

void readMetric(const Hdf5File& f, Dataset& ds) {
  const std::string distance = readDistanceAttribute(f);
  if (distance.empty())
    return;
  ds.metric = parseMetric(distance);
  if (!ds.metric)
    throw FormatError(f.name + ": unsupported distance attribute '" + printableText(distance, 80) +
                      "' (supported: euclidean, angular, dot)");
}

void checkQueryShapes(const std::string& name, const QueryShapes& s, std::int64_t dim) {
  if (s.queryRows > 0 && s.queryCols != dim)
    throw FormatError(name + ": 'test' has dimension " + std::to_string(s.queryCols) +
                      " but 'train' has " + std::to_string(dim));
  if (s.truthRows > 0 && s.truthRows != s.queryRows)
    throw FormatError(name + ": 'neighbors' has " + std::to_string(s.truthRows) +
                      " rows but 'test' has " + std::to_string(s.queryRows));
}

/// Ground-truth ids index the data: -1 (no neighbour) or a row of 'train'. (HDF5 clamps int64
/// ids beyond int32 when converting, so such files fail here instead of pointing elsewhere.)
void checkTruthIds(const std::string& name, const Matrix<std::int32_t>& ids, std::int64_t rows) {
  const std::int32_t* p = ids.data();
  const std::uint64_t count = std::uint64_t(ids.rows()) * std::uint64_t(ids.cols());
  for (std::uint64_t i = 0; i < count; ++i)
    if (p[i] < -1 || p[i] >= rows)
      throw FormatError(name + ": 'neighbors' holds id " + std::to_string(p[i]) + " at row " +
                        std::to_string(i / std::uint64_t(ids.cols()) + 1) + ", column " +
                        std::to_string(i % std::uint64_t(ids.cols()) + 1) +
                        ", outside the data's " + std::to_string(rows) + " rows");
}

QueryShapes readQueryShapes(const Hdf5File& f) {
  QueryShapes s;
  std::tie(s.queryRows, s.queryCols) = shapeOf(f, "test");
  std::tie(s.truthRows, s.truthCols) = shapeOf(f, "neighbors");
  return s;
}

} // namespace

Dataset readHdf5(const std::filesystem::path& path, bool loadQueries) {
  std::lock_guard lock(hdf5Mutex());
  Hdf5File f;
  openFile(path, f);
  Dataset ds;
  ds.path = f.name;
  ds.format = "hdf5";
  ds.sourceDtype = "float32";
  readMetric(f, ds); // first: a bad attribute is refused before the data is read
  ds.vectors = readMatrix<float>(f, "train", H5T_NATIVE_FLOAT, true);
  checkQueryShapes(f.name, readQueryShapes(f), ds.dim());
  if (loadQueries) {
    ds.queries = readMatrix<float>(f, "test", H5T_NATIVE_FLOAT, false);
    ds.truthIds = readMatrix<std::int32_t>(f, "neighbors", H5T_NATIVE_INT32, false);
    ds.truthDistances = readMatrix<float>(f, "distances", H5T_NATIVE_FLOAT, false);
    checkTruthIds(f.name, ds.truthIds, ds.size());
  }
  return ds;
}

QueryShapes readHdf5QueryShapes(const std::filesystem::path& path) {
  std::lock_guard lock(hdf5Mutex());
  Hdf5File f;
  openFile(path, f);
  return readQueryShapes(f);
}

} // namespace nearscape::io
