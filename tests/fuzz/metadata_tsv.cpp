// Metadata TSV: read (the first byte, when below 128, is the row count the data expects; else
// any count), attached to data of its rows (labels, text column), each column read for colouring
// and searched, and every value made printable as `info` and `path` print it.
#include "FuzzCommon.h"

#include "nearscape/core/ItemSearch.h"
#include "nearscape/io/DatasetReader.h"

NEARSCAPE_FUZZ_TARGET(metadata_tsv) {
  using namespace nearscape;
  if (size < 1)
    return;
  const std::int64_t expected = data[0] < 128 ? data[0] : -1;
  const auto path = fuzz::writeInput("fuzzmeta.tsv", data + 1, size - 1);
  fuzz::expectEngineErrorsOnly([&] {
    Metadata meta = readMetadataTsv(path, expected);
    if (meta.columnNames.size() != meta.columns.size())
      std::abort();
    for (const auto& column : meta.columns)
      if (std::int64_t(column.size()) != meta.rows())
        std::abort(); // ragged columns must have been refused
    if (expected >= 0 && meta.rows() != expected && !meta.empty())
      std::abort();
    for (const auto& name : meta.columnNames)
      printableText(name, 40);
    for (const auto& column : meta.columns)
      for (const auto& value : column)
        printableText(value, 60);
    const std::int64_t rows = meta.rows();
    if (rows <= 0)
      return;
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(std::size_t(rows), 0.0f), rows, 1);
    attachMetadata(ds, std::move(meta), path.string());
    for (std::int64_t i = 0; i < ds.size(); ++i) {
      ds.labelOf(i);
      ds.textOf(i);
    }
    for (int c = 0; c < int(ds.metadata.columns.size()) && c < 8; ++c)
      readColumn(ds, c);
    findItems(ds, "a", MatchMode::Substring);
    findItems(ds, "1", MatchMode::Substring);
  });
}
