#include "nearscape/io/MappedFile.h"

#include "nearscape/core/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nearscape {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(path.string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw IoError(path.string() + ": not a regular file" +
                  (err ? std::string(": ") + std::strerror(err) : std::string()));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->m_size = static_cast<std::size_t>(st.st_size);
  if (file->m_size > 0) {
    void* p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw IoError(path.string() + ": cannot map: " + std::strerror(err));
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
