#include "nearscape/io/MappedFile.h"

#include "io/MappingRegistry.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace nearscape {
namespace {

const char* describeKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a folder";
  if (S_ISFIFO(mode))
    return "a FIFO, a named pipe";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}

[[noreturn]] void throwNotRegular(const std::filesystem::path& path, mode_t mode) {
  throw IoError(path.string() + ": not a regular file (it is " + describeKind(mode) + ")");
}

[[noreturn]] void throwErrno(const std::filesystem::path& path, const char* action, int err) {
  throw IoError(path.string() + ": " + action + ": " + std::strerror(err));
}

std::int64_t modificationNs(const struct stat& st) {
  return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::string changedMessage(const std::filesystem::path& path) {
  return path.string() +
         " changed while it was being read (another program rewrote or truncated it)";
}

/// A mapping released after its file changed.
struct ChangedRelease {
  std::filesystem::path path;
  std::uint64_t openedAt, faultedAt;
};

/// The mappings alive now, and those released after their file changed.
struct Inputs {
  std::mutex mutex;
  std::vector<const MappedFile*> live;
  std::vector<ChangedRelease> changedReleased;
};

/// Whether a check from `since` covers a mapping: read since then (opened, or a page of it
/// vanished under a read). So a window's data, opened long ago and rewritten to be opened
/// again, does not fail that new opening; a command that opens its inputs checks them all.
bool inScope(std::uint64_t since, std::uint64_t openedAt, std::uint64_t faultedAt) {
  return openedAt > since || faultedAt > since;
}

Inputs& inputs() {
  static Inputs* all = new Inputs(); // never destroyed: mappings may outlive static destruction
  return *all;
}

} // namespace

void requireRegularFile(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throwErrno(path, "cannot open", errno);
  if (!S_ISREG(st.st_mode))
    throwNotRegular(path, st.st_mode);
}

int openRegularFile(const std::filesystem::path& path, std::uint64_t* sizeOut) {
  requireRegularFile(path);
  // O_NONBLOCK: should a FIFO replace the file after the stat, open() still returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throwErrno(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throwErrno(path, "cannot stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throwNotRegular(path, st.st_mode);
  }
  // Regular files ignore O_NONBLOCK, but clear it so that no reader ever sees EAGAIN.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (sizeOut)
    *sizeOut = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->m_path = path;
  file->m_fd = openRegularFile(path); // closed by the destructor, should anything below throw
  struct stat st {};
  if (::fstat(file->m_fd, &st) != 0)
    throwErrno(path, "cannot stat", errno);
  file->m_size = static_cast<std::size_t>(st.st_size);
  file->m_mtimeNs = modificationNs(st);
  file->m_openedAt = io::nextMappingEvent();
  if (file->m_size > 0) {
    void* p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, file->m_fd, 0);
    if (p == MAP_FAILED)
      throwErrno(path, "cannot map", errno);
    file->m_data = static_cast<const std::uint8_t*>(p);
    file->m_slot = io::registerMapping(p, file->m_size);
  }
  Inputs& all = inputs();
  const std::lock_guard lock(all.mutex);
  all.live.push_back(file.get());
  return file;
}

MappedFile::~MappedFile() {
  {
    Inputs& all = inputs();
    const std::lock_guard lock(all.mutex);
    std::erase(all.live, this);
    if (m_fd >= 0 && changed()) // reported by the checks still to come in this run
      all.changedReleased.push_back({m_path, m_openedAt, io::mappingFaultedAt(m_slot)});
  }
  io::unregisterMapping(m_slot);
  if (m_data)
    ::munmap(const_cast<std::uint8_t*>(m_data), m_size);
  if (m_fd >= 0)
    ::close(m_fd);
}

bool MappedFile::changed() const {
  if (io::mappingFaultedAt(m_slot) != 0)
    return true;
  struct stat st {};
  if (::fstat(m_fd, &st) != 0)
    return false; // a descriptor that cannot be stat'ed tells nothing
  return static_cast<std::size_t>(st.st_size) != m_size || modificationNs(st) != m_mtimeNs;
}

bool MappedFile::changedSince(std::uint64_t since) const {
  return inScope(since, m_openedAt, io::mappingFaultedAt(m_slot)) && changed();
}

void MappedFile::throwIfChanged() const {
  if (changed())
    throw InputChanged(changedMessage(m_path));
}

std::uint64_t inputsMark() {
  return io::lastMappingEvent();
}

std::string changedInputMessage(std::uint64_t since) {
  Inputs& all = inputs();
  const std::lock_guard lock(all.mutex);
  for (const ChangedRelease& file : all.changedReleased)
    if (inScope(since, file.openedAt, file.faultedAt))
      return changedMessage(file.path);
  for (const MappedFile* file : all.live)
    if (file->changedSince(since))
      return changedMessage(file->path());
  return {};
}

void throwIfInputsChanged(std::uint64_t since) {
  const std::string message = changedInputMessage(since);
  if (!message.empty())
    throw InputChanged(message);
}

} // namespace nearscape
