#include "io/ChecksummedFile.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/AtomicFile.h"

#include <xxhash.h>

#include <cstring>
#include <unistd.h>

namespace nearscape::io {

void writeChecksummedFile(const std::filesystem::path& path, const Magic& magic,
                          std::uint32_t version, const nlohmann::json& header,
                          const std::vector<Bytes>& sections) {
  const std::string text = header.dump();
  writeFileAtomically(path, [&](std::FILE* f) {
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                   &XXH3_freeState);
    XXH3_64bits_reset(state.get());
    auto put = [&](const void* data, std::size_t bytes) {
      if (bytes && std::fwrite(data, 1, bytes, f) != bytes)
        throw IoError(path.string() + ": write failed");
      XXH3_64bits_update(state.get(), data, bytes);
    };
    const std::uint32_t length = std::uint32_t(text.size());
    put(magic.data(), magic.size());
    put(&version, 4);
    put(&length, 4);
    put(text.data(), text.size());
    for (const Bytes& s : sections)
      put(s.data, s.size);
    const std::uint64_t checksum = XXH3_64bits_digest(state.get());
    if (std::fwrite(&checksum, 8, 1, f) != 1)
      throw IoError(path.string() + ": write failed");
  });
}

bool hasMagic(const std::filesystem::path& path, const Magic& magic) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return false;                       // the reader that follows says what is missing
  const int fd = openRegularFile(path); // a FIFO or device: IoError, never a blocking read
  char head[8] = {};
  const ssize_t got = ::pread(fd, head, sizeof(head), 0);
  ::close(fd);
  return got == 8 && std::memcmp(head, magic.data(), 8) == 0;
}

ChecksummedFile readChecksummedFile(const std::filesystem::path& path, const Magic& magic,
                                    std::uint32_t version, const std::string& what) {
  ChecksummedFile f;
  f.mapping = MappedFile::open(path);
  const std::string name = path.string();
  const std::uint8_t* p = f.mapping->data();
  const std::size_t size = f.mapping->size();
  if (size < 16 || std::memcmp(p, magic.data(), 8) != 0)
    throw FormatError(name + ": not a Nearscape " + what + " (bad magic)");
  std::uint32_t stored = 0, length = 0;
  std::memcpy(&stored, p + 8, 4);
  std::memcpy(&length, p + 12, 4);
  if (stored != version)
    throw FormatError(name + ": " + what + " version " + std::to_string(stored) +
                      " is not supported (this build reads version " + std::to_string(version) +
                      ")");
  if (std::size_t(length) + 8 > size - 16)
    throw FormatError(name + ": truncated " + what + " header");
  try {
    f.header = nlohmann::json::parse(p + 16, p + 16 + length);
  } catch (const std::exception&) {
    throw FormatError(name + ": malformed " + what + " header");
  }
  if (!f.header.is_object())
    throw FormatError(name + ": malformed " + what + " header");
  f.body = p + 16 + length;
  f.bodySize = size - 16 - length - 8;
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, p + size - 8, 8);
  const bool intact = XXH3_64bits(p, size - 8) == checksum;
  f.mapping->throwIfChanged(); // a rewrite under the read is no corruption
  if (!intact)
    throw FormatError(name + ": checksum mismatch: the " + what + " is corrupted or truncated");
  return f;
}

} // namespace nearscape::io
