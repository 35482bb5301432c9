#include "nearscape/core/Neighbours.h"

namespace nearscape {

std::string RunReport::describe() const {
  std::string line = device;
  auto add = [&](const std::string& part) {
    if (!part.empty())
      line += (line.empty() ? "" : ", ") + part;
  };
  add(method == "exact" ? std::string() : method);
  add(precision);
  if (iterations > 0)
    add(std::to_string(iterations) + " iterations");
  if (streamedChunks > 0)
    add("the base streamed from host memory in " + std::to_string(streamedChunks) + " chunks");
  if (shards > 0)
    add(std::to_string(shards) + " shards, every pair merged by GGM");
  add(detail);
  if (!fallback.empty())
    line += " (" + fallback + ")";
  return line;
}

} // namespace nearscape
