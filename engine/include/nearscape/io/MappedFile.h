#pragma once
/// @file MappedFile.h
/// Read-only memory mapping of a whole file, and opening input files without ever blocking.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace nearscape {

/// Throws IoError "<path>: not a regular file (it is a FIFO…)" unless `path`, symlinks followed,
/// is a regular file. Only stats the path: a FIFO or a device is never opened.
void requireRegularFile(const std::filesystem::path& path);

/// Opens `path` read-only as a regular file and returns its descriptor (close-on-exec; the caller
/// closes it). Never blocks: the path is stat'ed first and opened with O_NONBLOCK, so a FIFO, a
/// device, a socket or a folder is refused at once even if it replaced the file in between.
/// Sets `sizeOut` to the file's size. Throws IoError.
int openRegularFile(const std::filesystem::path& path, std::uint64_t* sizeOut = nullptr);

/// A read-only, private mapping of a file. Shared ownership keeps the mapping alive for views.
class MappedFile {
public:
  /// Maps `path` (a regular file: see openRegularFile). Throws IoError when it cannot be opened
  /// or mapped. An empty file maps to size() == 0 and data() == nullptr.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return m_data; }
  std::size_t size() const { return m_size; }

private:
  MappedFile() = default;
  const std::uint8_t* m_data = nullptr;
  std::size_t m_size = 0;
};

} // namespace nearscape
