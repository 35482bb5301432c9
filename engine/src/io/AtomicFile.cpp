#include "nearscape/io/AtomicFile.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace nearscape {
namespace fs = std::filesystem;

namespace {

struct FileId {
  dev_t device;
  ino_t inode;
  bool operator==(const FileId&) const = default;
};

FileId fileIdOf(const struct stat& st) {
  return FileId{st.st_dev, st.st_ino};
}

std::string errnoText(int err) {
  return std::strerror(err);
}

/// Where an output's bytes land: a regular file (new or replaced by rename) or a stream (a FIFO
/// or character device, written through).
struct Target {
  fs::path requested;           ///< as the user named it
  fs::path path;                ///< symlinks followed
  bool stream = false;          ///< FIFO or character device
  std::optional<FileId> exists; ///< the file there now, if any
};

Target resolveTarget(const fs::path& requested) {
  Target t;
  t.requested = requested;
  std::error_code ec;
  t.path = fs::weakly_canonical(fs::absolute(requested, ec), ec);
  if (ec || t.path.empty())
    t.path = fs::absolute(requested);
  const std::string name = requested.string();
  struct stat st {};
  if (::stat(t.path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw InvalidArgument(name + ": is a folder, not a file name");
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
      throw InvalidArgument(name + ": is neither a regular file, a FIFO nor a character device; "
                                   "refusing to write to it");
    t.stream = !S_ISREG(st.st_mode);
    t.exists = fileIdOf(st);
    if (t.stream)
      return t;
  } else if (errno != ENOENT) {
    throw WriteError(name + ": " + errnoText(errno));
  }
  const fs::path folder = t.path.parent_path();
  struct stat fst {};
  if (::stat(folder.c_str(), &fst) != 0 || !S_ISDIR(fst.st_mode))
    throw IoError(name + ": the folder " + folder.string() + " does not exist");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw WriteError(name + ": cannot write in " + folder.string() + ": " + errnoText(errno));
  return t;
}

/// A temporary name beside `target`, short enough for any valid target name (NAME_MAX 255).
std::string temporaryTemplate(const fs::path& target, const char* what) {
  std::string stem = target.filename().string().substr(0, 200);
  return (target.parent_path() / ("." + stem + what + "XXXXXX")).string();
}

void fsyncFolder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd); // best effort: some file systems refuse to sync folders
    ::close(fd);
  }
}

thread_local OutputSet::Impl* t_active = nullptr;

/// A test hook, so that tests can fail real writes: NEARSCAPE_FAULT_WRITE=KIND:N makes the N-th
/// output this process writes fail as a full disk (enospc), a read-only folder (erofs) or a
/// rename that fails (rename, as across file systems), or stall half-written for a minute (stall:
/// a test kills the process there, as a crash or a kill -9 would).
struct WriteFault {
  std::string kind;
  int at = 0;
};

const WriteFault& writeFault() {
  static const WriteFault fault = [] {
    WriteFault f;
    const char* text = std::getenv("NEARSCAPE_FAULT_WRITE");
    if (!text)
      return f;
    const std::string spec(text);
    const auto colon = spec.find(':');
    f.kind = spec.substr(0, colon);
    f.at = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
    return f;
  }();
  return fault;
}

/// The fault this output is to suffer ("" for none), counting outputs in the order staged.
std::string faultForNextOutput() {
  static std::atomic<int> written{0};
  const WriteFault& fault = writeFault();
  const int n = ++written;
  return !fault.kind.empty() && n == fault.at ? fault.kind : std::string();
}

} // namespace

struct OutputSet::Impl {
  struct Input {
    std::string name;
    FileId id;
  };
  struct Output {
    Target target;
    std::string staged;          ///< regular: the written temporary file
    std::FILE* buffer = nullptr; ///< stream: the bytes, in an anonymous temporary file
    bool failRename = false;     ///< the test hook's "rename" fault
  };
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  Impl* previous = nullptr;
  std::uint64_t inputsSince = inputsMark(); ///< an input changed under the work: nothing lands

  ~Impl() {
    for (Output& o : outputs)
      discard(o);
  }

  static void discard(Output& o) {
    if (!o.staged.empty())
      ::unlink(o.staged.c_str());
    o.staged.clear();
    if (o.buffer)
      std::fclose(o.buffer);
    o.buffer = nullptr;
  }

  void refuseInputs(const Output& o) const {
    if (!o.target.exists || o.target.stream)
      return;
    for (const Input& in : inputs)
      if (in.id == *o.target.exists)
        throw InvalidArgument(o.target.requested.string() + ": is " +
                              (in.name == o.target.requested.string() ? std::string("an input")
                                                                      : "the input " + in.name) +
                              " of this command; refusing to overwrite it");
  }

  Output* find(const fs::path& path) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec || resolved.empty())
      resolved = fs::absolute(path);
    for (Output& o : outputs)
      if (o.target.path == resolved || o.target.requested == path)
        return &o;
    return nullptr;
  }

  static void stage(Output& o, const std::function<void(std::FILE*)>& writer) {
    discard(o); // a second write of one output replaces the first
    const std::string name = o.target.requested.string();
    const std::string fault = faultForNextOutput();
    o.failRename = fault == "rename";
    if (fault == "erofs")
      throw WriteError(name + ": cannot create a temporary file in " +
                       o.target.path.parent_path().string() + ": " + errnoText(EROFS));
    std::FILE* file = nullptr;
    std::string tmpl;
    if (o.target.stream) {
      file = std::tmpfile();
      if (!file)
        throw WriteError(name + ": cannot create a temporary buffer: " + errnoText(errno));
    } else {
      tmpl = temporaryTemplate(o.target.path, ".tmp-");
      const int fd = ::mkstemp(tmpl.data());
      if (fd < 0)
        throw WriteError(name + ": cannot create a temporary file in " +
                         o.target.path.parent_path().string() + ": " + errnoText(errno));
      file = ::fdopen(fd, "wb");
      if (!file) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw WriteError(name + ": cannot open a temporary file: " + errnoText(err));
      }
    }
    auto fail = [&](int err, const std::string& what) {
      std::fclose(file);
      if (!tmpl.empty())
        ::unlink(tmpl.c_str());
      throw WriteError(name + ": " + what + ": " + errnoText(err));
    };
    try {
      writer(file);
    } catch (const IoError&) {
      const int err = errno;
      if (std::ferror(file)) // a failed fwrite: say why (disk full, quota, I/O error)
        fail(err ? err : EIO, "write failed");
      std::fclose(file);
      if (!tmpl.empty())
        ::unlink(tmpl.c_str());
      throw;
    } catch (...) {
      std::fclose(file);
      if (!tmpl.empty())
        ::unlink(tmpl.c_str());
      throw;
    }
    if (std::fflush(file) != 0 || std::ferror(file))
      fail(errno ? errno : EIO, "write failed");
    if (fault == "enospc")
      fail(ENOSPC, "write failed");
    if (fault == "stall") { // half the bytes out, then wait to be killed
      ::ftruncate(::fileno(file), std::max<long>(1, std::ftell(file) / 2));
      ::fsync(::fileno(file));
      std::this_thread::sleep_for(std::chrono::minutes(1));
    }
    if (o.target.stream) {
      std::rewind(file);
      o.buffer = file;
      return;
    }
    if (::fsync(::fileno(file)) != 0)
      fail(errno, "write failed");
    if (std::fclose(file) != 0) {
      const int err = errno;
      ::unlink(tmpl.c_str());
      throw WriteError(name + ": close failed: " + errnoText(err));
    }
    // mkstemp makes 0600 files; outputs are readable like any other file the user writes.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::chmod(tmpl.c_str(), 0666 & ~mask);
    o.staged = tmpl;
  }

  /// Opens a stream target for writing without blocking on a FIFO nobody reads.
  static int openStream(const Output& o) {
    const int fd = ::open(o.target.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      throw WriteError(o.target.requested.string() + ": cannot open for writing: " +
                       (err == ENXIO ? std::string("no process reads this FIFO") : errnoText(err)));
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
  }

  static void copyStream(const Output& o, int fd) {
    char chunk[1 << 16];
    std::size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof(chunk), o.buffer)) > 0) {
      for (std::size_t done = 0; done < got;) {
        const ssize_t wrote = ::write(fd, chunk + done, got - done);
        if (wrote < 0 && errno == EINTR)
          continue;
        if (wrote <= 0)
          throw WriteError(o.target.requested.string() + ": write failed: " + errnoText(errno));
        done += std::size_t(wrote);
      }
    }
  }

  void commit() {
    throwIfInputsChanged(inputsSince);
    // Streams first: they cannot be taken back, so a failing one must stop the renames.
    for (Output& o : outputs) {
      if (!o.buffer)
        continue;
      const int fd = openStream(o);
      try {
        copyStream(o, fd);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      discard(o);
    }
    struct Moved {
      fs::path target;
      std::string backup; ///< a hard link to the file that was there, or empty
      bool existed = false;
    };
    std::vector<Moved> moved;
    auto rollBack = [&] {
      for (auto m = moved.rbegin(); m != moved.rend(); ++m) {
        if (!m->backup.empty())
          ::rename(m->backup.c_str(), m->target.c_str());
        else if (!m->existed) // new: remove it; replaced without a backup: the new one stays
          ::unlink(m->target.c_str());
      }
    };
    for (Output& o : outputs) {
      if (o.staged.empty())
        continue;
      Moved m{o.target.path, {}, o.target.exists.has_value()};
      if (o.target.exists) {
        std::string backup = temporaryTemplate(o.target.path, ".old-");
        const int fd = ::mkstemp(backup.data());
        if (fd >= 0) {
          ::close(fd);
          ::unlink(backup.c_str());
          if (::link(o.target.path.c_str(), backup.c_str()) == 0)
            m.backup = backup;
        }
      }
      if (o.failRename || ::rename(o.staged.c_str(), o.target.path.c_str()) != 0) {
        const int err = o.failRename ? EXDEV : errno;
        if (!m.backup.empty())
          ::unlink(m.backup.c_str());
        rollBack();
        for (Output& rest : outputs)
          discard(rest);
        throw WriteError(o.target.requested.string() +
                         ": cannot rename into place: " + errnoText(err));
      }
      o.staged.clear();
      moved.push_back(std::move(m));
    }
    for (const Moved& m : moved) {
      fsyncFolder(m.target.parent_path());
      if (!m.backup.empty())
        ::unlink(m.backup.c_str());
    }
  }
};

OutputSet::OutputSet() : m_impl(std::make_unique<Impl>()) {
  m_impl->previous = t_active;
  t_active = m_impl.get();
}

OutputSet::~OutputSet() {
  t_active = m_impl->previous;
}

void OutputSet::addInput(const fs::path& path) {
  if (path.empty())
    return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return;
  m_impl->inputs.push_back({path.string(), fileIdOf(st)});
  if (S_ISDIR(st.st_mode)) { // an IDX folder: the files it is read from
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
      if (::stat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode))
        m_impl->inputs.push_back({e.path().string(), fileIdOf(st)});
  }
  for (const Impl::Output& o : m_impl->outputs)
    m_impl->refuseInputs(o);
}

void OutputSet::addOutput(const fs::path& path) {
  if (path.empty())
    return;
  Impl::Output o;
  o.target = resolveTarget(path);
  m_impl->refuseInputs(o);
  for (const Impl::Output& other : m_impl->outputs) {
    const bool same =
        other.target.path == o.target.path ||
        (o.target.exists && other.target.exists && *o.target.exists == *other.target.exists);
    if (same && !(o.target.stream && other.target.stream)) // /dev/null twice is fine
      throw InvalidArgument(path.string() + " and " + other.target.requested.string() +
                            " name the same file; each output needs its own");
  }
  m_impl->outputs.push_back(std::move(o));
}

void OutputSet::commit() {
  m_impl->commit();
}

void writeFileAtomically(const fs::path& path, const std::function<void(std::FILE* file)>& writer) {
  if (t_active) {
    if (OutputSet::Impl::Output* o = t_active->find(path)) {
      OutputSet::Impl::stage(*o, writer);
      return;
    }
  }
  OutputSet single;
  single.addOutput(path);
  writeFileAtomically(path, writer);
  single.commit();
}

} // namespace nearscape
