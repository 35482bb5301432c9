// A trade-off study's CSV (what `nearscape --sweep-plot` reads): parsed, its invariants checked,
// written back with sweepStudyCsv and parsed again to the same runs and rows.
#include "FuzzCommon.h"

#include "nearscape/index/SweepStudy.h"

NEARSCAPE_FUZZ_TARGET(study_csv) {
  using namespace nearscape;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::expectEngineErrorsOnly([&] {
    const SweepStudy study = parseSweepStudyCsv(text, "fuzz.csv");
    std::size_t rows = 0;
    for (const SweepRun& run : study.runs) {
      if (run.rows.empty() || run.kind == "exact")
        std::abort(); // a run exists only through its rows; the reference is not a run
      for (const SweepRow& row : run.rows)
        if (!(row.recall >= 0 && row.recall <= 1) || !(row.qps >= 0))
          std::abort();
      rows += run.rows.size();
      (void)run.label();
    }
    if (study.k < 1)
      std::abort();
    const auto front = overallParetoFront(study);
    if (front.size() != study.runs.size() + (study.exact ? 1 : 0))
      std::abort();
    const SweepStudy back = parseSweepStudyCsv(sweepStudyCsv(study), "again.csv");
    std::size_t backRows = 0;
    for (const SweepRun& run : back.runs)
      backRows += run.rows.size();
    if (back.runs.size() != study.runs.size() || backRows != rows ||
        back.exact.has_value() != study.exact.has_value())
      std::abort();
  });
}
