#pragma once
// One reader per format, behind openDataset (internal to the engine).

#include "nearscape/core/Dataset.h"
#include "nearscape/core/JobControl.h"

#include <filesystem>

namespace nearscape::io {

Dataset readNpyDataset(const std::filesystem::path& path);
/// .fvecs, .bvecs or .ivecs, chosen by `kind` ('f', 'b', 'i').
Dataset readVecs(const std::filesystem::path& path, char kind, JobControl& job);
Dataset readHdf5(const std::filesystem::path& path);
Dataset readTsvVectors(const std::filesystem::path& path, JobControl& job);
/// One IDX file (plain or .gz) with its sibling labels file when there is one.
Dataset readIdxFile(const std::filesystem::path& path, bool thumbnails, JobControl& job);
/// A folder of IDX files: train-* first, then t10k-*, images paired with labels.
Dataset readIdxFolder(const std::filesystem::path& folder, bool thumbnails, JobControl& job);

/// True when every byte sequence in `text` is valid UTF-8; else the offset of the first bad byte.
bool isValidUtf8(std::string_view text, std::size_t* badOffset = nullptr);

} // namespace nearscape::io
