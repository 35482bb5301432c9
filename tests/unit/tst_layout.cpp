// The map: deterministic for a seed, better than PCA on real data, and its neighbour search exact.
#include "DeviceSkip.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cstring>
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
