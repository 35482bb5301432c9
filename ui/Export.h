#pragma once
// File → Export: what the explorer shows, written as files other tools read. Every export is
// written atomically (a temporary file renamed into place) and never over the data it was read
// from; failures throw the engine's errors (WriteError: disk full, read-only folder).

#include "nearscape/core/Dataset.h"
#include "nearscape/graph/Graph.h"
#include "nearscape/index/SweepStudy.h"

#include <QImage>
#include <QString>

#include <cstdint>
#include <vector>

namespace nearscape::ui {

/// The map: `.npy` (float32 n × dim) or TSV (id, x, y[, z], label) by the name's extension.
void exportMap(const QString& path, const Dataset& data, const std::vector<float>& positions,
               int dim);
/// A neighbour list of `item`: TSV (rank, id, distance, label, text).
void exportNeighbours(const QString& path, const Dataset& data, std::int64_t item,
                      const std::vector<std::int32_t>& ids, const std::vector<float>& distances);
/// A path: JSON (path, steps, bottleneck, labels — as `nearscape-cli path --json`) when the name
/// ends in .json, else TSV (step, id, distance from the previous item, label).
void exportPath(const QString& path, const Dataset& data, const GraphPath& graphPath);
/// Selected items: TSV (id, label, then every metadata column).
void exportSelection(const QString& path, const Dataset& data,
                     const std::vector<std::int64_t>& ids);
/// One float32 value per item (outlier scores) as `.npy` (n × 1).
void exportScoresNpy(const QString& path, const Dataset& data, const std::vector<float>& scores);
/// Text made elsewhere (duplicate groups, keep-lists) written as `path`.
void exportText(const QString& path, const Dataset& data, const std::string& text);
/// A picture of the map (PNG).
void exportPicture(const QString& path, const Dataset& data, const QImage& image);
/// A trade-off study as CSV (sweepStudyCsv: every run's rows, the exact reference), never over
/// `input` (the data it was measured on, or the CSV a picture is drawn from; empty: none).
void exportStudyCsv(const QString& path, const std::string& input, const SweepStudy& study);
/// A picture (PNG) of a study, never over `input`.
void exportStudyPicture(const QString& path, const std::string& input, const QImage& image);

} // namespace nearscape::ui
