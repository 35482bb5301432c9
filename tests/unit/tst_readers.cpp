// Readers: round trips for every format and dtype, and every kind of bad input.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/io/AtomicFile.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace nearscape;
using namespace nearscape::test;

class TestReaders : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString path(const QString& name) const { return m_dir.filePath(name); }

  template <typename Error> void expectError(const QString& file, const char* fragment) {
    try {
      openDataset(file.toStdString());
      QFAIL(qPrintable("no error for " + file));
    } catch (const Error& e) {
      const QString message = QString::fromUtf8(e.what());
      QVERIFY2(message.contains(QFileInfo(file).fileName()),
               qPrintable("message names no file: " + message));
      QVERIFY2(message.contains(QLatin1String(fragment), Qt::CaseInsensitive),
               qPrintable("expected '" + QString(fragment) + "' in: " + message));
    }
  }

  void writeHdf5(const QString& file, const std::vector<float>& train, hsize_t n, hsize_t d,
                 const std::vector<float>& test, hsize_t nq, const std::vector<std::int32_t>& nbrs,
                 hsize_t k, const char* distance) {
    hid_t f = H5Fcreate(file.toLocal8Bit().constData(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    auto put = [&](const char* name, hid_t type, const void* data, hsize_t r, hsize_t c) {
      const hsize_t dims[2] = {r, c};
      hid_t space = H5Screate_simple(2, dims, nullptr);
      hid_t ds = H5Dcreate2(f, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
      H5Dclose(ds);
      H5Sclose(space);
    };
    put("train", H5T_NATIVE_FLOAT, train.data(), n, d);
    if (nq) {
      put("test", H5T_NATIVE_FLOAT, test.data(), nq, d);
      put("neighbors", H5T_NATIVE_INT32, nbrs.data(), nq, k);
    }
    hid_t strType = H5Tcopy(H5T_C_S1);
    H5Tset_size(strType, std::strlen(distance));
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(f, "distance", strType, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, strType, distance);
    H5Aclose(attr);
    H5Sclose(scalar);
    H5Tclose(strType);
    H5Fclose(f);
  }

  void expectGraphError(const QString& file, const char* fragment, const std::string& hash) {
    try {
      readGraphFile(file.toStdString(), hash);
      QFAIL(qPrintable("no error for " + file));
    } catch (const FormatError& e) {
      const QString message = QString::fromUtf8(e.what());
      QVERIFY2(message.contains(QFileInfo(file).fileName()) &&
                   message.contains(QLatin1String(fragment), Qt::CaseInsensitive),
               qPrintable(message));
    }
  }

private slots:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  void npyFloat32IsMappedAndExact() {
    const auto values = randomFloats(5 * 7, 1);
    QVERIFY(writeBytes(path("a.npy"), npyBytes("<f4", {5, 7}, rawBytes(values))));
    const Dataset ds = openDataset(path("a.npy").toStdString());
    QCOMPARE(ds.size(), 5);
    QCOMPARE(ds.dim(), 7);
    QVERIFY(ds.memoryMapped);
    QCOMPARE(ds.sourceDtype, std::string("float32"));
    QVERIFY(std::memcmp(ds.vectors.data(), values.data(), values.size() * 4) == 0);
    QCOMPARE(ds.contentHash.size(), std::size_t(32));
  }

  void npyOtherDtypes_data() {
    QTest::addColumn<QString>("descr");
    QTest::newRow("float64") << "<f8";
    QTest::newRow("float16") << "<f2";
    QTest::newRow("uint8") << "|u1";
    QTest::newRow("int8") << "|i1";
  }
  void npyOtherDtypes() {
    QFETCH(QString, descr);
    // Values every dtype represents exactly.
    const std::vector<double> exact = {0, 1, 2, 3, 7, 100, 5, 6, 120, 4, 9, 11};
    QByteArray payload;
    for (double v : exact) {
      if (descr == "<f8") {
        payload.append(reinterpret_cast<const char*>(&v), 8);
      } else if (descr == "<f2") {
        // binary16 of small integers: build from float bits.
        float f = float(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        std::uint16_t h = v == 0 ? 0
                                 : std::uint16_t(((bits >> 16) & 0x8000) |
                                                 ((((bits >> 23) & 0xff) - 127 + 15) << 10) |
                                                 ((bits >> 13) & 0x3ff));
        payload.append(reinterpret_cast<const char*>(&h), 2);
      } else {
        payload.append(char(std::int8_t(v)));
      }
    }
    const QString file = path("t" + descr.mid(1) + ".npy");
    QVERIFY(writeBytes(file, npyBytes(descr.toStdString(), {3, 4}, payload)));
    const Dataset ds = openDataset(file.toStdString());
    QCOMPARE(ds.size(), 3);
    QCOMPARE(ds.dim(), 4);
    QVERIFY(!ds.memoryMapped);
    for (std::size_t i = 0; i < exact.size(); ++i)
      QCOMPARE(ds.vectors.data()[i], float(exact[i]));
  }

  void npyDtypeRanges_data() {
    QTest::addColumn<QString>("descr");
    QTest::newRow("int8, every value") << "|i1";
    QTest::newRow("uint8, every value") << "|u1";
    QTest::newRow("float16, every finite value") << "<f2";
    QTest::newRow("float64, float32's extremes") << "<f8";
  }
  void npyDtypeRanges() {
    // Each dtype across its whole range — signs, subnormals, the extremes — read back and
    // compared with values worked out here from the format's definition.
    QFETCH(QString, descr);
    QByteArray payload;
    std::vector<float> expected;
    if (descr == "|i1" || descr == "|u1") {
      for (int byte = 0; byte < 256; ++byte) {
        payload.append(char(byte));
        expected.push_back(descr == "|i1" && byte >= 128 ? float(byte - 256) : float(byte));
      }
    } else if (descr == "<f2") {
      // IEEE 754 binary16: sign, 5 exponent bits (bias 15), 10 fraction bits; exponent 0 is
      // subnormal (0.fraction · 2^-14), 31 is Inf/NaN (not finite: left out).
      for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const std::uint32_t exponent = (bits >> 10) & 31, fraction = bits & 1023;
        if (exponent == 31)
          continue;
        const double magnitude = exponent == 0
                                     ? std::ldexp(double(fraction), -24)
                                     : std::ldexp(double(1024 + fraction), int(exponent) - 25);
        const std::uint16_t h = std::uint16_t(bits);
        payload.append(reinterpret_cast<const char*>(&h), 2);
        expected.push_back(float(bits & 0x8000 ? -magnitude : magnitude));
      }
    } else {
      const double values[] = {0.0,
                               -0.0,
                               -1.0,
                               0.1,
                               -123456.789,
                               double(std::numeric_limits<float>::max()),
                               -double(std::numeric_limits<float>::max()),
                               double(std::numeric_limits<float>::min()),
                               -double(std::numeric_limits<float>::denorm_min()),
                               1e-300, // below float32's range: 0
                               16777217.0};
      for (double v : values) {
        payload.append(reinterpret_cast<const char*>(&v), 8);
        expected.push_back(float(v));
      }
    }
    const auto count = std::int64_t(expected.size());
    const QString file = path("range" + descr.mid(1) + ".npy");
    // float64: one row, so that the values below float32's range sit beside the row's largest
    // and only round (a row of them alone is refused: float64BeyondFloat32IsRefused).
    const std::vector<std::int64_t> shape =
        descr == "<f8" ? std::vector<std::int64_t>{1, count} : std::vector<std::int64_t>{count, 1};
    QVERIFY(writeBytes(file, npyBytes(descr.toStdString(), shape, payload)));
    const Dataset ds = openDataset(file.toStdString());
    QCOMPARE(ds.size() * ds.dim(), count);
    const std::int64_t rows = count;
    for (std::int64_t i = 0; i < rows; ++i) {
      const float got = ds.vectors.data()[i], want = expected[std::size_t(i)];
      QVERIFY2(got == want && std::signbit(got) == std::signbit(want),
               qPrintable(QString("value %1: read %2, expected %3").arg(i).arg(got).arg(want)));
    }
  }

  void idxAndVecsDtypeRanges() {
    // IDX's signed and big-endian types and .bvecs/.ivecs across their ranges.
    auto bigEndian = [](std::uint64_t value, int bytes) {
      QByteArray out;
      for (int b = bytes - 1; b >= 0; --b)
        out.append(char((value >> (8 * b)) & 0xff));
      return out;
    };
    struct Case {
      int type, bytes;
      std::vector<std::uint64_t> raw; // the bit patterns
      std::vector<float> expected;
    };
    auto asBits = [](auto v) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof(v));
      return bits;
    };
    const std::vector<Case> cases = {
        {0x09, 1, {0x00, 0x7f, 0x80, 0xff, 0x81}, {0, 127, -128, -1, -127}},
        {0x08, 1, {0x00, 0x7f, 0x80, 0xff, 0x81}, {0, 127, 128, 255, 129}},
        {0x0B, 2, {0x0000, 0x7fff, 0x8000, 0xffff, 0x1234}, {0, 32767, -32768, -1, 4660}},
        {0x0C,
         4,
         {0, 0x00ffffff, 0xff000000, 0xffffffff, 0x80000000},
         {0, 16777215, -16777216, -1, -2147483648.0f}},
        {0x0D,
         4,
         {asBits(-1.5f), asBits(std::numeric_limits<float>::max()), asBits(-0.0f),
          asBits(std::numeric_limits<float>::denorm_min()), asBits(3.25f)},
         {-1.5f, std::numeric_limits<float>::max(), -0.0f, std::numeric_limits<float>::denorm_min(),
          3.25f}},
        {0x0E,
         8,
         {asBits(-2.5), asBits(1e-300), asBits(-0.0), asBits(1e30), asBits(0.1)},
         {-2.5f, 0.0f, -0.0f, 1e30f, 0.1f}},
    };
    for (const Case& c : cases) {
      QByteArray body;
      for (std::uint64_t raw : c.raw)
        body.append(bigEndian(raw, c.bytes));
      const QString file = path(QString("range%1-images-idx2").arg(c.type));
      QVERIFY(writeBytes(file, idxBytes(c.type, {1, std::uint32_t(c.raw.size())}, body)));
      const Dataset ds = openDataset(file.toStdString());
      QCOMPARE(ds.dim(), std::int64_t(c.raw.size()));
      for (std::size_t i = 0; i < c.expected.size(); ++i) {
        const float got = ds.vectors.data()[i];
        QVERIFY2(got == c.expected[i] && std::signbit(got) == std::signbit(c.expected[i]),
                 qPrintable(QString("IDX type %1, value %2: read %3, expected %4")
                                .arg(c.type)
                                .arg(i)
                                .arg(got)
                                .arg(c.expected[i])));
      }
    }
    // .bvecs: every byte value, unsigned; .ivecs: the int32 extremes.
    QByteArray bvecs, ivecs;
    const std::int32_t dim = 256, two = 2;
    bvecs.append(reinterpret_cast<const char*>(&dim), 4);
    for (int b = 0; b < 256; ++b)
      bvecs.append(char(b));
    ivecs.append(reinterpret_cast<const char*>(&two), 4);
    for (std::int32_t v : {std::numeric_limits<std::int32_t>::min(), -7}) {
      ivecs.append(reinterpret_cast<const char*>(&v), 4);
    }
    QVERIFY(writeBytes(path("range.bvecs"), bvecs));
    QVERIFY(writeBytes(path("range.ivecs"), ivecs));
    const Dataset b = openDataset(path("range.bvecs").toStdString());
    for (int i = 0; i < 256; ++i)
      QCOMPARE(b.vectors.data()[i], float(i));
    const Dataset iv = openDataset(path("range.ivecs").toStdString());
    QCOMPARE(iv.vectors.data()[0], -2147483648.0f);
    QCOMPARE(iv.vectors.data()[1], -7.0f);
  }

  void npyWriterRoundTrip() {
    const auto values = randomFloats(6 * 3, 2);
    writeNpy(path("w.npy").toStdString(), MatrixView<float>{values.data(), 6, 3});
    const Dataset ds = openDataset(path("w.npy").toStdString());
    QVERIFY(std::memcmp(ds.vectors.data(), values.data(), values.size() * 4) == 0);
    std::vector<std::int32_t> ids = {3, 1, 2, 0, 5, 4};
    writeNpy(path("ids.npy").toStdString(), MatrixView<std::int32_t>{ids.data(), 3, 2});
    const auto back = readNpyIds(path("ids.npy").toStdString());
    QCOMPARE(back.rows(), 3);
    QCOMPARE(back.cols(), 2);
    for (std::size_t i = 0; i < ids.size(); ++i)
      QCOMPARE(back.data()[i], std::int64_t(ids[i]));
    // No temporary files are left beside the output.
    const auto entries =
        QDir(m_dir.path()).entryList(QStringList() << ".*tmp*", QDir::Hidden | QDir::Files);
    QVERIFY2(entries.isEmpty(), qPrintable(entries.join(',')));
  }

  void failedWriteLeavesNothing() {
    const QString file = path("atomic.bin");
    QVERIFY(writeBytes(file, "old contents"));
    try {
      writeFileAtomically(file.toStdString(), [](std::FILE* f) {
        std::fputs("half of the new contents", f);
        throw IoError("disk full (simulated)");
      });
      QFAIL("the writer's error was swallowed");
    } catch (const IoError&) {
    }
    QCOMPARE(readBytes(file), QByteArray("old contents"));
    const auto leftovers =
        QDir(m_dir.path()).entryList(QStringList() << ".atomic.bin*", QDir::Hidden | QDir::Files);
    QVERIFY2(leftovers.isEmpty(), qPrintable(leftovers.join(',')));
    QVERIFY_THROWS_EXCEPTION(IoError, writeNpy((m_dir.path() + "/no/such/dir/x.npy").toStdString(),
                                               MatrixView<float>{nullptr, 0, 0}));
  }

  void vecsRoundTrip_data() {
    QTest::addColumn<QString>("ext");
    QTest::newRow("fvecs") << "fvecs";
    QTest::newRow("bvecs") << "bvecs";
    QTest::newRow("ivecs") << "ivecs";
  }
  void vecsRoundTrip() {
    QFETCH(QString, ext);
    const int n = 4, d = 3;
    QByteArray bytes;
    for (int i = 0; i < n; ++i) {
      const std::int32_t dim = d;
      bytes.append(reinterpret_cast<const char*>(&dim), 4);
      for (int j = 0; j < d; ++j) {
        const int v = i * 10 + j;
        if (ext == "fvecs") {
          const float f = float(v) + 0.5f;
          bytes.append(reinterpret_cast<const char*>(&f), 4);
        } else if (ext == "bvecs") {
          bytes.append(char(v));
        } else {
          const std::int32_t iv = v - 20;
          bytes.append(reinterpret_cast<const char*>(&iv), 4);
        }
      }
    }
    const QString file = path("v." + ext);
    QVERIFY(writeBytes(file, bytes));
    const Dataset ds = openDataset(file.toStdString());
    QCOMPARE(ds.size(), n);
    QCOMPARE(ds.dim(), d);
    const float expected = ext == "fvecs" ? 21.5f : ext == "bvecs" ? 21.0f : 1.0f;
    QCOMPARE(ds.vectors.row(2)[1], expected);
    // Truncated: drop the last byte.
    QVERIFY(writeBytes(path("trunc." + ext), bytes.left(bytes.size() - 1)));
    expectError<FormatError>(path("trunc." + ext), "truncated");
  }

  void vecsMixedDimensions() {
    QByteArray bytes;
    const std::int32_t d2 = 2, d1 = 1;
    const float f[2] = {1, 2};
    bytes.append(reinterpret_cast<const char*>(&d2), 4).append(reinterpret_cast<const char*>(f), 8);
    // A record claiming d = 1 then padded so the total size still divides: 12 bytes records.
    bytes.append(reinterpret_cast<const char*>(&d1), 4).append(reinterpret_cast<const char*>(f), 8);
    QVERIFY(writeBytes(path("mixed.fvecs"), bytes));
    expectError<FormatError>(path("mixed.fvecs"), "dimension");
  }

  void hdf5AnnBenchmarks() {
    const auto train = randomFloats(10 * 4, 3);
    const auto test = randomFloats(2 * 4, 4);
    const std::vector<std::int32_t> nbrs = {1, 2, 3, 4, 5, 6};
    writeHdf5(path("ann.hdf5"), train, 10, 4, test, 2, nbrs, 3, "angular");
    // Queries and ground truth are read only when asked; their shapes come from the headers.
    const Dataset plain = openDataset(path("ann.hdf5").toStdString());
    QVERIFY(plain.queries.empty() && plain.truthIds.empty());
    const QueryShapes shapes = queryShapes(path("ann.hdf5").toStdString());
    QCOMPARE(shapes.queryRows, 2);
    QCOMPARE(shapes.truthCols, 3);
    OpenOptions withQueries;
    withQueries.loadQueries = true;
    const Dataset ds = openDataset(path("ann.hdf5").toStdString(), withQueries);
    QCOMPARE(ds.size(), 10);
    QCOMPARE(ds.dim(), 4);
    QCOMPARE(ds.queries.rows(), 2);
    QCOMPARE(ds.truthIds.cols(), 3);
    QCOMPARE(ds.truthIds.row(1)[2], 6);
    QVERIFY(ds.metric.has_value());
    QCOMPARE(int(*ds.metric), int(Metric::Cosine));
    QVERIFY(std::memcmp(ds.vectors.data(), train.data(), train.size() * 4) == 0);
    // Truncated HDF5.
    const QByteArray bytes = readBytes(path("ann.hdf5"));
    QVERIFY(writeBytes(path("cut.hdf5"), bytes.left(bytes.size() / 2)));
    expectError<FormatError>(path("cut.hdf5"), "hdf5");
  }

  void tsvVectors() {
    QVERIFY(writeBytes(path("v.tsv"), "1\t2.5\t-3\n4\t5\t6e-1\n"));
    const Dataset ds = openDataset(path("v.tsv").toStdString());
    QCOMPARE(ds.size(), 2);
    QCOMPARE(ds.dim(), 3);
    QCOMPARE(ds.vectors.row(1)[2], 0.6f);
    QVERIFY(writeBytes(path("ragged.tsv"), "1\t2\n3\n"));
    expectError<FormatError>(path("ragged.tsv"), "line 2");
    QVERIFY(writeBytes(path("word.tsv"), "1\tx\n"));
    expectError<FormatError>(path("word.tsv"), "not a number");
  }

  void idxPlainGzAndFolder() {
    QDir(m_dir.path()).mkpath("mnist");
    const QString folder = path("mnist");
    QByteArray pixels;
    for (int i = 0; i < 3 * 2 * 2; ++i)
      pixels.append(char(i * 10));
    QVERIFY(writeGzip(folder + "/train-images-idx3-ubyte.gz", idxBytes(0x08, {3, 2, 2}, pixels)));
    QVERIFY(writeGzip(folder + "/train-labels-idx1-ubyte.gz",
                      idxBytes(0x08, {3}, QByteArray("\x01\x00\x02", 3))));
    QVERIFY(writeBytes(folder + "/t10k-images-idx3-ubyte",
                       idxBytes(0x08, {1, 2, 2}, "\x05\x06\x07\x08")));
    QVERIFY(writeBytes(folder + "/t10k-labels-idx1-ubyte", idxBytes(0x08, {1}, "\x02")));
    const Dataset ds = openDataset(folder.toStdString());
    QCOMPARE(ds.size(), 4);
    QCOMPARE(ds.dim(), 4);
    QCOMPARE(ds.vectors.row(1)[0], 40.0f); // train first
    QCOMPARE(ds.vectors.row(3)[3], 8.0f);  // then t10k
    QCOMPARE(ds.labels, (std::vector<std::int32_t>{1, 0, 2, 2}));
    QCOMPARE(ds.labelNames.size(), std::size_t(3));
    QCOMPARE(ds.labelNames[1], std::string("1")); // not recognised as Fashion-MNIST
    QCOMPARE(ds.thumbnails.width, 2);
    QCOMPARE(int(ds.thumbnails.image(3)[0]), 5);
    // A single file, with its sibling labels.
    const Dataset one = openDataset((folder + "/t10k-images-idx3-ubyte").toStdString());
    QCOMPARE(one.size(), 1);
    QCOMPARE(one.labels, std::vector<std::int32_t>{2});
  }

  void idxGzOneMemberOrTwo() {
    // One gzip member is inflated whole (libdeflate); two members stream through zlib. Same rows.
    QByteArray pixels;
    for (int i = 0; i < 5 * 3 * 3; ++i)
      pixels.append(char(i * 3));
    const QByteArray bytes = idxBytes(0x08, {5, 3, 3}, pixels);
    QVERIFY(writeGzip(path("one-images-idx3-ubyte.gz"), bytes));
    QVERIFY(writeGzip(path("first.gz"), bytes.left(20)));
    QVERIFY(writeGzip(path("second.gz"), bytes.mid(20)));
    QFile first(path("first.gz")), second(path("second.gz"));
    QVERIFY(first.open(QIODevice::ReadOnly) && second.open(QIODevice::ReadOnly));
    QVERIFY(writeBytes(path("two-images-idx3-ubyte.gz"), first.readAll() + second.readAll()));
    const Dataset one = openDataset(path("one-images-idx3-ubyte.gz").toStdString());
    const Dataset two = openDataset(path("two-images-idx3-ubyte.gz").toStdString());
    QCOMPARE(one.size(), 5);
    QCOMPARE(two.size(), 5);
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t j = 0; j < 9; ++j) {
        QCOMPARE(one.vectors.row(i)[j], float(std::uint8_t(pixels[int(i * 9 + j)])));
        QCOMPARE(two.vectors.row(i)[j], one.vectors.row(i)[j]);
      }
  }

  void idxBadInputs() {
    QVERIFY(writeBytes(path("bad-images-idx3-ubyte"), "\x01\x02\x08\x03"));
    expectError<FormatError>(path("bad-images-idx3-ubyte"), "magic");
    QVERIFY(writeBytes(path("short-images-idx3-ubyte"), idxBytes(0x08, {3, 2, 2}, "\x01\x02")));
    expectError<FormatError>(path("short-images-idx3-ubyte"), "truncated");
    // Header sizes whose product overflows 64 bits must not allocate or hang.
    QVERIFY(writeBytes(path("huge-images-idx3-ubyte"),
                       idxBytes(0x08, {0xffffffffu, 0xffffffffu, 0xffffffffu}, "\x01")));
    expectError<FormatError>(path("huge-images-idx3-ubyte"), "overflow");
    // Large but representable: reported as truncated without allocating it.
    QVERIFY(
        writeBytes(path("big-images-idx3-ubyte"), idxBytes(0x08, {0x7fffffffu, 64, 64}, "\x01")));
    expectError<FormatError>(path("big-images-idx3-ubyte"), "truncated");
    QVERIFY(writeBytes(path("corrupt-images-idx3-ubyte.gz"),
                       QByteArray("\x1f\x8b\x08\x00garbage", 12)));
    try {
      openDataset(path("corrupt-images-idx3-ubyte.gz").toStdString());
      QFAIL("corrupt gzip accepted");
    } catch (const FormatError&) {
    }
  }

  void npyBadInputs() {
    const auto values = randomFloats(12, 5);
    QVERIFY(writeBytes(path("magic.npy"), "NOTNUMPY"));
    expectError<FormatError>(path("magic.npy"), "magic");
    QVERIFY(writeBytes(path("trunc.npy"), npyBytes("<f4", {4, 4}, rawBytes(values))));
    expectError<FormatError>(path("trunc.npy"), "truncated");
    QVERIFY(writeBytes(path("dtype.npy"), npyBytes("<c8", {3, 2}, rawBytes(values))));
    expectError<FormatError>(path("dtype.npy"), "dtype");
    QVERIFY(writeBytes(path("bigendian.npy"), npyBytes(">f4", {3, 4}, rawBytes(values))));
    expectError<FormatError>(path("bigendian.npy"), "dtype");
    QVERIFY(writeBytes(path("fortran.npy"), npyBytes("<f4", {3, 4}, rawBytes(values), true)));
    expectError<FormatError>(path("fortran.npy"), "fortran");
    QVERIFY(writeBytes(path("empty.npy"), npyBytes("<f4", {0, 4}, {})));
    expectError<FormatError>(path("empty.npy"), "empty");
    QVERIFY(writeBytes(path("overflow.npy"),
                       npyBytes("<f4", {4611686018427387904LL, 4611686018427387904LL}, {})));
    expectError<FormatError>(path("overflow.npy"), "overflow");
    QVERIFY(writeBytes(path("zero.npy"), {}));
    expectError<FormatError>(path("zero.npy"), "magic");
    expectError<IoError>(path("missing.npy"), "no such");
    QVERIFY(writeBytes(path("what.xyz"), "1"));
    expectError<FormatError>(path("what.xyz"), "unknown format");
  }

  void nonFiniteValuesAreLocated() {
    auto values = randomFloats(4 * 3, 6);
    values[1 * 3 + 2] = NAN;
    values[3 * 3 + 0] = INFINITY;
    QVERIFY(writeBytes(path("nan.npy"), npyBytes("<f4", {4, 3}, rawBytes(values))));
    const Dataset ds = openDataset(path("nan.npy").toStdString()); // reading is fine
    const NonFiniteScan scan = scanNonFinite(ds.vectors.view());
    QCOMPARE(scan.count, 2);
    QCOMPARE(scan.firstRow, 1);
    QCOMPARE(scan.firstCol, 2);
    try {
      requireFinite(ds.vectors.view(), "the data");
      QFAIL("NaN accepted");
    } catch (const InvalidArgument& e) {
      QVERIFY2(QString(e.what()).contains("row 2, column 3 (item 1)"), e.what()); // from 1
    }
  }

  void metadataRules() {
    const auto values = randomFloats(3 * 2, 7);
    QVERIFY(writeBytes(path("m.npy"), npyBytes("<f4", {3, 2}, rawBytes(values))));
    // One column: no header, labels.
    QVERIFY(writeBytes(path("one.tsv"), "cat\ndog\ncat\n"));
    OpenOptions options;
    options.metaPath = path("one.tsv").toStdString();
    Dataset ds = openDataset(path("m.npy").toStdString(), options);
    QCOMPARE(ds.labels, (std::vector<std::int32_t>{0, 1, 0}));
    QCOMPARE(ds.labelOf(1), std::string("dog"));
    // Several columns: header row; label and text picked by name; UTF-8 kept.
    QVERIFY(writeBytes(path("m.meta.tsv"), "label\ttext\n2\tcafé au lait\n10\tb\n2\tc\n"));
    ds = openDataset(path("m.npy").toStdString());                  // sidecar found by name
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"2", "10"})); // numeric order
    QCOMPARE(ds.textOf(0), std::string("café au lait"));
    // Wrong row count.
    QVERIFY(writeBytes(path("rows.tsv"), "a\nb\n"));
    options.metaPath = path("rows.tsv").toStdString();
    try {
      openDataset(path("m.npy").toStdString(), options);
      QFAIL("wrong row count accepted");
    } catch (const FormatError& e) {
      QVERIFY(QString(e.what()).contains("2 rows"));
    }
    // Invalid UTF-8.
    QVERIFY(writeBytes(path("utf.tsv"), "a\n\xff\xfe\nc\n"));
    options.metaPath = path("utf.tsv").toStdString();
    try {
      openDataset(path("m.npy").toStdString(), options);
      QFAIL("invalid UTF-8 accepted");
    } catch (const FormatError& e) {
      QVERIFY(QString(e.what()).contains("UTF-8"));
    }
  }

  void readingNeverModifiesInputs() {
    const auto values = randomFloats(8 * 4, 8);
    QVERIFY(writeBytes(path("keep.npy"), npyBytes("<f4", {8, 4}, rawBytes(values))));
    const QByteArray before = readBytes(path("keep.npy"));
    const QDateTime modified = QFileInfo(path("keep.npy")).lastModified();
    {
      const Dataset ds = openDataset(path("keep.npy").toStdString());
      QCOMPARE(ds.size(), 8);
    }
    QCOMPARE(readBytes(path("keep.npy")), before);
    QCOMPARE(QFileInfo(path("keep.npy")).lastModified(), modified);
  }

  void graphFileMethodFromItsParameters() {
    // As `knn --out` writes them: the resolved method, and whether the result is exact (STEP's
    // exact graph is written "exact", so it reads back exact).
    QCOMPARE(graphFileMethod(R"({"method":"exact","exact":true,"k":10})"), KnnMethod::Exact);
    QVERIFY(isExactMethod(graphFileMethod(R"({"method":"exact","exact":true})")));
    QCOMPARE(graphFileMethod(R"({"method":"nndescent","exact":false})"), KnnMethod::NnDescent);
    QCOMPARE(graphFileMethod(R"({"method":"exact+merge","exact":false})"), KnnMethod::GgmMerge);
    QCOMPARE(graphFileMethod(R"({"method":"nndescent+merge","exact":false})"), KnnMethod::GgmMerge);
    QCOMPARE(graphFileMethod(R"({"method":"exact"})"), KnnMethod::Exact); // no "exact": older
    // Contradictions and what another writer left: not known, so never taken as exact.
    QCOMPARE(graphFileMethod(R"({"method":"exact","exact":false})"), KnnMethod::Unknown);
    QCOMPARE(graphFileMethod(R"({"method":"nndescent","exact":true})"), KnnMethod::Unknown);
    QCOMPARE(graphFileMethod(R"({"exact":true})"), KnnMethod::Unknown);
    QCOMPARE(graphFileMethod(R"({"method":7,"exact":true})"), KnnMethod::Unknown);
    QCOMPARE(graphFileMethod(R"("k=10 exact")"), KnnMethod::Unknown); // the artefact cache's
    QCOMPARE(graphFileMethod("{not json"), KnnMethod::Unknown);
    QCOMPARE(graphFileMethod(""), KnnMethod::Unknown);
  }

  void knnMethodNamesAreTheFilesWords() {
    // Files, JSON and stdout carry these words: they never change, and each parses back.
    const std::pair<KnnMethod, const char*> names[] = {
        {KnnMethod::Unknown, ""},
        {KnnMethod::Exact, "exact"},
        {KnnMethod::Step, "STEP"},
        {KnnMethod::NnDescent, "NN-Descent"},
        {KnnMethod::Gnnd, "GNND"},
        {KnnMethod::GgmMerge, "GGM merge"},
        {KnnMethod::ResidentBase, "resident base, radix select"},
        {KnnMethod::Reference, "float64 reference"},
        {KnnMethod::IndexSearch, "index search"},
        {KnnMethod::RangeSearch, "exact range search"},
        {KnnMethod::Given, "given"}};
    for (const auto& [method, name] : names) {
      QCOMPARE(std::string(knnMethodName(method)), std::string(name));
      QCOMPARE(parseKnnMethod(name), std::optional<KnnMethod>(method));
    }
    QCOMPARE(parseKnnMethod("Exact"), std::optional<KnnMethod>());
    for (KnnMethod exact : {KnnMethod::Exact, KnnMethod::Step, KnnMethod::ResidentBase,
                            KnnMethod::Reference, KnnMethod::RangeSearch}) {
      RunReport report;
      report.setMethod(exact);
      QVERIFY(report.exact());
    }
    for (KnnMethod approximate : {KnnMethod::Unknown, KnnMethod::NnDescent, KnnMethod::Gnnd,
                                  KnnMethod::GgmMerge, KnnMethod::IndexSearch, KnnMethod::Given})
      QVERIFY(!isExactMethod(approximate));
    // describe() names every method but the plain exact search, as before.
    RunReport step;
    step.device = "CPU (2 threads)";
    step.setMethod(KnnMethod::Step);
    QCOMPARE(step.describe(), std::string("CPU (2 threads), STEP"));
    step.setMethod(KnnMethod::Exact);
    QCOMPARE(step.describe(), std::string("CPU (2 threads)"));
  }

  void graphFileRoundTripAndCorruption() {
    const auto values = randomFloats(40 * 3, 9);
    QVERIFY(writeBytes(path("g.npy"), npyBytes("<f4", {40, 3}, rawBytes(values))));
    const Dataset ds = openDataset(path("g.npy").toStdString());
    const KnnResult knn = knnReference(ds.vectors.view(), ds.vectors.view(), 4, Metric::L2, true);
    GraphFile g;
    g.ids = knn.ids;
    g.distances = knn.distances;
    g.contentHash = ds.contentHash;
    g.paramsJson = R"({"method":"exact"})";
    const QString file = path("g.nsg");
    writeGraphFile(file.toStdString(), g);
    QVERIFY(isGraphFile(file.toStdString()));
    const GraphFile back = readGraphFile(file.toStdString(), ds.contentHash);
    QCOMPARE(back.ids.rows(), 40);
    QVERIFY(std::memcmp(back.ids.data(), knn.ids.data(), 40 * 4 * 4) == 0);
    QVERIFY(std::memcmp(back.distances.data(), knn.distances.data(), 40 * 4 * 4) == 0);
    QVERIFY(back.paramsJson.find("exact") != std::string::npos);
    // Through readKnnGraph: our file, or an ids .npy with distances recomputed exactly.
    const KnnResult viaFile = readKnnGraph(file.toStdString(), ds, Metric::L2);
    QCOMPARE(viaFile.ids.row(7)[2], knn.ids.row(7)[2]);
    QCOMPARE(viaFile.report.method(), KnnMethod::Exact); // from the file's params
    writeNpy(path("gids.npy").toStdString(), knn.ids.view());
    const KnnResult viaNpy = readKnnGraph(path("gids.npy").toStdString(), ds, Metric::L2);
    QCOMPARE(viaNpy.distances.row(5)[1], knn.distances.row(5)[1]);
    QCOMPARE(viaNpy.report.method(), KnnMethod::Unknown); // ids alone say nothing of how
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, readKnnGraph(file.toStdString(), ds, Metric::Cosine));

    QByteArray bytes = readBytes(file);
    QByteArray flipped = bytes;
    flipped[bytes.size() / 2] = char(flipped[bytes.size() / 2] ^ 0x40);
    QVERIFY(writeBytes(path("bad.nsg"), flipped));
    expectGraphError(path("bad.nsg"), "checksum", ds.contentHash);
    QVERIFY(writeBytes(path("short.nsg"), bytes.left(bytes.size() - 20)));
    expectGraphError(path("short.nsg"), "truncated", ds.contentHash);
    expectGraphError(file, "other data", "0123456789abcdef0123456789abcdef");
    QVERIFY(writeBytes(path("magic.nsg"), "NOTAGRAPHFILE.........."));
    expectGraphError(path("magic.nsg"), "magic", {});
  }

  void cancellationStopsReading() {
    JobControl job;
    job.requestStop();
    QVERIFY(writeBytes(path("c.tsv"), "1\t2\n"));
    QVERIFY_THROWS_EXCEPTION(Cancelled, openDataset(path("c.tsv").toStdString(), {}, job));
  }
};

QTEST_GUILESS_MAIN(TestReaders)
#include "tst_readers.moc"
