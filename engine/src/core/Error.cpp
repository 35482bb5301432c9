#include "nearscape/core/Error.h"

#include <filesystem>

namespace nearscape::detail {

void throwInvalidArgument(const char* file, int line, const std::string& message) {
  throw InvalidArgument(message + " [" + std::filesystem::path(file).filename().string() + ":" +
                        std::to_string(line) + "]");
}

} // namespace nearscape::detail
