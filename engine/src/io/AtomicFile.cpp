#include "nearscape/io/AtomicFile.h"

#include "nearscape/core/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace nearscape {

void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::FILE* file)>& writer) {
  const std::filesystem::path folder =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (folder / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw IoError(path.string() + ": cannot create a temporary file in " + folder.string() + ": " +
                  std::strerror(errno));
  std::FILE* file = ::fdopen(fd, "wb");
  if (!file) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw IoError(path.string() + ": cannot open the temporary file");
  }
  try {
    writer(file);
    if (std::fflush(file) != 0 || std::ferror(file) || ::fsync(::fileno(file)) != 0)
      throw IoError(path.string() + ": write failed: " + std::strerror(errno));
  } catch (...) {
    std::fclose(file);
    ::unlink(tmpl.c_str());
    throw;
  }
  if (std::fclose(file) != 0) {
    ::unlink(tmpl.c_str());
    throw IoError(path.string() + ": close failed: " + std::strerror(errno));
  }
  // mkstemp makes 0600 files; outputs should be readable like any other file the user writes.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0666 & ~mask);
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw IoError(path.string() + ": cannot rename into place: " + std::strerror(err));
  }
}

} // namespace nearscape
