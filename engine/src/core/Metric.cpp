#include "nearscape/core/Metric.h"

#include <algorithm>
#include <cctype>

namespace nearscape {

std::string_view metricName(Metric metric) {
  switch (metric) {
  case Metric::L2:
    return "l2";
  case Metric::InnerProduct:
    return "ip";
  case Metric::Cosine:
    return "cos";
  }
  return "?";
}

std::optional<Metric> parseMetric(std::string_view text) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "l2" || t == "euclidean")
    return Metric::L2;
  if (t == "ip" || t == "dot" || t == "inner_product" || t == "innerproduct")
    return Metric::InnerProduct;
  if (t == "cos" || t == "cosine" || t == "angular")
    return Metric::Cosine;
  return std::nullopt;
}

} // namespace nearscape
