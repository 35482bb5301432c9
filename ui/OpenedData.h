#pragma once
// Reading a data set for the explorer, whole, before it enters the model: the vectors (checked
// finite), its metadata columns worth colouring by and its PCA view. Run on a job's thread; the
// window hands the result to ExplorerSession::setData only once it is complete.

#include "ExplorerSession.h"

namespace nearscape::ui {

/// Reads `path` (a file or IDX folder) with metadata `metaPath` (empty: the sidecar, if any).
/// Throws what openDataset and computePca throw (IoError, FormatError, InvalidArgument for
/// values that are not finite) and Cancelled.
OpenedData readOpenedData(const QString& path, const QString& metaPath, const Context& context,
                          JobControl& job);

} // namespace nearscape::ui
