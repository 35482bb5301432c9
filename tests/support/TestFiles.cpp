#include "TestFiles.h"

#include <QFile>

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

std::vector<float> randomFloats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v)
    x = dist(rng);
  return v;
}

} // namespace nearscape::test
