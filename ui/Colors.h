#pragma once
// Categorical colours for labels.

#include <QColor>

#include <cstdint>
#include <vector>

namespace nearscape::ui {

/// A distinct colour for label `index` (Tableau-style palette, then golden-angle hues).
QColor labelColor(int index);
/// The colour of unlabelled items.
QColor unlabelledColor();
/// n × 3 RGB bytes for per-item labels (an empty label list colours every item as unlabelled).
std::vector<std::uint8_t> itemColors(const std::vector<std::int32_t>& labels, std::int64_t n);

} // namespace nearscape::ui
