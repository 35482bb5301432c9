#include "nearscape/io/AtomicFile.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
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

/// The start of the temporary names beside `target`: ".NAME.tmp-" or ".NAME.old-" (NAME cut so
/// that any valid target name fits NAME_MAX 255).
std::string temporaryPrefix(const fs::path& target, const char* what) {
  std::string prefix = ".";
  prefix.append(target.filename().string(), 0, 200);
  prefix.append(what);
  return prefix;
}

/// A temporary name beside `target` for mkstemp: the prefix, this process's id (so that a later
/// run can tell a killed writer's leftovers from a live one's files), then six random letters.
std::string temporaryTemplate(const fs::path& target, const char* what) {
  return (target.parent_path() /
          (temporaryPrefix(target, what) + std::to_string(::getpid()) + "-XXXXXX"))
      .string();
}

/// Whether `name` is one of `prefix`'s temporaries ("PREFIX" PID "-" six letters) whose writer is
/// gone: no process has that id any more. A live process's files (another writer of the same
/// output, running now) are left alone.
bool isLeftover(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() + 7 || name.compare(0, prefix.size(), prefix) != 0)
    return false;
  const std::string rest = name.substr(prefix.size());
  const std::size_t dash = rest.size() - 7;
  if (rest[dash] != '-' || dash == 0 || dash > 10 ||
      !std::all_of(rest.begin(), rest.begin() + long(dash),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const long pid = std::atol(rest.substr(0, dash).c_str());
  if (pid <= 0 || pid == long(::getpid()))
    return false;
  return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

/// Whether `name` is a temporary of `prefix` in the form without a process id ("PREFIX" six
/// letters, written by earlier versions) untouched for a day: no write takes that long.
bool isStaleUnowned(const fs::path& file, const std::string& name, const std::string& prefix) {
  if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0)
    return false;
  struct stat st {};
  return ::lstat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         std::time(nullptr) - st.st_mtime > 24 * 3600;
}

/// Removes what a killed run left beside `target` (its temporary files and commit backups).
void removeLeftovers(const fs::path& target) {
  const std::string tmp = temporaryPrefix(target, ".tmp-"), old = temporaryPrefix(target, ".old-");
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (isLeftover(name, tmp) || isLeftover(name, old) || isStaleUnowned(e.path(), name, tmp))
      ::unlink(e.path().c_str()); // best effort: another run may remove it first
  }
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
/// a test kills the process there, as a crash or a kill -9 would). KIND:NAME instead picks the
/// first output whose file name is NAME (for programs that also write other files, such as
/// cache entries, in an order a test cannot know).
struct WriteFault {
  std::string kind;
  int at = 0;
  std::string name;
};

WriteFault writeFault() { // read at each output: a forked test child sets it late
  WriteFault f;
  const char* text = std::getenv("NEARSCAPE_FAULT_WRITE");
  if (!text)
    return f;
  const std::string spec(text);
  const auto colon = spec.find(':');
  f.kind = spec.substr(0, colon);
  const std::string at = colon == std::string::npos ? "1" : spec.substr(colon + 1);
  if (!at.empty() && std::all_of(at.begin(), at.end(), [](char c) { return c >= '0' && c <= '9'; }))
    f.at = std::atoi(at.c_str());
  else
    f.name = at;
  return f;
}

/// The fault the output `target` is to suffer ("" for none), counting outputs in the order staged.
std::string faultForNextOutput(const fs::path& target) {
  static std::atomic<int> written{0};
  static std::atomic<bool> namedHit{false};
  const WriteFault fault = writeFault();
  const int n = ++written;
  if (fault.kind.empty())
    return {};
  if (!fault.name.empty())
    return target.filename() == fault.name && !namedHit.exchange(true) ? fault.kind : std::string();
  return n == fault.at ? fault.kind : std::string();
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
    const std::string fault = faultForNextOutput(o.target.path);
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
      removeLeftovers(o.target.path);
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
