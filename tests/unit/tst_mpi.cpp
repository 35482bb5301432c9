// nearscape-cli under mpirun (CPU backend, shared-memory transport): the distributed graph
// against one process's, and a failing rank ending the job with no output.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/io/Npy.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <random>

using namespace nearscape;
using namespace nearscape::test;

class TestMpi : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  struct Run {
    int code = -1;
    QByteArray out, err;
  };

  /// `ranks` == 0: one plain process; else mpirun -np ranks. `fault`: NEARSCAPE_FAULT_RANK.
  Run cli(int ranks, QStringList args, const QString& fault = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // CI runs as root, which Open MPI refuses unless told; containers lack CMA for shared memory.
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    env.insert("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    // The ASan build: Open MPI's and PMIx's components stay loaded and leaks get whole stacks, so
    // that what MPI_Finalize leaves is recognised by its libraries (tests/sanitizers/lsan.supp).
    env.insert("OMPI_MCA_mca_base_component_disable_dlclose", "1");
    env.insert("PMIX_MCA_mca_base_component_disable_dlclose", "1");
    if (env.contains("ASAN_OPTIONS"))
      env.insert("ASAN_OPTIONS", env.value("ASAN_OPTIONS") + ":fast_unwind_on_malloc=0");
    if (!fault.isEmpty())
      env.insert("NEARSCAPE_FAULT_RANK", fault);
    p.setProcessEnvironment(env);
    args << "--backend"
         << "cpu";
    if (ranks == 0) {
      p.start(QStringLiteral(NEARSCAPE_CLI_PATH), args);
    } else {
      args.prepend(QStringLiteral(NEARSCAPE_CLI_PATH));
      args = QStringList{"--oversubscribe", "-np", QString::number(ranks)} + args;
      p.start(QStringLiteral(NEARSCAPE_MPIEXEC), args);
    }
    if (!p.waitForFinished(120000)) {
      p.kill();
      p.waitForFinished();
      return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
  }

  /// Clustered rows with exact duplicates (ties the merge must order as one process does).
  QString writeData(const QString& name, std::int64_t n, std::int64_t d, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> noise(0.f, 1.f);
    std::vector<float> centres(std::size_t(20 * d)), values(std::size_t(n * d));
    for (float& c : centres)
      c = 4.f * noise(rng);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t c = std::int64_t(rng() % 20);
      for (std::int64_t j = 0; j < d; ++j)
        values[std::size_t(i * d + j)] = centres[std::size_t(c * d + j)] + noise(rng);
    }
    for (std::int64_t copy : {n / 3, n / 2, n - 1}) // each a duplicate of row 7
      std::copy_n(values.begin() + 7 * d, d, values.begin() + copy * d);
    const QString file = m_dir.filePath(name);
    writeBytes(file, npyBytes("<f4", {n, d}, rawBytes(values)));
    return file;
  }

  /// The folder holds exactly `names` (no output left behind, no temporary file).
  void expectOnly(const QStringList& names) {
    QStringList found = QDir(m_dir.path()).entryList(QDir::Files | QDir::Hidden);
    found.sort();
    QStringList wanted = names;
    wanted.sort();
    QCOMPARE(found, wanted);
  }

private slots:
  void exactGraphEqualsOneProcess() {
    const QString data = writeData("exact.npy", 1500, 12, 1);
    const Run one = cli(0, {"knn", data, "--k", "10", "--method", "exact", "--out",
                            m_dir.filePath("one.npy"), "--out-dist", m_dir.filePath("one_d.npy")});
    QCOMPARE(one.code, 0);
    for (int ranks : {2, 4}) {
      const QString ids = m_dir.filePath(QString("ids%1.npy").arg(ranks));
      const QString dists = m_dir.filePath(QString("d%1.npy").arg(ranks));
      const Run r = cli(ranks, {"knn", data, "--k", "10", "--method", "exact", "--out", ids,
                                "--out-dist", dists, "--json"});
      QVERIFY2(r.code == 0, r.err.constData());
      // Byte for byte: the same ids in the same order (ties too) and the same distances.
      QCOMPARE(readBytes(ids), readBytes(m_dir.filePath("one.npy")));
      QCOMPARE(readBytes(dists), readBytes(m_dir.filePath("one_d.npy")));
      // Rank 0 alone prints: stdout is one JSON object.
      QJsonParseError error;
      const QJsonObject j = QJsonDocument::fromJson(r.out, &error).object();
      QVERIFY2(error.error == QJsonParseError::NoError, r.out.constData());
      QCOMPARE(j["ranks"].toInt(), ranks);
      const QJsonArray shares = j["per_rank"].toArray();
      QCOMPARE(shares.size(), ranks);
      int rows = 0;
      for (const auto& s : shares) {
        rows += s.toObject()["rows"].toInt();
        QVERIFY(s.toObject()["seconds"].toDouble() > 0);
      }
      QCOMPARE(rows, 1500);
      QCOMPARE(j["rows"].toInt(), 1500);
    }
  }

  void exactSearchEqualsOneProcess() {
    // The base split among the ranks, the top k merged up a tree (3 ranks: one waits a step).
    const QString data = writeData("base.npy", 1000, 12, 7);
    const QString queries = writeData("queries.npy", 300, 12, 8);
    const QStringList args{"knn", data, "--queries", queries, "--k", "12", "--json"};
    QCOMPARE(cli(0, args + QStringList{"--out", m_dir.filePath("s1.npy"), "--out-dist",
                                       m_dir.filePath("s1_d.npy")})
                 .code,
             0);
    for (int ranks : {3, 4}) {
      const QString ids = m_dir.filePath(QString("s%1.npy").arg(ranks));
      const QString dists = m_dir.filePath(QString("s%1_d.npy").arg(ranks));
      const Run r = cli(ranks, args + QStringList{"--out", ids, "--out-dist", dists});
      QVERIFY2(r.code == 0, r.err.constData());
      QCOMPARE(readBytes(ids), readBytes(m_dir.filePath("s1.npy")));
      QCOMPARE(readBytes(dists), readBytes(m_dir.filePath("s1_d.npy")));
      const QJsonObject j = QJsonDocument::fromJson(r.out).object();
      QCOMPARE(j["mode"].toString(), QString("search"));
      QCOMPARE(j["per_rank"].toArray().size(), ranks);
    }
  }

  void nnDescentWithinRecall() {
    const QString data = writeData("nnd.npy", 4000, 16, 2);
    const QString truth = m_dir.filePath("truth.npy");
    QCOMPARE(cli(0, {"knn", data, "--k", "10", "--method", "exact", "--out", truth}).code, 0);
    auto recallOf = [&](const Run& r) {
      return QJsonDocument::fromJson(r.out).object()["recall"].toDouble(-1);
    };
    const QStringList args{"knn",
                           data,
                           "--k",
                           "10",
                           "--method",
                           "nndescent",
                           "--truth",
                           truth,
                           "--json",
                           "--out",
                           m_dir.filePath("g.nsg")};
    const Run one = cli(0, args);
    QCOMPARE(one.code, 0);
    const double alone = recallOf(one);
    QVERIFY(alone > 0.9);
    for (int ranks : {2, 4}) {
      const Run r = cli(ranks, args);
      QVERIFY2(r.code == 0, r.err.constData());
      const double recall = recallOf(r);
      qInfo("NN-Descent recall@10: one process %.4f, %d ranks %.4f", alone, ranks, recall);
      QVERIFY2(recall >= alone - 0.005, qPrintable(QString::number(recall)));
      const QJsonObject j = QJsonDocument::fromJson(r.out).object();
      int merges = 0;
      for (const auto& s : j["per_rank"].toArray())
        merges += s.toObject()["merges"].toInt();
      QCOMPARE(merges, ranks * (ranks - 1) / 2); // every pair of slices merged once
      // The graph file it wrote reads back against the data (hash, ids, distances).
      const Dataset ds = openDataset(data.toStdString());
      QCOMPARE(readKnnGraph(m_dir.filePath("g.nsg").toStdString(), ds, Metric::L2).ids.rows(),
               4000);
    }
  }

  void layoutAndPathOnRank0() {
    // The graph (exact here) built by the ranks, the map and the paths by rank 0: the same map and
    // path as one process's.
    const QString data = writeData("map.npy", 1200, 8, 6);
    const QString one = m_dir.filePath("map1.npy"), two = m_dir.filePath("map2.npy");
    QCOMPARE(cli(0, {"layout", data, "--epochs", "40", "--out", one}).code, 0);
    const Run r = cli(2, {"layout", data, "--epochs", "40", "--out", two, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(readBytes(two), readBytes(one));
    QCOMPARE(QJsonDocument::fromJson(r.out).object()["ranks"].toInt(), 2);

    const QStringList path{"path", data, "--from", "3", "--to", "1100", "--bridge", "--json"};
    const Run alone = cli(0, path), ranked = cli(4, path);
    QVERIFY2(ranked.code == 0, ranked.err.constData());
    const QJsonObject a = QJsonDocument::fromJson(alone.out).object();
    const QJsonObject b = QJsonDocument::fromJson(ranked.out).object();
    QVERIFY(a["found"].toBool());
    QCOMPARE(b["path"].toArray(), a["path"].toArray());
    QCOMPARE(b["shortest"].toObject()["path"].toArray(),
             a["shortest"].toObject()["path"].toArray());
    QCOMPARE(b["per_rank"].toArray().size(), 4);
  }

  void failingRankEndsTheJob_data() {
    QTest::addColumn<int>("ranks");
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("fault");
    QTest::addColumn<QString>("message");
    QTest::newRow("exact, 4 ranks, rank 1 throws") << 4 << "exact"
                                                   << "1:exact"
                                                   << "exact search";
    QTest::newRow("nndescent, rank 1 throws in a merge") << 2 << "nndescent"
                                                         << "1:merging"
                                                         << "merging slices";
    QTest::newRow("nndescent, rank 1 throws making the codebook") << 2 << "nndescent"
                                                                  << "1:codebook"
                                                                  << "making the codebook";
    QTest::newRow("rank 2 throws reading") << 4 << "exact"
                                           << "2:reading"
                                           << "reading the data";
    QTest::newRow("rank 1 killed in a merge") << 2 << "nndescent"
                                              << "1:merging:kill"
                                              << "";
  }
  void failingRankEndsTheJob() {
    QFETCH(int, ranks);
    QFETCH(QString, method);
    QFETCH(QString, fault);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString data = dir.filePath("x.npy"), out = dir.filePath("g.nsg");
    QFile::copy(writeData("fault.npy", 600, 8, 3), data);
    const Run r = cli(ranks, {"knn", data, "--k", "5", "--method", method, "--out", out}, fault);
    QVERIFY(r.code != 0);
    const int faulty = fault.section(':', 0, 0).toInt();
    if (!message.isEmpty()) {
      // The failing rank says what failed; every other rank says which rank failed, and where.
      QVERIFY2(
          r.err.contains(
              QString("(rank %1 of %2): error: fault injected").arg(faulty).arg(ranks).toUtf8()),
          r.err.constData());
      const int others = int(r.err.count(
          QString("rank %1 of %2 failed while %3").arg(faulty).arg(ranks).arg(message).toUtf8()));
      QVERIFY2(others == ranks - 1, r.err.constData());
    }
    QVERIFY(!QFile::exists(out));
    const QStringList left = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(left, QStringList{"x.npy"}); // no output, no temporary file
  }

  void truncatedInputOnEveryRank() {
    const QString data = writeData("cut.npy", 300, 8, 4);
    QByteArray bytes = readBytes(data);
    bytes.chop(100);
    writeBytes(data, bytes);
    const QString out = m_dir.filePath("cut-graph.npy");
    const Run r = cli(2, {"knn", data, "--k", "5", "--method", "exact", "--out", out});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("(rank 0 of 2): bad input") &&
                 r.err.contains("(rank 1 of 2): bad input"),
             r.err.constData());
    QVERIFY2(r.err.contains("cut.npy"), r.err.constData());
    QVERIFY(!QFile::exists(out));
  }

  void onlyGraphCommandsRunUnderMpi() {
    const QString data = writeData("small.npy", 200, 4, 5);
    Run r = cli(2, {"info", data});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("under mpirun only knn, layout and path run"), r.err.constData());
    r = cli(2, {"knn", data, "--k", "5", "--extend", data});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("--extend runs as one process"), r.err.constData());
    // More ranks than NN-Descent can give more than k rows each.
    r = cli(4, {"knn", data, "--k", "60", "--method", "nndescent"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("NN-Descent needs more than k = 60 rows a rank"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestMpi)
#include "tst_mpi.moc"
