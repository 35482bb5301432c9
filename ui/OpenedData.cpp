#include "OpenedData.h"

#include "Colouring.h"

#include <chrono>

namespace nearscape::ui {

OpenedData readOpenedData(const QString& path, const QString& metaPath, const Context& context,
                          JobControl& job) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string file = path.toStdString();
  OpenedData opened;
  opened.dataPath = path;
  opened.metaPath = metaPath;
  OpenOptions options;
  options.metaPath = metaPath.toStdString();
  auto dataset = std::make_shared<Dataset>(openDataset(file, options, job));
  job.check();
  requireFinite(dataset->vectors.view(), file + ": the data");
  const ColumnChoices columns = columnChoices(*dataset, job); // read whole: not on the GUI thread
  opened.colourable = columns.colourable;
  opened.numeric = columns.numeric;
  PcaParams pca;
  pca.components = std::min<int>(3, int(dataset->dim()));
  pca.maxSampleRows = 25000; // a seeded sample fits the axes; every item is projected
  const PcaResult result = computePca(dataset->vectors.view(), pca, context, job);
  const auto& c = result.coordinates;
  opened.pca.assign(std::size_t(3 * c.rows()), 0.0f); // zeros past the data's dimension
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j)
      opened.pca[std::size_t(3 * i + j)] = c.row(i)[j];
  opened.dataset = std::move(dataset);
  opened.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return opened;
}

} // namespace nearscape::ui
