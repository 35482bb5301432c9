#include "nearscape/core/Norms.h"

namespace nearscape {

std::vector<float> rowNormsSquaredCpu(const MatrixView<float>& m, int threads) {
  std::vector<float> out(static_cast<std::size_t>(m.rows));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const float* x = m.row(i);
    double sum = 0;
    for (std::int64_t j = 0; j < m.cols; ++j)
      sum += double(x[j]) * x[j];
    out[static_cast<std::size_t>(i)] = static_cast<float>(sum);
  }
  return out;
}

} // namespace nearscape
