// The duplicate groups as files people keep: the groups with their metadata, and keep-lists.
#include "nearscape/analysis/Duplicates.h"
#include "nearscape/core/Dataset.h"

namespace nearscape {
std::string duplicateGroupsTsv(const DuplicateGroups& groups, const Dataset& dataset) {
  std::string out = "group\tid";
  // Labels from a metadata file are one of its columns already; others (IDX) get their own.
  const bool labelColumn = dataset.hasLabels() && dataset.metadata.empty();
  if (labelColumn)
    out += "\tlabel";
  for (const std::string& name : dataset.metadata.columnNames) {
    out += '\t'; // (one append at a time: GCC 12 warns falsely on "\t" + string)
    out += tsvCell(name);
  }
  out += '\n';
  for (std::size_t g = 0; g < groups.groups.size(); ++g)
    for (const std::int32_t item : groups.groups[g]) {
      out += std::to_string(g) + '\t' + std::to_string(item);
      if (labelColumn)
        out += '\t' + tsvCell(dataset.labelOf(item));
      for (const auto& column : dataset.metadata.columns) {
        out += '\t';
        out += tsvCell(std::size_t(item) < column.size() ? column[std::size_t(item)] : "");
      }
      out += '\n';
    }
  return out;
}

std::string keepOnePerGroup(const DuplicateGroups& groups, std::int64_t items) {
  std::string out;
  for (std::int64_t i = 0; i < items; ++i) {
    const std::int32_t g =
        std::size_t(i) < groups.groupOf.size() ? groups.groupOf[std::size_t(i)] : -1;
    if (g < 0 || groups.groups[std::size_t(g)].front() == i)
      out += std::to_string(i) + '\n';
  }
  return out;
}

} // namespace nearscape
