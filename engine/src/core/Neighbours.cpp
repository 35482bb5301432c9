#include "nearscape/core/Neighbours.h"

namespace nearscape {

namespace {
constexpr KnnMethod kMethods[] = {
    KnnMethod::Unknown,     KnnMethod::Exact,       KnnMethod::Step,         KnnMethod::NnDescent,
    KnnMethod::Gnnd,        KnnMethod::GgmMerge,    KnnMethod::ResidentBase, KnnMethod::Reference,
    KnnMethod::IndexSearch, KnnMethod::RangeSearch, KnnMethod::Given};
} // namespace

std::string_view knnMethodName(KnnMethod method) {
  switch (method) {
  case KnnMethod::Unknown:
    return "";
  case KnnMethod::Exact:
    return "exact";
  case KnnMethod::Step:
    return "STEP";
  case KnnMethod::NnDescent:
    return "NN-Descent";
  case KnnMethod::Gnnd:
    return "GNND";
  case KnnMethod::GgmMerge:
    return "GGM merge";
  case KnnMethod::ResidentBase:
    return "resident base, radix select";
  case KnnMethod::Reference:
    return "float64 reference";
  case KnnMethod::IndexSearch:
    return "index search";
  case KnnMethod::RangeSearch:
    return "exact range search";
  case KnnMethod::Given:
    return "given";
  }
  return "";
}

std::optional<KnnMethod> parseKnnMethod(std::string_view text) {
  for (KnnMethod m : kMethods)
    if (text == knnMethodName(m))
      return m;
  return std::nullopt;
}

bool isExactMethod(KnnMethod method) {
  switch (method) {
  case KnnMethod::Exact:
  case KnnMethod::Step:
  case KnnMethod::ResidentBase:
  case KnnMethod::Reference:
  case KnnMethod::RangeSearch:
    return true;
  case KnnMethod::Unknown:
  case KnnMethod::NnDescent:
  case KnnMethod::Gnnd:
  case KnnMethod::GgmMerge:
  case KnnMethod::IndexSearch:
  case KnnMethod::Given:
    return false;
  }
  return false;
}

std::string RunReport::describe() const {
  std::string line = device;
  auto add = [&](const std::string& part) {
    if (!part.empty())
      line += (line.empty() ? "" : ", ") + part;
  };
  // The plain exact search is what a person expects: only the others are named.
  add(m_method == KnnMethod::Exact ? std::string() : std::string(knnMethodName(m_method)));
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
