// The map: deterministic for a seed, better than PCA on real data, and its neighbour search exact.
#include "DeviceSkip.h"
#include "layout/LayoutEpochCpu.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

Q_DECLARE_METATYPE(nearscape::Backend)

using namespace nearscape;

class TestLayout : public QObject {
  Q_OBJECT

private slots:
  void mapNeighboursAreExact_data() {
    QTest::addColumn<int>("dim");
    QTest::newRow("2D") << 2;
    QTest::newRow("3D") << 3;
  }
  void mapNeighboursAreExact() {
    QFETCH(int, dim);
    std::mt19937_64 rng(21);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    const int n = 3000, k = 10;
    std::vector<float> p(std::size_t(n * dim));
    for (auto& v : p)
      v = normal(rng) * normal(rng); // heavy tails: some cells crowded, many empty
    const MatrixView<float> v{p.data(), n, dim};
    const Matrix<std::int32_t> got = mapNeighbours(v, k);
    const KnnResult ref = knnReference(v, v, k, Metric::L2, true);
    for (std::int64_t i = 0; i < std::int64_t(n) * k; ++i)
      QCOMPARE(got.data()[i], ref.ids.data()[i]);
  }

  void cpuStepIsMoveNodesTwin_data() {
    QTest::addColumn<int>("dim");
    QTest::newRow("2D") << 2;
    QTest::newRow("3D") << 3;
  }
  // The CPU's step (sixteen lanes and a polynomial power where the CPU has AVX-512) against
  // moveNode itself: the same edges sampled, the same negative samples, the same moves up to
  // rounding — coincident points (the fixed push of 4) and far ones (clipped) included.
  void cpuStepIsMoveNodesTwin() {
    QFETCH(int, dim);
    const std::int64_t n = 3000;
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<float> spread(-10.0f, 10.0f), weight(0.05f, 1.0f);
    std::vector<float> positions(std::size_t(n * dim));
    for (auto& v : positions)
      v = spread(rng);
    for (std::int64_t i = 0; i < 40; ++i) // pairs on the same spot
      for (int c = 0; c < dim; ++c)
        positions[std::size_t((i + 40) * dim + c)] = positions[std::size_t(i * dim + c)];
    std::vector<std::int64_t> offsets{0};
    std::vector<std::int32_t> targets;
    std::vector<float> perSample;
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (std::int64_t i = 0; i < n; ++i) {
      for (int e = 0; e < 12; ++e) {
        targets.push_back(std::int32_t(i < 40 ? i + 40 : pick(rng)));
        perSample.push_back(1.0f / weight(rng));
      }
      offsets.push_back(std::int64_t(targets.size()));
    }
    std::vector<float> scalarSample(perSample.size(), 1.0f), cpuSample(perSample.size(), 1.0f);
    std::vector<float> scalarNext(positions.size()), cpuNext(positions.size());
    layout::EpochStep step;
    step.current = positions.data();
    step.nodes = n;
    step.dim = dim;
    step.offsets = offsets.data();
    step.targets = targets.data();
    step.perSample = perSample.data();
    step.a = 1.577f;
    step.b = 0.895f;
    step.alpha = 0.8f;
    step.epoch = 3;
    step.seed = 9;
    layout::EpochStep scalar = step, cpu = step;
    scalar.next = scalarNext.data();
    scalar.nextSample = scalarSample.data();
    cpu.next = cpuNext.data();
    cpu.nextSample = cpuSample.data();
    for (std::int64_t i = 0; i < n; ++i) {
      layout::moveNode(scalar, i);
      layout::moveNodeCpu(cpu, i);
    }
    QVERIFY(scalarSample == cpuSample);
    double moved = 0;
    for (std::size_t i = 0; i < positions.size(); ++i) {
      moved += std::abs(double(scalarNext[i]) - positions[i]);
      QVERIFY2(std::abs(scalarNext[i] - cpuNext[i]) <= 1e-4f * (1.0f + std::abs(scalarNext[i])),
               qPrintable(QString("coordinate %1: moveNode %2, CPU step %3")
                              .arg(i)
                              .arg(scalarNext[i])
                              .arg(cpuNext[i])));
    }
    QVERIFY(moved > 0.1 * double(positions.size())); // the epoch moved the points
  }

  void deterministicForASeedWhateverTheThreads() {
    std::mt19937_64 rng(22);
    std::normal_distribution<float> normal;
    const int n = 1500, d = 12;
    std::vector<float> x(std::size_t(n * d));
    for (auto& v : x)
      v = normal(rng);
    const MatrixView<float> data{x.data(), n, d};
    Context one, two;
    one.backend = two.backend = Backend::Cpu;
    one.threads = 1;
    two.threads = 2;
    one.seed = two.seed = 7;
    const KnnResult g = knnGraph(data, 10, Metric::L2, one);
    PcaParams pp;
    const PcaResult pca = computePca(data, pp, one);
    LayoutParams params;
    params.epochs = 60;
    const Matrix<float> a =
        layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, one);
    const Matrix<float> b =
        layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, two);
    for (std::int64_t i = 0; i < std::int64_t(n) * 2; ++i)
      QCOMPARE(a.data()[i], b.data()[i]);
    Context other = one;
    other.seed = 8;
    const Matrix<float> c =
        layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, other);
    QVERIFY(std::memcmp(a.data(), c.data(), sizeof(float) * n * 2) != 0);
  }

  void wholeMapWhateverTheThreads_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("d");
    QTest::newRow("covariance (n > d)") << 500 << 300;
    QTest::newRow("Gram (d > n)") << 300 << 784;
  }
  // The pipeline the CLI, the GUI and the Python module share (PCA, graph, layout) gives the same
  // bits on 1 and 2 threads. Pixel-like data (integers / 255) made OpenBLAS's threaded GEMM and
  // SYRK round differently by thread count: the start moved in its last bits and the SGD turned
  // that into maps up to 7.6 apart.
  void wholeMapWhateverTheThreads() {
    QFETCH(int, n);
    QFETCH(int, d);
    std::mt19937_64 rng(23);
    std::uniform_int_distribution<int> pixel(0, 255), noise(-40, 40), cluster(0, 4);
    std::vector<int> centres(std::size_t(5 * d));
    for (auto& c : centres)
      c = pixel(rng);
    std::vector<float> x(std::size_t(n) * d);
    for (int i = 0; i < n; ++i) {
      const int c = cluster(rng);
      for (int j = 0; j < d; ++j)
        x[std::size_t(i) * d + j] =
            float(std::clamp(centres[std::size_t(c * d + j)] + noise(rng), 0, 255)) / 255.0f;
    }
    const MatrixView<float> data{x.data(), n, d};
    ExploreParams params;
    params.neighbours = false;
    params.forest = false;
    params.layout.epochs = 30;
    Context one, two;
    one.backend = two.backend = Backend::Cpu;
    one.threads = 1;
    two.threads = 2;
    one.seed = two.seed = 1;
    const Exploration a = explore(data, params, one), b = explore(data, params, two);
    const std::size_t values = std::size_t(n) * 2;
    QCOMPARE(a.start.rows() * a.start.cols(), std::int64_t(values));
    QCOMPARE(a.map.rows() * a.map.cols(), std::int64_t(values));
    QVERIFY2(std::memcmp(a.start.data(), b.start.data(), sizeof(float) * values) == 0,
             "the PCA start differs");
    QVERIFY2(std::memcmp(a.map.data(), b.map.data(), sizeof(float) * values) == 0,
             "the map differs");
  }

  void gramFormEqualsCovarianceForm_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("components");
    QTest::newRow("dense solvers") << 40 << 100 << 2;
    QTest::newRow("subspace iteration") << 150 << 300 << 3;
    QTest::newRow("more rows than dimensions") << 90 << 30 << 2;
    QTest::newRow("an axis the rows do not span") << 3 << 12 << 3;
  }
  void gramFormEqualsCovarianceForm() {
    // The same axes (signs fixed alike), variances and coordinates from the d × d covariance
    // and from the m × m Gram matrix, to rounding.
    QFETCH(int, n);
    QFETCH(int, d);
    QFETCH(int, components);
    std::mt19937_64 rng(std::uint64_t(n * 1000 + d));
    std::normal_distribution<float> normal;
    std::vector<float> x(std::size_t(n) * std::size_t(d));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) // decreasing spread along the coordinates: distinct axes
        x[std::size_t(i) * d + j] = normal(rng) * 4.0f / float(1 + j) + 2.0f;
    const MatrixView<float> data{x.data(), n, d};
    Context c;
    c.backend = Backend::Cpu;
    PcaParams covariance, gram;
    covariance.components = gram.components = components;
    covariance.form = PcaForm::Covariance;
    gram.form = PcaForm::Gram;
    const PcaResult a = computePca(data, covariance, c), b = computePca(data, gram, c);
    QVERIFY(std::abs(a.totalVariance - b.totalVariance) <= 1e-6 * a.totalVariance);
    const int spanned = std::min(components, n - 1);
    for (int k = 0; k < components; ++k) {
      QVERIFY2(
          std::abs(a.variances[k] - b.variances[k]) <= 1e-6 * a.variances[0],
          qPrintable(
              QString("variance %1: %2 vs %3").arg(k).arg(a.variances[k]).arg(b.variances[k])));
      double dot = 0, normB = 0;
      for (int j = 0; j < d; ++j) {
        dot += a.axes[std::size_t(k * d + j)] * b.axes[std::size_t(k * d + j)];
        normB += b.axes[std::size_t(k * d + j)] * b.axes[std::size_t(k * d + j)];
      }
      QVERIFY(std::abs(normB - 1) < 1e-9); // unit axes, spanned or not
      if (k < spanned) // an axis of no variance is any direction orthogonal to the others
        QVERIFY2(dot > 1 - 1e-8, qPrintable(QString("axis %1: cos %2").arg(k).arg(dot)));
      for (int other = 0; other < k; ++other) {
        double cross = 0;
        for (int j = 0; j < d; ++j)
          cross += b.axes[std::size_t(k * d + j)] * b.axes[std::size_t(other * d + j)];
        QVERIFY(std::abs(cross) < 1e-9);
      }
    }
    for (std::int64_t i = 0; i < std::int64_t(n) * components; ++i)
      QVERIFY2(std::abs(a.coordinates.data()[i] - b.coordinates.data()[i]) < 1e-3,
               qPrintable(QString("coordinate %1: %2 vs %3")
                              .arg(i)
                              .arg(a.coordinates.data()[i])
                              .arg(b.coordinates.data()[i])));
  }

  void wideDataNeedsNoSquareOfItsDimension() {
    // 60 items of 60,000 values: a d × d covariance would need 29 GB (std::bad_alloc before);
    // the Gram form holds 60 × 60. Two known directions u (spread 3) and v (spread 1), noise
    // 0.001: the axes are ±u and ±v and the coordinates the items' own spreads along them.
    const int n = 60, d = 60000;
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal;
    std::vector<double> u(d), v(d), a(n), b(n);
    for (int j = 0; j < d; ++j) {
      u[std::size_t(j)] = normal(rng);
      v[std::size_t(j)] = normal(rng);
    }
    auto normalise = [](std::vector<double>& w) {
      double s = 0;
      for (const double e : w)
        s += e * e;
      for (double& e : w)
        e /= std::sqrt(s);
    };
    normalise(u);
    double uv = 0;
    for (int j = 0; j < d; ++j)
      uv += u[std::size_t(j)] * v[std::size_t(j)];
    for (int j = 0; j < d; ++j)
      v[std::size_t(j)] -= uv * u[std::size_t(j)];
    normalise(v);
    std::vector<float> x(std::size_t(n) * d);
    for (int i = 0; i < n; ++i) { // spreads 3 and 1 along u and v, uncorrelated in the sample
      a[std::size_t(i)] = 3 * std::cos(2 * M_PI * i / n);
      b[std::size_t(i)] = std::sin(2 * M_PI * i / n);
      for (int j = 0; j < d; ++j)
        x[std::size_t(i) * d + j] =
            float(a[std::size_t(i)] * u[std::size_t(j)] + b[std::size_t(i)] * v[std::size_t(j)] +
                  0.001 * normal(rng) / std::sqrt(double(d)) + 1.0);
    }
    Context c;
    c.backend = Backend::Cpu;
    const auto started = std::chrono::steady_clock::now();
    const PcaResult pca = computePca({x.data(), n, d}, PcaParams{}, c);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    QVERIFY2(seconds < 10, qPrintable(QString::number(seconds)));
    double cosU = 0, cosV = 0;
    for (int j = 0; j < d; ++j) {
      cosU += pca.axes[std::size_t(j)] * u[std::size_t(j)];
      cosV += pca.axes[std::size_t(d + j)] * v[std::size_t(j)];
    }
    QVERIFY2(std::abs(cosU) > 0.9999 && std::abs(cosV) > 0.9999,
             qPrintable(QString("%1 %2").arg(cosU).arg(cosV)));
    const double meanA = std::accumulate(a.begin(), a.end(), 0.0) / n,
                 meanB = std::accumulate(b.begin(), b.end(), 0.0) / n;
    for (int i = 0; i < n; ++i) {
      QVERIFY(std::abs(pca.coordinates.row(i)[0] -
                       std::copysign(1.0, cosU) * (a[std::size_t(i)] - meanA)) < 1e-3);
      QVERIFY(std::abs(pca.coordinates.row(i)[1] -
                       std::copysign(1.0, cosV) * (b[std::size_t(i)] - meanB)) < 1e-3);
    }
  }

  void cudaIsTheCpusTwin_data() {
    QTest::addColumn<int>("dim");
    QTest::newRow("2D") << 2;
    QTest::newRow("3D") << 3;
  }
  void cudaIsTheCpusTwin() {
    QFETCH(int, dim);
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    std::mt19937_64 rng(23);
    std::normal_distribution<float> normal;
    const int n = 4000, d = 16;
    std::vector<float> x(std::size_t(n * d));
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = normal(rng) + 6.0f * float((i / d) % 4 == std::size_t(i % d) % 4); // four groups
    const MatrixView<float> data{x.data(), n, d};
    Context cpu, gpu;
    cpu.backend = Backend::Cpu;
    gpu.backend = Backend::Cuda;
    cpu.seed = gpu.seed = 5;
    const KnnResult g = knnGraph(data, 10, Metric::L2, cpu);
    PcaParams pp;
    pp.components = dim;
    const PcaResult pca = computePca(data, pp, cpu);
    LayoutParams params;
    params.dim = dim;
    params.epochs = 1; // one epoch: the same moves up to powf's rounding
    Matrix<float> a =
        layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, cpu);
    Matrix<float> b =
        layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, gpu);
    for (std::int64_t i = 0; i < std::int64_t(n) * dim; ++i)
      QVERIFY2(
          std::abs(a.data()[i] - b.data()[i]) <= 1e-3f,
          qPrintable(
              QString("coordinate %1: CPU %2, GPU %3").arg(i).arg(a.data()[i]).arg(b.data()[i])));
    params.epochs = 150; // a whole run drifts apart (chaos) but keeps the same quality
    a = layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, cpu);
    b = layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, gpu);
    const double qa = layoutQuality(g.ids.view(), a.view(), 10).overall;
    const double qb = layoutQuality(g.ids.view(), b.view(), 10).overall;
    qInfo("true 10-NN kept: CPU %.3f, GPU %.3f", qa, qb);
    QVERIFY(std::abs(qa - qb) <= 0.03);
  }

  void beatsPcaOnFashionMnist_data() {
    QTest::addColumn<Backend>("backend");
    QTest::newRow("cpu") << Backend::Cpu;
    QTest::newRow("cuda") << Backend::Cuda;
  }
  void beatsPcaOnFashionMnist() {
    QFETCH(Backend, backend);
    SKIP_WITHOUT_DEVICE(backend);
    // 10,000 items of Fashion-MNIST (every 7th), as the person would see them.
    const Dataset ds = openDataset(defaultDatasetPath());
    const int n = 10000, d = int(ds.dim());
    std::vector<float> x(std::size_t(n) * d);
    for (int i = 0; i < n; ++i)
      std::copy(ds.vectors.row(std::int64_t(i) * 7), ds.vectors.row(std::int64_t(i) * 7) + d,
                x.begin() + std::size_t(i) * d);
    const MatrixView<float> data{x.data(), n, d};
    Context c;
    c.backend = Backend::Cpu;
    const KnnResult g = knnGraph(data, 15, Metric::L2, c);
    PcaParams pp;
    const PcaResult pca = computePca(data, pp, c);
    LayoutParams params;
    params.epochs = 200;
    int reports = 0;
    Context mapOn = c;
    mapOn.backend = backend;
    const Matrix<float> xy =
        layoutGraph(g.ids.view(), g.distances.view(), pca.coordinates.view(), params, mapOn,
                    noJobControl(), [&](const MatrixView<float>& pos, double) {
                      QCOMPARE(pos.rows, n);
                      ++reports;
                    });
    QCOMPARE(reports, 20); // every 10 epochs: the GUI animates from these
    const double mapKept = layoutQuality(g.ids.view(), xy.view(), 10).overall;
    const double pcaKept = layoutQuality(g.ids.view(), pca.coordinates.view(), 10).overall;
    qInfo("true 10-NN kept: layout %.3f, PCA %.3f", mapKept, pcaKept);
    QVERIFY(mapKept > 3 * pcaKept);
    QVERIFY(mapKept > 0.2);
  }

  void mapNeighboursOfSomeRowsAreThoseRowsOfAll() {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal;
    const int n = 2000, k = 7;
    std::vector<float> p(std::size_t(n * 2));
    for (auto& v : p)
      v = normal(rng);
    const MatrixView<float> v{p.data(), n, 2};
    const Matrix<std::int32_t> all = mapNeighbours(v, k);
    const std::vector<std::int64_t> rows = {1999, 0, 17, 17, 640};
    const Matrix<std::int32_t> some = mapNeighbours(v, k, 2, rows);
    QCOMPARE(some.rows(), std::int64_t(rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (int c = 0; c < k; ++c)
        QCOMPARE(some.row(std::int64_t(r))[c], all.row(rows[r])[c]);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, mapNeighbours(v, k, 2, {n}));
  }

  void mapTrustEstimateBracketsTheWhole() {
    // Data near a plane (two wide coordinates, ten narrow ones) and a noisy map of the plane:
    // trust spread over items. The estimate from a sample lies within its 95% interval of every
    // item's mean (seeded: the same sample each run, checked for several seeds), and a sample of
    // every item is the whole mean, with no error.
    std::mt19937_64 rng(9);
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<float> uniform(0.0f, 10.0f);
    const int n = 3000, d = 12, k = 10;
    std::vector<float> x(std::size_t(n * d)), xy(std::size_t(n * 2));
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c) {
        x[std::size_t(i * d + c)] = c < 2 ? uniform(rng) : 0.1f * normal(rng);
        if (c < 2)
          xy[std::size_t(i * 2 + c)] = x[std::size_t(i * d + c)] + 0.05f * normal(rng);
      }
    const MatrixView<float> data{x.data(), n, d}, map{xy.data(), n, 2};
    Context cpu;
    cpu.backend = Backend::Cpu;
    const KnnResult truth = knnGraph(data, k, Metric::L2, cpu);
    const LayoutQuality whole = layoutQuality(truth.ids.view(), map, k);
    qInfo("map trust of every item: %.4f", whole.overall);
    QVERIFY(whole.overall > 0.1 && whole.overall < 0.9);
    int inside = 0;
    for (std::uint64_t seed : {0u, 1u, 2u, 3u, 4u}) {
      const MapTrustEstimate e =
          estimateMapTrust(data, map, k, Metric::L2, cpu, noJobControl(), 400, seed);
      QCOMPARE(e.sampled, std::int64_t(400));
      QCOMPARE(e.items, std::int64_t(n));
      QVERIFY(e.standardError > 0.001 && e.standardError < 0.05);
      QVERIFY(std::abs(e.low95 - (e.mean - 1.96 * e.standardError)) < 1e-12);
      inside += e.low95 <= whole.overall && whole.overall <= e.high95;
      QVERIFY2(std::abs(e.mean - whole.overall) < 4 * e.standardError,
               qPrintable(QString("seed %1: %2 against %3 ± %4")
                              .arg(seed)
                              .arg(e.mean)
                              .arg(whole.overall)
                              .arg(e.standardError)));
    }
    QVERIFY(inside >= 4); // a 95% interval: at most one of five seeds outside it
    const MapTrustEstimate all = estimateMapTrust(data, map, k, Metric::L2, cpu, noJobControl(), n);
    QCOMPARE(all.sampled, std::int64_t(n));
    QCOMPARE(all.standardError, 0.0);
    QVERIFY(std::abs(all.mean - whole.overall) < 1e-6); // the whole sums float32 shares
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             estimateMapTrust(data, map, n, Metric::L2, cpu, noJobControl()));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, estimateMapTrust(data, {xy.data(), n - 1, 2}, k,
                                                               Metric::L2, cpu, noJobControl()));
  }

  void cancellationAndBadInput() {
    std::vector<std::int32_t> ids = {1, 0};
    std::vector<float> dist = {1, 1}, init = {0, 0, 1, 1};
    LayoutParams params;
    params.dim = 4;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, layoutGraph({ids.data(), 2, 1}, {dist.data(), 2, 1},
                                                          {init.data(), 2, 2}, params, Context{}));
    params.dim = 2;
    JobControl job;
    job.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled, layoutGraph({ids.data(), 2, 1}, {dist.data(), 2, 1},
                                                    {init.data(), 2, 2}, params, Context{}, job));
  }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
