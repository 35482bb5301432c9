#include "nearscape/layout/Pca.h"

#include "nearscape/core/Sampling.h"

#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"
#include "util/Blas.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <random>

namespace nearscape {
namespace {

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Rows used to fit: all of them (empty), or a seeded sample of maxRows.
std::vector<std::int64_t> fitRows(std::int64_t n, std::int64_t maxRows, std::uint64_t seed) {
  if (maxRows <= 0 || maxRows >= n)
    return {};
  return seededSample(n, maxRows, seed);
}

/// Top `k` eigenpairs of the symmetric `cov` (descending). Dense solver for small d; beyond,
/// block subspace iteration with a Rayleigh-Ritz step (Halko et al. 2011), since a full
/// decomposition of a 784 × 784 covariance already costs more than the rest of the map.
void topEigen(const RowMatrixD& cov, int k, const Context& context, Eigen::MatrixXd& vectors,
              Eigen::VectorXd& values, JobControl& job) {
  const std::uint64_t seed = context.seed;
  const Eigen::Index d = cov.rows();
  if (d <= 128) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(cov);
    values = solver.eigenvalues().reverse().head(k);
    vectors = solver.eigenvectors().rowwise().reverse().leftCols(k);
    return;
  }
  const Eigen::Index block = std::min<Eigen::Index>(d, k + 14);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd q(d, block);
  for (Eigen::Index i = 0; i < q.size(); ++i)
    q.data()[i] = normal(rng);
  // cov · q through BLAS (Eigen's own product ran on one core: 40% of fashion-mnist's PCA on 2
  // cores) on one thread: each product is small (784 × 784 × 16, 20 MFLOP), and woken threads
  // cost more than they save (H100 host, 16 cores: 90–170 ms on 16 threads, 85–91 ms on 4 while
  // the GPU's graph ran beside it, 23 ms on this 2-core machine). cov is symmetric, so its
  // row-major storage reads as column-major.
  blas::setThreads(1);
  Eigen::MatrixXd product(d, block);
  // The iteration stops once the top k of R's diagonal (→ the eigenvalues as q converges) hold
  // to 1e-12: the axes then sit within about 1e-6 of their limit (the eigenvalues
  // converge as the square of the vectors), far below what a map's start can show.
  Eigen::VectorXd previous = Eigen::VectorXd::Zero(k);
  for (int iter = 0; iter < 40; ++iter) {
    job.check();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(d), int(block), int(d), 1.0,
                cov.data(), int(d), q.data(), int(d), 0.0, product.data(), int(d));
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(product);
    q = qr.householderQ() * Eigen::MatrixXd::Identity(d, block);
    // Each component against its own size (a small one converges no sooner than a large one),
    // with a floor of the largest's 1e-15 for components of (nearly) zero variance.
    const Eigen::VectorXd diagonal = qr.matrixQR().diagonal().head(k).cwiseAbs();
    const double floor = 1e-15 * diagonal.maxCoeff();
    bool settled = iter >= 4;
    for (int c = 0; c < k && settled; ++c)
      settled = std::abs(diagonal[c] - previous[c]) <= 1e-12 * diagonal[c] + floor;
    previous = diagonal;
    if (settled)
      break;
  }
  const Eigen::MatrixXd small = q.transpose() * cov * q;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(small);
  values = solver.eigenvalues().reverse().head(k);
  vectors = q * solver.eigenvectors().rowwise().reverse().leftCols(k);
}

/// The top principal axes (d × k, unit columns), their variances and the total variance.
struct Axes {
  Eigen::MatrixXd vectors;
  Eigen::VectorXd values;
  double total = 0;
};

/// Columns of the output each BLAS call of blockScatter computes.
constexpr std::int64_t kScatterBlock = 128;

/// The upper triangle of a tile's scatter into `out` (row-major s × s): with `columns`, XᵀX of
/// the rows × s tile x (the covariance's), else XXᵀ of the s × width tile (the Gram matrix's).
/// The same bits whatever the thread count: OpenBLAS's own threading splits its sums by thread
/// count and its kernels' last bits follow the split, which the layout's SGD turns into another
/// map. Here fixed blocks of the output are each one single-threaded call, spread over threads.
void blockScatter(const float* x, std::int64_t rows, std::int64_t width, bool columns, float* out,
                  int threads) {
  const std::int64_t s = columns ? width : rows, inner = columns ? rows : width;
  const std::int64_t blocks = (s + kScatterBlock - 1) / kScatterBlock;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs; // (I, J ≥ I)
  for (std::int64_t i = 0; i < blocks; ++i)
    for (std::int64_t j = i; j < blocks; ++j)
      pairs.push_back({i, j});
  blas::setThreads(1);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t p = 0; p < std::int64_t(pairs.size()); ++p) {
    const std::int64_t a0 = pairs[p].first * kScatterBlock, b0 = pairs[p].second * kScatterBlock;
    const std::int64_t a = std::min(kScatterBlock, s - a0), b = std::min(kScatterBlock, s - b0);
    if (columns)
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(a), int(b), int(inner), 1.0f, x + a0,
                  int(width), x + b0, int(width), 0.0f, out + a0 * s + b0, int(s));
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(a), int(b), int(inner), 1.0f,
                  x + a0 * width, int(width), x + b0 * width, int(width), 0.0f, out + a0 * s + b0,
                  int(s));
  }
}

/// Adds the upper triangle of one tile's float32 syrk (square, row-major, as `sum`) to `sum`.
void addUpperTriangle(RowMatrixD& sum, const std::vector<float>& tile) {
  const std::int64_t n = sum.rows();
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = a; b < n; ++b)
      sum(a, b) += tile[std::size_t(a * n + b)];
}

/// The accumulated upper triangle mirrored down and divided by m − 1: the sample scatter of m
/// rows (the covariance, or the Gram matrix of the centred rows).
void finishScatter(RowMatrixD& sum, std::int64_t m) {
  for (std::int64_t a = 0; a < sum.rows(); ++a)
    for (std::int64_t b = 0; b < a; ++b)
      sum(a, b) = sum(b, a);
  sum /= double(std::max<std::int64_t>(m - 1, 1));
}

/// From the d × d covariance: syrk over centred row tiles in float32, accumulated across tiles
/// in float64.
template <typename FitRow>
Axes covarianceAxes(const FitRow& fitRow, std::int64_t m, std::int64_t d,
                    const std::vector<double>& mean, int k, const Context& context,
                    JobControl& job) {
  const int threads = effectiveThreads(context);
  const std::int64_t tileRows =
      std::max<std::int64_t>(256, (1 << 22) / std::max<std::int64_t>(d, 1));
  std::vector<float> tile(static_cast<std::size_t>(tileRows * d));
  std::vector<float> tileCov(static_cast<std::size_t>(d * d));
  RowMatrixD cov = RowMatrixD::Zero(d, d);
  for (std::int64_t start = 0; start < m; start += tileRows) {
    job.check();
    const std::int64_t rows = std::min(tileRows, m - start);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* x = fitRow(start + r);
      float* t = tile.data() + r * d;
      for (std::int64_t j = 0; j < d; ++j)
        t[j] = static_cast<float>(x[j] - mean[j]);
    }
    blockScatter(tile.data(), rows, d, true, tileCov.data(), threads);
    addUpperTriangle(cov, tileCov);
    job.progress(0.8 * double(start + rows) / double(m), "PCA: covariance");
  }
  finishScatter(cov, m);
  job.check();
  job.progress(0.85, "PCA: axes");
  Axes out;
  out.total = cov.trace();
  topEigen(cov, k, context, out.vectors, out.values, job);
  return out;
}

/// From the m × m Gram matrix of the centred rows (G = Xc Xcᵀ / (m − 1), whose non-zero
/// eigenvalues are the covariance's): an eigenvector u maps back to the axis Xcᵀu, normalised.
/// For d > m this never holds a d × d matrix: the map of 60 × 60,000 values needs 30 KB, not
/// 29 GB. Syrk over column tiles in float32, accumulated across tiles in float64.
template <typename FitRow>
Axes gramAxes(const FitRow& fitRow, std::int64_t m, std::int64_t d, const std::vector<double>& mean,
              int k, const Context& context, JobControl& job) {
  const int threads = effectiveThreads(context);
  const std::int64_t cols = std::clamp<std::int64_t>((1 << 22) / m, 1, d);
  std::vector<float> tile(static_cast<std::size_t>(m * cols));
  std::vector<float> tileGram(static_cast<std::size_t>(m * m));
  RowMatrixD gram = RowMatrixD::Zero(m, m);
  for (std::int64_t c0 = 0; c0 < d; c0 += cols) {
    job.check();
    const std::int64_t width = std::min(cols, d - c0);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t r = 0; r < m; ++r) {
      const float* x = fitRow(r) + c0;
      float* t = tile.data() + r * width;
      for (std::int64_t j = 0; j < width; ++j)
        t[j] = static_cast<float>(x[j] - mean[std::size_t(c0 + j)]);
    }
    blockScatter(tile.data(), m, width, false, tileGram.data(), threads);
    addUpperTriangle(gram, tileGram);
    job.progress(0.8 * double(c0 + width) / double(d), "PCA: Gram matrix");
  }
  finishScatter(gram, m);
  job.check();
  job.progress(0.85, "PCA: axes");
  Axes out;
  out.total = gram.trace();
  const int spanned = int(std::min<std::int64_t>(k, m)); // m rows span no more axes
  Eigen::MatrixXd u;
  Eigen::VectorXd values;
  topEigen(gram, spanned, context, u, values, job);
  // Xcᵀu in float64, a block of columns a thread.
  Eigen::MatrixXd v = Eigen::MatrixXd::Zero(d, k);
  constexpr std::int64_t kBlock = 256;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t j0 = 0; j0 < d; j0 += kBlock) {
    const std::int64_t j1 = std::min(d, j0 + kBlock);
    for (std::int64_t i = 0; i < m; ++i) {
      const float* x = fitRow(i);
      for (std::int64_t j = j0; j < j1; ++j) {
        const double centred = double(x[j]) - mean[std::size_t(j)];
        for (int c = 0; c < spanned; ++c)
          v(j, c) += centred * u(i, c);
      }
    }
  }
  // The mapped axes are orthogonal to the rounding of G's float32 sums: made so to float64's,
  // in order of variance (Gram-Schmidt), as the covariance's eigen-solver gives them.
  for (int c = 0; c < spanned; ++c)
    for (int earlier = 0; earlier < c; ++earlier)
      if (const double norm = v.col(earlier).norm(); norm > 0)
        v.col(c) -= v.col(earlier) * (v.col(earlier).dot(v.col(c)) / (norm * norm));
  out.values = Eigen::VectorXd::Zero(k);
  double largest = 0;
  for (int c = 0; c < spanned; ++c)
    largest = std::max(largest, v.col(c).norm());
  std::vector<int> unspanned; // axes of no variance: any unit vectors orthogonal to the rest
  for (int c = 0; c < k; ++c) {
    const double norm = c < spanned ? v.col(c).norm() : 0.0;
    if (norm > 1e-9 * largest && norm > 0) {
      v.col(c) /= norm;
      out.values[c] = values[c];
    } else {
      v.col(c).setZero();
      unspanned.push_back(c);
    }
  }
  // The first standard axes that are orthogonal to those set (deterministic).
  Eigen::Index next = 0;
  for (const int c : unspanned)
    for (; next < d; ++next) {
      Eigen::VectorXd e = Eigen::VectorXd::Unit(d, next);
      for (int other = 0; other < k; ++other)
        e -= v.col(other) * v.col(other).dot(e);
      if (e.norm() > 0.5) {
        v.col(c) = e / e.norm();
        ++next;
        break;
      }
    }
  out.vectors = std::move(v);
  return out;
}
} // namespace

PcaResult computePca(const MatrixView<float>& data, const PcaParams& params, const Context& context,
                     JobControl& job) {
  NEARSCAPE_EXPECTS(data.rows > 0 && data.cols > 0, "PCA needs at least one item");
  NEARSCAPE_EXPECTS(params.components >= 1 && params.components <= data.cols,
                    "PCA components must lie in [1, d] (d = " + std::to_string(data.cols) + ")");
  requireFinite(data, "the data");
  const int threads = effectiveThreads(context);
  const std::int64_t n = data.rows;
  const std::int64_t d = data.cols;
  const std::vector<std::int64_t> sample = fitRows(n, params.maxSampleRows, context.seed);
  const std::int64_t m = sample.empty() ? n : std::int64_t(sample.size());
  auto fitRow = [&](std::int64_t i) { return data.row(sample.empty() ? i : sample[i]); };

  LogLaps lap(context, "PCA:"); // where its time goes, at the log's debug level
  job.progress(0.0, "PCA: mean");
  // Column sums in fixed blocks of rows (at most 256 of them), added in block order: the mean's
  // bits do not depend on the thread count.
  std::vector<double> mean(static_cast<std::size_t>(d), 0.0);
  const std::int64_t blockRows = std::max<std::int64_t>(4096, (m + 255) / 256);
  const std::int64_t blocks = (m + blockRows - 1) / blockRows;
  std::vector<std::vector<double>> partial(static_cast<std::size_t>(blocks));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::vector<double>& sums = partial[std::size_t(b)];
    sums.assign(static_cast<std::size_t>(d), 0.0);
    for (std::int64_t i = b * blockRows; i < std::min(m, (b + 1) * blockRows); ++i) {
      const float* x = fitRow(i);
      for (std::int64_t j = 0; j < d; ++j)
        sums[j] += x[j];
    }
  }
  for (const std::vector<double>& sums : partial)
    for (std::int64_t j = 0; j < d; ++j)
      mean[j] += sums[j];
  for (auto& v : mean)
    v /= double(m);
  lap("mean");

  job.check();
  const int k = params.components;
  const bool gram = params.form == PcaForm::Gram || (params.form == PcaForm::Auto && d > m);
  Axes found = gram ? gramAxes(fitRow, m, d, mean, k, context, job)
                    : covarianceAxes(fitRow, m, d, mean, k, context, job);
  lap(gram ? "Gram matrix and axes" : "covariance and axes");
  Eigen::MatrixXd& axes = found.vectors;
  const Eigen::VectorXd& variances = found.values;
  // Deterministic signs: the largest-magnitude entry of each axis is positive.
  for (int c = 0; c < k; ++c) {
    Eigen::Index at = 0;
    axes.col(c).cwiseAbs().maxCoeff(&at);
    if (axes(at, c) < 0)
      axes.col(c) *= -1.0;
  }

  PcaResult result;
  result.mean = mean;
  result.totalVariance = found.total;
  result.variances.assign(variances.data(), variances.data() + k);
  result.axes.resize(static_cast<std::size_t>(k * d));
  for (int c = 0; c < k; ++c)
    for (std::int64_t j = 0; j < d; ++j)
      result.axes[c * d + j] = axes(j, c);

  job.progress(0.9, "PCA: projecting");
  // Each row's k coordinates in float64, on rows centred first (an offset far larger than the
  // spread costs no digits), a row a thread: the same bits whatever the thread count, where a
  // threaded GEMM's last bits follow its split (the map's start, and so the map, moved with it).
  // n·d·k is small beside the scatter (k ≤ 3 for a map).
  std::vector<float> coords(static_cast<std::size_t>(n * k));
  constexpr std::int64_t kChunk = 8192; // a cancel is seen between chunks
  for (std::int64_t start = 0; start < n; start += kChunk) {
    job.check();
    const std::int64_t end = std::min(n, start + kChunk);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = start; i < end; ++i) {
      const float* x = data.row(i);
      for (int c = 0; c < k; ++c) {
        const double* axis = result.axes.data() + c * d;
        double sum = 0;
        for (std::int64_t j = 0; j < d; ++j)
          sum += (double(x[j]) - mean[j]) * axis[j];
        coords[std::size_t(i * k + c)] = static_cast<float>(sum);
      }
    }
  }
  result.coordinates = Matrix<float>(std::move(coords), n, k);
  lap("projection");
  job.progress(1.0, "PCA: done");
  return result;
}

} // namespace nearscape
