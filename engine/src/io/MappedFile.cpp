#include "nearscape/io/MappedFile.h"

#include "nearscape/core/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
  std::uint64_t size = 0;
  const int fd = openRegularFile(path, &size);
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->m_size = static_cast<std::size_t>(size);
  if (file->m_size > 0) {
    void* p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throwErrno(path, "cannot map", err);
    }
    file->m_data = static_cast<const std::uint8_t*>(p);
  }
  ::close(fd); // the mapping stays valid without the descriptor
  return file;
}

MappedFile::~MappedFile() {
  if (m_data)
    ::munmap(const_cast<std::uint8_t*>(m_data), m_size);
}

} // namespace nearscape
