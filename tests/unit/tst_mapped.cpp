// Mapped inputs that another program rewrites under the run: no signal, the change reported.
#include "TestFiles.h"

#include "nearscape/io/AtomicFile.h"
#include "nearscape/io/MappedFile.h"
#include "nearscape/io/Npy.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nearscape;
using namespace nearscape::test;

namespace {

constexpr std::size_t kBytes = 5 * 65536; // pages enough on any page size

/// Sums every byte, so that each page of the mapping is read.
std::uint64_t touchAll(const std::uint8_t* data, std::size_t size) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < size; ++i)
    sum += static_cast<const volatile std::uint8_t*>(data)[i];
  return sum;
}

QByteArray ones(std::size_t size) {
  return QByteArray(qsizetype(size), char(1));
}

/// Sets the file's modification time far in the past, so that a rewrite now surely changes it.
void ageFile(const QString& path) {
  const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  QVERIFY(::utimensat(AT_FDCWD, QFile::encodeName(path).constData(), times, 0) == 0);
}

bool reportsChange(const std::function<void()>& check, const QString& path) {
  try {
    check();
  } catch (const InputChanged& e) {
    return QString::fromUtf8(e.what()) == path + " changed while it was being read (another "
                                                 "program rewrote or truncated it)";
  }
  return false;
}

} // namespace

class TestMapped : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;

private slots:
  void truncatedUnderTheMappingReadsZeros() {
    // numpy.save over the file: truncated, then a shorter file written. The pages past the new
    // end are gone: reading them was SIGBUS. Now the whole mapping reads as zeros from the first
    // such read on (the pages before it showed the new file), and the change is reported.
    const QString path = m_dir.filePath("truncated.bin");
    QVERIFY(writeBytes(path, ones(kBytes)));
    const std::uint64_t since = inputsMark();
    auto file = MappedFile::open(path.toStdString());
    QCOMPARE(touchAll(file->data(), file->size()), std::uint64_t(kBytes));
    QVERIFY(!file->changed());
    QVERIFY(writeBytes(path, QByteArray("short")));
    touchAll(file->data(), file->size()); // no signal
    QCOMPARE(touchAll(file->data(), file->size()), std::uint64_t(0));
    QVERIFY(file->changed());
    QVERIFY(reportsChange([&] { file->throwIfChanged(); }, path));
    QVERIFY(reportsChange([&] { throwIfInputsChanged(since); }, path));
    // Released before the check: still reported to a check of the run it belonged to.
    file.reset();
    QVERIFY(reportsChange([&] { throwIfInputsChanged(since); }, path));
    throwIfInputsChanged(inputsMark()); // a later run: nothing of its own changed
  }

  void rewrittenInPlaceWithTheSameSize() {
    // New values under the mapping and no page lost: no fault at all, the file's time tells.
    const QString path = m_dir.filePath("same-size.bin");
    QVERIFY(writeBytes(path, ones(kBytes)));
    ageFile(path);
    const std::uint64_t since = inputsMark();
    auto file = MappedFile::open(path.toStdString());
    touchAll(file->data(), file->size());
    throwIfInputsChanged(since);
    QVERIFY(writeBytes(path, QByteArray(qsizetype(kBytes), char(2))));
    QVERIFY(reportsChange([&] { file->throwIfChanged(); }, path));
    QVERIFY(reportsChange([&] { throwIfInputsChanged(since); }, path));
  }

  void outputsDoNotLandAfterAChange() {
    // The data stays mapped inside the matrix (float32, zero copy); the output set refuses to
    // commit once it changed, and leaves no file.
    const QString path = m_dir.filePath("data.npy"), out = m_dir.filePath("out.npy");
    QVERIFY(writeBytes(path, npyBytes("<f4", {2000, 40}, rawBytes(randomFloats(2000 * 40, 3)))));
    bool mapped = false;
    const Matrix<float> data = readNpyFloat(path.toStdString(), nullptr, &mapped);
    QVERIFY(mapped);
    OutputSet outputs;
    outputs.addOutput(out.toStdString());
    QVERIFY(writeBytes(path, npyBytes("<f4", {2, 40}, rawBytes(randomFloats(2 * 40, 4)))));
    auto sum = [&] {
      double s = 0;
      for (std::int64_t i = 0; i < data.rows() * data.cols(); ++i)
        s += std::abs(data.data()[i]);
      return s;
    };
    const volatile double first = sum(); // no signal: from the first vanished page on, zeros
    (void)first;
    QCOMPARE(sum(), 0.0);
    writeNpy(out.toStdString(), data.view());
    QVERIFY(reportsChange([&] { outputs.commit(); }, path));
    QVERIFY(!QFile::exists(out));
  }

  void unchangedFilesAreNotReported() {
    const QString path = m_dir.filePath("kept.bin");
    QVERIFY(writeBytes(path, ones(kBytes)));
    const std::uint64_t since = inputsMark();
    {
      auto file = MappedFile::open(path.toStdString());
      QCOMPARE(touchAll(file->data(), file->size()), std::uint64_t(kBytes));
      QVERIFY(!file->changed());
      file->throwIfChanged();
    }
    throwIfInputsChanged(since);
  }

  void otherBusErrorsStayDeadly() {
    // A fault outside Nearscape's mappings is not swallowed: the process still dies of it.
    const QString path = m_dir.filePath("foreign.bin");
    QVERIFY(writeBytes(path, ones(kBytes)));
    auto ours = MappedFile::open(path.toStdString()); // the handler is installed
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      const int fd = ::open(QFile::encodeName(path).constData(), O_RDWR);
      void* p = ::mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0);
      if (fd < 0 || p == MAP_FAILED || ::ftruncate(fd, 0) != 0)
        ::_exit(3);
      touchAll(static_cast<const std::uint8_t*>(p), kBytes);
      ::_exit(0); // survived: wrong
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    // The previous handler has it: killed by SIGBUS (or by QtTest's crash handler, which
    // prints its report first; under AddressSanitizer, whose report exits non-zero).
    QVERIFY2((WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
                 (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3),
             qPrintable(QString::number(status)));
  }
};

QTEST_GUILESS_MAIN(TestMapped)
#include "tst_mapped.moc"
