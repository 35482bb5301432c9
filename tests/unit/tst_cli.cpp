// nearscape-cli as a person uses it: exit codes, JSON, messages.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/core/Context.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/io/ArtefactCache.h"
#include "nearscape/io/Npy.h"

#include <QDir>
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
    if (!fault.isEmpty()) { // the engine's test hook: the named write fails
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("NEARSCAPE_FAULT_WRITE", fault);
      p.setProcessEnvironment(env);
    }
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), args);
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
    QVERIFY(mean > 0.3); // blobs keep much of their neighbourhoods
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
    QVERIFY2(r.out.startsWith("1 of 4 items match\n1\tdog"), r.out.constData());
    QCOMPARE(cli({"find", file, "(", "--regex"}).code, 2);
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
    // And with no fault, both land.
    QCOMPARE(cli(knn).code, 0);
    QVERIFY(readBytes(ids).startsWith("\x93NUMPY") && readBytes(dist).startsWith("\x93NUMPY"));
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
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
