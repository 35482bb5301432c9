// Writing outputs: all-or-nothing, never over an input, never replacing a FIFO or a device.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/io/AtomicFile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace nearscape;
using namespace nearscape::test;

namespace {

/// What fsync and fdatasync were called on (device, inode, a folder?), recorded by the wrappers
/// below: this executable's definitions come before the C library's for the engine's calls too.
struct Synced {
  dev_t device;
  ino_t inode;
  bool folder;
};
std::mutex g_syncedMutex;
std::vector<Synced> g_synced;

int recordSync(int fd, const char* name) {
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    const std::lock_guard lock(g_syncedMutex);
    g_synced.push_back({st.st_dev, st.st_ino, S_ISDIR(st.st_mode)});
  }
  using Sync = int (*)(int);
  return reinterpret_cast<Sync>(::dlsym(RTLD_NEXT, name))(fd);
}

bool wasSynced(const QString& path, bool folder) {
  struct stat st {};
  if (::stat(path.toLocal8Bit().constData(), &st) != 0)
    return false;
  const std::lock_guard lock(g_syncedMutex);
  return std::any_of(g_synced.begin(), g_synced.end(), [&](const Synced& s) {
    return s.device == st.st_dev && s.inode == st.st_ino && s.folder == folder;
  });
}

/// Runs `body` in a child process (which may change its user or its limits) and returns its exit
/// status: 0 when it did what the test expects, otherwise a code the test names.
int inChild(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 100;
    try {
      code = body();
    } catch (...) {
      code = 101;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

} // namespace

extern "C" int fsync(int fd) {
  return recordSync(fd, "fsync");
}
extern "C" int fdatasync(int fd) {
  return recordSync(fd, "fdatasync");
}

namespace {

void writeText(const std::filesystem::path& path, const std::string& text) {
  writeFileAtomically(path, [&](std::FILE* f) {
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size())
      throw IoError(path.string() + ": write failed");
  });
}

/// Names in `dir` other than `keep`: leftovers (temporary or backup files) when non-empty.
QStringList othersIn(const QString& dir, const QStringList& keep) {
  QStringList left;
  for (const QString& name : QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::System))
    if (!keep.contains(name))
      left << name;
  return left;
}

} // namespace

class TestOutputs : public QObject {
  Q_OBJECT

private slots:
  void writesAndReplacesWithoutLeftovers() {
    QTemporaryDir dir;
    const std::string a = dir.filePath("a.txt").toStdString();
    writeText(a, "first");
    writeText(a, "second");
    QCOMPARE(readBytes(dir.filePath("a.txt")), QByteArray("second"));
    QCOMPARE(othersIn(dir.path(), {"a.txt"}), QStringList());
    QCOMPARE(QFileInfo(dir.filePath("a.txt")).permissions() & QFile::ReadOther,
             QFile::ReadOther); // mkstemp's 0600 widened to the umask's
  }

  void failingWriterLeavesTheOldFile() {
    QTemporaryDir dir;
    const std::string a = dir.filePath("a.txt").toStdString();
    writeText(a, "old");
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, writeFileAtomically(a, [](std::FILE* f) {
                               std::fputs("half", f);
                               throw InvalidArgument("stop");
                             }));
    QCOMPARE(readBytes(dir.filePath("a.txt")), QByteArray("old"));
    QCOMPARE(othersIn(dir.path(), {"a.txt"}), QStringList());
  }

  void longNamesFit() {
    // A 249-byte name is valid (NAME_MAX 255); its temporary name must fit too.
    QTemporaryDir dir;
    const QString name = QString(245, 'n') + ".npy";
    writeText(dir.filePath(name).toStdString(), "x");
    QCOMPARE(readBytes(dir.filePath(name)), QByteArray("x"));
  }

  void symlinkStaysALink() {
    QTemporaryDir dir;
    writeText(dir.filePath("real.txt").toStdString(), "old");
    QVERIFY(QFile::link(dir.filePath("real.txt"), dir.filePath("link.txt")));
    writeText(dir.filePath("link.txt").toStdString(), "new");
    QVERIFY(QFileInfo(dir.filePath("link.txt")).isSymLink());
    QCOMPARE(readBytes(dir.filePath("real.txt")), QByteArray("new"));
  }

  void outputsThatAreInputsAreRefused() {
    QTemporaryDir dir;
    const std::string in = dir.filePath("in.npy").toStdString();
    writeText(in, "data");
    QVERIFY(QFile::link(dir.filePath("in.npy"), dir.filePath("alias.npy")));
    QCOMPARE(::link(in.c_str(), dir.filePath("hard.npy").toStdString().c_str()), 0);
    for (const QString& spelling : {dir.filePath("in.npy"), dir.filePath("alias.npy"),
                                    dir.filePath("hard.npy"), dir.filePath("./sub/../in.npy")}) {
      QDir(dir.path()).mkpath("sub");
      OutputSet set;
      set.addInput(in);
      QVERIFY_THROWS_EXCEPTION(InvalidArgument, set.addOutput(spelling.toStdString()));
    }
    // The same the other way round: an output declared before the input.
    OutputSet set;
    set.addOutput(dir.filePath("hard.npy").toStdString());
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, set.addInput(in));
    // An IDX folder's files are inputs too.
    QDir(dir.path()).mkpath("idx");
    writeText(dir.filePath("idx/train-images").toStdString(), "x");
    OutputSet folder;
    folder.addInput(dir.filePath("idx").toStdString());
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             folder.addOutput(dir.filePath("idx/train-images").toStdString()));
    QCOMPARE(readBytes(dir.filePath("in.npy")), QByteArray("data"));
  }

  void badTargetsAreRefusedUpFront() {
    QTemporaryDir dir;
    OutputSet set;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, set.addOutput(dir.path().toStdString()));
    QVERIFY_THROWS_EXCEPTION(IoError, set.addOutput(dir.filePath("missing/o.npy").toStdString()));
    set.addOutput(dir.filePath("o.npy").toStdString());
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             set.addOutput(dir.filePath("./o.npy").toStdString())); // twice
  }

  void uncommittedSetLeavesNothing() {
    QTemporaryDir dir;
    const std::string a = dir.filePath("a.txt").toStdString(),
                      b = dir.filePath("b.txt").toStdString();
    writeText(a, "old");
    {
      OutputSet set;
      set.addOutput(a);
      set.addOutput(b);
      writeText(a, "new");
      writeText(b, "new");
      QCOMPARE(readBytes(dir.filePath("a.txt")), QByteArray("old")); // staged, not yet in place
      // destroyed without commit(): a cancelled or failed command
    }
    QCOMPARE(readBytes(dir.filePath("a.txt")), QByteArray("old"));
    QVERIFY(!QFile::exists(dir.filePath("b.txt")));
    QCOMPARE(othersIn(dir.path(), {"a.txt"}), QStringList());
  }

  void failedCommitRestoresEveryOutput() {
    QTemporaryDir dir;
    const std::string a = dir.filePath("a.txt").toStdString(),
                      b = dir.filePath("b.txt").toStdString(),
                      c = dir.filePath("c.txt").toStdString();
    writeText(a, "old a");
    OutputSet set;
    set.addOutput(a);
    set.addOutput(c);
    set.addOutput(b);
    writeText(a, "new a");
    writeText(c, "new c");
    writeText(b, "new b");
    QVERIFY(QDir(dir.path()).mkdir("b.txt")); // b's rename now fails (EISDIR), after a's and c's
    QVERIFY_THROWS_EXCEPTION(WriteError, set.commit());
    QCOMPARE(readBytes(dir.filePath("a.txt")), QByteArray("old a"));
    QVERIFY(!QFile::exists(dir.filePath("c.txt")));
    QCOMPARE(othersIn(dir.path(), {"a.txt"}), QStringList());
  }

  void fsyncsTheFileAndItsFolder() {
    // Durable before it is visible: the new file's bytes are synced before the rename (its inode
    // is the one that lands), and the folder after it (the rename itself).
    QTemporaryDir dir;
    const QString a = dir.filePath("a.txt");
    writeText(a.toStdString(), "old");
    {
      const std::lock_guard lock(g_syncedMutex);
      g_synced.clear();
    }
    writeText(a.toStdString(), "new");
    QVERIFY2(wasSynced(a, false), "the file was not fsynced");
    QVERIFY2(wasSynced(dir.path(), true), "its folder was not fsynced after the rename");
  }

  void renameThatFailsLeavesNoTemporary() {
    // The target turns into a non-empty folder while the new bytes are written: the rename
    // fails (EISDIR), the folder and what is in it stay, and no temporary file is left.
    QTemporaryDir dir;
    const QString target = dir.filePath("out.npy");
    try {
      writeFileAtomically(target.toStdString(), [&](std::FILE* f) {
        std::fputs("new bytes", f);
        QDir(dir.path()).mkpath("out.npy/inside");
        writeBytes(target + "/kept.txt", "kept");
      });
      QFAIL("the rename onto a folder succeeded");
    } catch (const WriteError& e) {
      QVERIFY2(std::strstr(e.what(), "rename"), e.what());
    }
    QCOMPARE(readBytes(target + "/kept.txt"), QByteArray("kept"));
    QCOMPARE(othersIn(dir.path(), {}), QStringList());
  }

  void readOnlyFolderKeepsTheOldFile() {
    // The folder turns read-only after the output was declared (a real EACCES from creating the
    // temporary, not the up-front check); as root, the child first becomes `nobody`, for whom
    // permissions hold.
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("out"));
    const QString folder = dir.filePath("out"), target = folder + "/a.txt";
    writeText(target.toStdString(), "old");
    const bool root = ::geteuid() == 0;
    if (root) {
      QCOMPARE(::chmod(dir.path().toLocal8Bit().constData(), 0755), 0);
      QCOMPARE(::chown(folder.toLocal8Bit().constData(), 65534, 65534), 0);
    }
    const int status = inChild([&] {
      if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0))
        return 2;
      OutputSet set;
      set.addOutput(target.toStdString());
      if (::chmod(folder.toLocal8Bit().constData(), 0555) != 0)
        return 3;
      try {
        writeText(target.toStdString(), "new");
        return 4; // written into a read-only folder
      } catch (const WriteError& e) {
        return std::strstr(e.what(), "Permission denied") ? 0 : 5;
      }
    });
    ::chmod(folder.toLocal8Bit().constData(), 0755);
    QCOMPARE(status, 0);
    QCOMPARE(readBytes(target), QByteArray("old"));
    QCOMPARE(othersIn(folder, {"a.txt"}), QStringList());
  }

  void fullDiskKeepsTheOldFile_data() {
    QTest::addColumn<bool>("checked"); // the writer checks each fwrite, or leaves it to the flush
    QTest::newRow("a writer that checks") << true;
    QTest::newRow("a writer that does not") << false;
  }
  void fullDiskKeepsTheOldFile() {
    // A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes writes fail as a full disk would:
    // WriteError with the system's reason, the old file unchanged, nothing left beside it.
    QFETCH(bool, checked);
    QTemporaryDir dir;
    const QString target = dir.filePath("a.npy");
    writeText(target.toStdString(), "old");
    const int status = inChild([&] {
      std::signal(SIGXFSZ, SIG_IGN);
      const struct rlimit limit { 4096, 4096 };
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
        return 2;
      const std::vector<float> values(100 * 100, 1.5f);
      try {
        if (checked)
          writeNpy(target.toStdString(), MatrixView<float>{values.data(), 100, 100});
        else
          writeFileAtomically(target.toStdString(), [&](std::FILE* f) {
            std::fwrite(values.data(), sizeof(float), values.size(), f); // result ignored
          });
        return 3; // 40 kB written under a 4 kB limit
      } catch (const WriteError& e) {
        return std::strstr(e.what(), "File too large") ? 0 : 4;
      }
    });
    QCOMPARE(status, 0);
    QCOMPARE(readBytes(target), QByteArray("old"));
    QCOMPARE(othersIn(dir.path(), {"a.npy"}), QStringList());
  }

  void leftoversOfAKilledRunAreRemoved() {
    // A killed writer's temporary and backup beside the output (its process is gone) are removed
    // by the next write of that output; a live writer's temporary, another output's, and other
    // files stay.
    QTemporaryDir dir;
    const pid_t gone = ::fork();
    if (gone == 0)
      ::_exit(0);
    ::waitpid(gone, nullptr, 0);
    const pid_t alive = ::fork();
    if (alive == 0) {
      ::pause();
      ::_exit(0);
    }
    const QString dead = QString::number(gone), live = QString::number(alive);
    const QStringList left{".a.png.tmp-" + dead + "-Ab12Cd", ".a.png.old-" + dead + "-xYz789"};
    const QStringList kept{".a.png.tmp-" + live + "-Qw34Er", ".b.png.tmp-" + dead + "-Ab12Cd",
                           "a.png.tmp-" + dead + "-Ab12Cd", ".a.png.tmp-notes"};
    for (const QString& name : left + kept)
      QVERIFY(writeBytes(dir.filePath(name), "partial"));
    writeText(dir.filePath("a.png").toStdString(), "picture");
    ::kill(alive, SIGKILL);
    ::waitpid(alive, nullptr, 0);
    QCOMPARE(readBytes(dir.filePath("a.png")), QByteArray("picture"));
    QStringList expected = kept;
    expected << "a.png";
    QStringList found = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    expected.sort();
    found.sort();
    QCOMPARE(found, expected);
  }

  void faultHookCanNameTheOutput() {
    // NEARSCAPE_FAULT_WRITE=enospc:NAME fails the output of that name, not the others.
    QTemporaryDir dir;
    const QString shot = dir.filePath("shot.png"), other = dir.filePath("cache.bin");
    writeText(shot.toStdString(), "old picture");
    const int status = inChild([&] {
      ::setenv("NEARSCAPE_FAULT_WRITE", "enospc:shot.png", 1);
      writeText(other.toStdString(), "cached");
      try {
        writeText(shot.toStdString(), "new picture");
        return 3;
      } catch (const WriteError& e) {
        return std::strstr(e.what(), "No space left") ? 0 : 4;
      }
    });
    QCOMPARE(status, 0);
    QCOMPARE(readBytes(other), QByteArray("cached"));
    QCOMPARE(readBytes(shot), QByteArray("old picture"));
    QCOMPARE(othersIn(dir.path(), {"shot.png", "cache.bin"}), QStringList());
  }

  void devicesAreWrittenThroughNotReplaced() {
    // /dev/null takes the bytes and stays a character device.
    writeText("/dev/null", "discarded");
    struct stat st {};
    QCOMPARE(::stat("/dev/null", &st), 0);
    QVERIFY(S_ISCHR(st.st_mode));
    // /dev/full: the device's own error, with the system's reason.
    try {
      writeText("/dev/full", std::string(1 << 20, 'x'));
      QFAIL("a write to /dev/full succeeded");
    } catch (const WriteError& e) {
      QVERIFY2(std::strstr(e.what(), "No space left"), e.what());
    }
  }

  void fifoIsWrittenThroughOrRefusedWithoutBlocking() {
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("pipe").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    // Nobody reads: a clear error at once, not a hang.
    try {
      writeText(fifo, "lost");
      QFAIL("a write to a FIFO without a reader succeeded");
    } catch (const WriteError& e) {
      QVERIFY2(std::strstr(e.what(), "no process reads"), e.what());
    }
    // A reader: the bytes arrive through the FIFO, which stays a FIFO.
    std::string got;
    std::thread reader([&] {
      const int fd = ::open(fifo.c_str(), O_RDONLY);
      char buffer[64];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;)
        got.append(buffer, std::size_t(n));
      ::close(fd);
    });
    bool written = false;
    for (int attempt = 0; attempt < 200 && !written; ++attempt) { // until the reader has opened
      try {
        writeText(fifo, "through the pipe");
        written = true;
      } catch (const WriteError&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (!written) // release the reader's open() so that the test ends
      ::close(::open(fifo.c_str(), O_WRONLY));
    reader.join();
    QVERIFY(written);
    QCOMPARE(got, std::string("through the pipe"));
    struct stat st {};
    QCOMPARE(::stat(fifo.c_str(), &st), 0);
    QVERIFY(S_ISFIFO(st.st_mode));
  }
};

QTEST_GUILESS_MAIN(TestOutputs)
#include "tst_outputs.moc"
