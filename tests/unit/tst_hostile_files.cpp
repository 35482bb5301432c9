// Readers against files written by someone else, or by an attacker (issue 22): HDF5 attributes
// of every string type, headers promising more than the file holds, FIFOs and devices given as
// input, invisible characters and escape sequences in values. Each case is refused at once with
// a message naming the file, or read correctly — never a crash, a hang or a huge allocation.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <hdf5.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <future>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nearscape;
using namespace nearscape::test;

namespace {

/// The message of the exception `f` throws, prefixed with its kind; "no error" when none.
QString errorOf(const std::function<void()>& f) {
  try {
    f();
    return "no error";
  } catch (const FormatError& e) {
    return "FormatError: " + QString::fromUtf8(e.what());
  } catch (const IoError& e) {
    return "IoError: " + QString::fromUtf8(e.what());
  } catch (const std::exception& e) {
    return "other: " + QString::fromUtf8(e.what());
  }
}

/// One small HDF5 file: "train" (rows × cols, given values) and the root attribute "distance",
/// written by `writeAttribute` (nothing when null).
class Hdf5Writer {
public:
  explicit Hdf5Writer(const QString& file)
      : m_file(H5Fcreate(file.toLocal8Bit().constData(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
  }
  ~Hdf5Writer() { H5Fclose(m_file); }
  hid_t id() const { return m_file; }

  void put(const char* name, hid_t type, const void* data, hsize_t rows, hsize_t cols,
           hid_t dcpl = H5P_DEFAULT) {
    const hsize_t dims[2] = {rows, cols};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t ds = H5Dcreate2(m_file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (data)
      H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
  }
  void putTrain() {
    const auto train = randomFloats(6 * 3, 11);
    put("train", H5T_NATIVE_FLOAT, train.data(), 6, 3);
  }
  /// A string attribute: `count` elements (0: a scalar), variable or fixed length, ASCII or UTF-8.
  void putDistance(const std::vector<const char*>& values, bool scalar, bool variable, bool utf8) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    std::size_t longest = 1;
    for (const char* v : values)
      longest = std::max(longest, std::strlen(v) + 1);
    H5Tset_size(type, variable ? H5T_VARIABLE : longest);
    H5Tset_cset(type, utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
    const hsize_t n = values.size();
    const hid_t space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
    const hid_t attr = H5Acreate2(m_file, "distance", type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (variable) {
      H5Awrite(attr, type, values.data());
    } else {
      std::string packed;
      for (const char* v : values)
        packed += std::string(v).append(longest - std::strlen(v), '\0');
      H5Awrite(attr, type, packed.data());
    }
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
  }

private:
  hid_t m_file;
};

/// Our checksummed framing around any header text and body, as GraphFile.h describes it.
QByteArray graphFileBytes(const QByteArray& header, const QByteArray& body) {
  QByteArray bytes("NSKNNG\0\0", 8);
  const std::uint32_t version = 1, length = std::uint32_t(header.size());
  bytes.append(reinterpret_cast<const char*>(&version), 4);
  bytes.append(reinterpret_cast<const char*>(&length), 4);
  bytes.append(header).append(body);
  const std::uint64_t checksum = XXH3_64bits(bytes.constData(), std::size_t(bytes.size()));
  bytes.append(reinterpret_cast<const char*>(&checksum), 8);
  return bytes;
}

/// nearscape-cli run with `args`: its exit code and its peak resident memory (KiB), from wait4.
std::pair<int, long> cliPeakKiB(const QStringList& args) {
  std::vector<std::string> words = {NEARSCAPE_CLI_PATH};
  for (const QString& a : args)
    words.push_back(a.toStdString());
  std::vector<char*> argv;
  for (std::string& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (child < 0 || ::wait4(child, &status, 0, &usage) != child || !WIFEXITED(status))
    return {-1, 0};
  return {WEXITSTATUS(status), usage.ru_maxrss};
}

std::uint64_t physicalMemory() {
  return std::uint64_t(::sysconf(_SC_PHYS_PAGES)) * std::uint64_t(::sysconf(_SC_PAGE_SIZE));
}

} // namespace

class TestHostileFiles : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString path(const QString& name) const { return m_dir.filePath(name); }

  void expectError(const QString& file, const std::function<void()>& f, const char* kind,
                   const char* fragment) {
    const QString message = errorOf(f);
    QVERIFY2(message.startsWith(QLatin1String(kind)), qPrintable(message));
    QVERIFY2(message.contains(QFileInfo(file).fileName()), qPrintable("names no file: " + message));
    QVERIFY2(message.contains(QString::fromUtf8(fragment), Qt::CaseInsensitive),
             qPrintable("expected '" + QString::fromUtf8(fragment) + "' in: " + message));
  }
  void expectOpenError(const QString& file, const char* kind, const char* fragment,
                       const OpenOptions& options = {}) {
    expectError(
        file, [&] { openDataset(file.toStdString(), options); }, kind, fragment);
  }

  /// `open` must refuse `blocker` (a FIFO, device, socket) at once as "not a regular file". Should
  /// it block on the FIFO, a writer opens and closes it after 2 s so the test fails, not hangs.
  void expectNotRegular(const QString& blocker, const std::function<void()>& open) {
    QElapsedTimer timer;
    timer.start();
    auto result = std::async(std::launch::async, [&] { return errorOf(open); });
    if (result.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
      const int fd = ::open(blocker.toLocal8Bit().constData(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0)
        ::close(fd);
    }
    const QString message = result.get();
    QVERIFY2(timer.elapsed() < 1500, qPrintable("blocked on " + blocker + ": " + message));
    QVERIFY2(message.startsWith("IoError") && message.contains("not a regular file") &&
                 message.contains(QFileInfo(blocker).fileName()),
             qPrintable(message));
    QVERIFY2(!message.contains("No such file"), qPrintable(message));
  }

  QString makeFifo(const QString& name) {
    const QString file = path(name);
    QFile::remove(file);
    return ::mkfifo(file.toLocal8Bit().constData(), 0600) == 0 ? file : QString();
  }

  QString smallNpy(const QString& name, std::int64_t rows = 4) {
    const auto values = randomFloats(std::size_t(rows) * 2, 3);
    const QString file = path(name);
    return writeBytes(file, npyBytes("<f4", {rows, 2}, rawBytes(values))) ? file : QString();
  }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }

  // --- 1. The HDF5 "distance" attribute, whatever string type wrote it -----------------------

  void hdf5DistanceStrings_data() {
    QTest::addColumn<bool>("variable");
    QTest::addColumn<bool>("utf8");
    QTest::addColumn<bool>("scalar");
    QTest::addColumn<QString>("value");
    QTest::addColumn<int>("metric");
    QTest::newRow("h5py: variable-length UTF-8")
        << true << true << true << "angular" << int(Metric::Cosine);
    QTest::newRow("variable-length ASCII")
        << true << false << true << "euclidean" << int(Metric::L2);
    QTest::newRow("fixed-length ASCII")
        << false << false << true << "angular" << int(Metric::Cosine);
    QTest::newRow("fixed-length UTF-8")
        << false << true << true << "dot" << int(Metric::InnerProduct);
    QTest::newRow("one-element array") << true << true << false << "angular" << int(Metric::Cosine);
  }
  void hdf5DistanceStrings() {
    QFETCH(bool, variable);
    QFETCH(bool, utf8);
    QFETCH(bool, scalar);
    QFETCH(QString, value);
    QFETCH(int, metric);
    const QString file = path("distance.hdf5");
    const QByteArray text = value.toUtf8();
    {
      Hdf5Writer w(file);
      w.putTrain();
      w.putDistance({text.constData()}, scalar, variable, utf8);
    }
    const Dataset ds = openDataset(file.toStdString());
    QVERIFY2(ds.metric.has_value(), "the metric was not read");
    QCOMPARE(int(*ds.metric), metric);
  }

  void hdf5DistanceArraysAreRefused_data() {
    QTest::addColumn<bool>("variable");
    QTest::newRow("fixed-length strings") << false;
    QTest::newRow("variable-length strings") << true;
  }
  void hdf5DistanceArraysAreRefused() {
    QFETCH(bool, variable);
    const QString file = path(variable ? "vlen-array.hdf5" : "fixed-array.hdf5");
    {
      Hdf5Writer w(file);
      w.putTrain();
      w.putDistance({"angular", "euclidean", "a much longer third value"}, false, variable, true);
    }
    expectOpenError(file, "FormatError", "3 strings");
  }

  void hdf5DistanceOtherTypesAreRefused() {
    const QString file = path("int-distance.hdf5");
    {
      Hdf5Writer w(file);
      w.putTrain();
      const int value = 2;
      const hid_t space = H5Screate(H5S_SCALAR);
      const hid_t attr =
          H5Acreate2(w.id(), "distance", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(attr, H5T_NATIVE_INT, &value);
      H5Aclose(attr);
      H5Sclose(space);
    }
    expectOpenError(file, "FormatError", "not a string");
    const QString unknown = path("unknown-distance.hdf5");
    {
      Hdf5Writer w(unknown);
      w.putTrain();
      w.putDistance({"hamming\x1b[2J"}, true, true, true);
    }
    expectOpenError(unknown, "FormatError", "unsupported distance attribute 'hamming\\x1b[2J'");
  }

  // --- 2. Headers that promise more than the file holds ---------------------------------------

  void hdf5UnwrittenDatasetIsRefused() {
    const QString file = path("unwritten.hdf5");
    {
      Hdf5Writer w(file);
      w.put("train", H5T_NATIVE_FLOAT, nullptr, 1000000, 1000); // 4 GB declared, nothing stored
    }
    QVERIFY(QFileInfo(file).size() < 100000);
    expectOpenError(file, "FormatError", "unwritten");
  }

  void hdf5CompressedBombIsRefused() {
    const QString file = path("chunked.hdf5");
    {
      Hdf5Writer w(file);
      const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      const hsize_t chunk[2] = {1000, 1000};
      H5Pset_chunk(dcpl, 2, chunk);
      H5Pset_deflate(dcpl, 9);
      w.put("train", H5T_NATIVE_FLOAT, nullptr, 1000000, 1000, dcpl); // one chunk written below
      const hid_t ds = H5Dopen2(w.id(), "train", H5P_DEFAULT);
      const hid_t space = H5Dget_space(ds);
      const hsize_t start[2] = {0, 0};
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, chunk, nullptr);
      const hid_t mem = H5Screate_simple(2, chunk, nullptr);
      std::vector<float> zeros(1000 * 1000, 0.0f);
      H5Dwrite(ds, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, zeros.data());
      H5Sclose(mem);
      H5Sclose(space);
      H5Dclose(ds);
      H5Pclose(dcpl);
    }
    expectOpenError(file, "FormatError", "stores only");
  }

  void hdf5QueriesAreReadOnlyWhenAsked() {
    const QString file = path("lazy.hdf5");
    {
      Hdf5Writer w(file);
      w.putTrain();
      w.put("test", H5T_NATIVE_FLOAT, nullptr, 1000000, 3); // declared, never written
      w.put("neighbors", H5T_NATIVE_INT32, nullptr, 1000000, 100);
    }
    const Dataset ds = openDataset(file.toStdString()); // never touches 'test' or 'neighbors'
    QCOMPARE(ds.size(), 6);
    QVERIFY(ds.queries.empty() && ds.truthIds.empty());
    const QueryShapes shapes = queryShapes(file.toStdString()); // headers only
    QCOMPARE(shapes.queryRows, 1000000);
    QCOMPARE(shapes.truthCols, 100);
    OpenOptions withQueries;
    withQueries.loadQueries = true;
    expectOpenError(file, "FormatError", "'test'", withQueries);
  }

  void hdf5TruthIdsAreChecked() {
    const QString file = path("truth.hdf5");
    {
      Hdf5Writer w(file);
      w.putTrain();
      const auto test = randomFloats(2 * 3, 12);
      const std::vector<std::int64_t> nbrs = {0, 1, 2, 5000000000LL}; // beyond int32 and the data
      w.put("test", H5T_NATIVE_FLOAT, test.data(), 2, 3);
      w.put("neighbors", H5T_NATIVE_INT64, nbrs.data(), 2, 2);
    }
    OpenOptions withQueries;
    withQueries.loadQueries = true;
    expectOpenError(file, "FormatError", "row 2, column 2", withQueries);
  }

  void float64BeyondFloat32IsRefused_data() {
    QTest::addColumn<QString>("format");
    QTest::newRow("npy") << "npy";
    QTest::newRow("idx") << "idx";
    QTest::newRow("idx.gz") << "idx.gz";
    QTest::newRow("hdf5") << "hdf5";
  }
  void float64BeyondFloat32IsRefused() {
    // float64 that float32 cannot hold is refused with the true reason, never flushed to zero or
    // called NaN/Inf: a finite value beyond FLT_MAX, or a non-zero row whose largest value is
    // below FLT_MIN. Values tiny beside their row's largest only round; a zero row is data.
    QFETCH(QString, format);
    auto fileOf = [&](const QString& stem, const std::vector<double>& rowsOfThree) {
      const auto rows = std::uint32_t(rowsOfThree.size() / 3);
      QByteArray body;
      for (const double v : rowsOfThree) {
        if (format == "npy") {
          body.append(reinterpret_cast<const char*>(&v), 8);
        } else {
          std::uint64_t bits;
          std::memcpy(&bits, &v, 8);
          for (int b = 7; b >= 0; --b)
            body.append(char((bits >> (8 * b)) & 0xff));
        }
      }
      const QString file = path(stem + (format == "npy"    ? ".npy"
                                        : format == "hdf5" ? ".hdf5"
                                                           : "-images-idx2-double"));
      if (format == "hdf5")
        Hdf5Writer(file).put("train", H5T_NATIVE_DOUBLE, rowsOfThree.data(), rows, 3);
      else if (format == "npy")
        writeBytes(file, npyBytes("<f8", {rows, 3}, body));
      else if (format == "idx")
        writeBytes(file, idxBytes(0x0E, {rows, 3}, body));
      else
        writeGzip(file + ".gz", idxBytes(0x0E, {rows, 3}, body));
      return format == "idx.gz" ? file + ".gz" : file;
    };
    const QString tiny = fileOf("f64-tiny", {1, 2, 3, 0, 0, 0, 1e-50, -3e-50, 2e-45, 4, 5, 6});
    expectOpenError(tiny, "FormatError",
                    "row 3 (item 2) holds float64 values no larger than 2e-45 in magnitude, below "
                    "float32's smallest normal value");
    const QString huge = fileOf("f64-huge", {1, 2, 3, 4, -1e39, 6, 7, 8, 2e39});
    expectOpenError(huge, "FormatError",
                    "float64 values up to 2e+39 in magnitude (the first at row 2, item 1) are "
                    "beyond float32's range");
    const QString fine = fileOf("f64-fine", {0, 0, 0, 1e-50, 1, -1e-300, 1e-40, 0, 2e-38});
    const Dataset ds = openDataset(fine.toStdString());
    const std::vector<float> want = {0, 0, 0, 0, 1, -0.0f, float(1e-40), 0, float(2e-38)};
    for (std::size_t i = 0; i < want.size(); ++i)
      QCOMPARE(ds.vectors.data()[i], want[i]);
  }

  void tsvRowsBelowFloat32AreRefused() {
    // Text is read as float32 directly, with float64's row rule for what lies below its range.
    QVERIFY(writeBytes(path("tiny-row.tsv"), "1\t2\n1e-50\t-3e-42\n"));
    expectOpenError(path("tiny-row.tsv"), "FormatError",
                    "line 2: every value is too close to zero for float32");
    QVERIFY(writeBytes(path("tiny-beside.tsv"), "1\t2\n1e-50\t1\n0\t0\n"));
    const Dataset ds = openDataset(path("tiny-beside.tsv").toStdString());
    QCOMPARE(ds.vectors.row(1)[0], 0.0f);
    QCOMPARE(ds.vectors.row(2)[1], 0.0f);
  }

  /// `bytes` as one gzip member (zlib's gzwrite), read back.
  QByteArray gzipMember(const QByteArray& bytes) {
    const QString file = path("member.gz");
    return writeGzip(file, bytes) ? readBytes(file) : QByteArray();
  }

  void gzIdxTrailerIsChecked_data() {
    QTest::addColumn<int>("type"); // uint8 is inflated whole when it can be; float32 streams
    QTest::newRow("uint8") << 0x08;
    QTest::newRow("float32") << 0x0D;
  }
  void gzIdxTrailerIsChecked() {
    // gzip's 8-byte trailer (the data's CRC-32, then its length mod 2^32) is checked as gzip -t
    // checks it: a file cut inside it, or whose CRC or length is wrong, is refused.
    QFETCH(int, type);
    const QByteArray body =
        type == 0x08 ? QByteArray("\x01\x02\x03\x04\x05\x06\x07\x08", 8) : QByteArray(32, '\x10');
    const QByteArray good = gzipMember(idxBytes(type, {2, 2, 2}, body));
    QVERIFY(good.size() > 18);
    QVERIFY(writeBytes(path("good-images-idx3-ubyte.gz"), good));
    QCOMPARE(openDataset(path("good-images-idx3-ubyte.gz").toStdString()).size(), 2);
    for (const int cut : {1, 4, 7, 8}) {
      const QString file = path(QString("cut%1-images-idx3-ubyte.gz").arg(cut));
      QVERIFY(writeBytes(file, good.left(good.size() - cut)));
      expectOpenError(file, "FormatError", "truncated");
    }
    for (const int at : {8, 4}) { // a byte of the CRC, then of the length
      QByteArray bad = good;
      bad[bad.size() - at] = char(bad[bad.size() - at] ^ 0x01);
      const QString file = path(QString("bad%1-images-idx3-ubyte.gz").arg(at));
      QVERIFY(writeBytes(file, bad));
      expectOpenError(file, "FormatError",
                      at == 8 ? "incorrect data check" : "incorrect length check");
    }
  }

  void gzIdxOfManyMembersIsReadWhole() {
    // 51 gzip members one after the other (as `cat a.gz b.gz` makes), the data cut across them:
    // read through one stream, every member's trailer checked.
    QByteArray body;
    for (int i = 0; i < 51 * 40; ++i)
      body.append(char(i * 7 % 251));
    const QByteArray whole = idxBytes(0x08, {51 * 10, 2, 2}, body);
    QByteArray members;
    const qsizetype piece = whole.size() / 51 + 1;
    for (qsizetype at = 0; at < whole.size(); at += piece)
      members.append(gzipMember(whole.mid(at, piece)));
    QVERIFY(writeBytes(path("many-images-idx3-ubyte.gz"), members));
    const Dataset ds = openDataset(path("many-images-idx3-ubyte.gz").toStdString());
    QCOMPARE(ds.size(), 51 * 10);
    for (int i = 0; i < 51 * 40; ++i)
      QCOMPARE(ds.vectors.data()[i], float(std::uint8_t(body[i])));
    // A damaged member among them is found.
    QByteArray damaged = members;
    const qsizetype second = gzipMember(whole.mid(0, piece)).size();
    damaged[second - 8] = char(damaged[second - 8] ^ 0x01); // the first member's CRC
    QVERIFY(writeBytes(path("damaged-images-idx3-ubyte.gz"), damaged));
    expectOpenError(path("damaged-images-idx3-ubyte.gz"), "FormatError", "incorrect data check");
  }

  void idxBeyondTheMemoryBudgetIsRefused() {
    // The data a header declares is held to the context's memory budget before anything of that
    // size is allocated: 200 items of 28 × 28 take 784 KB as float32 (and 157 KB of thumbnails).
    const QString file = path("budget-images-idx3-ubyte.gz");
    QVERIFY(writeGzip(file, idxBytes(0x08, {200, 28, 28}, QByteArray(200 * 784, '\x07'))));
    OpenOptions options;
    options.memoryBudget = 500'000;
    expectOpenError(file, "FormatError", "more than the memory budget", options);
    options.memoryBudget = 1'000'000;
    QCOMPARE(openDataset(file.toStdString(), options).size(), 200);
  }

  void idxMemoryIsTakenAsTheDataArrives() {
    // A header declaring 100M pixels (400 MB of float32, 100 MB of thumbnails) that its gzip
    // file could hold (120 KB of incompressible bytes) but does not: the memory is written as
    // the data arrives, so the refusal costs what the file held, not what it declared.
    QByteArray noise(120'000, '\0');
    std::uint32_t state = 7;
    for (char& c : noise)
      c = char((state = state * 1664525u + 1013904223u) >> 24);
    const QByteArray members =
        gzipMember(idxBytes(0x08, {100000, 100, 10}, QByteArray(1000, '\0'))) + gzipMember(noise);
    const QString file = path("declared-images-idx3-ubyte.gz");
    QVERIFY(writeBytes(file, members));
    const auto [code, peakKiB] = cliPeakKiB({"info", file});
    QCOMPARE(code, 2);
    // Measured above what the same command takes on a tiny file of the same kind: the libraries
    // a build loads (CUDA's are ~100 MB) and ASan's shadow differ, the declared 500 MB does not.
    const QString tiny = path("tiny-images-idx3-ubyte.gz");
    QVERIFY(writeGzip(tiny, idxBytes(0x08, {2, 2, 2}, "\x01\x02\x03\x04\x05\x06\x07\x08")));
    const auto [tinyCode, baseKiB] = cliPeakKiB({"info", tiny});
    QCOMPARE(tinyCode, 0);
    const long boundKiB = baseKiB + (test::kAddressSanitizer ? 200 : 100) * 1024;
    QVERIFY2(peakKiB < boundKiB,
             qPrintable(QString("peak %1 KiB, %2 KiB on a tiny file").arg(peakKiB).arg(baseKiB)));
  }

  void duplicatesOfEveryPairAreRefusedInSmallMemory() {
    // 20,000 items all within the threshold of each other: 200M pairs, past the 100M limit.
    // Counted before they are kept, the refusal needs no room for 100M of them (1.6 GB).
    std::vector<float> x = randomFloats(20000 * 2, 3);
    const QString file = path("close.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {20000, 2}, rawBytes(x))));
    const auto [code, peakKiB] =
        cliPeakKiB({"duplicates", file, "--threshold", "10", "--backend", "cpu"});
    QCOMPARE(code, 2);
    // Measured above the same command on two items (no pairs): the libraries a build loads and
    // ASan's shadow differ, the 1.6 GB of kept pairs does not.
    const QString tiny = path("two.npy");
    QVERIFY(writeBytes(tiny, npyBytes("<f4", {2, 2}, rawBytes(randomFloats(4, 5)))));
    const auto [tinyCode, baseKiB] =
        cliPeakKiB({"duplicates", tiny, "--threshold", "0", "--backend", "cpu"});
    QCOMPARE(tinyCode, 0);
    const long boundKiB = baseKiB + (test::kAddressSanitizer ? 700 : 350) * 1024;
    QVERIFY2(peakKiB < boundKiB,
             qPrintable(QString("peak %1 KiB, %2 KiB on two items").arg(peakKiB).arg(baseKiB)));
  }

  void gzIdxBeyondItsRatioIsRefusedBeforeInflating() {
    const QString file = path("bomb-images-idx3-ubyte.gz");
    QVERIFY(writeGzip(file, idxBytes(0x08, {0x7fffffffu, 64, 64}, QByteArray(4096, '\0'))));
    QElapsedTimer timer;
    timer.start();
    expectOpenError(file, "FormatError", "cannot inflate to more than");
    QVERIFY(timer.elapsed() < 1000);
  }

  void gzIdxOfNothingIsRefused() {
    // A gzip member of no data (inflated whole: an empty body to read from).
    const QString file = path("empty-images-idx3-ubyte.gz");
    QVERIFY(writeGzip(file, QByteArray()));
    expectOpenError(file, "FormatError", "no IDX header");
  }

  void gzIdxIsNotInflatedPastItsShape() {
    // What follows the header's shape (here a corrupt second gzip member) is never inflated.
    const QString file = path("trailing-images-idx3-ubyte.gz");
    QVERIFY(writeGzip(file, idxBytes(0x08, {2, 2, 2}, "\x01\x02\x03\x04\x05\x06\x07\x08")));
    QFile f(file);
    QVERIFY(f.open(QIODevice::Append));
    f.write(QByteArray("\x1f\x8b\x08\x00corrupt member", 18));
    f.close();
    const Dataset ds = openDataset(file.toStdString());
    QCOMPARE(ds.size(), 2);
    QCOMPARE(ds.vectors.row(1)[3], 8.0f);
  }

  void idxShapeBeyondMemoryIsRefused() {
    // A sparse file really holds the bytes its header declares, but their float32 copy would not
    // fit this machine's memory: refused before anything is allocated or read.
    const std::uint64_t rows = physicalMemory() / (4u << 20) + 1;
    QVERIFY(rows < 0xffffffffu);
    const QString file = path("sparse-images-idx3-ubyte");
    QVERIFY(writeBytes(file, idxBytes(0x08, {std::uint32_t(rows), 1024, 1024}, {})));
    QFile f(file);
    QVERIFY(f.resize(qint64(16 + rows * (1u << 20))));
    QElapsedTimer timer;
    timer.start();
    expectOpenError(file, "FormatError", "more than this machine has");
    QVERIFY(timer.elapsed() < 1000);
  }

  void graphFileHostileContents() {
    const QString data = smallNpy("g.npy", 3);
    const Dataset ds = openDataset(data.toStdString());
    const std::vector<std::int32_t> ids = {1, 2, 0};
    auto body = [&](float d) {
      const std::vector<float> dists = {0.5f, d, 0.25f};
      return rawBytes(ids) + rawBytes(dists);
    };
    const QString negative = path("negative.nsg");
    QVERIFY(writeBytes(negative, graphFileBytes(R"({"n":3,"k":1,"metric":"l2"})", body(-7))));
    expectError(
        negative, [&] { readGraphFile(negative.toStdString()); }, "FormatError", "negative");
    const QString nan = path("nan.nsg");
    QVERIFY(writeBytes(nan, graphFileBytes(R"({"n":3,"k":1,"metric":"l2"})", body(NAN))));
    expectError(
        nan, [&] { readGraphFile(nan.toStdString()); }, "FormatError", "not finite");
    // JSON type errors name the file instead of leaking the library's text.
    const QString badMetric = path("metric.nsg");
    QVERIFY(writeBytes(badMetric, graphFileBytes(R"({"n":3,"k":1,"metric":5})", body(1))));
    expectError(
        badMetric, [&] { readGraphFile(badMetric.toStdString()); }, "FormatError",
        "'metric' is not a string");
    const QString badN = path("n.nsg");
    QVERIFY(writeBytes(badN, graphFileBytes(R"({"n":"3","k":1})", body(1))));
    expectError(
        badN, [&] { readGraphFile(badN.toStdString()); }, "FormatError", "'n'");
    const QString hugeN = path("huge.nsg");
    QVERIFY(writeBytes(hugeN, graphFileBytes(R"({"n":4611686018427387904,"k":4})", body(1))));
    expectError(
        hugeN, [&] { readGraphFile(hugeN.toStdString()); }, "FormatError", "does not fit");
    // A valid file reads, straight from its mapping.
    const QString good = path("good.nsg");
    QVERIFY(writeBytes(good, graphFileBytes(R"({"n":3,"k":1,"metric":"l2"})", body(1))));
    const GraphFile g = readGraphFile(good.toStdString());
    QCOMPARE(g.ids.row(1)[0], 2);
    QCOMPARE(g.distances.row(1)[0], 1.0f);
  }

  void metadataLimits() {
    const QString data = smallNpy("meta.npy", 3);
    OpenOptions options;
    QByteArray wide;
    for (int c = 0; c < 300; ++c)
      wide += "c" + QByteArray::number(c) + (c + 1 < 300 ? "\t" : "\n");
    options.metaPath = path("wide.tsv").toStdString();
    QVERIFY(writeBytes(path("wide.tsv"), wide + wide + wide + wide));
    expectError(
        path("wide.tsv"), [&] { openDataset(data.toStdString(), options); }, "FormatError",
        "line 1 has 300 columns; metadata may have at most 256");
    options.metaPath = path("long.tsv").toStdString();
    QVERIFY(writeBytes(path("long.tsv"), "a\n" + QByteArray(5 << 20, 'x') + "\nc\n"));
    expectError(
        path("long.tsv"), [&] { openDataset(data.toStdString(), options); }, "FormatError",
        "line 2 has a field of 5.24 MB");
  }

  void npyHostileDescr() {
    QVERIFY(writeBytes(path("descr.npy"), npyBytes("<f99999999999", {2, 2}, QByteArray(16, '\0'))));
    expectOpenError(path("descr.npy"), "FormatError", "unsupported dtype");
    QVERIFY(writeBytes(path("esc.npy"), npyBytes("<\x1b[2J", {2, 2}, QByteArray(16, '\0'))));
    expectOpenError(path("esc.npy"), "FormatError", "\\x1b[2J");
  }

  // --- 3. FIFOs, devices, sockets and folders as input ----------------------------------------

  void fifosAreRefusedAtOnce_data() {
    QTest::addColumn<QString>("name");
    for (const char* name :
         {"f.npy", "f.hdf5", "f.tsv", "f.fvecs", "f-images-idx3-ubyte.gz", "f-images-idx3-ubyte"})
      QTest::newRow(name) << name;
  }
  void fifosAreRefusedAtOnce() {
    QFETCH(QString, name);
    const QString fifo = makeFifo(name);
    QVERIFY(!fifo.isEmpty());
    expectNotRegular(fifo, [&] { openDataset(fifo.toStdString()); });
  }

  void fifosAsOtherInputs() {
    const QString data = smallNpy("in.npy");
    const QString fifo = makeFifo("meta.fifo");
    OpenOptions options;
    options.metaPath = fifo.toStdString();
    expectNotRegular(fifo, [&] { openDataset(data.toStdString(), options); });
    const QString sidecarData = smallNpy("side.npy");
    const QString sidecar = makeFifo("side.meta.tsv");
    // A sidecar is found, not asked for: one that cannot be read is skipped with a warning,
    // at once, and the data opens.
    QElapsedTimer timer;
    timer.start();
    const Dataset side = openDataset(sidecarData.toStdString());
    QVERIFY(timer.elapsed() < 1500);
    QCOMPARE(side.warnings.size(), std::size_t(1));
    QVERIFY2(QString::fromStdString(side.warnings[0]).contains("not a regular file"),
             side.warnings[0].c_str());
    const Dataset ds = openDataset(data.toStdString());
    const QString graph = makeFifo("graph.nsg");
    expectNotRegular(graph, [&] { readKnnGraph(graph.toStdString(), ds, Metric::L2); });
    expectNotRegular(graph, [&] { readNpyIds(graph.toStdString()); });
    // A FIFO inside an IDX folder, as images or as labels.
    QDir(m_dir.path()).mkpath("fifo-folder");
    const QString images = makeFifo("fifo-folder/train-images-idx3-ubyte");
    expectNotRegular(images, [&] { openDataset(path("fifo-folder").toStdString()); });
    QFile::remove(images);
    QVERIFY(writeBytes(images, idxBytes(0x08, {1, 2, 2}, "\x01\x02\x03\x04")));
    const QString labels = makeFifo("fifo-folder/train-labels-idx1-ubyte");
    expectNotRegular(labels, [&] { openDataset(path("fifo-folder").toStdString()); });
  }

  void devicesAndSocketsAreRefused() {
    const QString zero = path("zero.npy");
    QVERIFY(QFile::link("/dev/zero", zero));
    expectNotRegular(zero, [&] { openDataset(zero.toStdString()); });
    const QString null = path("null.tsv");
    QVERIFY(QFile::link("/dev/null", null));
    OpenOptions options;
    options.metaPath = null.toStdString();
    const QString data = smallNpy("dev.npy");
    expectNotRegular(null, [&] { openDataset(data.toStdString(), options); });
    expectNotRegular(null, [&] { readNpyIds(null.toStdString()); });

    const QString socketPath = path("s.hdf5");
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const QByteArray local = socketPath.toLocal8Bit();
    QVERIFY(std::size_t(local.size()) < sizeof(address.sun_path));
    std::memcpy(address.sun_path, local.constData(), std::size_t(local.size()));
    QVERIFY(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    expectNotRegular(socketPath, [&] { openDataset(socketPath.toStdString()); });
    ::close(fd);
  }

  void foldersOnlyWhereAnIdxFolderIs() {
    QDir(m_dir.path()).mkpath("dir.npy");
    expectOpenError(path("dir.npy"), "FormatError", "no IDX images"); // read as an IDX folder
    const QString data = smallNpy("folder-meta.npy");
    OpenOptions options;
    options.metaPath = path("dir.npy").toStdString();
    expectError(
        path("dir.npy"), [&] { openDataset(data.toStdString(), options); }, "IoError",
        "not a regular file (it is a folder)");
  }

  // --- 4. Messages: positions from 1, values shown visibly --------------------------------------

  void tsvValues() {
    QVERIFY(writeBytes(path("bom.tsv"), "\xEF\xBB\xBF"
                                        "1\t2\n+5\t-4\n"));
    const Dataset ds = openDataset(path("bom.tsv").toStdString());
    QCOMPARE(ds.size(), 2);
    QCOMPARE(ds.vectors.row(0)[0], 1.0f);
    QCOMPARE(ds.vectors.row(1)[0], 5.0f); // '+5' is a number, as strtof and Python read it
    QVERIFY(writeBytes(path("big.tsv"), "1\t2\n3\t1e400\n"));
    expectOpenError(path("big.tsv"), "FormatError",
                    "line 2, column 2: '1e400' is out of float range");
    QVERIFY(writeBytes(path("tiny.tsv"), "1e-400\n"));
    expectOpenError(path("tiny.tsv"), "FormatError", "too close to zero");
    QVERIFY(writeBytes(path("midbom.tsv"), "1\t\xEF\xBB\xBF"
                                           "2\n"));
    const QString bomMessage = errorOf([&] { openDataset(path("midbom.tsv").toStdString()); });
    QVERIFY2(bomMessage.contains("'\\u{feff}2' is not a number"), qPrintable(bomMessage));
    QVERIFY2(!bomMessage.contains(QChar(0xfeff)), "an invisible character in the message");
    QVERIFY(writeBytes(path("esc.tsv"), "1\t\x1b[31mred\n"));
    const QString escMessage = errorOf([&] { openDataset(path("esc.tsv").toStdString()); });
    QVERIFY2(escMessage.contains("'\\x1b[31mred'") && !escMessage.contains('\x1b'),
             qPrintable(escMessage));
  }

  void metadataWithBomKeepsItsHeader() {
    const QString data = smallNpy("bommeta.npy", 2);
    QVERIFY(writeBytes(path("bommeta.meta.tsv"), "\xEF\xBB\xBF"
                                                 "label\ttext\ncat\ta\ndog\tb\n"));
    const Dataset ds = openDataset(data.toStdString());
    QCOMPARE(ds.labelOf(1), std::string("dog"));
    QCOMPARE(ds.textOf(0), std::string("a"));
  }

  void printableTextEscapes() {
    QCOMPARE(printableText("a\x1b[2Jb\x07"), std::string("a\\x1b[2Jb\\x07"));
    QCOMPARE(printableText("\xEF\xBB\xBFx\xE2\x80\xAEy"), std::string("\\u{feff}x\\u{202e}y"));
    QCOMPARE(printableText("caf\xC3\xA9 \xff"), std::string("caf\xC3\xA9 \\xff"));
    QCOMPARE(printableText("t\tn\n"), std::string("t\\tn\\n"));
    QCOMPARE(printableText(std::string(100, 'x'), 10), std::string(10, 'x') + "…");
  }

  void cliPrintsLabelsVisibly() {
    const QString data = smallNpy("cli.npy", 6);
    QVERIFY(
        writeBytes(path("cli.meta.tsv"), "\x1b[2Jevil\nb\x07\n\x1b]0;title\x07\nb\x07\nok\nok\n"));
    QProcess info;
    info.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"info", data, "--backend", "cpu"});
    QVERIFY(info.waitForFinished(60000));
    const QByteArray out = info.readAllStandardOutput();
    QCOMPARE(info.exitCode(), 0);
    QVERIFY2(!out.contains('\x1b') && !out.contains('\x07'), out.constData());
    QVERIFY2(out.contains("\\x1b[2Jevil") && out.contains("b\\x07"), out.constData());

    QProcess route;
    route.start(QStringLiteral(NEARSCAPE_CLI_PATH),
                {"path", data, "--from", "0", "--to", "2", "--k", "5", "--backend", "cpu"});
    QVERIFY(route.waitForFinished(60000));
    const QByteArray steps = route.readAllStandardOutput();
    QVERIFY2(!steps.contains('\x1b') && !steps.contains('\x07'), steps.constData());
    QVERIFY2(steps.contains("[\\x1b[2Jevil]"), steps.constData());
  }

  void cliCountsNonFinitePositionsFromOne() {
    auto values = randomFloats(5 * 4, 13);
    values[3 * 4 + 2] = NAN;
    QVERIFY(writeBytes(path("nan.npy"), npyBytes("<f4", {5, 4}, rawBytes(values))));
    QProcess info;
    info.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"info", path("nan.npy"), "--backend", "cpu"});
    QVERIFY(info.waitForFinished(60000));
    const QByteArray out = info.readAllStandardOutput();
    QVERIFY2(out.contains("first at row 4, column 3"), out.constData());
  }
};

QTEST_GUILESS_MAIN(TestHostileFiles)
#include "tst_hostile_files.moc"
