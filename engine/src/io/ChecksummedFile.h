#pragma once
// The framing our own files share (graph files, index files): an 8-byte magic, a u32 version,
// a u32 header length, a JSON header, binary sections, and the XXH3-64 of every byte before it.
// Little-endian. Written atomically; read through a memory mapping and verified whole.

#include "nearscape/io/MappedFile.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nearscape::io {

using Magic = std::array<char, 8>;

struct Bytes {
  const void* data;
  std::size_t size;
};

/// Writes header and sections atomically. Throws IoError.
void writeChecksummedFile(const std::filesystem::path& path, const Magic& magic,
                          std::uint32_t version, const nlohmann::json& header,
                          const std::vector<Bytes>& sections);

/// A verified file: its header and the bytes after it (the sections, checksum excluded).
struct ChecksummedFile {
  std::shared_ptr<const MappedFile> mapping;
  nlohmann::json header;
  const std::uint8_t* body = nullptr;
  std::size_t bodySize = 0;
};

/// Reads and verifies magic, version, header and checksum; `what` names the kind of file in
/// messages ("graph file"). Throws IoError, FormatError.
ChecksummedFile readChecksummedFile(const std::filesystem::path& path, const Magic& magic,
                                    std::uint32_t version, const std::string& what);

/// True when the file starts with `magic`; false when it does not exist. Throws IoError when it
/// is not a regular file (a FIFO is never read: it could block forever).
bool hasMagic(const std::filesystem::path& path, const Magic& magic);

} // namespace nearscape::io
