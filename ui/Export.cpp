#include "Export.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/AtomicFile.h"
#include "nearscape/io/Npy.h"

#include <QBuffer>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <sstream>

namespace nearscape::ui {
namespace {

/// Writes `bytes` to `path` atomically, never over `input` (the data's own file).
void writeExport(const QString& path, const std::string& input, const std::string& bytes) {
  OutputSet outputs;
  outputs.addInput(input);
  outputs.addOutput(path.toStdString());
  writeFileAtomically(path.toStdString(), [&](std::FILE* f) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      throw IoError(path.toStdString() + ": write failed");
  });
  outputs.commit();
}

void writeExport(const QString& path, const Dataset& data, const std::string& bytes) {
  writeExport(path, data.path, bytes);
}

QByteArray pngBytes(const QString& path, const QImage& image) {
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG"))
    throw Error(path.toStdString() + ": the picture could not be encoded as PNG");
  return png;
}

bool endsWith(const QString& path, const char* extension) {
  return QFileInfo(path).suffix().compare(QLatin1String(extension), Qt::CaseInsensitive) == 0;
}

} // namespace

void exportScoresNpy(const QString& path, const Dataset& data, const std::vector<float>& scores) {
  OutputSet outputs;
  outputs.addInput(data.path);
  outputs.addOutput(path.toStdString());
  writeNpy(path.toStdString(), MatrixView<float>{scores.data(), std::int64_t(scores.size()), 1});
  outputs.commit();
}

void exportText(const QString& path, const Dataset& data, const std::string& text) {
  writeExport(path, data, text);
}

void exportMap(const QString& path, const Dataset& data, const std::vector<float>& positions,
               int dim) {
  const std::int64_t n = std::int64_t(positions.size()) / dim;
  if (endsWith(path, "npy")) {
    OutputSet outputs;
    outputs.addInput(data.path);
    outputs.addOutput(path.toStdString());
    writeNpy(path.toStdString(), MatrixView<float>{positions.data(), n, dim});
    outputs.commit();
    return;
  }
  std::ostringstream tsv;
  tsv << (dim == 3 ? "id\tx\ty\tz\tlabel\n" : "id\tx\ty\tlabel\n");
  for (std::int64_t i = 0; i < n; ++i) {
    tsv << i;
    for (int c = 0; c < dim; ++c)
      tsv << '\t' << positions[std::size_t(i * dim + c)];
    tsv << '\t' << tsvCell(data.labelOf(i)) << '\n';
  }
  writeExport(path, data, tsv.str());
}

void exportNeighbours(const QString& path, const Dataset& data, std::int64_t item,
                      const std::vector<std::int32_t>& ids, const std::vector<float>& distances) {
  std::ostringstream tsv;
  tsv << "# neighbours of item " << item << "\nrank\tid\tdistance\tlabel\ttext\n";
  for (std::size_t r = 0; r < ids.size(); ++r)
    tsv << r + 1 << '\t' << ids[r] << '\t' << (r < distances.size() ? distances[r] : 0.0f) << '\t'
        << tsvCell(data.labelOf(ids[r])) << '\t' << tsvCell(data.textOf(ids[r])) << '\n';
  writeExport(path, data, tsv.str());
}

void exportPath(const QString& path, const Dataset& data, const GraphPath& graphPath) {
  if (!graphPath.found())
    throw InvalidArgument("there is no path to export");
  if (endsWith(path, "json")) {
    nlohmann::ordered_json j;
    j["path"] = graphPath.nodes;
    j["steps"] = graphPath.steps;
    j["bottleneck"] = graphPath.bottleneck;
    j["total"] = graphPath.total;
    std::vector<std::string> labels;
    for (const std::int32_t node : graphPath.nodes)
      labels.push_back(data.labelOf(node));
    j["labels"] = labels;
    writeExport(path, data, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return;
  }
  std::ostringstream tsv;
  tsv << "step\tid\tdistance\tlabel\n";
  for (std::size_t s = 0; s < graphPath.nodes.size(); ++s)
    tsv << s << '\t' << graphPath.nodes[s] << '\t' << (s == 0 ? 0.0f : graphPath.steps[s - 1])
        << '\t' << tsvCell(data.labelOf(graphPath.nodes[s])) << '\n';
  writeExport(path, data, tsv.str());
}

void exportSelection(const QString& path, const Dataset& data,
                     const std::vector<std::int64_t>& ids) {
  std::ostringstream tsv;
  tsv << "id\tlabel";
  for (const std::string& name : data.metadata.columnNames)
    tsv << '\t' << tsvCell(name);
  tsv << '\n';
  for (const std::int64_t id : ids) {
    tsv << id << '\t' << tsvCell(data.labelOf(id));
    for (const auto& column : data.metadata.columns)
      tsv << '\t' << tsvCell(column[std::size_t(id)]);
    tsv << '\n';
  }
  writeExport(path, data, tsv.str());
}

void exportPicture(const QString& path, const Dataset& data, const QImage& image) {
  writeExport(path, data, pngBytes(path, image).toStdString());
}

void exportStudyCsv(const QString& path, const std::string& input, const SweepStudy& study) {
  writeExport(path, input, sweepStudyCsv(study));
}

void exportStudyPicture(const QString& path, const std::string& input, const QImage& image) {
  writeExport(path, input, pngBytes(path, image).toStdString());
}

} // namespace nearscape::ui
