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

    std::vector<float> map(300 * 2);
    for (std::size_t i = 0; i < map.size(); ++i)
      map[i] = float(i) * 0.5f;
    cache.storeMatrix(data, "map2d", "p", {map.data(), 300, 2});
    const auto m = cache.loadMatrix(data, "map2d", "p", 2);
    QVERIFY(m && std::equal(map.begin(), map.end(), m->data()));
    QVERIFY(!cache.loadMatrix(data, "map2d", "q", 2));
    QVERIFY(!cache.loadMatrix(data, "map3d", "p", 3));
    QCOMPARE(cache.entries(), 2);
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
