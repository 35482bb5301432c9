#include "Export.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/AtomicFile.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/Npy.h"

#include <QBuffer>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <functional>
#include <sstream>

namespace nearscape::ui {
namespace {

/// Runs `write` (which writes `path` through writeFileAtomically or writeNpy) with `path` declared
/// as the one output of a set that reads `inputs`: refused up front when it names one, committed
/// only when every byte was written.
void writeDeclared(const QString& path, const QStringList& inputs,
                   const std::function<void()>& write) {
  OutputSet outputs;
  for (const QString& input : inputs)
    outputs.addInput(input.toStdString());
  outputs.addOutput(path.toStdString());
  write();
  outputs.commit();
}

QStringList inputsWith(const Dataset& data, const QStringList& alsoInputs) {
  return inputsOf(QString::fromStdString(data.path)) + alsoInputs;
}

void writeExport(const QString& path, const QStringList& inputs, const std::string& bytes) {
  writeOutput(path, inputs, QByteArray::fromStdString(bytes));
}

bool endsWith(const QString& path, const char* extension) {
  return QFileInfo(path).suffix().compare(QLatin1String(extension), Qt::CaseInsensitive) == 0;
}

} // namespace

QStringList inputsOf(const QString& dataPath) {
  if (dataPath.isEmpty())
    return {};
  return {dataPath, QString::fromStdString(metadataSidecarPath(dataPath.toStdString()).string())};
}

void checkOutput(const QString& path, const QStringList& inputs) {
  OutputSet outputs; // never committed: nothing is written
  for (const QString& input : inputs)
    outputs.addInput(input.toStdString());
  outputs.addOutput(path.toStdString());
}

void writeOutput(const QString& path, const QStringList& inputs, const QByteArray& bytes) {
  writeDeclared(path, inputs, [&] {
    writeFileAtomically(path.toStdString(), [&](std::FILE* f) {
      if (std::fwrite(bytes.constData(), 1, std::size_t(bytes.size()), f) !=
          std::size_t(bytes.size()))
        throw IoError(path.toStdString() + ": write failed");
    });
  });
}

QByteArray pngBytes(const QString& path, const QImage& image) {
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  if (image.isNull() || !image.save(&buffer, "PNG"))
    throw Error(path.toStdString() + ": the picture could not be encoded as PNG");
  return png;
}

void exportScoresNpy(const QString& path, const Dataset& data, const std::vector<float>& scores,
                     const QStringList& alsoInputs) {
  writeDeclared(path, inputsWith(data, alsoInputs), [&] {
    writeNpy(path.toStdString(), MatrixView<float>{scores.data(), std::int64_t(scores.size()), 1});
  });
}

void exportText(const QString& path, const Dataset& data, const std::string& text,
                const QStringList& alsoInputs) {
  writeExport(path, inputsWith(data, alsoInputs), text);
}

void exportMap(const QString& path, const Dataset& data, const std::vector<float>& positions,
               int dim, const QStringList& alsoInputs) {
  const std::int64_t n = std::int64_t(positions.size()) / dim;
  if (endsWith(path, "npy")) {
    writeDeclared(path, inputsWith(data, alsoInputs), [&] {
      writeNpy(path.toStdString(), MatrixView<float>{positions.data(), n, dim});
    });
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
  writeExport(path, inputsWith(data, alsoInputs), tsv.str());
}

void exportNeighbours(const QString& path, const Dataset& data, std::int64_t item,
                      const std::vector<std::int32_t>& ids, const std::vector<float>& distances,
                      const QStringList& alsoInputs) {
  std::ostringstream tsv;
  tsv << "# neighbours of item " << item << "\nrank\tid\tdistance\tlabel\ttext\n";
  for (std::size_t r = 0; r < ids.size(); ++r)
    tsv << r + 1 << '\t' << ids[r] << '\t' << (r < distances.size() ? distances[r] : 0.0f) << '\t'
        << tsvCell(data.labelOf(ids[r])) << '\t' << tsvCell(data.textOf(ids[r])) << '\n';
  writeExport(path, inputsWith(data, alsoInputs), tsv.str());
}

void exportPath(const QString& path, const Dataset& data, const GraphPath& graphPath,
                const QStringList& alsoInputs) {
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
    writeExport(path, inputsWith(data, alsoInputs),
                j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return;
  }
  std::ostringstream tsv;
  tsv << "step\tid\tdistance\tlabel\n";
  for (std::size_t s = 0; s < graphPath.nodes.size(); ++s)
    tsv << s << '\t' << graphPath.nodes[s] << '\t' << (s == 0 ? 0.0f : graphPath.steps[s - 1])
        << '\t' << tsvCell(data.labelOf(graphPath.nodes[s])) << '\n';
  writeExport(path, inputsWith(data, alsoInputs), tsv.str());
}

void exportSelection(const QString& path, const Dataset& data, const std::vector<std::int64_t>& ids,
                     const QStringList& alsoInputs) {
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
  writeExport(path, inputsWith(data, alsoInputs), tsv.str());
}

void exportPicture(const QString& path, const Dataset& data, const QImage& image,
                   const QStringList& alsoInputs) {
  writeOutput(path, inputsWith(data, alsoInputs), pngBytes(path, image));
}

void exportStudyCsv(const QString& path, const std::string& input, const SweepStudy& study) {
  exportStudyCsv(path, inputsOf(QString::fromStdString(input)), study);
}

void exportStudyPicture(const QString& path, const std::string& input, const QImage& image) {
  exportStudyPicture(path, inputsOf(QString::fromStdString(input)), image);
}

void exportStudyCsv(const QString& path, const QStringList& inputs, const SweepStudy& study) {
  writeExport(path, inputs, sweepStudyCsv(study));
}

void exportStudyPicture(const QString& path, const QStringList& inputs, const QImage& image) {
  writeOutput(path, inputs, pngBytes(path, image));
}

} // namespace nearscape::ui
