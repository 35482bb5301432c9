// The artefact cache: what comes back is what was stored, for the same data and parameters only;
// anything damaged is a miss; the folder stays within its bound.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <thread>

using namespace nearscape;
using namespace nearscape::test;

namespace {

Dataset dataOf(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  Dataset ds;
  ds.vectors = Matrix<float>(randomFloats(std::size_t(n * d), seed), n, d);
  ds.contentHash = contentHash(ds.vectors.view());
  return ds;
}

} // namespace

class TestCache : public QObject {
  Q_OBJECT

private slots:
  void graphsAndMapsComeBackForTheSameDataOnly() {
    QTemporaryDir dir;
    const ArtefactCache cache(dir.path().toStdString(), ArtefactCache::kDefaultMaxBytes);
    const Dataset data = dataOf(300, 6, 1), other = dataOf(300, 6, 2);
    Context cpu;
    cpu.backend = Backend::Cpu;
    const KnnResult graph = knnGraph(data.vectors.view(), 5, Metric::L2, cpu);
    QVERIFY(!cache.loadGraph(data, Metric::L2, "k=5"));
    cache.storeGraph(data, Metric::L2, "k=5", graph);
    const auto back = cache.loadGraph(data, Metric::L2, "k=5");
    QVERIFY(back);
    QVERIFY(
        std::equal(graph.ids.data(), graph.ids.data() + graph.ids.view().size(), back->ids.data()));
    QVERIFY(std::equal(graph.distances.data(),
                       graph.distances.data() + graph.distances.view().size(),
                       back->distances.data()));
    QVERIFY(!cache.loadGraph(other, Metric::L2, "k=5"));    // other data
    QVERIFY(!cache.loadGraph(data, Metric::Cosine, "k=5")); // another metric
    QVERIFY(!cache.loadGraph(data, Metric::L2, "k=6"));     // other parameters
    // How it was built comes back: an exact graph is exact again (map trust and outliers take
    // it instead of building it a second time), an NN-Descent graph is not.
    QVERIFY(graph.report.exact());
    QCOMPARE(back->report.method(), KnnMethod::Exact);
    const KnnResult descended = nnDescentGraph(data.vectors.view(), 5, Metric::L2, cpu);
    cache.storeGraph(data, Metric::L2, "k=5,nnd", descended);
    const auto descendedBack = cache.loadGraph(data, Metric::L2, "k=5,nnd");
    QVERIFY(descendedBack);
    QVERIFY(!descendedBack->report.exact());
    QCOMPARE(descendedBack->report.method(), KnnMethod::NnDescent);

    std::vector<float> map(300 * 2);
    for (std::size_t i = 0; i < map.size(); ++i)
      map[i] = float(i) * 0.5f;
    cache.storeMatrix(data, "map2d", "p", {map.data(), 300, 2});
    const auto m = cache.loadMatrix(data, "map2d", "p", 2);
    QVERIFY(m && std::equal(map.begin(), map.end(), m->data()));
    QVERIFY(!cache.loadMatrix(data, "map2d", "q", 2));
    QVERIFY(!cache.loadMatrix(data, "map3d", "p", 3));
    QCOMPARE(cache.entries(), 3); // two graphs and a map
    cache.clear();
    QCOMPARE(cache.entries(), 0);
  }

  void damagedEntriesAreMissesAndGo() {
    QTemporaryDir dir;
    const ArtefactCache cache(dir.path().toStdString(), ArtefactCache::kDefaultMaxBytes);
    const Dataset data = dataOf(200, 4, 3);
    std::vector<float> map(200 * 2, 1.0f);
    cache.storeMatrix(data, "map2d", "p", {map.data(), 200, 2});
    const QString entry = QDir(dir.path()).entryList(QDir::Files).first();
    for (const bool truncate : {false, true}) {
      QByteArray bytes = readBytes(dir.filePath(entry));
      if (truncate)
        bytes.chop(9);
      else
        bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 1);
      QVERIFY(writeBytes(dir.filePath(entry), bytes));
      QVERIFY(!cache.loadMatrix(data, "map2d", "p", 2));
      QVERIFY(!QFile::exists(dir.filePath(entry))); // removed, to be recomputed
      cache.storeMatrix(data, "map2d", "p", {map.data(), 200, 2});
    }
  }

  void aMapBeyondAnyLayoutIsAMissWithAReason() {
    // A map entry of ±3e38 with a valid checksum gave an empty map and no word: it is a miss
    // now, removed, and the log says why; the bound itself still loads.
    QTemporaryDir dir;
    std::vector<std::string> said;
    Context log;
    log.logSink = [&](LogLevel, std::string_view message) { said.emplace_back(message); };
    const ArtefactCache cache(dir.path().toStdString(), ArtefactCache::kDefaultMaxBytes, log);
    const Dataset data = dataOf(100, 4, 5);
    std::vector<float> map(100 * 2, 0.5f);
    map[2 * 7] = 3e38f;
    map[2 * 8 + 1] = -3e38f;
    cache.storeMatrix(data, "map2d", "p", {map.data(), 100, 2});
    QCOMPARE(cache.entries(), 1);
    QVERIFY(!cache.loadMatrix(data, "map2d", "p", 2));
    QCOMPARE(cache.entries(), 0); // removed: the next exploration computes it again
    QCOMPARE(said.size(), std::size_t(1));
    QVERIFY2(said[0].find("row 8 holds 3e+38") != std::string::npos, said[0].c_str());

    map[2 * 7] = ArtefactCache::kMaxCoordinate;
    map[2 * 8 + 1] = -ArtefactCache::kMaxCoordinate;
    cache.storeMatrix(data, "map2d", "p", {map.data(), 100, 2});
    QVERIFY(cache.loadMatrix(data, "map2d", "p", 2));
    QCOMPARE(said.size(), std::size_t(1));
  }

  void clearLeavesFoldersNamedLikeEntriesAndGoesOn() {
    // `cache --clear` stopped at a folder named like an entry: the entries go, the folder (not
    // the cache's) stays, and clear() names it.
    QTemporaryDir dir;
    const ArtefactCache cache(dir.path().toStdString(), ArtefactCache::kDefaultMaxBytes);
    const Dataset data = dataOf(50, 4, 6);
    std::vector<float> map(50 * 2, 1.0f);
    QVERIFY(QDir(dir.path()).mkpath("0-map2d-0.nsmatrix/inside"));
    QVERIFY(writeBytes(dir.filePath("0-map2d-0.nsmatrix/inside/keep.txt"), "mine"));
    for (const char* params : {"a", "b", "c"})
      cache.storeMatrix(data, "map2d", params, {map.data(), 50, 2});
    QCOMPARE(cache.entries(), 3);
    const std::vector<std::filesystem::path> left = cache.clear();
    QCOMPARE(cache.entries(), 0);
    QCOMPARE(left.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(left[0].filename().string()), QString("0-map2d-0.nsmatrix"));
    QVERIFY(QFile::exists(dir.filePath("0-map2d-0.nsmatrix/inside/keep.txt")));
  }

  void theFolderStaysWithinItsBound() {
    QTemporaryDir dir;
    const Dataset data = dataOf(1000, 4, 4);
    std::vector<float> map(1000 * 2, 2.0f);
    const std::uint64_t entryBytes = 1000 * 2 * 4 + 200;
    const ArtefactCache cache(dir.path().toStdString(), 3 * entryBytes);
    for (int i = 0; i < 6; ++i) {
      cache.storeMatrix(data, "map2d", "p" + std::to_string(i), {map.data(), 1000, 2});
      std::this_thread::sleep_for(std::chrono::milliseconds(20)); // distinct use times
    }
    QVERIFY(cache.bytes() <= 3 * entryBytes);
    QVERIFY(cache.entries() >= 2);
    QVERIFY(cache.loadMatrix(data, "map2d", "p5", 2));  // the newest stays
    QVERIFY(!cache.loadMatrix(data, "map2d", "p0", 2)); // the oldest went first
  }
};

QTEST_GUILESS_MAIN(TestCache)
#include "tst_cache.moc"
