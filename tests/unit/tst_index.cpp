// ANN indexes (graph, IVF-Flat), k-means, sweeps and the Pareto front: recall thresholds per
// index, metric and backend (CUDA rows QSKIP without a device), save/load, corrupted files,
// parameter errors, cancellation.
// Before any Qt header: Qt's `emit` macro would eat IndexCommon.h's Pool::emit.
#include "index/GraphIndex.h"

#include "DeviceSkip.h"
#include "Oracle.h"
#include "nearscape/Nearscape.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cmath>
#include <cstring>
#include <sys/stat.h>

#include <thread>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

using namespace nearscape;
using namespace nearscape::test;

Q_DECLARE_METATYPE(nearscape::Metric)
Q_DECLARE_METATYPE(nearscape::Backend)

namespace {

/// `n` points from a mixture of `clusters` Gaussians in d dimensions (seeded); labels optional.
std::vector<float> mixture(std::int64_t n, std::int64_t d, int clusters, std::uint64_t seed,
                           std::vector<int>* labels = nullptr, float spread = 0.3f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> centres(std::size_t(clusters * d));
  for (auto& c : centres)
    c = 3.0f * normal(rng);
  std::vector<float> v(std::size_t(n * d));
  for (std::int64_t i = 0; i < n; ++i) {
    const int c = int(rng() % std::uint64_t(clusters));
    if (labels)
      labels->push_back(c);
    for (std::int64_t t = 0; t < d; ++t)
      v[std::size_t(i * d + t)] = centres[std::size_t(c * d + t)] + spread * normal(rng);
  }
  return v;
}

/// Exact ground truth ids of `queries` against `base`, from the test support's oracle.
Matrix<std::int32_t> truthOf(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                             Metric metric) {
  const OracleKnn oracle = oracleKnn(queries, base, k, metric, false);
  std::vector<std::int32_t> ids;
  for (std::int64_t r = 0; r < oracle.rows; ++r)
    ids.insert(ids.end(), oracle.idRow(r), oracle.idRow(r) + k);
  return Matrix<std::int32_t>(std::move(ids), oracle.rows, k);
}

/// The seed of a measurement run (NEARSCAPE_TEST_SEED), else `fallback`: thresholds below were
/// measured over several seeds and sit a noise margin under the lowest.
std::uint64_t seedOr(std::uint64_t fallback) {
  const QByteArray text = qgetenv("NEARSCAPE_TEST_SEED");
  return text.isEmpty() ? fallback : text.toULongLong();
}

Context contextFor(Backend backend) {
  Context c;
  c.backend = backend;
  c.seed = 7;
  return c;
}

} // namespace

class TestIndex : public QObject {
  Q_OBJECT

private slots:
  void recallThresholds_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<Backend>("backend");
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<QString>("params");
    QTest::addColumn<double>("minimum");
    for (Backend b : {Backend::Cpu, Backend::Cuda})
      for (Metric m : {Metric::L2, Metric::Cosine, Metric::InnerProduct}) {
        const QString tag = QString("%1/%2").arg(backendName(b).data(), metricName(m).data());
        // Measured on the CPU over seeds 1-6 and 11 (NEARSCAPE_TEST_SEED): ef = 64, nprobe = 16
        // and all lists 1.0 every time, ef = k 0.971-1 (l2 0.971, ip 0.980, cos 0.991 at
        // least); thresholds a noise margin below. (graphRecallGrowsWithEf has data where ef
        // matters more.)
        QTest::newRow(qPrintable("graph ef=64 " + tag)) << "graph" << b << m << "ef=64" << 0.995;
        QTest::newRow(qPrintable("graph ef=k " + tag)) << "graph" << b << m << "ef=10" << 0.95;
        QTest::newRow(qPrintable("ivf nprobe=16 " + tag)) << "ivf" << b << m << "nprobe=16" << 0.99;
        QTest::newRow(qPrintable("ivf all lists " + tag)) << "ivf" << b << m << "nprobe=64" << 1.0;
      }
  }
  void recallThresholds() {
    QFETCH(QString, kind);
    QFETCH(Backend, backend);
    QFETCH(Metric, metric);
    QFETCH(QString, params);
    QFETCH(double, minimum);
    SKIP_WITHOUT_DEVICE(backend);
    const std::int64_t n = 6000, nq = 300, d = 24;
    const int k = 10;
    const std::vector<float> all = mixture(n + nq, d, 40, seedOr(11));
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    ParameterValues build;
    if (kind == "ivf")
      build["nlist"] = 64;
    // Through the reflection layer, as the CLI's --build and --grid give them.
    const auto index = buildIndex(base, metric, parseIndexBuildParams(kind.toStdString(), build),
                                  contextFor(backend));
    QCOMPARE(index->backend(), backend);
    ParameterValues search;
    const auto pair = params.split('=');
    search[pair[0].toStdString()] = pair[1].toDouble();
    const KnnResult r =
        index->search(queries, k, parseIndexSearchParams(kind.toStdString(), search));
    QCOMPARE(r.ids.rows(), nq);
    QCOMPARE(r.ids.cols(), std::int64_t(k));
    for (std::int64_t i = 0; i < nq; ++i) { // distinct ids, distances ascending
      const std::set<std::int32_t> distinct(r.ids.row(i), r.ids.row(i) + k);
      QCOMPARE(std::int64_t(distinct.size()), std::int64_t(k));
      for (int j = 1; j < k; ++j)
        QVERIFY(r.distances.row(i)[j - 1] <= r.distances.row(i)[j]);
      const double exact = exactDistance(queries.row(i), base.row(r.ids.row(i)[0]), d, metric);
      QVERIFY2(std::abs(exact - r.distances.row(i)[0]) <= 1e-3 * (1 + std::abs(exact)),
               "a reported distance is not the item's distance");
    }
    const Matrix<std::int32_t> truth = truthOf(queries, base, k, metric);
    const double recall = recallAtK(r.ids.view(), truth.view(), k, queries, base, metric);
    qInfo("recall %.4f", recall);
    QVERIFY2(recall >= minimum, qPrintable(QString("recall %1 < %2").arg(recall).arg(minimum)));
  }

  void graphRecallGrowsWithEf_data() {
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<double>("atK");     // recall at ef = k, at least
    QTest::addColumn<double>("atLarge"); // recall at ef = 256, at least
    QTest::addColumn<double>("gain");    // how much ef = 256 must add to ef = k, at least
    // Measured over seeds 1-6 and 11 (NEARSCAPE_TEST_SEED): ef = 10 reaches 0.505-0.534 (l2),
    // 0.518-0.541 (cos), 0.901-0.971 (ip); ef = 256 0.9985-0.9995, 0.9975-1, 0.999-1; the gain
    // 0.46-0.49, 0.46-0.48, 0.030-0.099. Thresholds: those less a noise margin.
    QTest::newRow("l2") << Metric::L2 << 0.45 << 0.99 << 0.40;
    QTest::newRow("cos") << Metric::Cosine << 0.46 << 0.99 << 0.40;
    QTest::newRow("ip") << Metric::InnerProduct << 0.85 << 0.99 << 0.015;
  }
  void graphRecallGrowsWithEf() {
    // Data without clusters in 32 dimensions, where a pool of k candidates misses neighbours
    // that a larger one finds: recall rises with ef (never falls beyond the noise of a best-first
    // walk), and ef is what makes it rise.
    QFETCH(Metric, metric);
    QFETCH(double, atK);
    QFETCH(double, atLarge);
    QFETCH(double, gain);
    const std::int64_t n = 5000, nq = 200, d = 32;
    const int k = 10;
    const std::vector<float> all = mixture(n + nq, d, 1, seedOr(1), nullptr, 1.0f);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    const auto index =
        buildIndex(base, metric, GraphIndexParams{.degree = 16}, contextFor(Backend::Cpu));
    const OracleKnn oracle = oracleKnn(queries, base, k, metric, false);
    std::vector<double> recalls;
    QString line;
    for (int ef : {10, 16, 24, 32, 64, 128, 256}) {
      const KnnResult r = index->search(queries, k, GraphSearchParams{.ef = ef});
      recalls.push_back(oracleRecall(r.ids.view(), oracle, queries, base, metric));
      line += QString(" ef=%1: %2").arg(ef).arg(recalls.back(), 0, 'f', 4);
    }
    qInfo("%s", qPrintable(line));
    for (std::size_t i = 1; i < recalls.size(); ++i)
      QVERIFY2(recalls[i] >= recalls[i - 1] - 0.005, qPrintable("recall fell:" + line));
    QVERIFY2(recalls.front() >= atK, qPrintable(line));
    QVERIFY2(recalls.back() >= atLarge, qPrintable(line));
    QVERIFY2(recalls.back() - recalls.front() >= gain, qPrintable(line));
  }

  void cpuFullSearchIsExact() {
    // A pool as large as the data reaches every node of the graph, and every list probed is a
    // full scan: both indexes then return the exact answer (the CPU twins of the GPU tests below).
    const std::int64_t n = 400, d = 33;
    const std::vector<float> all = mixture(n + 50, d, 5, 3);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, 50, d};
    for (Metric metric : {Metric::L2, Metric::Cosine, Metric::InnerProduct}) {
      const auto graph = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cpu));
      const KnnResult a = graph->search(queries, 20, GraphSearchParams{.ef = 400});
      const OracleKnn oracle = oracleKnn(queries, base, 20, metric, false);
      QCOMPARE(oracleRecall(a.ids.view(), oracle, queries, base, metric), 1.0);
    }
    const std::int64_t m = 3000, nq = 80, e = 36;
    const std::vector<float> more = mixture(m + nq, e, 12, 4);
    const MatrixView<float> b{more.data(), m, e}, q{more.data() + m * e, nq, e};
    for (Metric metric : {Metric::L2, Metric::InnerProduct}) {
      const auto ivf = buildIndex(b, metric, IvfFlatParams{.nlist = 40}, contextFor(Backend::Cpu));
      for (int k : {10, 256, 300}) {
        const KnnResult r = ivf->search(q, k, IvfSearchParams{.nprobe = 40});
        const OracleKnn oracle = oracleKnn(q, b, k, metric, false);
        QCOMPARE(oracleRecall(r.ids.view(), oracle, q, b, metric), 1.0);
        for (std::int64_t i = 0; i < nq; ++i) // float32 distances of the exact neighbours
          for (int c = 0; c < k; ++c)
            QVERIFY(std::abs(r.distances.row(i)[c] - oracle.distanceRow(i)[c]) <=
                    1e-4 * (1 + std::abs(oracle.distanceRow(i)[c])));
      }
    }
  }

  void reorderedWalkFindsWhatTheBaseOrderFinds() {
    // The CPU walk's relabelled copy (breadth-first order, 2 MiB pages) moves rows in memory,
    // not the walk: the same nodes are expanded in the same order, so the same ids and
    // distances come back as from the walk over the base as given (seeded Gaussians: no two
    // distances tie), and the copy's memory is counted while it is held.
    const std::int64_t n = 3000, nq = 100, d = 20;
    const std::vector<float> all = mixture(n + nq, d, 12, seedOr(21));
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    for (Metric metric : {Metric::L2, Metric::Cosine, Metric::InnerProduct}) {
      const auto built = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cpu));
      auto* graph = dynamic_cast<index::GraphIndex*>(built.get());
      QVERIFY(graph);
      const std::uint64_t withCopy = built->bytes();
      for (int ef : {10, 48}) {
        // Float32 rows both ways (the codes are the copy's: quantizedWalkReranksItsPool).
        const KnnResult a = built->search(queries, 10, GraphSearchParams{.ef = ef, .quantized = 0});
        graph->setReordered(false);
        QVERIFY(built->bytes() + std::uint64_t(n * d * 5) <= withCopy);
        const KnnResult b = built->search(queries, 10, GraphSearchParams{.ef = ef, .quantized = 0});
        graph->setReordered(true);
        QCOMPARE(built->bytes(), withCopy);
        QVERIFY(std::equal(a.ids.data(), a.ids.data() + nq * 10, b.ids.data()));
        QVERIFY(std::equal(a.distances.data(), a.distances.data() + nq * 10, b.distances.data()));
        QCOMPARE(a.report.detail, b.report.detail); // the same rows scored
      }
    }
  }

  void quantizedWalkReranksItsPool() {
    // Pixel-like rows (integers 0–255) code exactly: by default the walk scores the codes and
    // finds exactly what the float32 walk finds (integer sums: no rounding in either order), at
    // a quarter of the bytes a row. Float data keep float32 rows unless asked; asked, the codes
    // cost some recall at a small pool, none with a pool as large as the data (re-ranked in
    // float32), each metric.
    const std::int64_t n = 3000, nq = 100, d = 24;
    std::vector<float> pixels = mixture(n + nq, d, 12, seedOr(23));
    for (float& v : pixels)
      v = std::clamp(std::round(128.0f + 40.0f * v), 0.0f, 255.0f);
    for (Metric metric : {Metric::L2, Metric::InnerProduct}) {
      const MatrixView<float> base{pixels.data(), n, d}, queries{pixels.data() + n * d, nq, d};
      const auto built = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cpu));
      const KnnResult coded = built->search(queries, 10, GraphSearchParams{.ef = 32});
      const KnnResult floats =
          built->search(queries, 10, GraphSearchParams{.ef = 32, .quantized = 0});
      QVERIFY2(coded.report.detail.find("8-bit codes") != std::string::npos,
               coded.report.detail.c_str());
      QVERIFY(std::equal(coded.ids.data(), coded.ids.data() + nq * 10, floats.ids.data()));
      QVERIFY(std::equal(coded.distances.data(), coded.distances.data() + nq * 10,
                         floats.distances.data()));
    }
    const std::vector<float> all = mixture(n + nq, d, 12, seedOr(23));
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    for (Metric metric : {Metric::L2, Metric::Cosine, Metric::InnerProduct}) {
      const auto built = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cpu));
      const Matrix<std::int32_t> truth = truthOf(queries, base, 10, metric);
      const KnnResult floats = built->search(queries, 10, GraphSearchParams{.ef = 128});
      QVERIFY2(floats.report.detail.find("8-bit codes") == std::string::npos,
               floats.report.detail.c_str());
      const KnnResult coded =
          built->search(queries, 10, GraphSearchParams{.ef = 128, .quantized = 1});
      const double a = recallAtK(floats.ids.view(), truth.view(), 10, queries, base, metric);
      const double b = recallAtK(coded.ids.view(), truth.view(), 10, queries, base, metric);
      qInfo("%s, ef 128: float32 rows %.4f, codes %.4f", std::string(metricName(metric)).c_str(), a,
            b);
      QVERIFY2(b >= a - 0.05, qPrintable(QString("codes %1 vs floats %2").arg(b).arg(a)));
      const KnnResult whole =
          built->search(queries, 10, GraphSearchParams{.ef = int(n), .quantized = 1});
      const KnnResult wholeFloats = built->search(queries, 10, GraphSearchParams{.ef = int(n)});
      QVERIFY(std::equal(whole.ids.data(), whole.ids.data() + nq * 10, wholeFloats.ids.data()));
      QVERIFY(std::equal(whole.distances.data(), whole.distances.data() + nq * 10,
                         wholeFloats.distances.data()));
    }
  }

  void rowsScoredAreCounted() {
    // A pool as large as the data reaches every node once (cpuFullSearchIsExact): n rows scored
    // a query. A small pool scores fewer.
    const std::int64_t n = 400, d = 33;
    const std::vector<float> all = mixture(n + 50, d, 5, 3);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, 50, d};
    const auto graph = buildIndex(base, Metric::L2, GraphIndexParams{}, contextFor(Backend::Cpu));
    const KnnResult full = graph->search(queries, 20, GraphSearchParams{.ef = 400});
    QVERIFY2(full.report.detail.rfind("400.0 rows scored a query (", 0) == 0,
             full.report.detail.c_str());
    const KnnResult small = graph->search(queries, 10, GraphSearchParams{.ef = 10});
    QVERIFY2(std::stod(small.report.detail) < 300.0, small.report.detail.c_str());
  }

  void smallUpperPoolScoresFewerRows() {
    // upper_ef = 4 walks the upper layer with 4 candidates instead of ef: fewer rows scored at
    // the same ef, and on data without well-separated clusters the same recall (to a margin).
    const std::int64_t n = 4000, nq = 200, d = 16;
    std::mt19937_64 rng(seedOr(5));
    std::normal_distribution<float> normal;
    std::vector<float> all(std::size_t((n + nq) * d));
    for (float& v : all)
      v = normal(rng);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    const auto graph = buildIndex(base, Metric::L2, GraphIndexParams{}, contextFor(Backend::Cpu));
    const Matrix<std::int32_t> truth = truthOf(queries, base, 10, Metric::L2);
    const KnnResult wide = graph->search(queries, 10, GraphSearchParams{.ef = 64});
    const KnnResult narrow = graph->search(queries, 10, GraphSearchParams{.ef = 64, .upperEf = 4});
    const double a = recallAtK(wide.ids.view(), truth.view(), 10, queries, base, Metric::L2);
    const double b = recallAtK(narrow.ids.view(), truth.view(), 10, queries, base, Metric::L2);
    qInfo("upper pool ef: %s, recall %.4f; upper pool 4: %s, recall %.4f",
          wide.report.detail.c_str(), a, narrow.report.detail.c_str(), b);
    QVERIFY(std::stod(narrow.report.detail) < 0.95 * std::stod(wide.report.detail));
    QVERIFY2(b >= a - 0.01, qPrintable(QString("%1 vs %2").arg(b).arg(a)));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             graph->search(queries, 10, GraphSearchParams{.upperEf = 0}));
  }

  void gpuSearchMatchesCpuTwin() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    // With a pool as large as the data, best-first search reaches every node: both backends
    // return the exact answer (float32 ranking).
    const std::int64_t n = 400, d = 33;
    const std::vector<float> all = mixture(n + 50, d, 5, 3);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, 50, d};
    for (Metric metric : {Metric::L2, Metric::Cosine}) {
      const auto gpu = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cuda));
      const auto cpu = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cpu));
      const KnnResult a = gpu->search(queries, 20, GraphSearchParams{.ef = 400});
      const KnnResult b = cpu->search(queries, 20, GraphSearchParams{.ef = 400});
      const Matrix<std::int32_t> truth = truthOf(queries, base, 20, metric);
      QCOMPARE(recallAtK(a.ids.view(), truth.view(), 20, queries, base, metric), 1.0);
      QCOMPARE(recallAtK(b.ids.view(), truth.view(), 20, queries, base, metric), 1.0);
    }
  }

  void gpuFewQueriesWalkAsWellAsMany() {
    // Up to 64 queries a call take the block-per-query kernel (several nodes expanded at once);
    // more take a warp each. Both reach the same recall on the same index, every row distinct ids
    // in ascending distance.
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    const std::int64_t n = 6000, nq = 256, d = 24;
    const int k = 10;
    const std::vector<float> all = mixture(n + nq, d, 40, seedOr(11));
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    for (Metric metric : {Metric::L2, Metric::Cosine, Metric::InnerProduct}) {
      const auto index = buildIndex(base, metric, GraphIndexParams{}, contextFor(Backend::Cuda));
      const Matrix<std::int32_t> truth = truthOf(queries, base, k, metric);
      for (int ef : {10, 64}) {
        const KnnResult many = index->search(queries, k, GraphSearchParams{.ef = ef});
        std::vector<std::int32_t> few(std::size_t(nq) * k);
        for (std::int64_t b0 = 0; b0 < nq; b0 += 32) {
          const std::int64_t rows = b0 < 64 ? 1 : 32; // single queries, then batches of 32
          for (std::int64_t r0 = b0; r0 < b0 + 32; r0 += rows) {
            const KnnResult r =
                index->search({queries.row(r0), rows, d}, k, GraphSearchParams{.ef = ef});
            for (std::int64_t i = 0; i < rows; ++i) {
              std::copy_n(r.ids.row(i), k, few.data() + (r0 + i) * k);
              const std::set<std::int32_t> distinct(r.ids.row(i), r.ids.row(i) + k);
              QCOMPARE(std::int64_t(distinct.size()), std::int64_t(k));
              for (int j = 1; j < k; ++j)
                QVERIFY(r.distances.row(i)[j - 1] <= r.distances.row(i)[j]);
            }
          }
        }
        const double a = recallAtK(many.ids.view(), truth.view(), k, queries, base, metric);
        const double b = recallAtK({few.data(), nq, k}, truth.view(), k, queries, base, metric);
        qInfo("%s ef=%d: recall %.4f a warp a query, %.4f a block a query",
              metricName(metric).data(), ef, a, b);
        QVERIFY2(b >= a - 0.02 && b >= (ef == 10 ? 0.95 : 0.995),
                 qPrintable(QString("%1 vs %2").arg(b).arg(a)));
      }
    }
  }

  void gpuIvfMatchesCpuTwin() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    // The same lists (the CPU's index saved, loaded on the GPU) scanned in full give the exact
    // float32 answer on both backends; k at the kernel's limit and beyond it (CPU fallback).
    const std::int64_t n = 3000, nq = 80, d = 36;
    const std::vector<float> all = mixture(n + nq, d, 12, 4);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    for (Metric metric : {Metric::L2, Metric::InnerProduct}) {
      const auto cpu =
          buildIndex(base, metric, IvfFlatParams{.nlist = 40}, contextFor(Backend::Cpu));
      QTemporaryDir dir;
      const std::string file = (dir.path() + "/twin.nsindex").toStdString();
      cpu->save(file, "hash");
      const auto gpu = loadIndex(file, base, "hash", contextFor(Backend::Cuda));
      QCOMPARE(gpu->backend(), Backend::Cuda);
      for (int k : {10, 256, 300}) {
        const KnnResult a = gpu->search(queries, k, IvfSearchParams{.nprobe = 40});
        const KnnResult b = cpu->search(queries, k, IvfSearchParams{.nprobe = 40});
        const Matrix<std::int32_t> truth = truthOf(queries, base, k, metric);
        QCOMPARE(recallAtK(a.ids.view(), truth.view(), k, queries, base, metric), 1.0);
        QCOMPARE(recallAtK(b.ids.view(), truth.view(), k, queries, base, metric), 1.0);
        for (std::int64_t i = 0; i < a.distances.rows() * k; ++i)
          QVERIFY(std::abs(a.distances.data()[i] - b.distances.data()[i]) <=
                  1e-4f * (1 + std::abs(b.distances.data()[i])));
      }
      // Fewer probes: the GPU's recall is the CPU's (same lists, same probes up to ties).
      const Matrix<std::int32_t> truth = truthOf(queries, base, 10, metric);
      const double ga = recallAtK(gpu->search(queries, 10, IvfSearchParams{.nprobe = 3}).ids.view(),
                                  truth.view(), 10, queries, base, metric);
      const double ca = recallAtK(cpu->search(queries, 10, IvfSearchParams{.nprobe = 3}).ids.view(),
                                  truth.view(), 10, queries, base, metric);
      QVERIFY2(std::abs(ga - ca) <= 0.01, qPrintable(QString("GPU %1, CPU %2").arg(ga).arg(ca)));
    }
  }

  void gpuNearestCentroidsMatchTheCpu() {
    SKIP_WITHOUT_DEVICE(Backend::Cuda);
    const std::int64_t n = 20000, d = 48, k = 300;
    const std::vector<float> x = mixture(n, d, 50, 6);
    const std::vector<float> c = mixture(k, d, 50, 7);
    for (int count : {1, 7}) {
      const auto a = nearestCentroids({x.data(), n, d}, {c.data(), k, d}, count, Metric::L2,
                                      contextFor(Backend::Cuda));
      const auto b = nearestCentroids({x.data(), n, d}, {c.data(), k, d}, count, Metric::L2,
                                      contextFor(Backend::Cpu));
      std::int64_t same = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        std::set<std::int32_t> sa(a.begin() + i * count, a.begin() + (i + 1) * count);
        std::set<std::int32_t> sb(b.begin() + i * count, b.begin() + (i + 1) * count);
        QCOMPARE(std::int64_t(sa.size()), std::int64_t(count)); // distinct lists
        same += sa == sb;
      }
      // float32 sums in another order may flip a near tie, nothing more.
      QVERIFY2(same >= n - n / 1000, qPrintable(QString("%1 of %2 rows agree").arg(same).arg(n)));
    }
  }

  void searchGraphIsWellFormed() {
    const std::int64_t n = 2000, d = 16;
    const std::vector<float> x = mixture(n, d, 20, 5);
    const auto index = buildIndex({x.data(), n, d}, Metric::L2, GraphIndexParams{.degree = 16},
                                  contextFor(Backend::Cpu));
    const auto built = std::get<GraphIndexParams>(index->buildParams());
    QCOMPARE(built.degree, std::optional<int>(16));
    QCOMPARE(built.buildK, std::optional<int>(32)); // the default, resolved
    QCOMPARE(index->buildValues(), (ParameterValues{{"build_k", 32}, {"degree", 16}}));
    const auto params = index->searchParameters();
    QCOMPARE(params.size(), std::size_t(5)); // ef, degree, entries; the CPU's upper_ef, quantized
    QCOMPARE(params[0].name, std::string("ef"));
    QCOMPARE(params[3].name, std::string("upper_ef"));
    QCOMPARE(params[4].name, std::string("quantized"));
    QVERIFY(index->bytes() >= std::uint64_t(n * 16 * 4));
    // The graph itself: n rows of 16 ids, each in range, never the node itself, never twice in
    // a row, −1 only as padding at a row's end.
    const auto* graphIndex = dynamic_cast<const index::GraphIndex*>(index.get());
    QVERIFY(graphIndex);
    const MatrixView<std::int32_t> g = graphIndex->graph();
    QCOMPARE(g.rows, n);
    QCOMPARE(g.cols, std::int64_t(16));
    std::int64_t edges = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      std::set<std::int32_t> row;
      bool padding = false;
      for (std::int64_t j = 0; j < g.cols; ++j) {
        const std::int32_t to = g.row(v)[j];
        if (to < 0) {
          QCOMPARE(to, -1);
          padding = true;
          continue;
        }
        QVERIFY2(!padding, qPrintable(QString("node %1: an edge after padding").arg(v)));
        QVERIFY(to < n);
        QVERIFY2(to != v, qPrintable(QString("node %1 links to itself").arg(v)));
        QVERIFY2(row.insert(to).second,
                 qPrintable(QString("node %1 lists %2 twice").arg(v).arg(to)));
        ++edges;
      }
    }
    QVERIFY2(edges >= n * 16 * 95 / 100, qPrintable(QString("only %1 edges").arg(edges)));
    // Strongly connected: node 0 reaches every node along the edges, and every node reaches
    // node 0 (along reversed edges), so a walk from any entry point can reach any node.
    std::vector<std::vector<std::int32_t>> forward(static_cast<std::size_t>(n)),
        backward(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v)
      for (std::int64_t j = 0; j < g.cols; ++j)
        if (const std::int32_t to = g.row(v)[j]; to >= 0) {
          forward[std::size_t(v)].push_back(to);
          backward[std::size_t(to)].push_back(std::int32_t(v));
        }
    for (const auto* edgesOf : {&forward, &backward}) {
      std::vector<bool> reached(std::size_t(n), false);
      std::vector<std::int32_t> frontier{0};
      reached[0] = true;
      std::int64_t count = 1;
      while (!frontier.empty()) {
        const std::int32_t v = frontier.back();
        frontier.pop_back();
        for (const std::int32_t to : (*edgesOf)[std::size_t(v)])
          if (!reached[std::size_t(to)]) {
            reached[std::size_t(to)] = true;
            ++count;
            frontier.push_back(to);
          }
      }
      QCOMPARE(count, n);
    }
  }

  void typedParametersAndTheirReflection() {
    // Names parse into the kind's struct and describe back to the same names.
    const IndexBuildParams graph = parseIndexBuildParams("graph", {{"degree", 24}});
    QCOMPARE(indexKind(graph), std::string_view("graph"));
    QCOMPARE(std::get<GraphIndexParams>(graph).degree, std::optional<int>(24));
    QVERIFY(!std::get<GraphIndexParams>(graph).buildK); // its default, resolved at build
    QCOMPARE(describeParameters(graph), (ParameterValues{{"degree", 24}}));
    const IndexBuildParams ivf = parseIndexBuildParams("ivf", {{"nlist", 30}, {"kmeans_pp", 1}});
    QCOMPARE(indexKind(ivf), std::string_view("ivf"));
    QVERIFY(std::get<IvfFlatParams>(ivf).kmeansPlusPlus);
    QCOMPARE(describeParameters(ivf),
             (ParameterValues{{"iterations", 10}, {"kmeans_pp", 1}, {"nlist", 30}}));
    const IndexSearchParams search =
        parseIndexSearchParams("graph", {{"ef", 48}, {"entries", 4}, {"upper_ef", 8}});
    QCOMPARE(std::get<GraphSearchParams>(search).ef, std::optional<int>(48));
    QCOMPARE(std::get<GraphSearchParams>(search).upperEf, std::optional<int>(8));
    QCOMPARE(describeParameters(search),
             (ParameterValues{{"ef", 48}, {"entries", 4}, {"upper_ef", 8}}));
    QCOMPARE(describeParameters(IndexSearchParams{}), ParameterValues{});
    // The described build parameters name every typed field.
    for (const std::string& kind : indexKinds()) {
      std::set<std::string> described, named;
      for (const IndexParameter& p : indexBuildParameters(kind, 1000))
        described.insert(p.name);
      ParameterValues all;
      for (const std::string& name : described)
        all[name] = 1;
      for (const auto& [name, value] : describeParameters(parseIndexBuildParams(kind, all)))
        named.insert(name);
      QCOMPARE(named, described);
    }

    // Typed and by name build the same index; the defaults (std::monostate, an empty struct,
    // the documented values) search alike.
    const std::int64_t n = 1200, d = 10;
    const std::vector<float> x = mixture(n + 30, d, 8, 12);
    const MatrixView<float> base{x.data(), n, d}, queries{x.data() + n * d, 30, d};
    const Context cpu = contextFor(Backend::Cpu);
    const auto typed = buildIndex(base, Metric::L2, GraphIndexParams{.degree = 16}, cpu);
    const auto named =
        buildIndex(base, Metric::L2, parseIndexBuildParams("graph", {{"degree", 16}}), cpu);
    QCOMPARE(typed->buildValues(), named->buildValues());
    const KnnResult a = typed->search(queries, 5, {});
    const KnnResult b = named->search(queries, 5, GraphSearchParams{});
    const KnnResult c =
        typed->search(queries, 5, GraphSearchParams{.ef = 64, .degree = 16, .entries = 16});
    QVERIFY(std::equal(a.ids.data(), a.ids.data() + 30 * 5, b.ids.data()));
    QVERIFY(std::equal(a.ids.data(), a.ids.data() + 30 * 5, c.ids.data()));
    const auto lists = buildIndex(base, Metric::L2, IvfFlatParams{}, cpu);
    QCOMPARE(std::get<IvfFlatParams>(lists->buildParams()).nlist,
             std::optional<int>(int(std::lround(4 * std::sqrt(double(n)))))); // 4·√n
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, lists->search(queries, 5, GraphSearchParams{}));
  }

  void ivfRecallNeverFallsWithMoreProbes_data() {
    QTest::addColumn<Backend>("backend");
    QTest::newRow("cpu") << Backend::Cpu;
    QTest::newRow("cuda") << Backend::Cuda;
  }
  void ivfRecallNeverFallsWithMoreProbes() {
    QFETCH(Backend, backend);
    SKIP_WITHOUT_DEVICE(backend);
    const std::int64_t n = 5000, nq = 200, d = 20;
    const std::vector<float> all = mixture(n + nq, d, 30, 21, nullptr, 1.0f);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    const auto index =
        buildIndex(base, Metric::L2, IvfFlatParams{.nlist = 50}, contextFor(backend));
    QCOMPARE(index->backend(), backend);
    const Matrix<std::int32_t> truth = truthOf(queries, base, 10, Metric::L2);
    SweepOptions options;
    options.k = 10;
    options.latencyQueries = 5;
    int streamed = 0;
    std::vector<double> bar; // the sweep's progress never goes back, nor ends early
    JobControl job([&](double fraction, const std::string&) { bar.push_back(fraction); },
                   std::chrono::milliseconds(0));
    const std::vector<SweepRow> rows = runSweep(
        *index, queries, base, truth.view(), options, [&](const SweepRow&) { ++streamed; }, job);
    QCOMPARE(streamed, int(rows.size()));
    QVERIFY(bar.size() > rows.size());
    QVERIFY(std::is_sorted(bar.begin(), bar.end()));
    QVERIFY(std::count(bar.begin(), bar.end(), 1.0) == 1 && bar.back() == 1.0);
    QCOMPARE(rows.front().params.at("nprobe"), 1.0);
    QCOMPARE(rows.back().params.at("nprobe"), 50.0);
    for (std::size_t i = 1; i < rows.size(); ++i)
      QVERIFY2(rows[i].recall >= rows[i - 1].recall,
               qPrintable(QString("nprobe %1 → %2 lowered recall %3 → %4")
                              .arg(rows[i - 1].params.at("nprobe"))
                              .arg(rows[i].params.at("nprobe"))
                              .arg(rows[i - 1].recall)
                              .arg(rows[i].recall)));
    QVERIFY(rows.back().recall >= 0.999);
    QVERIFY(rows.front().recall < rows.back().recall);
    QVERIFY(rows.back().missed.empty());
    for (const SweepRow& r : rows)
      QVERIFY(r.qps > 0 && r.p50Ms > 0 && r.p99Ms >= r.p50Ms && r.bytes > 0);
    const std::string csv = sweepCsv(rows);
    QVERIFY(csv.rfind("nprobe,recall,qps,p50_ms,p99_ms,build_s,bytes,pareto\n", 0) == 0);
  }

  void sweepTimesTheBestOfThreeWarmRuns() {
    // An index with one slow timed pass in each setting (a cold cache, another process):
    // the sweep warms up, times three passes and keeps the best, so the slow one never counts.
    class SlowFirstPass final : public AnnIndex {
    public:
      explicit SlowFirstPass(std::unique_ptr<AnnIndex> inner) : m_inner(std::move(inner)) {}
      std::string_view kind() const override { return m_inner->kind(); }
      std::vector<IndexParameter> searchParameters() const override {
        return m_inner->searchParameters();
      }
      IndexBuildParams buildParams() const override { return m_inner->buildParams(); }
      KnnResult search(const MatrixView<float>& q, int k, const IndexSearchParams& p,
                       JobControl& job) const override {
        if (q.rows > 1 && ++m_fullPasses % 5 == 2) // passes 2 and 7: one timed pass a setting
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
        m_calls.push_back(q.rows);
        return m_inner->search(q, k, p, job);
      }
      std::uint64_t bytes() const override { return m_inner->bytes(); }
      Metric metric() const override { return m_inner->metric(); }
      Backend backend() const override { return m_inner->backend(); }
      std::int64_t size() const override { return m_inner->size(); }
      std::int64_t dim() const override { return m_inner->dim(); }
      mutable std::vector<std::int64_t> m_calls;

    protected:
      std::vector<Section> sections() const override { return {}; }

    private:
      std::unique_ptr<AnnIndex> m_inner;
      mutable int m_fullPasses = 0;
    };
    const std::int64_t n = 2000, nq = 64, d = 8;
    const std::vector<float> all = mixture(n + nq, d, 10, 5, nullptr, 1.0f);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, nq, d};
    SlowFirstPass index(
        buildIndex(base, Metric::L2, IvfFlatParams{.nlist = 16}, contextFor(Backend::Cpu)));
    const Matrix<std::int32_t> truth = truthOf(queries, base, 10, Metric::L2);
    SweepOptions options;
    options.k = 10;
    options.latencyQueries = 2;
    options.grid = {{{"nprobe", 1}}, {{"nprobe", 4}}};
    options.minTimedSeconds = 0; // three passes, however short (timeBestPass's test times more)
    // 5 full passes a setting would be an extra one: the count below says 1 + 3 per setting.
    const std::vector<SweepRow> rows = runSweep(index, queries, base, truth.view(), options);
    const std::vector<std::int64_t> perSetting{nq, nq, nq, nq, 1, 1};
    std::vector<std::int64_t> expected = perSetting;
    expected.insert(expected.end(), perSetting.begin(), perSetting.end());
    QCOMPARE(index.m_calls, expected);
    for (const SweepRow& r : rows) // a 300 ms pass would cap QPS at 213
      QVERIFY2(r.qps > 1000, qPrintable(QString("QPS %1: the slow pass was timed").arg(r.qps)));
  }

  void timedPassesLastAtLeastTheTimeAsked() {
    // A GPU pass of 10,000 queries lasts milliseconds: passes repeat until 0.2 s was timed (at
    // least minPasses, at most maxPasses), so that the best pass is a best of many.
    int calls = 0;
    const auto sleepy = [&] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    };
    TimedPasses t = timeBestPass(sleepy, 3, 0.2, 1000);
    QCOMPARE(t.passes, calls);
    QVERIFY2(t.total >= 0.2, qPrintable(QString::number(t.total)));
    QVERIFY(t.passes >= 3 && t.passes <= 7); // each ≥ 30 ms: 7 of them are past 0.2 s
    QVERIFY(t.best >= 0.03 && t.best <= t.total / t.passes + 1e-12);
    calls = 0;
    t = timeBestPass(sleepy, 3, 0.0, 1000); // no time asked: the passes asked
    QCOMPARE(t.passes, 3);
    QCOMPARE(calls, 3);
    calls = 0;
    t = timeBestPass([&] { ++calls; }, 3, 10.0, 50); // instant passes stop at the most allowed
    QCOMPARE(t.passes, 50);
    QCOMPARE(calls, 50);
    QVERIFY(t.total < 10.0);
    t = timeBestPass([&] { ++calls; }, 0, 0.0, 0); // one pass always
    QCOMPARE(t.passes, 1);

    // The sweep's rows say how many passes they timed, for how long, and where they ran.
    const std::int64_t n = 800, d = 8;
    const auto data = mixture(n, d, 4, 7);
    const MatrixView<float> base{data.data(), n, d}, queries{data.data(), 50, d};
    const Context cpu = contextFor(Backend::Cpu);
    const auto index = buildIndex(base, Metric::L2, IvfFlatParams{.nlist = 8}, cpu);
    const KnnResult truth = knnSearch(queries, base, 5, Metric::L2, cpu);
    SweepOptions options;
    options.k = 5;
    options.grid = {{{"nprobe", 2}}};
    options.latencyQueries = 0;
    options.minTimedSeconds = 0.05;
    const SweepRow row = runSweep(*index, queries, base, truth.ids.view(), options).front();
    QVERIFY(row.passes >= 3 && (row.timedSeconds >= 0.05 || row.passes == options.maxTimingRuns));
    QCOMPARE(row.where, std::string("cpu, index search"));
    Backend where = Backend::Cuda;
    const SweepRow exact = measureExactSearch(queries, base, truth.ids.view(), Metric::L2, options,
                                              cpu, noJobControl(), &where);
    QCOMPARE(where, Backend::Cpu);
    QVERIFY2(exact.where.rfind("cpu, ", 0) == 0, exact.where.c_str());
    QVERIFY(exact.passes >= 3 && exact.recall == 1.0);
  }

  void paretoFrontOfHandMadeRows() {
    auto row = [](double recall, double qps) {
      SweepRow r;
      r.recall = recall;
      r.qps = qps;
      return r;
    };
    // (0.9, 100) dominated by (0.95, 120); (0.99, 50) and (0.95, 120) and (0.5, 500) on the front;
    // (0.5, 400) dominated by (0.5, 500); an equal twin of a front row stays on the front.
    const std::vector<SweepRow> rows = {row(0.9, 100), row(0.95, 120), row(0.99, 50),
                                        row(0.5, 500), row(0.5, 400),  row(0.99, 50)};
    const std::vector<bool> front = paretoFront(rows);
    QCOMPARE(front, (std::vector<bool>{false, true, true, true, false, true}));
  }

  void efBelowKIsMeasuredOnceAsEfEqualK() {
    // The graph search raises ef to k (as hnswlib and Faiss do): ef = 1, 2, 5 and 10 for k = 10
    // are one setting, measured once and labelled ef = 10, and the note says which were raised.
    std::string note;
    const std::vector<ParameterValues> asked = {
        {{"ef", 1}}, {{"ef", 2}}, {{"ef", 5}}, {{"ef", 10}}, {{"ef", 32}}};
    QCOMPARE(effectiveSweepGrid(asked, 10, &note),
             (std::vector<ParameterValues>{{{"ef", 10}}, {{"ef", 32}}}));
    QVERIFY2(note.find("ef = 1, 2 and 5 are below k = 10") != std::string::npos, note.c_str());
    // Per value of the other parameters: ef 4 under two degrees stays two settings.
    QCOMPARE(
        effectiveSweepGrid(
            {{{"ef", 4}, {"degree", 8}}, {{"ef", 4}, {"degree", 16}}, {{"ef", 10}, {"degree", 8}}},
            10, &note),
        (std::vector<ParameterValues>{{{"ef", 10}, {"degree", 8}}, {{"ef", 10}, {"degree", 16}}}));
    QCOMPARE(effectiveSweepGrid({{{"ef", 16}}, {{"nprobe", 1}}}, 10, &note).size(), std::size_t(2));
    QVERIFY(note.empty());

    // The sweep itself: one row, labelled with the ef it searched.
    const std::int64_t n = 600, d = 8;
    const auto data = mixture(n, d, 4, 5);
    const MatrixView<float> base{data.data(), n, d}, queries{data.data(), 40, d};
    const Context cpu = contextFor(Backend::Cpu);
    const auto index = buildIndex(base, Metric::L2, GraphIndexParams{.degree = 8}, cpu);
    const KnnResult truth = knnSearch(queries, base, 10, Metric::L2, cpu);
    SweepOptions options;
    options.k = 10;
    options.grid = asked;
    options.latencyQueries = 0;
    options.timingRuns = 1;
    const std::vector<SweepRow> rows = runSweep(*index, queries, base, truth.ids.view(), options);
    QCOMPARE(rows.size(), std::size_t(2));
    QCOMPARE(rows[0].params, (ParameterValues{{"ef", 10}}));
    QCOMPARE(rows[1].params, (ParameterValues{{"ef", 32}}));
  }

  void holdoutIsWhatWasAskedOrRefused() {
    // A hold-out beyond half the data was halved without a word: refused now, naming the limit;
    // none asked for is 1000 rows or half the data, whichever is fewer.
    QCOMPARE(holdoutCount(0, 5000), std::int64_t(1000));
    QCOMPARE(holdoutCount(0, 301), std::int64_t(150));
    QCOMPARE(holdoutCount(150, 300), std::int64_t(150));
    try {
      holdoutCount(151, 300);
      QFAIL("a hold-out beyond half the data was accepted");
    } catch (const InvalidArgument& e) {
      QVERIFY2(std::string(e.what()).find("at most 150") != std::string::npos, e.what());
    }
    const std::int64_t n = 300, d = 6;
    const auto data = mixture(n, d, 4, 6);
    HeldOutSweepOptions options;
    options.build = IvfFlatParams{.nlist = 4};
    options.sweep.k = 5;
    options.sweep.latencyQueries = 0;
    options.sweep.timingRuns = 1;
    const Context cpu = contextFor(Backend::Cpu);
    options.holdout = 200;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             heldOutSweep({data.data(), n, d}, std::nullopt, options, cpu));
    options.holdout = 150;
    QCOMPARE(heldOutSweep({data.data(), n, d}, std::nullopt, options, cpu).queries.rows,
             std::int64_t(150));
  }

  void heldOutSweepTimesTheExactReferenceOnItsQueries() {
    // The reference is the exact search on the same held-out queries: recall 1, timed as a
    // setting is; a second run over the same split takes the first one's truth.
    const std::int64_t n = 1500, d = 12;
    const auto data = mixture(n, d, 10, 21);
    HeldOutSweepOptions options;
    options.build = IvfFlatParams{.nlist = 16};
    options.holdout = 80;
    options.sweep.k = 5;
    options.sweep.grid = {{{"nprobe", 1}}, {{"nprobe", 16}}};
    options.sweep.latencyQueries = 10;
    options.exactReference = true;
    const Context context = contextFor(Backend::Cpu);
    HeldOutSweep first = heldOutSweep({data.data(), n, d}, std::nullopt, options, context);
    QVERIFY(first.exact.has_value());
    QCOMPARE(first.exact->recall, 1.0);
    QVERIFY(first.exact->qps > 0 && first.exact->p50Ms > 0 &&
            first.exact->p99Ms >= first.exact->p50Ms);
    QVERIFY(first.exact->params.empty() && first.exact->missed.empty());
    QCOMPARE(first.exactBackend, Backend::Cpu);

    options.build = GraphIndexParams{.degree = 8};
    options.sweep.grid = {{{"ef", 8}}, {{"ef", 64}}};
    options.exactReference = false;
    HeldOutSweepStages stages;
    int truthAsked = 0;
    stages.truth = [&](const MatrixView<float>& q, const MatrixView<float>&) {
      ++truthAsked;
      return first.truth;
    };
    const HeldOutSweep second =
        heldOutSweep({data.data(), n, d}, std::nullopt, options, context, noJobControl(), stages);
    QCOMPARE(truthAsked, 1);
    QVERIFY(!second.exact);
    QCOMPARE(second.held.queryRows, first.held.queryRows); // the same split

    SweepStudy study;
    study.k = 5;
    study.runs = {sweepRunOf(first), sweepRunOf(second)};
    study.exact = first.exact;
    QCOMPARE(study.runs[0].kind, std::string("ivf"));
    QCOMPARE(study.runs[1].label().rfind("graph ", 0), std::size_t(0));
    QVERIFY(study.runs[1].label().find("degree=8") != std::string::npos);
    const auto overall = overallParetoFront(study);
    QCOMPARE(overall.size(), std::size_t(3)); // two runs, then the reference
    QCOMPARE(overall[0].size(), std::size_t(2));
    QCOMPARE(overall[2].size(), std::size_t(1));
  }

  void sweepStudyCsvRoundTrip() {
    auto row = [](ParameterValues params, double recall, double qps, bool pareto) {
      SweepRow r;
      r.params = std::move(params);
      r.recall = recall;
      r.qps = qps;
      r.p50Ms = 1000 / qps;
      r.p99Ms = 2000 / qps;
      r.buildSeconds = 1.5;
      r.bytes = 4096;
      r.pareto = pareto;
      return r;
    };
    SweepStudy study;
    study.k = 10;
    study.runs.push_back(
        {"graph",
         {{"degree", 32}, {"build_k", 32}},
         "cpu",
         {row({{"ef", 16}}, 0.9, 5000, true), row({{"ef", 64}}, 0.99, 2000, true)}});
    study.runs.push_back(
        {"ivf",
         {{"nlist", 64}},
         "cpu",
         {row({{"nprobe", 1}}, 0.5, 9000, true), row({{"nprobe", 8}}, 0.95, 1000, false)}});
    study.exact = row({}, 1.0, 1500, true);
    const std::string csv = sweepStudyCsv(study);
    std::istringstream lines(csv);
    std::string header;
    std::getline(lines, header);
    QCOMPARE(header, std::string("run,index,k,build.build_k,build.degree,build.nlist,ef,nprobe,"
                                 "recall,qps,p50_ms,p99_ms,build_s,bytes,pareto,pareto_all"));
    std::vector<std::string> rows;
    for (std::string line; std::getline(lines, line);)
      rows.push_back(line);
    QCOMPARE(rows.size(), std::size_t(5));
    QCOMPARE(rows[0], std::string("1,graph,10,32,32,,16,,0.9,5000,0.2,0.4,1.5,4096,1,1"));
    QCOMPARE(rows[3],
             std::string("2,ivf,10,,,64,,8,0.95,1000,1,2,1.5,4096,0,0")); // graph ef=64 beats it
    QCOMPARE(rows[4], std::string("0,exact,10,,,,,,1,1500,0.6666666667,1.333333333,1.5,4096,1,1"));

    const SweepStudy back = parseSweepStudyCsv(csv, "study.csv");
    QCOMPARE(back.k, 10);
    QCOMPARE(back.runs.size(), std::size_t(2));
    QCOMPARE(back.runs[0].kind, std::string("graph"));
    QCOMPARE(back.runs[0].build, study.runs[0].build);
    QCOMPARE(back.runs[1].rows.size(), std::size_t(2));
    QCOMPARE(back.runs[1].rows[1].params, (ParameterValues{{"nprobe", 8}}));
    QCOMPARE(back.runs[1].rows[1].recall, 0.95);
    QVERIFY(!back.runs[1].rows[1].pareto);
    QVERIFY(back.exact.has_value());
    QCOMPARE(back.exact->qps, 1500.0);
    QVERIFY(back.exact->params.empty());

    // A one-run CSV of sweepCsv reads as one run of unknown kind.
    const SweepStudy old = parseSweepStudyCsv(sweepCsv(study.runs[1].rows), "old.csv");
    QCOMPARE(old.runs.size(), std::size_t(1));
    QCOMPARE(old.runs[0].rows.size(), std::size_t(2));
    QVERIFY(!old.exact);

    // Bad files are errors that name the line and the column.
    auto refused = [](const std::string& text, const char* says) {
      try {
        (void)parseSweepStudyCsv(text, "bad.csv");
      } catch (const FormatError& e) {
        return std::string(e.what()).find(says) != std::string::npos;
      }
      return false;
    };
    QVERIFY(refused("", "empty"));
    QVERIFY(refused("run,index,recall\n1,graph,0.5\n", "'qps'"));
    QVERIFY(refused(header + "\n1,graph,10,32,32,,16,,lots,5000,0.2,0.4,1.5,4096,1,1\n",
                    "line 2, column 'recall'"));
    QVERIFY(refused(header + "\n1,graph,10\n", "line 2: 3 cells"));
    QVERIFY(refused(header + "\n1,graph,10,32,32,,16,,1.5,5000,0.2,0.4,1.5,4096,1,1\n", "[0, 1]"));
    QVERIFY(refused(header + "\n" + rows[4] + "\n" + rows[4] + "\n", "second exact"));
    QVERIFY(refused("recall,recall\n", "repeats"));
    // A QPS the chart's log axis cannot place (0, infinity, NaN) and infinite latencies are
    // refused, naming the line and column.
    for (const char* qps : {"0", "inf", "nan", "-5"})
      QVERIFY2(refused(header + "\n1,graph,10,32,32,,16,,0.9," + qps + ",0.2,0.4,1.5,4096,1,1\n",
                       "line 2, column 'qps'"),
               qps);
    QVERIFY(
        refused(header + "\n" + rows[0] + "\n1,graph,10,32,32,,16,,0.9,5000,inf,0.4,1.5,4096,1,1\n",
                "line 3, column 'p50_ms'"));
    // A spreadsheet's byte-order mark before the header is skipped, lines counted as before.
    const SweepStudy marked = parseSweepStudyCsv("\xEF\xBB\xBF" + csv, "marked.csv");
    QCOMPARE(marked.runs.size(), back.runs.size());
    QCOMPARE(marked.exact->qps, 1500.0);
    QVERIFY(refused("\xEF\xBB\xBF" + header + "\n1,graph,10\n", "line 2: 3 cells"));
    QCOMPARE(
        parseSweepStudyCsv("\xEF\xBB\xBF" + sweepCsv(study.runs[1].rows), "one.csv").runs.size(),
        std::size_t(1)); // its first column, recall, found
  }

  void studyCsvFileMustBeARegularFile() {
    // A FIFO is refused at once (never waited on); a regular file is read.
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("study.csv").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    try {
      (void)readSweepStudyCsv(fifo);
      QFAIL("a FIFO was read as a study");
    } catch (const IoError& e) {
      QVERIFY2(std::strstr(e.what(), "not a regular file"), e.what());
    }
    const QString file = dir.filePath("real.csv");
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write("recall,qps,p50_ms,p99_ms,build_s,bytes,pareto\n0.9,100,1,2,3,4,1\n");
    out.close();
    const SweepStudy study = readSweepStudyCsv(file.toStdString());
    QCOMPARE(study.runs.size(), std::size_t(1));
    QCOMPARE(study.runs[0].rows[0].qps, 100.0);
  }

  void saveLoadRoundTrip_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("graph") << "graph";
    QTest::newRow("ivf") << "ivf";
  }
  void saveLoadRoundTrip() {
    QFETCH(QString, kind);
    const std::int64_t n = 1500, d = 12;
    const std::vector<float> all = mixture(n + 40, d, 10, 8);
    const MatrixView<float> base{all.data(), n, d}, queries{all.data() + n * d, 40, d};
    const auto index =
        buildIndex(base, Metric::Cosine, parseIndexBuildParams(kind.toStdString(), {}),
                   contextFor(Backend::Cpu));
    QTemporaryDir dir;
    const std::string path = dir.filePath("index.nsi").toStdString();
    index->save(path, "hash-a");
    const auto loaded = loadIndex(path, base, "hash-a", contextFor(Backend::Cpu));
    QCOMPARE(loaded->kind(), index->kind());
    QCOMPARE(loaded->buildValues(), index->buildValues());
    QCOMPARE(loaded->metric(), Metric::Cosine);
    const KnnResult a = index->search(queries, 5, {}), b = loaded->search(queries, 5, {});
    QVERIFY(std::equal(a.ids.data(), a.ids.data() + 40 * 5, b.ids.data()));

    // Built on other data, another shape, corrupted, truncated: each refused with a reason.
    QVERIFY_THROWS_EXCEPTION(FormatError,
                             loadIndex(path, base, "hash-b", contextFor(Backend::Cpu)));
    QVERIFY_THROWS_EXCEPTION(FormatError,
                             loadIndex(path, {all.data(), n - 1, d}, "", contextFor(Backend::Cpu)));
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::string flipped = bytes;
    flipped[flipped.size() / 2] ^= 0x40;
    std::ofstream(dir.filePath("flipped.nsi").toStdString(), std::ios::binary) << flipped;
    try {
      loadIndex(dir.filePath("flipped.nsi").toStdString(), base, "", contextFor(Backend::Cpu));
      QFAIL("a corrupted index loaded");
    } catch (const FormatError& e) {
      QVERIFY2(std::string(e.what()).find("checksum") != std::string::npos, e.what());
    }
    std::ofstream(dir.filePath("short.nsi").toStdString(), std::ios::binary)
        << bytes.substr(0, bytes.size() - 100);
    QVERIFY_THROWS_EXCEPTION(FormatError, loadIndex(dir.filePath("short.nsi").toStdString(), base,
                                                    "", contextFor(Backend::Cpu)));
    std::ofstream(dir.filePath("other.nsi").toStdString(), std::ios::binary)
        << "not an index at all";
    QVERIFY_THROWS_EXCEPTION(FormatError, loadIndex(dir.filePath("other.nsi").toStdString(), base,
                                                    "", contextFor(Backend::Cpu)));
  }

  void badArgumentsAreClearErrors() {
    const std::int64_t n = 300, d = 8;
    const std::vector<float> x = mixture(n, d, 4, 2);
    const MatrixView<float> base{x.data(), n, d};
    const Context cpu = contextFor(Backend::Cpu);
    // The reflection layer: unknown kinds and names, values that are not integers.
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseIndexBuildParams("hnsw", {}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseIndexBuildParams("graph", {{"degre", 8}}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseIndexBuildParams("ivf", {{"nlist", 2.5}}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseIndexBuildParams("ivf", {{"kmeans_pp", 2}}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseIndexSearchParams("ivf", {{"ef", 11}}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseIndexSearchParams("graph", {{"eff", 11}}));
    // Ranges, which depend on the data, at build and search.
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             buildIndex(base, Metric::L2, IvfFlatParams{.nlist = 301}, cpu));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             buildIndex(base, Metric::L2, IvfFlatParams{.nlist = 0}, cpu));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             buildIndex(base, Metric::L2, IvfFlatParams{.iterations = 101}, cpu));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             buildIndex(base, Metric::L2, GraphIndexParams{.degree = 300}, cpu));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             buildIndex({x.data(), 0, d}, Metric::L2, GraphIndexParams{}, cpu));
    std::vector<float> withNan = x;
    withNan[17] = std::nanf("");
    QVERIFY_THROWS_EXCEPTION(
        InvalidArgument, buildIndex({withNan.data(), n, d}, Metric::L2, GraphIndexParams{}, cpu));
    const auto index = buildIndex(base, Metric::L2, IvfFlatParams{.nlist = 10}, cpu);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, index->search(base, 0, {}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, index->search(base, int(n) + 1, {}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, index->search({x.data(), 10, d - 1}, 5, {}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             index->search(base, 5, IvfSearchParams{.nprobe = 11}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, index->search(base, 5, GraphSearchParams{.ef = 11}));
    const std::vector<float> one(d, 1.0f);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             buildIndex({one.data(), 1, d}, Metric::L2, GraphIndexParams{}, cpu));
  }

  void cancellation() {
    const std::int64_t n = 3000, d = 16;
    const std::vector<float> x = mixture(n, d, 10, 4);
    const MatrixView<float> base{x.data(), n, d};
    for (const char* kind : {"graph", "ivf"}) {
      JobControl stopped;
      stopped.requestStop();
      const IndexBuildParams params = parseIndexBuildParams(kind, {});
      QVERIFY_THROWS_EXCEPTION(
          Cancelled, buildIndex(base, Metric::L2, params, contextFor(Backend::Cpu), stopped));
      const auto index = buildIndex(base, Metric::L2, params, contextFor(Backend::Cpu));
      QVERIFY_THROWS_EXCEPTION(Cancelled, index->search(base, 5, {}, stopped));
      const Matrix<std::int32_t> truth = truthOf({x.data(), 50, d}, base, 5, Metric::L2);
      SweepOptions options;
      options.k = 5;
      QVERIFY_THROWS_EXCEPTION(
          Cancelled, runSweep(*index, {x.data(), 50, d}, base, truth.view(), options, {}, stopped));
    }
  }

  void kmeansFindsSeparatedClusters() {
    std::vector<int> labels;
    const std::int64_t n = 4000, d = 10;
    const std::vector<float> x = mixture(n, d, 8, 99, &labels, 0.05f);
    KMeansParams p;
    p.clusters = 8;
    p.iterations = 20;
    p.plusPlus = true;
    const Context cpu = contextFor(Backend::Cpu);
    const KMeansResult a = kmeans({x.data(), n, d}, p, Metric::L2, cpu);
    const KMeansResult b = kmeans({x.data(), n, d}, p, Metric::L2, cpu);
    QVERIFY(std::equal(a.centroids.data(), a.centroids.data() + 8 * d, b.centroids.data()));
    // Each true cluster lands in one k-means cluster, and no two true clusters share one
    // (k-means++ seeds well-separated blobs apart).
    const std::vector<std::int32_t> assigned =
        nearestCentroids({x.data(), n, d}, a.centroids.view(), 1, Metric::L2, cpu);
    std::map<int, std::set<int>> clustersOfLabel;
    for (std::int64_t i = 0; i < n; ++i)
      clustersOfLabel[labels[std::size_t(i)]].insert(assigned[std::size_t(i)]);
    std::set<int> used;
    for (const auto& [label, clusters] : clustersOfLabel) {
      QCOMPARE(clusters.size(), std::size_t(1));
      used.insert(*clusters.begin());
    }
    QCOMPARE(used.size(), clustersOfLabel.size());
    QVERIFY(a.inertia < 0.05 * 0.05 * d * 1.5);
    p.clusters = int(n) + 1;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, kmeans({x.data(), n, d}, p, Metric::L2, cpu));
  }
};

QTEST_GUILESS_MAIN(TestIndex)
#include "tst_index.moc"
