// The explorer's search (findItems): the first byte picks the mode (even: a regular expression,
// odd: a substring), the rest up to the first line end is the pattern, and every further line is
// an item: its text and (reversed) a second column. A pattern is refused with InvalidArgument
// or searched in time linear in the text (libFuzzer's -timeout sees a backtracking engine); the
// result is the ids, sorted and distinct, whose own search finds them.
#include "FuzzCommon.h"

#include "nearscape/core/ItemSearch.h"

#include <algorithm>
#include <string>
#include <vector>

namespace {

nearscape::Dataset itemsOf(const std::vector<std::string>& cells) {
  using namespace nearscape;
  Dataset ds;
  const auto n = std::int64_t(cells.size());
  ds.vectors = Matrix<float>(std::vector<float>(cells.size(), 0.0f), n, 1);
  Metadata meta;
  meta.columnNames = {"title", "note"}; // no label column: the same columns alone or among many
  meta.columns = {cells, cells};
  for (std::string& cell : meta.columns[1])
    std::reverse(cell.begin(), cell.end());
  attachMetadata(ds, std::move(meta), "fuzz");
  return ds;
}

} // namespace

NEARSCAPE_FUZZ_TARGET(regex_search) {
  using namespace nearscape;
  if (size < 1)
    return;
  const MatchMode mode = data[0] % 2 == 0 ? MatchMode::Regex : MatchMode::Substring;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t end = rest.find('\n');
  const std::string pattern(rest.substr(0, end));
  std::vector<std::string> cells;
  for (std::size_t at = end; at != std::string_view::npos && at < rest.size();) {
    const std::size_t next = rest.find('\n', at + 1);
    cells.emplace_back(rest.substr(at + 1, next == std::string_view::npos ? next : next - at - 1));
    at = next;
  }
  if (cells.empty())
    cells.emplace_back(); // one item with empty values
  fuzz::expectEngineErrorsOnly([&] {
    const Dataset ds = itemsOf(cells);
    // A stopped search ends with Cancelled before it looks at the pattern or any item.
    JobControl stopped;
    stopped.requestStop();
    try {
      findItems(ds, pattern, mode, stopped);
      std::abort();
    } catch (const Cancelled&) {
    }
    const std::vector<std::int64_t> found = findItems(ds, pattern, mode);
    for (std::size_t i = 0; i < found.size(); ++i)
      if (found[i] < 0 || found[i] >= ds.size() || (i > 0 && found[i] <= found[i - 1]))
        std::abort(); // ids in order, each once, in range
    // Each item alone matches exactly when it was found among all (an id names its own row,
    // so the substring mode's id match is left to the whole set).
    if (mode != MatchMode::Regex || cells.size() > 64)
      return;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool alone = !findItems(itemsOf({cells[i]}), pattern, mode).empty();
      if (alone != std::binary_search(found.begin(), found.end(), std::int64_t(i)))
        std::abort();
    }
  });
}
