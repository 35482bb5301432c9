// A session file (ui/Session.cpp's parse, what `nearscape --session` and File → Open Session
// read): refused with FormatError, or read into values the window can apply — a known metric,
// a map dimension of 2 or 3, item ids ≥ 0 (−1: none), a finite range and camera.
#include "FuzzCommon.h"

#include "Session.h"
#include "nearscape/core/Metric.h"

#include <cmath>

NEARSCAPE_FUZZ_TARGET(session) {
  using namespace nearscape;
  const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
  fuzz::expectEngineErrorsOnly([&] {
    const ui::Session s = ui::Session::parse(bytes, QStringLiteral("/fuzz/view.nearscape"));
    if (s.data.isEmpty() || !(s.metric.empty() || parseMetric(s.metric)))
      std::abort();
    if ((s.dim != 2 && s.dim != 3) || s.selected < -1 || s.pathTo < -1)
      std::abort();
    for (const std::int64_t id : s.selection)
      if (id < 0)
        std::abort();
    if (s.shownRange &&
        !(std::isfinite(s.shownRange->first) && std::isfinite(s.shownRange->second) &&
          s.shownRange->first <= s.shownRange->second))
      std::abort();
    if (s.camera && !(std::isfinite(s.camera->scale) && s.camera->scale > 0 &&
                      s.camera->position != s.camera->focal))
      std::abort();
  });
}
