// ann-benchmarks HDF5 files: "train" (the data), "test" (queries), "neighbors" and "distances"
// (ground truth), and the root attribute "distance" (the metric).
#include "io/Readers.h"

#include "nearscape/core/Error.h"

#include <hdf5.h>

#include <cstring>
#include <mutex>

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
  hid_t get() const { return m_id; }
  bool valid() const { return m_id >= 0; }

private:
  hid_t m_id;
  herr_t (*m_close)(hid_t);
};

template <typename T>
Matrix<T> readMatrix(hid_t file, const char* dataset, hid_t memType, const std::string& name,
                     bool required) {
  if (H5Lexists(file, dataset, H5P_DEFAULT) <= 0) {
    if (required)
      throw FormatError(name + ": no '" + dataset + "' dataset (not an ann-benchmarks file?)");
    return {};
  }
  Handle ds(H5Dopen2(file, dataset, H5P_DEFAULT), H5Dclose);
  if (!ds.valid())
    throw FormatError(name + ": cannot open dataset '" + dataset + "'");
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 2)
    throw FormatError(name + ": dataset '" + dataset + "' has rank " + std::to_string(rank) +
                      ", expected 2");
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw FormatError(name + ": dataset '" + dataset + "' is not numeric");
  std::size_t count = 0;
  if (__builtin_mul_overflow(std::size_t(dims[0]), std::size_t(dims[1]), &count))
    throw FormatError(name + ": dataset '" + dataset + "' is too large");
  if (required && count == 0)
    throw FormatError(name + ": dataset '" + dataset + "' is empty");
  std::vector<T> values(count);
  if (count > 0 &&
      H5Dread(ds.get(), memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw FormatError(name + ": cannot read dataset '" + dataset + "' (truncated or corrupt)");
  return Matrix<T>(std::move(values), std::int64_t(dims[0]), std::int64_t(dims[1]));
}

std::string readStringAttribute(hid_t file, const char* attr) {
  if (H5Aexists(file, attr) <= 0)
    return {};
  Handle a(H5Aopen(file, attr, H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    return {};
  if (H5Tis_variable_str(type.get()) > 0) {
    char* value = nullptr;
    Handle memType(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memType.get(), H5T_VARIABLE);
    if (H5Aread(a.get(), memType.get(), &value) < 0 || !value)
      return {};
    std::string s(value);
    H5free_memory(value);
    return s;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string s(size, '\0');
  if (H5Aread(a.get(), type.get(), s.data()) < 0)
    return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

} // namespace

Dataset readHdf5(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::lock_guard lock(hdf5Mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // errors become our exceptions, not stderr noise
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw FormatError(name + ": not an HDF5 file (or truncated)");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid())
    throw FormatError(name + ": cannot open as HDF5 (truncated or corrupt)");

  Dataset ds;
  ds.path = name;
  ds.format = "hdf5";
  ds.sourceDtype = "float32";
  ds.vectors = readMatrix<float>(file.get(), "train", H5T_NATIVE_FLOAT, name, true);
  ds.queries = readMatrix<float>(file.get(), "test", H5T_NATIVE_FLOAT, name, false);
  ds.truthIds = readMatrix<std::int32_t>(file.get(), "neighbors", H5T_NATIVE_INT32, name, false);
  ds.truthDistances = readMatrix<float>(file.get(), "distances", H5T_NATIVE_FLOAT, name, false);
  if (!ds.queries.empty() && ds.queries.cols() != ds.vectors.cols())
    throw FormatError(name + ": 'test' has dimension " + std::to_string(ds.queries.cols()) +
                      " but 'train' has " + std::to_string(ds.vectors.cols()));
  if (!ds.truthIds.empty() && ds.truthIds.rows() != ds.queries.rows())
    throw FormatError(name + ": 'neighbors' has " + std::to_string(ds.truthIds.rows()) +
                      " rows but 'test' has " + std::to_string(ds.queries.rows()));
  const std::string distance = readStringAttribute(file.get(), "distance");
  if (!distance.empty()) {
    ds.metric = parseMetric(distance);
    if (!ds.metric)
      throw FormatError(name + ": unsupported distance attribute '" + distance + "'");
  }
  return ds;
}

} // namespace nearscape::io
