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

} // namespace nearscape::ui
