#pragma once
/// @file MappedFile.h
/// Read-only memory mapping of a whole file.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace nearscape {

/// A read-only, private mapping of a file. Shared ownership keeps the mapping alive for views.
class MappedFile {
public:
  /// Maps `path`. Throws IoError when it cannot be opened or mapped. An empty file maps to
  /// size() == 0 and data() == nullptr.
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
