// The NN-Descent iteration loop shared by the CPU and GPU backends (NnDescentLoop.h).
#include "knn/NnDescentLoop.h"

#include <string>

namespace nearscape::knn {

int runNnDescentLoop(int maxIterations, std::int64_t entries, const NnDescentParams& params,
                     JobControl& job, const NnDescentProgress& progress, std::string_view name,
                     const std::function<std::int64_t(int iteration)>& iterate) {
  int iteration = 0;
  while (iteration < maxIterations) {
    job.check();
    const std::int64_t changed = iterate(iteration);
    ++iteration;
    const double rate = entries > 0 ? double(changed) / double(entries) : 0.0;
    if (progress)
      progress(iteration, rate);
    job.progress(double(iteration) / maxIterations,
                 std::string(name) + ": iteration " + std::to_string(iteration));
    if (rate < params.delta)
      break;
  }
  return iteration;
}

} // namespace nearscape::knn
