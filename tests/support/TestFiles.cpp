#include "TestFiles.h"

#include <QFile>

#include <hdf5.h>
#include <zlib.h>

#include <random>

namespace nearscape::test {

bool writeBytes(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QByteArray readBytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray npyBytes(const std::string& descr, const std::vector<std::int64_t>& shape,
                    const QByteArray& data, bool fortran) {
  std::string shapeText = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    shapeText += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  shapeText += ")";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shapeText + ", }";
  std::size_t total = 10 + dict.size() + 1;
  dict.append((total + 63) / 64 * 64 - total, ' ');
  dict.push_back('\n');
  QByteArray out;
  out.append("\x93NUMPY\x01\x00", 8);
  out.append(char(dict.size() & 0xff));
  out.append(char(dict.size() >> 8));
  out.append(dict.data(), qsizetype(dict.size()));
  out.append(data);
  return out;
}

QByteArray idxBytes(int type, const std::vector<std::uint32_t>& dims, const QByteArray& data) {
  QByteArray out;
  out.append(char(0));
  out.append(char(0));
  out.append(char(type));
  out.append(char(dims.size()));
  for (const auto d : dims) {
    out.append(char((d >> 24) & 0xff));
    out.append(char((d >> 16) & 0xff));
    out.append(char((d >> 8) & 0xff));
    out.append(char(d & 0xff));
  }
  out.append(data);
  return out;
}

bool writeGzip(const QString& path, const QByteArray& bytes) {
  gzFile f = gzopen(path.toLocal8Bit().constData(), "wb");
  if (!f)
    return false;
  const int written = gzwrite(f, bytes.constData(), unsigned(bytes.size()));
  gzclose(f);
  return written == bytes.size();
}

bool writeAnnHdf5(const QString& path, const std::vector<float>& train, std::uint64_t n,
                  std::uint64_t d, const std::string& distance, bool variableLength) {
  const hid_t f =
      H5Fcreate(path.toLocal8Bit().constData(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0)
    return false;
  const hsize_t dims[2] = {n, d};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t ds =
      H5Dcreate2(f, "train", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t status = H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, train.data());
  H5Dclose(ds);
  H5Sclose(space);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, variableLength ? H5T_VARIABLE : distance.size());
  if (variableLength)
    H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(f, "distance", type, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = distance.c_str();
  status |= variableLength ? H5Awrite(attr, type, &text) : H5Awrite(attr, type, text);
  H5Aclose(attr);
  H5Sclose(scalar);
  H5Tclose(type);
  return H5Fclose(f) >= 0 && status >= 0;
}

std::vector<float> randomFloats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v)
    x = dist(rng);
  return v;
}

} // namespace nearscape::test
