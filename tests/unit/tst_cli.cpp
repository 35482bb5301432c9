// nearscape-cli as a person uses it: exit codes, JSON, messages.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/core/Context.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/io/ArtefactCache.h"
#include "nearscape/io/GraphFile.h"
#include "nearscape/io/Npy.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>

using namespace nearscape::test;

class TestCli : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  struct Run {
    int code = -1;
    QByteArray out, err;
  };
  Run cli(const QStringList& args, const QString& fault = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // The CLI runs this process's BLAS kernels, so that results computed here in-process equal
    // its own bit for bit (on a CPU OpenBLAS does not know, it would restart with faster ones).
    env.insert("OPENBLAS_CORETYPE", QString::fromLatin1(nearscape::blasKernelsName()));
    if (!fault.isEmpty()) // the engine's test hook: the named write fails
      env.insert("NEARSCAPE_FAULT_WRITE", fault);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), args);
    if (!p.waitForFinished(120000))
      return {};
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
  }

  /// The CLI started by a shell that first sets `limits` (ulimit commands) for it.
  Run cliUnder(const QString& limits, const QStringList& args) {
    QProcess p;
    p.start("/bin/sh", QStringList{"-c", limits + " && exec \"$0\" \"$@\"",
                                   QStringLiteral(NEARSCAPE_CLI_PATH)} +
                           args);
    if (!p.waitForFinished(120000))
      return {};
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
  }

private slots:
  void infoJson() {
    auto values = randomFloats(50 * 8, 1);
    values[3 * 8 + 5] = NAN;
    const QString file = m_dir.filePath("x.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {50, 8}, rawBytes(values))));
    QVERIFY(writeBytes(m_dir.filePath("x.meta.tsv"), QByteArray("a\nb\n").repeated(25)));
    const Run r = cli({"info", file, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["rows"].toInt(), 50);
    QCOMPARE(j["dim"].toInt(), 8);
    QCOMPARE(j["dtype"].toString(), QString("float32"));
    QVERIFY(j["memory_mapped"].toBool());
    QCOMPARE(j["non_finite"].toObject()["count"].toInt(), 1);
    QCOMPARE(j["non_finite"].toObject()["first_row"].toInt(), 3);
    QCOMPARE(j["non_finite"].toObject()["first_col"].toInt(), 5);
    QCOMPARE(j["label_counts"].toObject()["a"].toInt(), 25);
    QCOMPARE(j["content_hash"].toString().size(), 32);
    QVERIFY(j["timings"].toObject().contains("open_s"));
  }

  void infoCountsImageFiles() {
    // A metadata column of image paths, relative to the metadata file: 3 named, 2 present.
    QDir(m_dir.path()).mkpath("pics");
    QVERIFY(writeBytes(m_dir.filePath("pics/a.png"), "x"));
    QVERIFY(writeBytes(m_dir.filePath("pics/b.png"), "x"));
    const QString file = m_dir.filePath("pics.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {3, 2}, rawBytes(randomFloats(6, 2)))));
    QVERIFY(writeBytes(m_dir.filePath("pics.meta.tsv"),
                       "label\tfilepath\ncat\tpics/a.png\ndog\tpics/b.png\ncat\tpics/gone.png\n"));
    const Run r = cli({"info", file, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const QJsonObject images = QJsonDocument::fromJson(r.out).object()["images"].toObject();
    QCOMPARE(images["column"].toString(), QString("filepath"));
    QCOMPARE(images["named"].toInt(), 3);
    QCOMPARE(images["found"].toInt(), 2);
    QVERIFY(images["first_missing"].toString().endsWith("pics/gone.png"));
    const Run text = cli({"info", file, "--backend", "cpu"});
    QVERIFY2(text.out.contains("images        2 of 3 files found (column filepath)"), text.out);
  }

  void layoutWritesMapTrust() {
    // Map trust against an independent brute-force reference in float64 on both sides: the
    // share of each item's 10 nearest (original space) among its 10 nearest on the map.
    constexpr int n = 300, d = 8, k = 10;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 21);
    for (int i = 0; i < n; ++i)
      x[std::size_t(i * d + i % 4)] += 5.0f; // four blobs
    const QString file = m_dir.filePath("trust.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    const QString map = m_dir.filePath("trust-map.npy"), trust = m_dir.filePath("trust-out.npy");
    const Run r = cli({"layout", file, "--epochs", "50", "--out", map, "--trust", trust,
                       "--trust-k", QString::number(k), "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const nearscape::Matrix<float> xy = nearscape::readNpyFloat(map.toStdString());
    const nearscape::Matrix<float> got = nearscape::readNpyFloat(trust.toStdString());
    QCOMPARE(got.rows(), std::int64_t(n));
    QCOMPARE(got.cols(), std::int64_t(1));
    auto nearest = [&](const float* points, int dim, int i) {
      std::vector<std::pair<double, int>> byDistance;
      for (int j = 0; j < n; ++j) {
        if (j == i)
          continue;
        double s = 0;
        for (int c = 0; c < dim; ++c) {
          const double diff = double(points[i * dim + c]) - double(points[j * dim + c]);
          s += diff * diff;
        }
        byDistance.push_back({s, j});
      }
      std::sort(byDistance.begin(), byDistance.end());
      std::vector<int> ids;
      for (int c = 0; c < k; ++c)
        ids.push_back(byDistance[std::size_t(c)].second);
      return ids;
    };
    double mean = 0;
    for (int i = 0; i < n; ++i) {
      const std::vector<int> a = nearest(x.data(), d, i), b = nearest(xy.data(), 2, i);
      int shared = 0;
      for (int id : a)
        shared += std::find(b.begin(), b.end(), id) != b.end();
      QCOMPARE(got.data()[i], float(shared) / k);
      mean += double(shared) / k / n;
    }
    const QJsonObject j = QJsonDocument::fromJson(r.out).object()["trust"].toObject();
    QCOMPARE(j["k"].toInt(), k);
    QVERIFY(std::abs(j["mean"].toDouble() - mean) < 1e-6); // the mean of float32 shares
    QVERIFY(mean > 0.3);                               // blobs keep much of their neighbourhoods
    QCOMPARE(j["truth"].toString(), QString("graph")); // the exact graph built for the map
  }

  void layoutTrustTakesAnExactStepGraph() {
    // Map trust's truth is the exact k-NN. A graph that STEP built exactly (low dimensions on
    // the CPU) is that truth, built by the layout or given as a graph file that says it is
    // exact; ids alone (.npy) say nothing of how they were found, so the truth is built for them
    // when --trust asks for every item's — and on the same graph (so the same map) the mean is
    // the same either way — and --json alone estimates the mean from a sample, within its error
    // bar of the whole.
    constexpr int n = 12000, d = 2;
    const QString file = m_dir.filePath("lt.npy"), graph = m_dir.filePath("lt.nsg"),
                  ids = m_dir.filePath("lt-ids.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(randomFloats(n * d, 41)))));
    const QStringList cpu = {"--backend", "cpu", "--threads", "1"};
    Run r = cli(QStringList{"knn", file, "--k", "10", "--out", graph, "--json"} + cpu);
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject built = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(built["run"].toObject()["method"].toString(), QString("STEP")); // the premise
    QVERIFY(built["exact"].toBool());
    QCOMPARE(cli(QStringList{"knn", file, "--k", "10", "--out", ids} + cpu).code, 0);
    const QString perItem = m_dir.filePath("lt-trust.npy");
    auto trustWith = [&](const QStringList& graphArgs) {
      const Run layout = cli(QStringList{"layout", file, "--k", "10", "--epochs", "5", "--json"} +
                             cpu + graphArgs);
      [&] { QVERIFY2(layout.code == 0, layout.err.constData()); }();
      return QJsonDocument::fromJson(layout.out).object()["trust"].toObject();
    };
    const QJsonObject here = trustWith({}), fromFile = trustWith({"--graph", graph}),
                      fromIds = trustWith({"--graph", ids, "--trust", perItem}),
                      estimated = trustWith({"--graph", ids});
    QCOMPARE(here["truth"].toString(), QString("graph"));
    QCOMPARE(fromFile["truth"].toString(), QString("graph"));
    QCOMPARE(fromIds["truth"].toString(), QString("built"));
    QCOMPARE(estimated["truth"].toString(), QString("sample"));
    QCOMPARE(fromIds["standard_error"].toDouble(), 0.0); // every item checked
    QCOMPARE(fromIds["sampled"].toInt(), n);
    QCOMPARE(nearscape::readNpyFloat(perItem.toStdString()).rows(), std::int64_t(n));
    // One graph (STEP's, built here or read back; the ids with their distances recomputed
    // exactly), so one map: the truth reused and the truth built give the same trust.
    QCOMPARE(here["mean"].toDouble(), fromFile["mean"].toDouble());
    QCOMPARE(fromFile["mean"].toDouble(), fromIds["mean"].toDouble());
    QVERIFY(fromFile["mean"].toDouble() > 0.05); // a random map keeps about 10 / 12000
    // The sample's estimate: 2,000 items by default, its 95% interval around the whole mean.
    const double whole = fromIds["mean"].toDouble(), error = estimated["standard_error"].toDouble();
    const QJsonArray ci = estimated["ci95"].toArray();
    QCOMPARE(estimated["sampled"].toInt(), 2000);
    QVERIFY(error > 0 && error < 0.02);
    QVERIFY2(
        ci[0].toDouble() <= whole && whole <= ci[1].toDouble(),
        qPrintable(
            QString("%1 outside [%2, %3]").arg(whole).arg(ci[0].toDouble()).arg(ci[1].toDouble())));
  }

  /// Exact k nearest other rows of row i (float64 brute force): (distance, id), nearest first.
  static std::vector<std::pair<double, int>> bruteNeighbours(const std::vector<float>& x, int n,
                                                             int d, int i, int k) {
    std::vector<std::pair<double, int>> all;
    for (int j = 0; j < n; ++j) {
      if (j == i)
        continue;
      double s = 0;
      for (int c = 0; c < d; ++c) {
        const double diff = double(x[std::size_t(i * d + c)]) - double(x[std::size_t(j * d + c)]);
        s += diff * diff;
      }
      all.push_back({std::sqrt(s), j});
    }
    std::sort(all.begin(), all.end());
    all.resize(std::size_t(k));
    return all;
  }

  void outliersScoreAgainstAReference() {
    // Blobs plus three planted far items; LOF and the k-th distance against a float64 reference.
    constexpr int n = 203, d = 4, k = 5;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 31);
    for (int i = 0; i < 200; ++i)
      x[std::size_t(i * d + i % 2)] += 6.0f;
    for (int i = 200; i < n; ++i)
      x[std::size_t(i * d + (i - 200))] += 40.0f;
    const QString file = m_dir.filePath("outliers.npy"), scores = m_dir.filePath("lof.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    Run r = cli({"outliers", file, "--k", QString::number(k), "--top", "3", "--out", scores,
                 "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QSet<int> top;
    for (const QJsonValue v : QJsonDocument::fromJson(r.out).object()["top"].toArray())
      top.insert(v.toObject()["id"].toInt());
    QCOMPARE(top, (QSet<int>{200, 201, 202}));

    std::vector<std::vector<std::pair<double, int>>> nn;
    for (int i = 0; i < n; ++i)
      nn.push_back(bruteNeighbours(x, n, d, i, k));
    std::vector<double> lrd(n);
    for (int p = 0; p < n; ++p) {
      double reach = 0;
      for (const auto& [dist, o] : nn[std::size_t(p)])
        reach += std::max(nn[std::size_t(o)].back().first, dist);
      lrd[std::size_t(p)] = 1.0 / (reach / k + 1e-10);
    }
    const nearscape::Matrix<float> lof = nearscape::readNpyFloat(scores.toStdString());
    QCOMPARE(lof.rows(), std::int64_t(n));
    for (int p = 0; p < n; ++p) {
      double sum = 0;
      for (const auto& [dist, o] : nn[std::size_t(p)])
        sum += lrd[std::size_t(o)];
      const double expected = sum / k / lrd[std::size_t(p)];
      QVERIFY2(std::abs(lof.data()[p] - expected) <= 1e-4 * expected,
               qPrintable(QString("item %1: %2 vs %3").arg(p).arg(lof.data()[p]).arg(expected)));
    }
    r = cli({"outliers", file, "--k", QString::number(k), "--score", "kth", "--out", scores,
             "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const nearscape::Matrix<float> kth = nearscape::readNpyFloat(scores.toStdString());
    for (int p = 0; p < n; ++p)
      QVERIFY(std::abs(kth.data()[p] - nn[std::size_t(p)].back().first) <=
              1e-5 * nn[std::size_t(p)].back().first);
    QCOMPARE(cli({"outliers", file, "--score", "median"}).code, 2);
  }

  void outliersCountRepeatedRowsOnce() {
    // 200 blob rows, 30 copies of row 3 (a group larger than k) and a planted far row: LOF with
    // k-distinct distances puts the far row first, every score finite (issue 42).
    constexpr int d = 4, k = 5;
    std::vector<float> x = randomFloats(std::size_t(200) * d, 32);
    for (int c = 0; c < 30; ++c)
      x.insert(x.end(), x.begin() + 3 * d, x.begin() + 4 * d);
    x.insert(x.end(), {30.0f, 0.0f, 0.0f, 0.0f});
    const int n = int(x.size()) / d;
    const QString file = m_dir.filePath("repeated.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    const Run r = cli(
        {"outliers", file, "--k", QString::number(k), "--top", "3", "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["distinct_rows"].toInt(), 201);
    const QJsonArray top = j["top"].toArray();
    QCOMPARE(top.first().toObject()["id"].toInt(), n - 1);
    for (const QJsonValue v : top)
      QVERIFY(v.toObject()["score"].toDouble() < 100);
  }

  void neighboursSayWhichTheMapPlacesFar() {
    // An item's exact neighbours (float64 brute force), their map ranks on a random map (brute
    // force) and the far-in-map flags: a map rank beyond the limit the command reports.
    constexpr int n = 300, d = 4, k = 10, item = 5;
    const std::vector<float> x = randomFloats(std::size_t(n) * d, 33);
    const std::vector<float> map = randomFloats(std::size_t(n) * 2, 34);
    const QString file = m_dir.filePath("nb.npy"), mapFile = m_dir.filePath("nb-map.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    QVERIFY(writeBytes(mapFile, npyBytes("<f4", {n, 2}, rawBytes(map))));
    const Run r = cli({"neighbours", file, "--item", QString::number(item), "--k",
                       QString::number(k), "--map", mapFile, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    const auto want = bruteNeighbours(x, n, d, item, k);
    const QJsonArray got = j["neighbours"].toArray();
    QCOMPARE(got.size(), k);
    const qint64 limit = j["far_in_map_rank_limit"].toInteger();
    QVERIFY(limit >= k - 1);
    int far = 0;
    for (int c = 0; c < k; ++c) {
      const QJsonObject e = got[c].toObject();
      QCOMPARE(e["id"].toInt(), want[std::size_t(c)].second);
      const int id = e["id"].toInt();
      auto d2 = [&](int a, int b) {
        const double dx = map[std::size_t(2 * a)] - map[std::size_t(2 * b)];
        const double dy = map[std::size_t(2 * a + 1)] - map[std::size_t(2 * b + 1)];
        return dx * dx + dy * dy;
      };
      qint64 nearer = 0;
      for (int o = 0; o < n; ++o)
        nearer += o != item && d2(item, o) < d2(item, id) ? 1 : 0;
      QCOMPARE(e["map_rank"].toInteger(), nearer);
      QCOMPARE(e["far_in_map"].toBool(), nearer > limit);
      far += nearer > limit ? 1 : 0;
    }
    QCOMPARE(j["far_in_map"].toInt(), far);
    QVERIFY2(far < k / 2, qPrintable(QString::number(far))); // a minority, even on a random map
    QCOMPARE(cli({"neighbours", file, "--item", QString::number(n)}).code, 2);
  }

  void duplicatesFindEveryPair() {
    // Planted copies among random rows: every pair within the threshold (float64 brute force),
    // the groups' TSV with the metadata, the keep-list, and --quantile's threshold.
    constexpr int n = 300, d = 5;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 51);
    auto copyRow = [&](int from, int to, float jitter) {
      for (int c = 0; c < d; ++c)
        x[std::size_t(to * d + c)] = x[std::size_t(from * d + c)] + jitter * float(c % 2);
    };
    copyRow(3, 150, 0.0f);
    copyRow(3, 299, 0.001f);
    copyRow(20, 21, 0.002f);
    const QString file = m_dir.filePath("dups.npy"), groups = m_dir.filePath("groups.tsv"),
                  keep = m_dir.filePath("keep.txt"), pairs = m_dir.filePath("pairs.tsv");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    QByteArray meta = "label\tcaption\n";
    for (int i = 0; i < n; ++i)
      meta += (i % 2 ? "odd\titem " : "even\titem ") + QByteArray::number(i) + "\n";
    QVERIFY(writeBytes(m_dir.filePath("dups.meta.tsv"), meta));
    auto distance = [&](int a, int b) {
      double s = 0;
      for (int c = 0; c < d; ++c)
        s += std::pow(double(x[std::size_t(a * d + c)]) - x[std::size_t(b * d + c)], 2);
      return std::sqrt(s);
    };
    const double t = 0.05;
    Run r = cli({"duplicates", file, "--threshold", QString::number(t), "--out", groups, "--keep",
                 keep, "--pairs", pairs, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QSet<QPair<int, int>> want;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (distance(a, b) <= t)
          want.insert({a, b});
    QCOMPARE(want.size(), 4); // 3–150, 3–299, 150–299, 20–21
    QSet<QPair<int, int>> got;
    const QList<QByteArray> pairLines = readBytes(pairs).trimmed().split('\n');
    QCOMPARE(pairLines.front(), QByteArray("a\tb\tdistance"));
    for (qsizetype l = 1; l < pairLines.size(); ++l) {
      const QList<QByteArray> f = pairLines[l].split('\t');
      got.insert({f[0].toInt(), f[1].toInt()});
      QVERIFY(std::abs(f[2].toDouble() - distance(f[0].toInt(), f[1].toInt())) < 1e-12);
    }
    QCOMPARE(got, want);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["pairs"].toInt(), 4);
    QCOMPARE(j["groups"].toInt(), 2);
    QCOMPARE(j["items_in_groups"].toInt(), 5);
    QCOMPARE(QString::fromUtf8(readBytes(groups)),
             QString("group\tid\tlabel\tcaption\n0\t3\todd\titem 3\n0\t150\teven\titem 150\n"
                     "0\t299\todd\titem 299\n1\t20\teven\titem 20\n1\t21\todd\titem 21\n"));
    const QList<QByteArray> kept = readBytes(keep).trimmed().split('\n');
    QCOMPARE(kept.size(), n - 3);
    QVERIFY(!kept.contains("150") && !kept.contains("299") && !kept.contains("21"));
    QVERIFY(kept.contains("3") && kept.contains("20"));

    // --quantile 0: the smallest nearest-other distance, here the exact copy at 0.
    r = cli({"duplicates", file, "--quantile", "0", "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["threshold"].toDouble(), 0.0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["pairs"].toInt(), 1);

    // Bad requests: both or neither threshold, a quantile beyond 1; nothing written.
    QFile::remove(groups);
    QCOMPARE(cli({"duplicates", file, "--out", groups}).code, 2);
    QCOMPARE(
        cli({"duplicates", file, "--threshold", "1", "--quantile", "0.1", "--out", groups}).code,
        2);
    QCOMPARE(cli({"duplicates", file, "--quantile", "1.5", "--out", groups}).code, 2);
    QCOMPARE(cli({"duplicates", file, "--threshold", "-1", "--out", groups}).code, 2);
    QVERIFY(!QFile::exists(groups));
    // The output may not replace the data.
    QCOMPARE(cli({"duplicates", file, "--threshold", "1", "--out", file}).code, 2);
    QVERIFY(readBytes(file) == npyBytes("<f4", {n, d}, rawBytes(x)));
  }

  void compareTwoEmbeddings() {
    constexpr int n = 150, d = 6, k = 7;
    const std::vector<float> a = randomFloats(std::size_t(n) * d, 41);
    std::vector<float> same(a.size()), other = randomFloats(std::size_t(n) * 3, 42);
    for (int i = 0; i < n; ++i) // coordinates permuted and scaled: the same neighbourhoods
      for (int c = 0; c < d; ++c)
        same[std::size_t(i * d + c)] = 3.0f * a[std::size_t(i * d + (c + 2) % d)];
    const QString fa = m_dir.filePath("emb-a.npy"), fs = m_dir.filePath("emb-same.npy"),
                  fo = m_dir.filePath("emb-other.npy"), out = m_dir.filePath("overlap.npy");
    QVERIFY(writeBytes(fa, npyBytes("<f4", {n, d}, rawBytes(a))));
    QVERIFY(writeBytes(fs, npyBytes("<f4", {n, d}, rawBytes(same))));
    QVERIFY(writeBytes(fo, npyBytes("<f4", {n, 3}, rawBytes(other))));
    Run r = cli({"compare", fa, fs, "--k", QString::number(k), "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["mean_overlap"].toDouble(), 1.0);
    QCOMPARE(j["histogram"].toArray()[k].toInt(), n);

    r = cli(
        {"compare", fa, fo, "--k", QString::number(k), "--out", out, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const nearscape::Matrix<float> got = nearscape::readNpyFloat(out.toStdString());
    double mean = 0;
    for (int i = 0; i < n; ++i) {
      QSet<int> x, y;
      for (const auto& [dist, id] : bruteNeighbours(a, n, d, i, k))
        x.insert(id);
      for (const auto& [dist, id] : bruteNeighbours(other, n, 3, i, k))
        y.insert(id);
      const float expected = float(x.intersect(y).size()) / k;
      QCOMPARE(got.data()[i], expected);
      mean += expected / n;
    }
    j = QJsonDocument::fromJson(r.out).object();
    QVERIFY(std::abs(j["mean_overlap"].toDouble() - mean) < 1e-6);
    QVERIFY(j["mean_overlap"].toDouble() < 0.5); // unrelated spaces share little
    // Each space's own map: its exact k-NN graph laid out by the explore pipeline.
    const QString mapA = m_dir.filePath("map-a.npy"), mapB = m_dir.filePath("map-b.npy");
    r = cli({"compare", fa, fo, "--k", QString::number(k), "--map-a", mapA, "--map-b", mapB,
             "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    for (const auto& [path, data, dim] :
         {std::tuple{mapA, &a, d},
          std::tuple{mapB, static_cast<const std::vector<float>*>(&other), 3}}) {
      const nearscape::MatrixView<float> x{data->data(), n, dim};
      const nearscape::KnnResult graph =
          nearscape::knnGraph(x, k, nearscape::Metric::L2, nearscape::Context{});
      nearscape::ExploreParams params;
      params.k = k;
      params.neighbours = false;
      params.forest = false;
      params.layout.dim = 2;
      nearscape::ExploreStages given;
      given.graph = [&graph](const nearscape::Exploration&) {
        return std::optional<nearscape::KnnResult>(graph);
      };
      const nearscape::Exploration expected =
          nearscape::explore(x, params, nearscape::Context{}, nearscape::noJobControl(), given);
      const nearscape::Matrix<float> map = nearscape::readNpyFloat(path.toStdString());
      QCOMPARE(map.rows(), std::int64_t(n));
      QCOMPARE(map.cols(), std::int64_t(2));
      QVERIFY(std::equal(map.data(), map.data() + map.rows() * map.cols(), expected.map.data()));
    }
    QVERIFY(r.out.contains("wrote " + mapB.toUtf8()));
    // Different item counts are refused, naming both files.
    const QString shorter = m_dir.filePath("emb-short.npy");
    QVERIFY(writeBytes(shorter, npyBytes("<f4", {n - 1, d},
                                         rawBytes(std::vector<float>(a.begin(), a.end() - d)))));
    r = cli({"compare", fa, shorter});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("emb-short.npy"), r.err.constData());
    // An Inf in B: the message names B, never A.
    std::vector<float> bad = a;
    bad[std::size_t(7 * d + 1)] = INFINITY;
    const QString infinite = m_dir.filePath("emb-inf.npy");
    QVERIFY(writeBytes(infinite, npyBytes("<f4", {n, d}, rawBytes(bad))));
    r = cli({"compare", fa, infinite, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("emb-inf.npy: the data holds 1 NaN/Inf") &&
                 !r.err.contains(QFileInfo(fa).fileName().toUtf8()),
             r.err.constData());
  }

  void memoryBudgetHoldsIdxData() {
    // --memory-budget holds what a file's header makes the reader allocate: 100 items of 28 × 28
    // take 314 KB as float32 (and 78 KB of thumbnails).
    const QString file = m_dir.filePath("budget-images-idx3-ubyte.gz");
    QVERIFY(writeGzip(file, idxBytes(0x08, {100, 28, 28}, QByteArray(100 * 784, '\x03'))));
    Run r = cli({"info", file, "--memory-budget", "300K", "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("more than the memory budget"), r.err.constData());
    r = cli({"info", file, "--memory-budget", "1M", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
  }

  void nonFiniteDataIsNamed() {
    auto values = randomFloats(50 * 8, 1);
    values[3 * 8 + 5] = NAN;
    const QString file = m_dir.filePath("nan-knn.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {50, 8}, rawBytes(values))));
    const Run r = cli({"knn", file, "--k", "3", "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(file.toUtf8() +
                            ": the data holds 1 NaN/Inf value(s); the first at row 4, column 6"),
             r.err.constData());
    for (float& v : values)
      v = std::isfinite(v) ? v * 1e30f : 1.0f;
    QVERIFY(writeBytes(file, npyBytes("<f4", {50, 8}, rawBytes(values))));
    const Run big =
        cli({"layout", file, "--k", "3", "--backend", "cpu", "--out", m_dir.filePath("big.npy")});
    QCOMPARE(big.code, 2); // was: an all-NaN map with exit 0
    QVERIFY2(big.err.contains("overflow"), big.err.constData());
    QVERIFY(!QFile::exists(m_dir.filePath("big.npy")));
  }

  void findMatchesIdsAndMetadata() {
    const QString file = m_dir.filePath("find.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {4, 2}, rawBytes(randomFloats(8, 3)))));
    QVERIFY(writeBytes(m_dir.filePath("find.meta.tsv"),
                       "label\ttitle\ncat\tTabby\ndog\tHound\ncat\tKitten\nbird\tcat\x1b[31m\n"));
    Run r = cli({"find", file, "CAT", "--json"});
    QCOMPARE(r.code, 0);
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["count"].toInt(), 3);
    QCOMPARE(j["items"].toArray()[2].toObject()["id"].toInt(), 3);
    QVERIFY(!r.out.contains('\x1b')); // untrusted text printed as visible escapes
    r = cli({"find", file, "^d", "--regex"});
    QCOMPARE(r.code, 0);
    // The title column is named on the first line and printed beside each id.
    QVERIFY2(r.out.startsWith("1 of 4 items match (title column: title, named)\n1\tHound\tdog\n"),
             r.out.constData());
    r = cli({"find", file, "cat", "--title-column", "label", "--json"});
    QCOMPARE(r.code, 0);
    j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["title_column"].toString(), QString("label"));
    QCOMPARE(j["title_reason"].toString(), QString("chosen"));
    QCOMPARE(j["items"].toArray()[0].toObject()["title"].toString(), QString("cat"));
    r = cli({"find", file, "cat", "--title-column", "", "--json"});
    QVERIFY(QJsonDocument::fromJson(r.out).object()["title_column"].isNull());
    r = cli({"find", file, "cat", "--title-column", "nope"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no metadata column 'nope' for --title-column (columns: label, title)"),
             r.err.constData());
    QCOMPARE(cli({"find", file, "(", "--regex"}).code, 2); // see findRegexIsLinearTimeAndStops
    // info describes each column as "colour by" reads it.
    r = cli({"info", file, "--json"});
    const QJsonArray columns = QJsonDocument::fromJson(r.out).object()["columns"].toArray();
    QCOMPARE(columns.size(), 2);
    QCOMPARE(columns[0].toObject()["kind"].toString(), QString("categorical"));
    QCOMPARE(columns[0].toObject()["distinct"].toInt(), 3);
  }

  void cacheReportsAndClears() {
    QTemporaryDir folder;
    qputenv("NEARSCAPE_ARTEFACT_CACHE", folder.path().toUtf8()); // inherited by the CLI
    const nearscape::ArtefactCache cache(folder.path().toStdString(),
                                         nearscape::ArtefactCache::kDefaultMaxBytes);
    nearscape::Dataset ds;
    ds.vectors = nearscape::Matrix<float>(randomFloats(20, 1), 10, 2);
    ds.contentHash = nearscape::contentHash(ds.vectors.view());
    cache.storeMatrix(ds, "map2d", "p", ds.vectors.view());
    Run r = cli({"cache", "--json"});
    QCOMPARE(r.code, 0);
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["entries"].toInt(), 1);
    QCOMPARE(j["folder"].toString(), folder.path());
    r = cli({"cache", "--clear", "--json"});
    QCOMPARE(r.code, 0);
    QCOMPARE(cache.entries(), 0);
    qunsetenv("NEARSCAPE_ARTEFACT_CACHE");
  }

  void cacheClearGoesPastAFolderNamedLikeAnEntry() {
    // A folder named like an entry stopped `cache --clear` (exit 2, entries left): the entries
    // go, the folder (not the cache's) stays, and the command says so.
    QTemporaryDir folder;
    qputenv("NEARSCAPE_ARTEFACT_CACHE", folder.path().toUtf8()); // inherited by the CLI
    const nearscape::ArtefactCache cache(folder.path().toStdString(),
                                         nearscape::ArtefactCache::kDefaultMaxBytes);
    nearscape::Dataset ds;
    ds.vectors = nearscape::Matrix<float>(randomFloats(20, 2), 10, 2);
    ds.contentHash = nearscape::contentHash(ds.vectors.view());
    QVERIFY(QDir(folder.path()).mkpath("0-graph-0.nsgraph"));
    QVERIFY(writeBytes(folder.filePath("0-graph-0.nsgraph/notes.txt"), "mine"));
    for (const char* params : {"p", "q"})
      cache.storeMatrix(ds, "map2d", params, ds.vectors.view());
    QCOMPARE(cache.entries(), 2);
    const Run r = cli({"cache", "--clear"});
    qunsetenv("NEARSCAPE_ARTEFACT_CACHE");
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(cache.entries(), 0);
    QVERIFY2(r.err.contains("0-graph-0.nsgraph: a folder, not a cache entry"), r.err.constData());
    QVERIFY(QFile::exists(folder.filePath("0-graph-0.nsgraph/notes.txt")));
  }

  void threadsBeyondTheMachineAreRefusedNotAborted() {
    // --threads 1024 under an address-space limit: libgomp could not start the threads and
    // ended the program ("Thread creation failed"). Refused now (exit 2), naming the limit.
    if (nearscape::test::kAddressSanitizer)
      QSKIP("AddressSanitizer's shadow memory cannot start under an address-space limit");
    const QString file = m_dir.filePath("threads.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {400, 8}, rawBytes(randomFloats(400 * 8, 31)))));
    const QStringList knn = {"knn", file, "--k", "5", "--method", "nndescent", "--backend", "cpu"};
    Run r = cliUnder("ulimit -s 8192 && ulimit -v 2097152", knn + QStringList{"--threads", "1024"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--threads 1024 is more than this machine can run: at most"),
             r.err.constData());
    QVERIFY2(!r.err.contains("libgomp"), r.err.constData());
    // Stacks of 512 MB under 2 GB (the libraries' own threads take some): room for one more
    // stack in half of what is left. Two threads are refused, naming the address-space limit;
    // the default count is held to one and runs.
    const QString tight = "ulimit -s 524288 && ulimit -v 2097152";
    r = cliUnder(tight, knn + QStringList{"--threads", "2"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("address-space limit (ulimit -v) of 2048 MB"), r.err.constData());
    r = cliUnder(tight, knn);
    QVERIFY2(r.code == 0, r.err.constData());
  }

  void sweepMeasuresEfBelowKOnceAndSaysSo() {
    // ef = 1, 2, 5, 10 for k = 10 are one search (ef is raised to k, as in hnswlib and Faiss):
    // one row labelled ef = 10, and a note; no longer four "different" settings.
    const QString file = m_dir.filePath("sweep-ef.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {600, 6}, rawBytes(randomFloats(600 * 6, 41)))));
    const Run r = cli({"sweep", file, "--k", "10", "--holdout", "60", "--grid", "ef=1,2,5,10,32",
                       "--latency-queries", "0", "--timing-runs", "1", "--no-exact", "--json",
                       "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonArray rows = QJsonDocument::fromJson(r.out).object()["rows"].toArray();
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows[0].toObject()["params"].toObject()["ef"].toDouble(), 10.0);
    QCOMPARE(rows[1].toObject()["params"].toObject()["ef"].toDouble(), 32.0);
    QVERIFY2(r.err.contains("note: ef = 1, 2 and 5 are below k = 10"), r.err.constData());
  }

  void sweepSaysWhereItRanAndTimesEnough() {
    // Each row (and the exact reference) says where its timed passes searched, how many there
    // were and how long they took together: at least --timing-runs, until --min-timed-s.
    const QString file = m_dir.filePath("sweep-where.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {800, 6}, rawBytes(randomFloats(800 * 6, 45)))));
    const Run r =
        cli({"sweep", file, "--index", "ivf", "--k", "5", "--holdout", "80", "--grid", "nprobe=1,4",
             "--latency-queries", "0", "--min-timed-s", "0.05", "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    const QJsonObject exact = j["exact"].toObject();
    QVERIFY2(exact["where"].toString().startsWith("cpu, "), r.out.constData());
    QCOMPARE(exact["backend"].toString(), QString("cpu"));
    for (const QJsonValue& v : j["rows"].toArray() + QJsonValue(exact)) {
      const QJsonObject row = v.toObject();
      QVERIFY(row["passes"].toInt() >= 3);
      QVERIFY(row["timed_s"].toDouble() >= 0.05 || row["passes"].toInt() == 1000);
    }
    QCOMPARE(j["rows"].toArray()[0].toObject()["where"].toString(), QString("cpu, index search"));
    QCOMPARE(cli({"sweep", file, "--min-timed-s", "-1", "--backend", "cpu"}).code, 2);
  }

  void holdoutBeyondHalfTheDataIsRefused() {
    // --holdout 151 of 300 rows was silently 150: refused now, naming the limit; 150 is 150.
    const QString file = m_dir.filePath("holdout.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {300, 6}, rawBytes(randomFloats(300 * 6, 43)))));
    const QStringList sweep = {"sweep", file,     "--index",    "ivf",
                               "--k",   "5",      "--no-exact", "--latency-queries",
                               "0",     "--json", "--backend",  "cpu"};
    Run r = cli(sweep + QStringList{"--holdout", "151"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("more than half the data's 300 rows: at most 150"), r.err.constData());
    r = cli(sweep + QStringList{"--holdout", "150"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["queries"].toInt(), 150);
    r = cli(sweep); // none asked for: 1000, or half the data
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["queries"].toInt(), 150);
  }

  void aStraySidecarIsSkipped() {
    // A <stem>.meta.tsv of other data beside the file: the data still opens, with a warning.
    const QString file = m_dir.filePath("stray.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {20, 3}, rawBytes(randomFloats(60, 4)))));
    QVERIFY(writeBytes(m_dir.filePath("stray.meta.tsv"), QByteArray("a\n").repeated(25)));
    const Run r = cli({"knn", file, "--k", "3", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("warning") && r.err.contains("skipped") && r.err.contains("25 rows"),
             r.err.constData());
    QCOMPARE(cli({"info", file, "--meta", m_dir.filePath("stray.meta.tsv")}).code, 2); // asked for
  }

  void oneColumnHeaderIsHinted() {
    // One column means no header row (TensorBoard's rule), so a first line "Label" is item 0's
    // value, and the rows still match the items: the rule stands, a warning says so.
    const QString file = m_dir.filePath("one.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {6, 2}, rawBytes(randomFloats(12, 5)))));
    const QString meta = m_dir.filePath("one-labels.tsv");
    QVERIFY(writeBytes(meta, "Label\ncat\ndog\ncat\ndog\ncat\n"));
    Run r = cli({"info", file, "--meta", meta, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["rows"].toInt(), 6);
    QCOMPARE(j["label_counts"].toObject()["Label"].toInt(), 1); // the rule, unchanged
    const QJsonArray warnings = j["warnings"].toArray();
    QCOMPARE(warnings.size(), 1);
    const QString warning = warnings[0].toString();
    QVERIFY2(warning.contains("'Label'") && warning.contains("item 0") &&
                 warning.contains("one column") && warning.contains("second column") &&
                 warning.contains("remove the line") && warning.startsWith(meta),
             qPrintable(warning));
    QVERIFY2(r.err.contains("warning") && r.err.contains("'Label'"), r.err.constData());
    r = cli({"info", file, "--meta", meta, "--backend", "cpu"}); // text: on stderr
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("nearscape-cli: warning:") && r.err.contains("item 0's value"),
             r.err.constData());
    // A word above numbers reads as a header too; plain labels and a second column do not.
    QVERIFY(writeBytes(meta, "score\n1\n2.5\n\n-3\n4\n"));
    r = cli({"info", file, "--meta", meta, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["warnings"].toArray().size(), 1);
    for (const QByteArray& fine :
         {QByteArray("cat\ndog\ncat\ndog\ncat\ndog\n"),
          QByteArray("label\ncat\nlabel\ndog\ncat\ndog\n"), QByteArray("1\n2\n3\n4\n5\n6\n"),
          QByteArray("label\tscore\ncat\t1\ndog\t2\ncat\t3\n"
                     "dog\t4\ncat\t5\ndog\t6\n")}) {
      QVERIFY(writeBytes(meta, fine));
      r = cli({"info", file, "--meta", meta, "--json", "--backend", "cpu"});
      QCOMPARE(r.code, 0);
      QVERIFY2(QJsonDocument::fromJson(r.out).object()["warnings"].toArray().isEmpty(),
               fine.constData());
      QVERIFY2(!r.err.contains("warning"), r.err.constData());
    }
    // A header above one value per item: one row too many, and the error says why.
    QVERIFY(writeBytes(meta, "label\ncat\ndog\ncat\ndog\ncat\ndog\n"));
    r = cli({"info", file, "--meta", meta, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("7 rows") && r.err.contains("no header row") &&
                 r.err.contains("'label'") && r.err.contains("remove it"),
             r.err.constData());
  }

  void infoText() {
    const QString file = m_dir.filePath("t.tsv");
    QVERIFY(writeBytes(file, "1\t2\n3\t4\n"));
    const Run r = cli({"info", file});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("2 x 2"));
    QVERIFY(r.out.contains("content hash"));
  }

  void badInputExitsWithTwo() {
    const QString file = m_dir.filePath("bad.npy");
    QVERIFY(writeBytes(file, "garbage"));
    Run r = cli({"info", file});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("bad.npy"));
    QVERIFY(r.err.contains("magic"));
    r = cli({"info", m_dir.filePath("absent.npy")});
    QCOMPARE(r.code, 2);
    r = cli({"info", file, "--backend", "warp-drive"});
    QCOMPARE(r.code, 2);
    r = cli({"info", file, "--memory-budget", "lots"});
    QCOMPARE(r.code, 2);
  }

  void cudaAskedWithoutDeviceIsRefused() {
    // A desktop without a GPU (or a build without CUDA): auto runs on the CPU; asking for CUDA
    // fails (exit 1: the machine's limit, not bad input), names the reason and writes nothing.
    const nearscape::DeviceInfo device = nearscape::queryDevice(0);
    if (device.usable)
      QSKIP("a CUDA device is usable here");
    const QString file = m_dir.filePath("nocuda.npy"), out = m_dir.filePath("nocuda-out.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {40, 4}, rawBytes(randomFloats(40 * 4, 2)))));
    Run r = cli({"knn", file, "--k", "3", "--backend", "cuda", "--out", out});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(QByteArray::fromStdString(device.reason)), r.err.constData());
    QVERIFY(!QFile::exists(out));
    if (!device.compiledWithCuda)
      QVERIFY2(r.err.contains("built without CUDA"), r.err.constData());
    r = cli({"knn", file, "--k", "3", "--out", out, "--json"});
    QCOMPARE(r.code, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["backend"].toString(), QString("cpu"));
  }

  void outputsNeverOverwriteInputs() {
    const QString file = m_dir.filePath("keep.npy"), truth = m_dir.filePath("keep-truth.npy");
    const QByteArray data = npyBytes("<f4", {60, 4}, rawBytes(randomFloats(60 * 4, 5)));
    QVERIFY(writeBytes(file, data));
    QCOMPARE(cli({"knn", file, "--k", "3", "--out", truth, "--backend", "cpu"}).code, 0);
    const QByteArray truthBytes = readBytes(truth);
    QVERIFY(QFile::link(file, m_dir.filePath("keep-alias.npy")));
    const QList<QStringList> runs = {
        {"knn", file, "--k", "3", "--out", file},
        {"knn", file, "--k", "3", "--out", m_dir.filePath("keep-alias.npy")},
        {"knn", file, "--k", "3", "--out", m_dir.filePath("never.npy"), "--out-dist", truth,
         "--truth", truth},
        {"knn", file, "--k", "3", "--queries", truth, "--out", truth},
        {"layout", file, "--k", "3", "--out", file},
        {"sweep", file, "--index", "ivf", "--k", "3", "--holdout", "10", "--out", file},
        {"sweep", file, "--index", "ivf", "--k", "3", "--holdout", "10", "--save-index", file},
    };
    for (const QStringList& args : runs) {
      const Run r = cli(args + QStringList{"--backend", "cpu"});
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " → " + QString::number(r.code)));
      QVERIFY2(r.err.contains("refusing to overwrite"), r.err.constData());
    }
    QCOMPARE(readBytes(file), data);
    QCOMPARE(readBytes(truth), truthBytes);
    QVERIFY(!QFile::exists(m_dir.filePath("never.npy")));
  }

  void outputsAreAllOrNothing() {
    const QString file = m_dir.filePath("both.npy"), ids = m_dir.filePath("both-ids.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {60, 4}, rawBytes(randomFloats(60 * 4, 6)))));
    // A missing folder for the second output: refused before any work, the first not written.
    Run r = cli({"knn", file, "--k", "3", "--out", ids, "--out-dist",
                 m_dir.filePath("missing/d.npy"), "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("does not exist"), r.err.constData());
    QVERIFY(!QFile::exists(ids));
    // A full disk for the second output: exit 1 with the system's reason; the first not written.
    r = cli({"knn", file, "--k", "3", "--out", ids, "--out-dist", "/dev/full", "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("No space left on device"), r.err.constData());
    QVERIFY(!QFile::exists(ids));
    // /dev/null takes output and stays a device; ids.NPY (any case) is still .npy.
    r = cli({"knn", file, "--k", "3", "--out", m_dir.filePath("upper.NPY"), "--out-dist",
             "/dev/null", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    QVERIFY(readBytes(m_dir.filePath("upper.NPY")).startsWith("\x93NUMPY"));
    QVERIFY(QFileInfo("/dev/null").exists() && !QFileInfo("/dev/null").isFile());
  }

  void failedWritesLoseNothing() {
    QTemporaryDir dir;
    const QString file = dir.filePath("data.npy"), ids = dir.filePath("ids.npy"),
                  dist = dir.filePath("dist.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {300, 4}, rawBytes(randomFloats(300 * 4, 8)))));
    QVERIFY(writeBytes(ids, "the ids of an earlier run"));
    QVERIFY(writeBytes(dist, "the distances of an earlier run"));
    const QStringList knn = {"knn", file,         "--k", "5",         "--out",
                             ids,   "--out-dist", dist,  "--backend", "cpu"};
    auto unchanged = [&] {
      return readBytes(ids) == "the ids of an earlier run" &&
             readBytes(dist) == "the distances of an earlier run" &&
             QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size() == 3; // no leftovers
    };
    // A full disk, a read-only folder: exit 1 with the system's reason, the old files kept.
    Run r = cli(knn, "enospc:1");
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("No space left on device"), r.err.constData());
    QVERIFY(unchanged());
    r = cli(knn, "erofs:2");
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("Read-only file system"), r.err.constData());
    QVERIFY(unchanged());
    // The second output's rename fails after the first landed: the first is put back.
    r = cli(knn, "rename:2");
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("cannot rename"), r.err.constData());
    QVERIFY(unchanged());
    // Killed (kill -9) in the middle of writing: the old file stays whole.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("NEARSCAPE_FAULT_WRITE", "stall:1");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), knn);
    QTRY_VERIFY_WITH_TIMEOUT(
        !QDir(dir.path()).entryList({".ids.npy.tmp-*"}, QDir::Files | QDir::Hidden).isEmpty(),
        30000);
    p.kill();
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(readBytes(ids), QByteArray("the ids of an earlier run"));
    QCOMPARE(readBytes(dist), QByteArray("the distances of an earlier run"));
    // And with no fault, both land, and the killed run's temporary file is cleared away.
    QCOMPARE(cli(knn).code, 0);
    QVERIFY(readBytes(ids).startsWith("\x93NUMPY") && readBytes(dist).startsWith("\x93NUMPY"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 3);
  }

  void standardOutputWriteErrorsFail() {
    // /dev/full as standard output: exit 1 with the reason, not a silent exit 0.
    const QString file = m_dir.filePath("stdout.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {40, 4}, rawBytes(randomFloats(40 * 4, 5)))));
    QProcess p;
    p.setStandardOutputFile(QStringLiteral("/dev/full"));
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"info", file, "--json", "--backend", "cpu"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 1);
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(err.contains("cannot write standard output: No space left on device"),
             err.constData());
    // A file that stops growing (a full disk: here a file-size limit) half-way through a long
    // listing: exit 1 too.
    std::vector<float> copies(4000 * 4);
    for (std::size_t i = 0; i < copies.size(); ++i)
      copies[i] = float((i / 4) % 10); // 10 groups of 400 identical rows: long id lists
    const QString dup = m_dir.filePath("copies.npy"), listing = m_dir.filePath("listing.json");
    QVERIFY(writeBytes(dup, npyBytes("<f4", {4000, 4}, rawBytes(copies))));
    QProcess sh;
    sh.start("/bin/sh", {"-c",
                         "trap '' XFSZ; ulimit -f 8; exec \"$0\" duplicates \"$1\" "
                         "--threshold 0 --json --backend cpu > \"$2\"",
                         QStringLiteral(NEARSCAPE_CLI_PATH), dup, listing});
    QVERIFY(sh.waitForFinished(60000));
    const QByteArray shErr = sh.readAllStandardError();
    QVERIFY2(QFileInfo(listing).size() >= 4096, "the listing is too short to test a cut");
    QCOMPARE(sh.exitCode(), 1);
    QVERIFY2(shErr.contains("cannot write standard output: File too large"), shErr.constData());
  }

  void inputRewrittenDuringARunIsReported_data() {
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<bool>("sameSize");
    const QStringList cpu = {"--backend", "cpu"};
    // Smaller (numpy.save truncates, then writes: the mapped pages past the new end vanish, a
    // SIGBUS before) and the same size (new values under the mapping, no signal at all).
    for (const bool sameSize : {false, true}) {
      const char* how = sameSize ? "same size" : "smaller";
      QTest::addRow("knn, %s", how) << (QStringList{"knn", "--k", "5", "--out"} + cpu) << sameSize;
      QTest::addRow("layout, %s", how)
          << (QStringList{"layout", "--k", "5", "--epochs", "5", "--out"} + cpu) << sameSize;
      QTest::addRow("duplicates, %s", how)
          << (QStringList{"duplicates", "--threshold", "0.5", "--out"} + cpu) << sameSize;
    }
  }

  void inputRewrittenDuringARunIsReported() {
    // Another program rewrites the data in place while the command runs: exit 1 naming the file,
    // no signal, nothing written. The CLI's test hook stops it after the read until stdin closes.
    QFETCH(QStringList, command);
    QFETCH(bool, sameSize);
    const QString file = m_dir.filePath("rewritten.npy"), out = m_dir.filePath("rewritten-out.npy");
    const std::int64_t rows = 3000, dim = 32; // 384 KB: many pages
    QVERIFY(writeBytes(file, npyBytes("<f4", {rows, dim}, rawBytes(randomFloats(rows * dim, 9)))));
    QFile::remove(out);
    QStringList args = command;
    args.insert(1, file);
    args.insert(args.indexOf("--out") + 1, out);
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("NEARSCAPE_TEST_PAUSE_AFTER_READ", "1");
    p.setProcessEnvironment(env);
    p.setReadChannel(QProcess::StandardError);
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), args);
    QByteArray err;
    while (!err.contains("paused after reading") && p.waitForReadyRead(60000))
      err += p.readAllStandardError();
    QVERIFY2(err.contains("paused after reading"), err.constData());
    const std::int64_t newRows = sameSize ? rows : 10;
    QVERIFY(writeBytes(file,
                       npyBytes("<f4", {newRows, dim}, rawBytes(randomFloats(newRows * dim, 10)))));
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    err += p.readAllStandardError();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit); // a signal (SIGBUS) before
    QVERIFY2(p.exitCode() == 1, err.constData());
    QVERIFY2(err.contains((file + " changed while it was being read").toUtf8()), err.constData());
    QVERIFY(!QFile::exists(out));
  }

  void userIdsAndCountsAreValidated() {
    const QString file = m_dir.filePath("ids.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {40, 4}, rawBytes(randomFloats(40 * 4, 7)))));
    const auto truthWith = [&](std::int64_t bad, const QString& name) {
      std::vector<std::int64_t> ids(40 * 3, 1);
      ids[5 * 3 + 2] = bad;
      const QString path = m_dir.filePath(name);
      writeBytes(path, npyBytes("<i8", {40, 3}, rawBytes(ids)));
      return path;
    };
    for (const std::int64_t bad : {std::int64_t(-1), std::int64_t(40), std::int64_t(1) << 32}) {
      const QString truth = truthWith(bad, QString("bad-truth-%1.npy").arg(bad));
      Run r = cli({"knn", file, "--k", "3", "--truth", truth, "--backend", "cpu"});
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.contains("row 6, column 3") && r.err.contains(QByteArray::number(qint64(bad))),
               r.err.constData());
      r = cli({"sweep", file, "--index", "ivf", "--k", "3", "--queries", file, "--truth", truth,
               "--backend", "cpu"});
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.contains("outside the base"), r.err.constData());
    }
    QCOMPARE(cli({"knn", file, "--k", "3", "--threads", "100000"}).code, 2);
    Run r = cli({"knn", file, "--k", "3", "--method", "nndescent", "--iters", "0"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--iters"), r.err.constData());
    // A grid whose product is huge is refused before it is built.
    QStringList values;
    for (int v = 1; v <= 200; ++v)
      values << QString::number(v);
    const QString list = values.join(',');
    r = cli({"sweep", file, "--index", "graph", "--grid", "ef=" + list, "--grid", "degree=" + list,
             "--grid", "entries=" + list, "--holdout", "10"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("search settings"), r.err.constData());
  }

  void extendAddsItemsByGgm() {
    // 1,200 items; a graph of the first 900, then the 300 new ones added by --extend.
    const int n = 1200, first = 900, d = 8;
    const std::vector<float> x = randomFloats(std::size_t(n) * d, 11);
    const QString all = m_dir.filePath("extend-all.npy"), head = m_dir.filePath("extend-head.npy");
    QVERIFY(writeBytes(all, npyBytes("<f4", {n, d}, rawBytes(x))));
    QVERIFY(
        writeBytes(head, npyBytes("<f4", {first, d},
                                  rawBytes(std::vector<float>(x.begin(), x.begin() + first * d)))));
    const QString old = m_dir.filePath("extend-old.graph"),
                  truth = m_dir.filePath("extend-truth.npy");
    QCOMPARE(cli({"knn", head, "--k", "10", "--out", old, "--backend", "cpu"}).code, 0);
    QCOMPARE(cli({"knn", all, "--k", "10", "--out", truth, "--backend", "cpu"}).code, 0);
    const QString grown = m_dir.filePath("extend-new.graph");
    Run r = cli({"knn", all, "--k", "10", "--method", "nndescent", "--extend", old, "--truth",
                 truth, "--out", grown, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["rows"].toInt(), n);
    QVERIFY2(j["device"].toString().contains("GGM"), qPrintable(j["device"].toString()));
    QVERIFY2(j["recall"].toDouble() >= 0.95, qPrintable(QString::number(j["recall"].toDouble())));
    QCOMPARE(j["method"].toString(), QString("nndescent+merge"));
    QVERIFY(!j["exact"].toBool());
    // --method exact: the new rows' own graph is exact, the merge is not: neither stdout, the
    // JSON nor the graph file may call the result exact.
    const QString merged = m_dir.filePath("extend-exact.graph");
    r = cli({"knn", all, "--k", "10", "--method", "exact", "--extend", old, "--out", merged,
             "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const QJsonObject e = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(e["method"].toString(), QString("exact+merge"));
    QVERIFY(e.contains("exact") && !e["exact"].toBool());
    const nearscape::GraphFile header = nearscape::readGraphFile(merged.toStdString());
    QVERIFY2(header.paramsJson.find("\"method\":\"exact+merge\"") != std::string::npos &&
                 header.paramsJson.find("\"exact\":false") != std::string::npos,
             header.paramsJson.c_str());
    r = cli({"knn", all, "--k", "10", "--method", "exact", "--extend", old, "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.startsWith("exact+merge kNN graph (approximate)"), r.out.constData());
    r = cli({"knn", head, "--k", "10", "--json", "--backend", "cpu"}); // a plain exact graph is
    QVERIFY(QJsonDocument::fromJson(r.out).object()["exact"].toBool());
    // A graph of other data (here: of the last 900 rows) is refused, as is one of another
    // dimension.
    const QString other = m_dir.filePath("extend-other.npy"),
                  otherGraph = m_dir.filePath("extend-other.graph");
    QVERIFY(
        writeBytes(other, npyBytes("<f4", {first, d},
                                   rawBytes(std::vector<float>(x.end() - first * d, x.end())))));
    QCOMPARE(cli({"knn", other, "--k", "10", "--out", otherGraph, "--backend", "cpu"}).code, 0);
    r = cli({"knn", all, "--k", "10", "--extend", otherGraph, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("other data"), r.err.constData());
    const QString wide = m_dir.filePath("extend-wide.npy"),
                  wideGraph = m_dir.filePath("extend-wide.graph");
    QVERIFY(writeBytes(wide,
                       npyBytes("<f4", {first, 2 * d}, rawBytes(randomFloats(first * 2 * d, 12)))));
    QCOMPARE(cli({"knn", wide, "--k", "10", "--out", wideGraph, "--backend", "cpu"}).code, 0);
    QCOMPARE(cli({"knn", all, "--k", "10", "--extend", wideGraph, "--backend", "cpu"}).code, 2);
    // The graph must cover fewer rows than the data, with at least two new ones.
    r = cli({"knn", head, "--k", "10", "--extend", truth, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("at least 2 more"), r.err.constData());
  }

  void sweepWritesRowsAndFront() {
    const QString file = m_dir.filePath("sweep.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {600, 6}, rawBytes(randomFloats(600 * 6, 4)))));
    const QString csv = m_dir.filePath("rows.csv");
    Run r = cli({"sweep", file, "--index", "ivf", "--k", "5", "--holdout", "60", "--build",
                 "nlist=16", "--grid", "nprobe=1,4,16", "--latency-queries", "5", "--out", csv,
                 "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["base_rows"].toInt(), 540);
    QCOMPARE(j["queries"].toInt(), 60);
    const QJsonArray rows = j["rows"].toArray();
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[2].toObject()["recall"].toDouble(), 1.0); // every list scanned: exhaustive
    QVERIFY(rows[2].toObject()["pareto"].toBool());
    QVERIFY(rows[2].toObject()["missed"].toArray().isEmpty());
    QCOMPARE(j["exact"].toObject()["recall"].toDouble(), 1.0); // the reference, same queries
    const QList<QByteArray> lines = readBytes(csv).trimmed().split('\n');
    QCOMPARE(lines.size(), 5); // three settings, then the exact search
    QCOMPARE(lines[0], QByteArray("run,index,k,build.iterations,build.kmeans_pp,build.nlist,nprobe,"
                                  "recall,qps,p50_ms,p99_ms,build_s,bytes,pareto,pareto_all"));
    QVERIFY2(lines[1].startsWith("1,ivf,5,10,0,16,1,"), lines[1].constData());
    QVERIFY2(lines[4].startsWith("0,exact,5,,,,,1,"), lines[4].constData());

    // Save, then load the same index: the same rows' recall; bad grid names and values refused.
    const QString saved = m_dir.filePath("graph.nsi");
    r = cli({"sweep", file, "--index", "graph", "--k", "5", "--holdout", "60", "--grid", "ef=8,32",
             "--save-index", saved, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    const double built = QJsonDocument::fromJson(r.out)
                             .object()["rows"]
                             .toArray()[1]
                             .toObject()["recall"]
                             .toDouble();
    r = cli({"sweep", file, "--index", "graph", "--k", "5", "--holdout", "60", "--grid", "ef=8,32",
             "--load-index", saved, "--json", "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out)
                 .object()["rows"]
                 .toArray()[1]
                 .toObject()["recall"]
                 .toDouble(),
             built);
    r = cli({"sweep", file, "--index", "graph", "--holdout", "60", "--load-index", saved, "--seed",
             "3", "--backend", "cpu"});
    QCOMPARE(r.code, 2); // another hold-out: another base, the index is refused
    QVERIFY(r.err.contains("other data"));
    r = cli({"sweep", file, "--grid", "eff=8", "--holdout", "60", "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("eff"));
    r = cli({"sweep", file, "--grid", "ef=lots", "--holdout", "60", "--backend", "cpu"});
    QCOMPARE(r.code, 2);
  }

  void sweepStudyOfSeveralRuns() {
    // Several builds in one command: every run over the same held-out queries, their rows and
    // the exact search's reference in one CSV and one JSON.
    const QString file = m_dir.filePath("study.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {700, 6}, rawBytes(randomFloats(700 * 6, 8)))));
    const QString csv = m_dir.filePath("study.csv");
    Run r = cli({"sweep", file, "--index", "graph", "--build", "degree=6,16", "--k", "5",
                 "--holdout", "60", "--grid", "ef=8,32", "--latency-queries", "5", "--out", csv,
                 "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QJsonArray runs = j["runs"].toArray();
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs[0].toObject()["build"].toObject()["degree"].toDouble(), 6.0);
    QCOMPARE(runs[1].toObject()["build"].toObject()["degree"].toDouble(), 16.0);
    QCOMPARE(runs[1].toObject()["label"].toString(), QString("graph build_k=32,degree=16"));
    for (const auto& run : runs) {
      QCOMPARE(run.toObject()["index"].toString(), QString("graph"));
      QCOMPARE(run.toObject()["rows"].toArray().size(), 2);
      QVERIFY(run.toObject()["rows"].toArray()[0].toObject().contains("pareto_all"));
    }
    QCOMPARE(j["rows"].toArray(), runs[0].toObject()["rows"].toArray()); // the first run on top
    const QJsonObject exact = j["exact"].toObject();
    QCOMPARE(exact["recall"].toDouble(), 1.0);
    QVERIFY(exact["qps"].toDouble() > 0 &&
            exact["p99_ms"].toDouble() >= exact["p50_ms"].toDouble());
    QList<QByteArray> lines = readBytes(csv).trimmed().split('\n');
    QCOMPARE(lines.size(), 6);
    QCOMPARE(lines[0], QByteArray("run,index,k,build.build_k,build.degree,ef,recall,qps,p50_ms,"
                                  "p99_ms,build_s,bytes,pareto,pareto_all"));
    QVERIFY(lines[1].startsWith("1,graph,5,32,6,8,") && lines[2].startsWith("1,graph,5,32,6,32,"));
    QVERIFY(lines[3].startsWith("2,graph,5,32,16,8,") &&
            lines[4].startsWith("2,graph,5,32,16,32,"));
    QVERIFY2(lines[5].startsWith("0,exact,5,,,,1,"), lines[5].constData());

    // Runs of two kinds: each --grid goes to the kinds that have its parameter; the text output
    // names the runs, the reference and the front of them all.
    r = cli({"sweep",
             file,
             "--run",
             "ivf:nlist=16",
             "--run",
             "graph:degree=8,build_k=16",
             "--k",
             "5",
             "--holdout",
             "60",
             "--grid",
             "nprobe=1,16",
             "--grid",
             "ef=8",
             "--latency-queries",
             "5",
             "--out",
             csv,
             "--backend",
             "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.out.contains("run 1: ivf index") && r.out.contains("run 2: graph index"));
    QVERIFY(r.out.contains("exact search (cpu"));
    QVERIFY(r.out.contains("Pareto front of every run and the exact search"));
    lines = readBytes(csv).trimmed().split('\n');
    QCOMPARE(lines.size(), 5);
    QCOMPARE(lines[0], QByteArray("run,index,k,build.build_k,build.degree,build.iterations,"
                                  "build.kmeans_pp,build.nlist,ef,nprobe,recall,qps,p50_ms,p99_ms,"
                                  "build_s,bytes,pareto,pareto_all"));
    QVERIFY2(lines[1].startsWith("1,ivf,5,,,10,0,16,,1,"), lines[1].constData());
    QVERIFY2(lines[2].startsWith("1,ivf,5,,,10,0,16,,16,1,"), lines[2].constData()); // all lists
    QVERIFY2(lines[3].startsWith("2,graph,5,16,8,,,,8,,"), lines[3].constData());
    QVERIFY(lines[4].startsWith("0,exact,"));

    // --no-exact leaves the reference out.
    r = cli({"sweep", file, "--build", "degree=6,16", "--k", "5", "--holdout", "60", "--grid",
             "ef=8", "--latency-queries", "5", "--no-exact", "--out", csv, "--json", "--backend",
             "cpu"});
    QCOMPARE(r.code, 0);
    QVERIFY(QJsonDocument::fromJson(r.out).object()["exact"].isNull());
    QCOMPARE(readBytes(csv).trimmed().split('\n').size(), 3);

    // What a study cannot be is refused before any work, with the reason.
    const QString index = m_dir.filePath("study.nsi");
    const QList<std::pair<QStringList, const char*>> refused = {
        {{"--run", "graph", "--build", "degree=8"}, "leave out --index and --build"},
        {{"--run", "graph", "--index", "ivf"}, "leave out --index and --build"},
        {{"--run", "bogus:x=1"}, "bogus"},
        {{"--run", "graph:degree=8,degree=9"}, "once"},
        {{"--build", "degree=6,16", "--save-index", index}, "one index"},
        {{"--run", "graph", "--run", "ivf", "--grid", "eff=1"}, "eff"},
        {{"--build", "degree=1,2,3,4,5,6,7,8", "--build", "build_k=1,2,3,4,5,6,7,8,9"}, "64"}};
    for (const auto& [args, says] : refused) {
      r = cli(QStringList{"sweep", file, "--holdout", "60", "--backend", "cpu"} + args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ')));
      QVERIFY2(r.err.contains(says), r.err.constData());
    }
    QVERIFY(!QFileInfo::exists(index));
  }

  // ---- Independent references for knn --queries, path and layout: plain float64 loops written
  // from the definitions (docs/design.md, Conventions), not the engine's distance code.

  /// The metric's distance in float64: l2 → Euclidean, cos → 1 − cos, ip → −⟨a, b⟩.
  static double distance64(const float* a, const float* b, int d, const QString& metric) {
    double dot = 0, na = 0, nb = 0, l2 = 0;
    for (int c = 0; c < d; ++c) {
      dot += double(a[c]) * double(b[c]);
      na += double(a[c]) * double(a[c]);
      nb += double(b[c]) * double(b[c]);
      l2 += (double(a[c]) - double(b[c])) * (double(a[c]) - double(b[c]));
    }
    if (metric == "cos")
      return 1.0 - dot / std::sqrt(na * nb);
    if (metric == "ip")
      return -dot;
    return std::sqrt(l2);
  }

  /// The k nearest rows of `base` to `query` (float64, ties by the smaller id), nearest first;
  /// `skip` is left out (the item itself in a graph).
  static std::vector<std::pair<double, int>> nearest64(const float* query,
                                                       const std::vector<float>& base, int n, int d,
                                                       int k, const QString& metric,
                                                       int skip = -1) {
    std::vector<std::pair<double, int>> all;
    for (int j = 0; j < n; ++j)
      if (j != skip)
        all.push_back({distance64(query, base.data() + std::size_t(j) * d, d, metric), j});
    std::sort(all.begin(), all.end());
    all.resize(std::size_t(k));
    return all;
  }

  /// The symmetrised kNN graph of `x` in float64: edge {i, j} when either is among the other's
  /// k nearest, weighted by their distance.
  static std::map<std::pair<int, int>, double> knnEdges64(const std::vector<float>& x, int n, int d,
                                                          int k, const QString& metric) {
    std::map<std::pair<int, int>, double> edges;
    for (int i = 0; i < n; ++i)
      for (const auto& [dist, j] : nearest64(x.data() + std::size_t(i) * d, x, n, d, k, metric, i))
        edges[{std::min(i, j), std::max(i, j)}] = dist;
    return edges;
  }

  /// The smallest possible largest step of a path from `a` to `b` over `edges`: Kruskal's order
  /// with a union-find, stopped when a and b join (the min-max path lies on the minimum spanning
  /// tree). NaN when they never join.
  static double minimaxBottleneck64(const std::map<std::pair<int, int>, double>& edges, int n,
                                    int a, int b) {
    std::vector<std::pair<double, std::pair<int, int>>> sorted;
    for (const auto& [e, w] : edges)
      sorted.push_back({w, e});
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> parent(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      parent[std::size_t(i)] = i;
    const auto find = [&](int v) {
      while (parent[std::size_t(v)] != v)
        v = parent[std::size_t(v)] = parent[std::size_t(parent[std::size_t(v)])];
      return v;
    };
    for (const auto& [w, e] : sorted) {
      parent[std::size_t(find(e.first))] = find(e.second);
      if (find(a) == find(b))
        return w;
    }
    return std::nan("");
  }

  /// Dijkstra over `edges` in float64: the least total weight from a to b.
  static double shortestTotal64(const std::map<std::pair<int, int>, double>& edges, int n, int a,
                                int b) {
    std::vector<std::vector<std::pair<int, double>>> adjacent(static_cast<std::size_t>(n));
    for (const auto& [e, w] : edges) {
      adjacent[std::size_t(e.first)].push_back({e.second, w});
      adjacent[std::size_t(e.second)].push_back({e.first, w});
    }
    std::vector<double> best(static_cast<std::size_t>(n), INFINITY);
    std::vector<bool> done(static_cast<std::size_t>(n), false);
    best[std::size_t(a)] = 0;
    for (int round = 0; round < n; ++round) {
      int u = -1;
      for (int v = 0; v < n; ++v)
        if (!done[std::size_t(v)] && (u < 0 || best[std::size_t(v)] < best[std::size_t(u)]))
          u = v;
      if (u < 0 || std::isinf(best[std::size_t(u)]))
        break;
      done[std::size_t(u)] = true;
      for (const auto& [v, w] : adjacent[std::size_t(u)])
        best[std::size_t(v)] = std::min(best[std::size_t(v)], best[std::size_t(u)] + w);
    }
    return best[std::size_t(b)];
  }

  /// Checks a path's JSON (`nodes`, `steps`, `bottleneck`, `bottleneck_step`, `total`) against
  /// `edges`: every step an edge of weight `steps[i]`, the bottleneck the largest step and the
  /// min-max of the graph, the total their sum. Returns "" or what is wrong.
  static QString checkMinimaxPath(const QJsonObject& j,
                                  const std::map<std::pair<int, int>, double>& edges, int n, int a,
                                  int b) {
    const QJsonArray nodes = j["path"].toArray(), steps = j["steps"].toArray();
    if (nodes.size() < 2 || nodes.first().toInt() != a || nodes.last().toInt() != b)
      return "the path does not run from " + QString::number(a) + " to " + QString::number(b);
    if (steps.size() != nodes.size() - 1)
      return "steps and nodes disagree";
    double largest = -INFINITY, total = 0;
    int largestAt = -1;
    QSet<int> seen;
    for (qsizetype i = 0; i + 1 < nodes.size(); ++i) {
      const int u = nodes[i].toInt(), v = nodes[i + 1].toInt();
      if (seen.contains(u))
        return "node " + QString::number(u) + " visited twice";
      seen.insert(u);
      const auto edge = edges.find({std::min(u, v), std::max(u, v)});
      if (edge == edges.end())
        return QString("step %1: %2–%3 is not an edge of the kNN graph").arg(i).arg(u).arg(v);
      if (std::abs(steps[i].toDouble() - edge->second) > 1e-5 * std::max(1.0, edge->second))
        return QString("step %1: weight %2, the distance is %3")
            .arg(i)
            .arg(steps[i].toDouble())
            .arg(edge->second);
      if (steps[i].toDouble() > largest) {
        largest = steps[i].toDouble();
        largestAt = int(i);
      }
      total += steps[i].toDouble();
    }
    if (j["bottleneck"].toDouble() != largest || j["bottleneck_step"].toInt() != largestAt)
      return "the bottleneck is not the largest step";
    if (std::abs(j["total"].toDouble() - total) > 1e-5 * std::max(1.0, total))
      return "the total is not the sum of the steps";
    const double best = minimaxBottleneck64(edges, n, a, b);
    if (std::abs(largest - best) > 1e-5 * std::max(1.0, best))
      return QString("bottleneck %1, the graph's min-max is %2").arg(largest).arg(best);
    return {};
  }

  void knnQueriesAndDistances_data() {
    QTest::addColumn<QString>("metric");
    QTest::newRow("l2") << "l2";
    QTest::newRow("cos") << "cos";
    QTest::newRow("ip") << "ip";
  }
  void knnQueriesAndDistances() {
    // knn --queries: each query's k nearest base rows and their distances, against float64.
    QFETCH(QString, metric);
    constexpr int n = 240, q = 37, d = 7, k = 6;
    const std::vector<float> base = randomFloats(std::size_t(n) * d, 61),
                             queries = randomFloats(std::size_t(q) * d, 62);
    const QString file = m_dir.filePath("kq-base.npy"), qfile = m_dir.filePath("kq-queries.npy"),
                  ids = m_dir.filePath("kq-ids-" + metric + ".npy"),
                  dist = m_dir.filePath("kq-dist-" + metric + ".npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(base))));
    QVERIFY(writeBytes(qfile, npyBytes("<f4", {q, d}, rawBytes(queries))));
    Run r = cli({"knn", file, "--queries", qfile, "--k", QString::number(k), "--metric", metric,
                 "--out", ids, "--out-dist", dist, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["mode"].toString(), QString("search"));
    QCOMPARE(j["rows"].toInt(), q);
    QCOMPARE(j["base_rows"].toInt(), n);
    QCOMPARE(j["metric"].toString(), metric);
    const nearscape::Matrix<std::int64_t> gotIds = nearscape::readNpyIds(ids.toStdString());
    const nearscape::Matrix<float> gotDist = nearscape::readNpyFloat(dist.toStdString());
    QCOMPARE(gotIds.rows(), std::int64_t(q));
    QCOMPARE(gotIds.cols(), std::int64_t(k));
    QCOMPARE(gotDist.rows(), std::int64_t(q));
    QCOMPARE(gotDist.cols(), std::int64_t(k));
    for (int i = 0; i < q; ++i) {
      const auto want = nearest64(queries.data() + std::size_t(i) * d, base, n, d, k, metric);
      for (int c = 0; c < k; ++c) {
        QVERIFY2(gotIds.row(i)[c] == want[std::size_t(c)].second,
                 qPrintable(QString("query %1, column %2: id %3, expected %4")
                                .arg(i)
                                .arg(c)
                                .arg(gotIds.row(i)[c])
                                .arg(want[std::size_t(c)].second)));
        const double expected = want[std::size_t(c)].first;
        QVERIFY2(std::abs(gotDist.row(i)[c] - expected) <= 1e-5 * std::max(1.0, std::abs(expected)),
                 qPrintable(QString("query %1, column %2: %3 vs %4")
                                .arg(i)
                                .arg(c)
                                .arg(gotDist.row(i)[c])
                                .arg(expected)));
      }
    }

    // The graph's --out-dist: each row's distances to its k nearest other rows.
    const QString graphDist = m_dir.filePath("kq-graph-dist-" + metric + ".npy");
    r = cli({"knn", file, "--k", QString::number(k), "--metric", metric, "--out-dist", graphDist,
             "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const nearscape::Matrix<float> rowsDist = nearscape::readNpyFloat(graphDist.toStdString());
    QCOMPARE(rowsDist.rows(), std::int64_t(n));
    QCOMPARE(rowsDist.cols(), std::int64_t(k));
    for (int i = 0; i < n; ++i) {
      const auto want = nearest64(base.data() + std::size_t(i) * d, base, n, d, k, metric, i);
      for (int c = 0; c < k; ++c)
        QVERIFY2(std::abs(rowsDist.row(i)[c] - want[std::size_t(c)].first) <=
                     1e-5 * std::max(1.0, std::abs(want[std::size_t(c)].first)),
                 qPrintable(QString("row %1, column %2").arg(i).arg(c)));
    }
  }

  void knnQueriesAreRefusedClearly() {
    // Queries of another dimension, NN-Descent or --extend with queries, k beyond the base:
    // exit 2 with the reason, no output written.
    const QString file = m_dir.filePath("kr-base.npy"), wide = m_dir.filePath("kr-wide.npy"),
                  out = m_dir.filePath("kr-out.npy"), dist = m_dir.filePath("kr-dist.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {30, 4}, rawBytes(randomFloats(120, 63)))));
    QVERIFY(writeBytes(wide, npyBytes("<f4", {5, 6}, rawBytes(randomFloats(30, 64)))));
    const QList<std::pair<QStringList, QByteArray>> refused = {
        {{"--queries", wide}, "dimension"},
        {{"--queries", file, "--method", "nndescent"}, "--method nndescent builds graphs"},
        {{"--queries", file, "--extend", out}, "--extend"},
        {{"--queries", file, "--k", "31"}, "k"},
        {{"--queries", file, "--metric", "manhattan"}, "unknown metric 'manhattan'"},
        {{"--method", "fastest"}, "--method must be exact, nndescent or auto"},
    };
    for (const auto& [args, says] : refused) {
      const Run r = cli(
          QStringList{"knn", file, "--out", out, "--out-dist", dist, "--backend", "cpu"} + args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " → " + QString::number(r.code)));
      QVERIFY2(r.err.contains(says), r.err.constData());
      QVERIFY(!QFile::exists(out) && !QFile::exists(dist));
    }
  }

  void knnByNnDescentOptions() {
    // --method nndescent with --iters and --sample: the iterations reported stay within --iters,
    // one update rate each, and the graph reaches the recall measured against --truth.
    constexpr int n = 800, d = 6, k = 8;
    const QString file = m_dir.filePath("kn.npy"), truth = m_dir.filePath("kn-truth.npy"),
                  graph = m_dir.filePath("kn.graph");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(randomFloats(n * d, 65)))));
    QCOMPARE(cli({"knn", file, "--k", QString::number(k), "--out", truth, "--backend", "cpu"}).code,
             0);
    Run r = cli({"knn", file, "--k", QString::number(k), "--method", "nndescent", "--iters", "2",
                 "--sample", "4", "--truth", truth, "--out", graph, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["method"].toString(), QString("nndescent"));
    QCOMPARE(j["iterations"].toInt(), 2); // far from converged after two
    QCOMPARE(j["update_rates"].toArray().size(), 2);
    const double early = j["recall"].toDouble();
    r = cli({"knn", file, "--k", QString::number(k), "--method", "nndescent", "--iters", "30",
             "--truth", truth, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    j = QJsonDocument::fromJson(r.out).object();
    const int iterations = j["iterations"].toInt();
    QVERIFY(iterations >= 2 && iterations <= 30);
    const double converged = j["recall"].toDouble();
    QVERIFY2(converged >= 0.97 && converged > early,
             qPrintable(QString("recall %1 after %2 iterations, %3 after 2 with 4 samples")
                            .arg(converged)
                            .arg(iterations)
                            .arg(early)));
    // Our graph file keeps its distances and how it was built.
    const nearscape::GraphFile g = nearscape::readGraphFile(graph.toStdString());
    QCOMPARE(g.ids.rows(), std::int64_t(n));
    QVERIFY2(QString::fromStdString(g.paramsJson).contains("\"iterations\":2"),
             g.paramsJson.c_str());
  }

  void pathIsTheMinMaxPath_data() {
    QTest::addColumn<QString>("metric");
    QTest::newRow("l2") << "l2";
    QTest::newRow("cos") << "cos";
  }
  void pathIsTheMinMaxPath() {
    // The path between far items of one blob of points: a path of the kNN graph whose largest
    // step is the graph's min-max (float64 Kruskal in the test), with the shortest path beside it.
    QFETCH(QString, metric);
    constexpr int n = 160, d = 4, k = 5, from = 3, to = 141;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 66);
    for (int i = 0; i < n; ++i)
      x[std::size_t(i) * d] += 2.0f; // away from the origin: cosine distances spread too
    const QString file = m_dir.filePath("path-" + metric + ".npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    QByteArray meta = "label\tcaption\n";
    for (int i = 0; i < n; ++i)
      meta += "kind" + QByteArray::number(i % 3) + "\titem " + QByteArray::number(i) + "\n";
    const QString metaFile = m_dir.filePath("path-labels-" + metric + ".tsv");
    QVERIFY(writeBytes(metaFile, meta));
    Run r = cli({"path", file, "--from", QString::number(from), "--to", QString::number(to), "--k",
                 QString::number(k), "--metric", metric, "--meta", metaFile, "--json", "--backend",
                 "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QVERIFY(j["found"].toBool());
    QCOMPARE(j["metric"].toString(), metric);
    const auto edges = knnEdges64(x, n, d, k, metric);
    const QString wrong = checkMinimaxPath(j, edges, n, from, to);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    QVERIFY(j["path"].toArray().size() > 2); // not one edge: a real walk
    const QJsonArray labels = j["labels"].toArray();
    QCOMPARE(labels.size(), j["path"].toArray().size());
    for (qsizetype i = 0; i < labels.size(); ++i)
      QCOMPARE(labels[i].toString(), "kind" + QString::number(j["path"].toArray()[i].toInt() % 3));
    // The shortest path: the least total weight (Dijkstra in the test), never a smaller
    // bottleneck than the min-max path's.
    const QJsonObject shortest = j["shortest"].toObject();
    const double least = shortestTotal64(edges, n, from, to);
    QVERIFY2(std::abs(shortest["total"].toDouble() - least) <= 1e-5 * least,
             qPrintable(QString("%1 vs %2").arg(shortest["total"].toDouble()).arg(least)));
    QVERIFY(shortest["bottleneck"].toDouble() >= j["bottleneck"].toDouble());
    QVERIFY(j["total"].toDouble() >= shortest["total"].toDouble() - 1e-6);

    // A graph given with --graph (ids .npy of k = 3): the path runs through that graph.
    const QString ids = m_dir.filePath("path-ids-" + metric + ".npy");
    QCOMPARE(
        cli({"knn", file, "--k", "3", "--metric", metric, "--out", ids, "--backend", "cpu"}).code,
        0);
    r = cli({"path", file, "--from", QString::number(from), "--to", QString::number(to), "--graph",
             ids, "--metric", metric, "--json", "--backend", "cpu"});
    if (r.code == 0) {
      const QString viaGiven = checkMinimaxPath(QJsonDocument::fromJson(r.out).object(),
                                                knnEdges64(x, n, d, 3, metric), n, from, to);
      QVERIFY2(viaGiven.isEmpty(), qPrintable(viaGiven));
      QCOMPARE(QJsonDocument::fromJson(r.out).object()["graph"].toString(), ids);
    } else { // k = 3 may split the graph: then exit 1, and the reference agrees
      QCOMPARE(r.code, 1);
      QVERIFY(std::isnan(minimaxBottleneck64(knnEdges64(x, n, d, 3, metric), n, from, to)));
    }

    // The text output marks the bottleneck step.
    r = cli({"path", file, "--from", QString::number(from), "--to", QString::number(to), "--k",
             QString::number(k), "--metric", metric, "--backend", "cpu"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("<- bottleneck") && r.out.contains("shortest path"), r.out.constData());
  }

  void pathAcrossComponentsNeedsABridge() {
    // Two blobs far apart, k = 6: two components. Without --bridge the items have no path (exit
    // 1, found false); with it the blobs join by their exact nearest pair (float64 over all
    // cross pairs), and the path is the min-max over the graph plus that edge.
    constexpr int half = 50, n = 2 * half, d = 3, k = 6, from = 2, to = 77;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 67);
    for (int i = half; i < n; ++i)
      for (int c = 0; c < d; ++c)
        x[std::size_t(i) * d + c] += 9.0f;
    const QString file = m_dir.filePath("bridge.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    auto edges = knnEdges64(x, n, d, k, "l2");
    for (const auto& [e, w] : edges)
      QVERIFY((e.first < half) == (e.second < half));                 // no edge between the blobs
    QVERIFY(!std::isnan(minimaxBottleneck64(edges, n, 0, half - 1))); // each blob is connected
    QVERIFY(!std::isnan(minimaxBottleneck64(edges, n, half, n - 1)));
    const QStringList args = {"path",      file,
                              "--from",    QString::number(from),
                              "--to",      QString::number(to),
                              "--k",       QString::number(k),
                              "--backend", "cpu"};
    Run r = cli(args + QStringList{"--json"});
    QCOMPARE(r.code, 1);
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QVERIFY(!j["found"].toBool());
    QCOMPARE(j["components"].toInt(), 2);
    r = cli(args);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("different components") && r.out.contains("--bridge"),
             r.out.constData());

    r = cli(args + QStringList{"--bridge", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["bridges_added"].toInt(), 1);
    QCOMPARE(j["components"].toInt(), 1);
    std::pair<double, std::pair<int, int>> bridge{INFINITY, {-1, -1}};
    for (int a = 0; a < half; ++a)
      for (int b = half; b < n; ++b)
        bridge = std::min(bridge, {distance64(x.data() + std::size_t(a) * d,
                                              x.data() + std::size_t(b) * d, d, "l2"),
                                   {a, b}});
    edges[bridge.second] = bridge.first;
    const QString wrong = checkMinimaxPath(j, edges, n, from, to);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    QVERIFY(j["bottleneck"].toDouble() >= bridge.first - 1e-5);

    // Items out of range: exit 2, naming the option.
    r = cli({"path", file, "--from", "0", "--to", QString::number(n), "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--to " + QByteArray::number(n) + " is out of range [0, 100)"),
             r.err.constData());
    r = cli({"path", file, "--from", "-1", "--to", "3", "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--from -1 is out of range"), r.err.constData());
    QVERIFY(cli({"path", file, "--from", "1"}).code != 0); // --to is required

    // A graph of ids with bad ones: the first in row order is named (the check runs on every
    // core), with its row and column counted from 1.
    std::vector<std::int32_t> ids(std::size_t(n) * k);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < k; ++c)
        ids[std::size_t(i) * k + c] = (i + c + 1) % n;
    ids[std::size_t(70) * k + 1] = -7;
    ids[std::size_t(40) * k + 4] = n + 5;
    const QString badIds = m_dir.filePath("bad-ids.npy");
    QVERIFY(writeBytes(badIds, npyBytes("<i4", {n, k}, rawBytes(ids))));
    r = cli({"path", file, "--from", "0", "--to", "1", "--graph", badIds, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("id " + QByteArray::number(n + 5) +
                            " at row 41, column 5 is out of "
                            "range [-1, 100)"),
             r.err.constData());
  }

  void layoutMapKeepsNeighbours_data() {
    QTest::addColumn<QString>("metric");
    QTest::addColumn<int>("dim");
    QTest::newRow("l2 3d") << "l2" << 3;
    QTest::newRow("cos 2d") << "cos" << 2;
    QTest::newRow("ip 2d") << "ip" << 2;
  }
  void layoutMapKeepsNeighbours() {
    // The map: n × dim finite positions in which each item's exact neighbours (float64, in the
    // metric) lie much closer than random pairs do.
    QFETCH(QString, metric);
    QFETCH(int, dim);
    constexpr int n = 300, d = 8, k = 10;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 68);
    for (int i = 0; i < n; ++i)
      x[std::size_t(i) * d + std::size_t(i % 5)] += 4.0f; // five blobs, five directions
    const QString file = m_dir.filePath("map-" + metric + ".npy"),
                  out = m_dir.filePath("map-" + metric + "-out.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    const Run r =
        cli({"layout", file, "--dim", QString::number(dim), "--metric", metric, "--k",
             QString::number(k), "--epochs", "60", "--out", out, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["metric"].toString(), metric);
    QCOMPARE(j["dim"].toInt(), dim);
    QCOMPARE(j["rows"].toInt(), n);
    const nearscape::Matrix<float> map = nearscape::readNpyFloat(out.toStdString());
    QCOMPARE(map.rows(), std::int64_t(n));
    QCOMPARE(map.cols(), std::int64_t(dim));
    for (std::int64_t i = 0; i < map.rows() * map.cols(); ++i)
      QVERIFY(std::isfinite(map.data()[i]));
    const auto onMap = [&](int a, int b) { return distance64(map.row(a), map.row(b), dim, "l2"); };
    double neighbours = 0, random = 0;
    std::uint64_t state = 7;
    for (int i = 0; i < n; ++i) {
      for (const auto& [dist, id] : nearest64(x.data() + std::size_t(i) * d, x, n, d, k, metric, i))
        neighbours += onMap(i, id) / (n * k);
      for (int c = 0; c < k; ++c) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        random += onMap(i, int((state >> 33) % n)) / (n * k);
      }
    }
    qInfo("%s: neighbours %.3f apart on the map, random pairs %.3f", qPrintable(metric), neighbours,
          random);
    // measured 0.07–0.08
    QVERIFY2(neighbours < 0.15 * random,
             qPrintable(QString("%1 vs %2").arg(neighbours).arg(random)));
  }

  void layoutTakesAGraphAndRefusesBadOptions() {
    // --graph: the map of the given graph; bad --dim and --trust-k: exit 2, nothing written.
    constexpr int n = 120, d = 5;
    const QString file = m_dir.filePath("lg.npy"), ids = m_dir.filePath("lg-ids.npy"),
                  out = m_dir.filePath("lg-out.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(randomFloats(n * d, 69)))));
    QCOMPARE(cli({"knn", file, "--k", "7", "--out", ids, "--backend", "cpu"}).code, 0);
    Run r = cli({"layout", file, "--graph", ids, "--epochs", "20", "--out", out, "--json",
                 "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["k"].toInt(), 7); // the given graph's k
    QCOMPARE(nearscape::readNpyFloat(out.toStdString()).cols(), std::int64_t(2));
    QVERIFY(QFile::remove(out));
    const QList<std::pair<QStringList, QByteArray>> refused = {
        {{"--dim", "4"}, "--dim must be 2 or 3"},
        {{"--dim", "1"}, "--dim must be 2 or 3"},
        {{"--trust-k", "0"}, "--trust-k must be at least 1"},
        {{"--trust-k", QString::number(n), "--json"}, "--trust-k must be below"},
        {{"--k", QString::number(n)}, "k"},
        {{"--graph", m_dir.filePath("lg-absent.npy")}, "lg-absent.npy"},
    };
    for (const auto& [args, says] : refused) {
      r = cli(QStringList{"layout", file, "--out", out, "--backend", "cpu"} + args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " → " + QString::number(r.code)));
      QVERIFY2(r.err.contains(says), r.err.constData());
      QVERIFY(!QFile::exists(out));
    }
  }

  void duplicatesOptions() {
    // --metric cos: scaled copies are duplicates (1 − cos = 0) though far apart in L2; every pair
    // within the threshold against float64; --show, --tile-rows and --box-dims (speed only: the
    // same pairs), --max-pairs refusing a threshold that joins more.
    constexpr int n = 200, d = 6;
    std::vector<float> x = randomFloats(std::size_t(n) * d, 71);
    for (const auto& [from, to, scale] :
         {std::tuple{4, 10, 3.0f}, std::tuple{4, 150, 0.25f}, std::tuple{30, 31, 7.0f}})
      for (int c = 0; c < d; ++c)
        x[std::size_t(to) * d + c] = scale * x[std::size_t(from) * d + c];
    const QString file = m_dir.filePath("dupcos.npy"), pairs = m_dir.filePath("dupcos-pairs.tsv");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    const double t = 0.002;
    QSet<QPair<int, int>> want;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (distance64(x.data() + std::size_t(a) * d, x.data() + std::size_t(b) * d, d, "cos") <= t)
          want.insert({a, b});
    QVERIFY(want.contains({4, 10}) && want.contains({30, 31}));
    const auto pairsFound = [&] {
      QSet<QPair<int, int>> got;
      const QList<QByteArray> lines = readBytes(pairs).trimmed().split('\n');
      for (qsizetype l = 1; l < lines.size(); ++l) {
        const QList<QByteArray> f = lines[l].split('\t');
        got.insert({f[0].toInt(), f[1].toInt()});
      }
      return got;
    };
    Run r = cli({"duplicates", file, "--metric", "cos", "--threshold", QString::number(t),
                 "--pairs", pairs, "--show", "1", "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(pairsFound(), want);
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["metric"].toString(), QString("cos"));
    QVERIFY(j["groups"].toInt() >= 2);
    QCOMPARE(j["top_groups"].toArray().size(), 1);                        // --show 1
    QCOMPARE(j["top_groups"].toArray()[0].toObject()["size"].toInt(), 3); // 4, 10, 150
    // In L2 the scaled copies are no duplicates.
    r = cli({"duplicates", file, "--threshold", QString::number(t), "--json", "--backend", "cpu"});
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["pairs"].toInt(), 0);
    // Tiles and boxes change the speed, never the pairs.
    r = cli({"duplicates", file, "--metric", "cos", "--threshold", QString::number(t), "--pairs",
             pairs, "--tile-rows", "7", "--box-dims", "2", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(pairsFound(), want);
    // --max-pairs: a threshold joining more pairs is refused, nothing written.
    QVERIFY(QFile::remove(pairs));
    r = cli({"duplicates", file, "--metric", "cos", "--threshold", "0.5", "--pairs", pairs,
             "--max-pairs", "10", "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("10"), r.err.constData());
    QVERIFY(!QFile::exists(pairs));
    QCOMPARE(cli({"duplicates", file, "--threshold", "1", "--tile-rows", "0"}).code, 2);
    QCOMPARE(cli({"duplicates", file, "--threshold", "1", "--box-dims", "5000"}).code, 2);
  }

  void findRegexIsLinearTimeAndStops() {
    // std::regex recursed once a character (SIGSEGV on a 50,000-character value), backtracked
    // without end on (a+)+$ over 35 characters and heard Ctrl-C only every 4096 items. RE2: linear
    // time, the engine's own message for a bad pattern, a stop looked for before every item.
    const QString file = m_dir.filePath("regex.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {4, 2}, rawBytes(randomFloats(8, 5)))));
    QVERIFY(writeBytes(m_dir.filePath("regex.meta.tsv"), QByteArray(50000, 'a') + "\n" +
                                                             QByteArray(34, 'a') + "b\n" +
                                                             QByteArray(35, 'A') + "\nx!\n"));
    auto find = [&](const QString& pattern) {
      QProcess p;
      p.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"find", file, pattern, "--regex", "--json"});
      const bool ended = p.waitForFinished(10000); // milliseconds for RE2; never, before
      if (!ended)
        p.kill();
      p.waitForFinished();
      return Run{ended && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                 p.readAllStandardOutput(), p.readAllStandardError()};
    };
    auto ids = [](const Run& r) {
      QList<int> found;
      for (const QJsonValue item : QJsonDocument::fromJson(r.out).object()["items"].toArray())
        found << item.toObject()["id"].toInt();
      return found;
    };
    Run r = find("a*b");
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(ids(r), QList<int>{1});
    r = find("(a+)+$"); // any case: the capitals match too
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(ids(r), (QList<int>{0, 2}));
    // A bad pattern: exit 2 with RE2's reason (a backreference is none of RE2's syntax).
    r = find("(");
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("is not a regular expression: missing ): ("), r.err.constData());
    r = find("(a)\\1");
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("invalid escape sequence"), r.err.constData());

    // Ctrl-C in a search of seconds (a pattern RE2's automaton cannot cache, run over 20 MB):
    // it ends within a second, cancelled, as every other command.
    const QString big = m_dir.filePath("regex-big.npy");
    constexpr int n = 20000;
    QVERIFY(writeBytes(big, npyBytes("<f4", {n, 2}, rawBytes(randomFloats(2 * n, 6)))));
    QByteArray meta; // one column: no header row
    meta.reserve(n * 1001);
    std::uint32_t state = 1;
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < 1000; ++c) {
        state = state * 1664525u + 1013904223u;
        meta += char('a' + (state >> 16) % 26);
      }
      meta += '\n';
    }
    QVERIFY(writeBytes(m_dir.filePath("regex-big.meta.tsv"), meta));
    QProcess p;
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"find", big, "[a-z]*a[a-z]{60}q9", "--regex"});
    QVERIFY(p.waitForStarted());
    QVERIFY2(!p.waitForFinished(700), p.readAllStandardError().constData()); // still searching
    QElapsedTimer timer;
    timer.start();
    ::kill(pid_t(p.processId()), SIGINT);
    const bool ended = p.waitForFinished(10000);
    const qint64 ms = timer.elapsed();
    if (!ended)
      p.kill();
    QVERIFY2(ended, "Ctrl-C did not stop the search");
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains("cancelled"), err.constData());
    qInfo("find --regex ended %lld ms after SIGINT", ms);
    // Under ASan the process's exit adds LeakSanitizer's scan of the heap.
    QVERIFY2(ms <= (nearscape::test::kAddressSanitizer ? 3000 : 1000),
             qPrintable(QString("%1 ms").arg(ms)));
  }

  void findLimitAndMeta() {
    // --limit caps the listing (−1: all), --meta reads another metadata file than the sidecar.
    const QString file = m_dir.filePath("findlim.npy"), meta = m_dir.filePath("findlim-other.tsv");
    QVERIFY(writeBytes(file, npyBytes("<f4", {5, 2}, rawBytes(randomFloats(10, 72)))));
    QVERIFY(writeBytes(m_dir.filePath("findlim.meta.tsv"), "cat\ncat\ndog\ncat\nowl\n"));
    QVERIFY(writeBytes(meta, "label\tnote\nx\tred fox\ny\tfox\nz\then\nx\towl\ny\tfox cub\n"));
    Run r = cli({"find", file, "cat", "--limit", "1"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.startsWith("3 of 5 items match\n0\tcat\n… 2 more (--limit -1 lists all)"),
             r.out.constData());
    r = cli({"find", file, "cat", "--limit", "-1", "--json"});
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["items"].toArray().size(), 3);
    r = cli({"find", file, "fox", "--meta", meta, "--json"});
    QCOMPARE(r.code, 0);
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["count"].toInt(), 3);
    QList<int> ids;
    for (const QJsonValue v : j["items"].toArray())
      ids << v.toObject()["id"].toInt();
    QCOMPARE(ids, (QList<int>{0, 1, 4}));
    r = cli({"find", file, "cat", "--meta", meta, "--json"}); // the sidecar's labels are not read
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["count"].toInt(), 0);
  }

  void compareMetricsAndTop() {
    // B is A with every row scaled: cosine neighbourhoods are the same, L2 ones are not.
    constexpr int n = 150, d = 5, k = 6;
    const std::vector<float> a = randomFloats(std::size_t(n) * d, 73);
    std::vector<float> b(a.size());
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c)
        b[std::size_t(i) * d + c] = float(1 + i % 7) * a[std::size_t(i) * d + c];
    const QString fa = m_dir.filePath("cmp-a.npy"), fb = m_dir.filePath("cmp-b.npy"),
                  out = m_dir.filePath("cmp-overlap.npy");
    QVERIFY(writeBytes(fa, npyBytes("<f4", {n, d}, rawBytes(a))));
    QVERIFY(writeBytes(fb, npyBytes("<f4", {n, d}, rawBytes(b))));
    Run r = cli({"compare", fa, fb, "--k", QString::number(k), "--metric-a", "cos", "--metric-b",
                 "cos", "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["metric_a"].toString(), QString("cos"));
    QCOMPARE(j["mean_overlap"].toDouble(), 1.0);
    // A by cosine, B by L2: each item's overlap against float64.
    r = cli({"compare", fa, fb, "--k", QString::number(k), "--metric-a", "cos", "--metric-b", "l2",
             "--top", "4", "--out", out, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["metric_b"].toString(), QString("l2"));
    const nearscape::Matrix<float> overlap = nearscape::readNpyFloat(out.toStdString());
    std::vector<float> expected(n);
    for (int i = 0; i < n; ++i) {
      QSet<int> x, y;
      for (const auto& [dist, id] : nearest64(a.data() + std::size_t(i) * d, a, n, d, k, "cos", i))
        x.insert(id);
      for (const auto& [dist, id] : nearest64(b.data() + std::size_t(i) * d, b, n, d, k, "l2", i))
        y.insert(id);
      expected[std::size_t(i)] = float(x.intersect(y).size()) / k;
      QCOMPARE(overlap.data()[i], expected[std::size_t(i)]);
    }
    const QJsonArray top = j["most_changed"].toArray();
    QCOMPARE(top.size(), 4);
    const float least = *std::min_element(expected.begin(), expected.end());
    QVERIFY(least < 1.0f);
    for (qsizetype t = 0; t < top.size(); ++t) { // the least overlap first
      QCOMPARE(float(top[t].toObject()["overlap"].toDouble()),
               expected[std::size_t(top[t].toObject()["id"].toInt())]);
      if (t > 0)
        QVERIFY(top[t].toObject()["overlap"].toDouble() >=
                top[t - 1].toObject()["overlap"].toDouble());
    }
    QCOMPARE(float(top[0].toObject()["overlap"].toDouble()), least);
    QCOMPARE(cli({"compare", fa, fb, "--metric-b", "hamming"}).code, 2);
  }

  void outliersByCosine() {
    // --metric cos: the k-th score is each item's k-th nearest cosine distance (float64).
    constexpr int n = 120, d = 4, k = 4;
    const std::vector<float> x = randomFloats(std::size_t(n) * d, 74);
    const QString file = m_dir.filePath("outcos.npy"), scores = m_dir.filePath("outcos-kth.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(x))));
    const Run r = cli({"outliers", file, "--k", QString::number(k), "--score", "kth", "--metric",
                       "cos", "--out", scores, "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["metric"].toString(), QString("cos"));
    const nearscape::Matrix<float> kth = nearscape::readNpyFloat(scores.toStdString());
    for (int i = 0; i < n; ++i) {
      const double want =
          nearest64(x.data() + std::size_t(i) * d, x, n, d, k, "cos", i).back().first;
      QVERIFY2(std::abs(kth.data()[i] - want) <= 1e-5 * std::max(1.0, want),
               qPrintable(QString("item %1: %2 vs %3").arg(i).arg(kth.data()[i]).arg(want)));
    }
  }

  void sweepWithQueriesTruthAndMisses() {
    // --queries and --truth from files, --metric, --batch, --timing-runs and --missed-query: the
    // rows' misses are true neighbours (float64) of that query; a --truth that disagrees with
    // the exact search shows in the reference's recall.
    constexpr int n = 500, q = 30, d = 6, k = 5, missedQuery = 3;
    const std::vector<float> base = randomFloats(std::size_t(n) * d, 75),
                             queries = randomFloats(std::size_t(q) * d, 76);
    const QString file = m_dir.filePath("sq-base.npy"), qfile = m_dir.filePath("sq-queries.npy"),
                  truth = m_dir.filePath("sq-truth.npy"), wrong = m_dir.filePath("sq-wrong.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(base))));
    QVERIFY(writeBytes(qfile, npyBytes("<f4", {q, d}, rawBytes(queries))));
    // The wrong truth lists each query's nearest k times: its k-th distance is the nearest's, so
    // of the exact search's k only the first is within it (recall@k as ann-benchmarks counts).
    std::vector<std::int64_t> ids, nearestOnly;
    for (int i = 0; i < q; ++i)
      for (const auto& [dist, id] :
           nearest64(queries.data() + std::size_t(i) * d, base, n, d, k, "cos")) {
        ids.push_back(id);
        nearestOnly.push_back(ids[std::size_t(i) * k]);
      }
    QVERIFY(writeBytes(truth, npyBytes("<i8", {q, k}, rawBytes(ids))));
    QVERIFY(writeBytes(wrong, npyBytes("<i8", {q, k}, rawBytes(nearestOnly))));
    const QStringList sweep = {"sweep",
                               file,
                               "--index",
                               "graph",
                               "--queries",
                               qfile,
                               "--metric",
                               "cos",
                               "--k",
                               QString::number(k),
                               "--grid",
                               "ef=5,64",
                               "--batch",
                               "7",
                               "--timing-runs",
                               "2",
                               "--latency-queries",
                               "5",
                               "--missed-query",
                               QString::number(missedQuery),
                               "--json",
                               "--backend",
                               "cpu"};
    Run r = cli(sweep + QStringList{"--truth", truth});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["metric"].toString(), QString("cos"));
    QCOMPARE(j["base_rows"].toInt(), n); // with --queries the whole file is the base
    QCOMPARE(j["queries"].toInt(), q);
    QCOMPARE(j["exact"].toObject()["recall"].toDouble(), 1.0);
    const QJsonArray rows = j["rows"].toArray();
    QCOMPARE(rows.size(), 2);
    QVERIFY(rows[0].toObject()["recall"].toDouble() <= rows[1].toObject()["recall"].toDouble());
    const std::vector<std::int64_t> trueIds(ids.begin() + missedQuery * k,
                                            ids.begin() + (missedQuery + 1) * k);
    for (const QJsonValue row : rows)
      for (const QJsonValue id : row.toObject()["missed"].toArray())
        QVERIFY2(std::count(trueIds.begin(), trueIds.end(), id.toInteger()) == 1,
                 qPrintable(QString::number(id.toInteger())));
    r = cli(sweep + QStringList{"--truth", wrong});
    QVERIFY2(r.code == 0, r.err.constData());
    j = QJsonDocument::fromJson(r.out).object();
    QVERIFY2(std::abs(j["exact"].toObject()["recall"].toDouble() - 1.0 / k) < 1e-9,
             qPrintable(QString::number(j["exact"].toObject()["recall"].toDouble())));
    // Out of range: refused before any work.
    QCOMPARE(cli(sweep + QStringList{"--timing-runs", "0"}).code, 2);
    r = cli({"sweep", file, "--queries", file, "--truth", truth, "--k", QString::number(k),
             "--backend", "cpu"});
    QCOMPARE(r.code, 2); // the truth has 30 rows, the queries 500
    QVERIFY2(r.err.contains("sq-truth.npy"), r.err.constData());
  }

  void selfTestPasses() {
    // self-test on this machine: every check passes (the GPU one skips, with the reason, where
    // no GPU is usable) and its scratch folder is gone afterwards.
    QTemporaryDir scratch;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", scratch.path());
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"self-test", "--json"});
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 0);
    const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    QVERIFY(j["passed"].toBool());
    QStringList names;
    for (const QJsonValue c : j["checks"].toArray()) {
      const QJsonObject check = c.toObject();
      names << check["name"].toString();
      const QString status = check["status"].toString();
      if (check["name"].toString() == "exact graph on the GPU" && !j["gpu_usable"].toBool()) {
        QCOMPARE(status, QString("SKIP"));
        QVERIFY(check["detail"].toString().contains(j["gpu_reason"].toString()));
      } else {
        QVERIFY2(status == "PASS", qPrintable(check["name"].toString() + ": " + status));
      }
    }
    for (const char* name :
         {"read npy", "read hdf5", "exact graph on the CPU", "min-max path", "map"})
      QVERIFY2(names.contains(name), name);
    QVERIFY(QDir(scratch.path()).isEmpty());
    const Run text = cli({"self-test"});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.contains("PASS  exact graph on the CPU") &&
                 text.out.endsWith("self-test passed\n"),
             text.out.constData());
  }

  void commonOptions() {
    // --threads: the same graph on one thread or two; --seed: the same map for a seed, another
    // for another; --log-level: debug tells the phases, info and quiet do not, others refused.
    constexpr int n = 200, d = 5;
    const QString file = m_dir.filePath("common.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(randomFloats(n * d, 77)))));
    QStringList outs;
    for (const char* threads : {"1", "2"}) {
      const QString out = m_dir.filePath(QString("common-t%1.graph").arg(threads));
      QCOMPARE(cli({"knn", file, "--k", "6", "--method", "nndescent", "--threads", threads, "--out",
                    out, "--backend", "cpu"})
                   .code,
               0);
      outs << out;
    }
    QCOMPARE(nearscape::readGraphFile(outs[0].toStdString()).ids.view().size(), std::size_t(n * 6));
    const auto idsOf = [](const QString& path) {
      const nearscape::GraphFile g = nearscape::readGraphFile(path.toStdString());
      return std::vector<std::int32_t>(g.ids.data(), g.ids.data() + g.ids.rows() * g.ids.cols());
    };
    QCOMPARE(idsOf(outs[0]), idsOf(outs[1]));
    const auto mapWithSeed = [&](const QString& seed) {
      const QString out = m_dir.filePath("common-map-" + seed + ".npy");
      if (cli({"layout", file, "--epochs", "20", "--seed", seed, "--out", out, "--backend", "cpu"})
              .code != 0)
        return QByteArray();
      return readBytes(out);
    };
    const QByteArray first = mapWithSeed("5");
    QVERIFY(!first.isEmpty());
    QCOMPARE(mapWithSeed("5"), first);
    QVERIFY(mapWithSeed("6") != first);
    // Sharded NN-Descent (a budget of under half its 228 KB) times its phases at debug.
    const QStringList sharded = {
        "knn",  file,        "--k", "6", "--method", "nndescent", "--memory-budget",
        "100K", "--backend", "cpu"};
    Run r = cli(sharded + QStringList{"--log-level", "debug"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("nearscape: debug: sharded"), r.err.constData());
    r = cli(sharded + QStringList{"--log-level", "info"});
    QCOMPARE(r.code, 0);
    QVERIFY2(!r.err.contains("debug"), r.err.constData());
    r = cli(sharded + QStringList{"--log-level", "quiet"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    // Without the option, $NEARSCAPE_LOG decides.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("NEARSCAPE_LOG", "debug");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), sharded);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardError().contains("nearscape: debug: sharded"));
    r = cli({"knn", file, "--k", "3", "--log-level", "loud"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--log-level"), r.err.constData());
  }

  void countsOutOfRangeAreRefused() {
    // Negative counts were taken as "all" or "the default" without a word (--show -1 listed every
    // group, --holdout -3 blamed the data's size): each is refused, naming the option.
    const QString file = m_dir.filePath("counts.npy");
    QVERIFY(writeBytes(file, npyBytes("<f4", {60, 3}, rawBytes(randomFloats(180, 78)))));
    const QList<QStringList> refused = {
        {"duplicates", file, "--threshold", "0.1", "--show", "-1"},
        {"duplicates", file, "--threshold", "0.1", "--max-pairs", "-1"},
        {"find", file, "1", "--limit", "-2"},
        {"knn", file, "--method", "nndescent", "--sample", "-3"},
        {"layout", file, "--epochs", "-5"},
        {"sweep", file, "--holdout", "-3"},
        {"sweep", file, "--holdout", "0"},
        {"sweep", file, "--holdout", "10", "--batch", "-1"},
        {"sweep", file, "--holdout", "10", "--latency-queries", "-1"},
        {"sweep", file, "--holdout", "10", "--missed-query", "10"},
    };
    for (const QStringList& args : refused) {
      const Run r = cli(args + QStringList{"--backend", "cpu"});
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " → " + QString::number(r.code)));
      const QByteArray option = args[args.size() - 2].toUtf8();
      QVERIFY2(r.err.contains(option) || r.err.contains("misses are listed"), r.err.constData());
    }
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
