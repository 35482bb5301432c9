#pragma once
// File → Export: what the explorer shows, written as files other tools read. Every file the GUI
// writes goes through writeOutput: atomically (a temporary file renamed into place, the old file
// kept on failure) and never over a file it read (the data, its metadata, a session, a compared
// file: any spelling or link); failures throw the engine's errors (InvalidArgument: an input;
// WriteError: disk full, read-only folder). `alsoInputs`: inputs beyond the data's own.

#include "nearscape/core/Dataset.h"
#include "nearscape/graph/Graph.h"
#include "nearscape/index/SweepStudy.h"

#include <QByteArray>
#include <QImage>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace nearscape::ui {

/// The files a data set was read from: the data file (or IDX folder) and the `.meta.tsv` sidecar
/// beside it, whether or not that was read.
QStringList inputsOf(const QString& dataPath);
/// Refuses `path` as an output before any work: InvalidArgument when it names one of `inputs`
/// (or is a folder), IoError (a missing folder), WriteError (a folder not writable).
void checkOutput(const QString& path, const QStringList& inputs);
/// Writes `bytes` to `path` atomically, refused as checkOutput does. Throws as checkOutput,
/// and WriteError when the write fails (the old file is kept).
void writeOutput(const QString& path, const QStringList& inputs, const QByteArray& bytes);
/// `image` encoded as PNG (in memory: a picture is written with writeOutput, never straight to
/// its file). Throws Error naming `path` when it cannot be encoded.
QByteArray pngBytes(const QString& path, const QImage& image);

/// The map: `.npy` (float32 n × dim) or TSV (id, x, y[, z], label) by the name's extension.
void exportMap(const QString& path, const Dataset& data, const std::vector<float>& positions,
               int dim, const QStringList& alsoInputs = {});
/// A neighbour list of `item`: TSV (rank, id, distance, label, text).
void exportNeighbours(const QString& path, const Dataset& data, std::int64_t item,
                      const std::vector<std::int32_t>& ids, const std::vector<float>& distances,
                      const QStringList& alsoInputs = {});
/// A path: JSON (path, steps, bottleneck, labels — as `nearscape-cli path --json`) when the name
/// ends in .json, else TSV (step, id, distance from the previous item, label).
void exportPath(const QString& path, const Dataset& data, const GraphPath& graphPath,
                const QStringList& alsoInputs = {});
/// Selected items: TSV (id, label, then every metadata column).
void exportSelection(const QString& path, const Dataset& data, const std::vector<std::int64_t>& ids,
                     const QStringList& alsoInputs = {});
/// One float32 value per item (outlier scores) as `.npy` (n × 1).
void exportScoresNpy(const QString& path, const Dataset& data, const std::vector<float>& scores,
                     const QStringList& alsoInputs = {});
/// Text made elsewhere (duplicate groups, keep-lists) written as `path`.
void exportText(const QString& path, const Dataset& data, const std::string& text,
                const QStringList& alsoInputs = {});
/// A picture of the map (PNG).
void exportPicture(const QString& path, const Dataset& data, const QImage& image,
                   const QStringList& alsoInputs = {});
/// A trade-off study as CSV (sweepStudyCsv: every run's rows, the exact reference), never over
/// `input` (the data it was measured on, or the CSV a picture is drawn from; empty: none).
void exportStudyCsv(const QString& path, const std::string& input, const SweepStudy& study);
/// A picture (PNG) of a study, never over `input`.
void exportStudyPicture(const QString& path, const std::string& input, const QImage& image);
/// The same, never over any of `inputs` (the explorer's: ExplorerSession::inputFiles).
void exportStudyCsv(const QString& path, const QStringList& inputs, const SweepStudy& study);
void exportStudyPicture(const QString& path, const QStringList& inputs, const QImage& image);

} // namespace nearscape::ui
