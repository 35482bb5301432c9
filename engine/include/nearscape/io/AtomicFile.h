#pragma once
/// @file AtomicFile.h
/// Writes that either complete or leave nothing behind.

#include <cstddef>
#include <filesystem>
#include <functional>

namespace nearscape {

/// Writes a file through `writer` into a temporary file in the same folder, flushes it, and
/// renames it over `path`. On any failure (an exception from `writer` included) the temporary
/// file is removed and `path` is untouched. Throws IoError, or rethrows what `writer` threw.
void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::FILE* file)>& writer);

} // namespace nearscape
