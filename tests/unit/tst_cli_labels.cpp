// nearscape-cli labels as a person uses it: the JSON of two regions named by their own words,
// with a given map and with the map laid out here, and bad columns and maps refused clearly.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <random>

using namespace nearscape::test;

class TestCliLabels : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  static constexpr int kPerBlob = 100, kDim = 8;
  struct Run {
    int code = -1;
    QByteArray out, err;
  };
  Run cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH), args);
    if (!p.waitForFinished(120000))
      return {};
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
  }
  QString data() const { return m_dir.filePath("blobs.npy"); }
  QString map() const { return m_dir.filePath("blobs-map.npy"); }

  /// Checks the JSON of `--clusters 2`: two labels of kPerBlob items, the first word of each its
  /// blob's ("kernel" for items below kPerBlob, "typeface" above), centred on one of its items.
  static void checkTwoRegions(const QJsonObject& j) {
    QCOMPARE(j["rows"].toInt(), 2 * kPerBlob);
    QCOMPARE(j["column"].toString(), QString("text"));
    const QJsonArray levels = j["levels"].toArray();
    QCOMPARE(levels.size(), 1);
    QCOMPARE(levels[0].toObject()["clusters"].toInt(), 2);
    const QJsonArray labels = levels[0].toObject()["labels"].toArray();
    QCOMPARE(labels.size(), 2);
    QSet<QString> tops;
    for (const QJsonValue& v : labels) {
      const QJsonObject label = v.toObject();
      QCOMPARE(label["size"].toInt(), kPerBlob);
      QCOMPARE(label["centre"].toArray().size(), j["dim"].toInt());
      const int centre = label["centre_item"].toInt();
      const QJsonArray words = label["words"].toArray();
      QVERIFY(!words.isEmpty() && words.size() <= 3);
      QCOMPARE(label["scores"].toArray().size(), words.size());
      QCOMPARE(words[0].toString(), QString(centre < kPerBlob ? "kernel" : "typeface"));
      tops.insert(words[0].toString());
    }
    QCOMPARE(tops.size(), 2);
  }

private slots:
  void initTestCase() {
    // Two blobs far apart in 8 dimensions, and a map that keeps them apart; blob A's texts speak
    // of kernels, blob B's of typefaces, both with shared filler words.
    std::mt19937_64 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x, xy;
    QByteArray meta = "label\tsize\tblank\ttext\n";
    const char* filler[] = {"package", "tool", "support", "files"};
    for (int i = 0; i < 2 * kPerBlob; ++i) {
      const bool b = i >= kPerBlob;
      for (int c = 0; c < kDim; ++c)
        x.push_back(normal(rng) + (b && c == 0 ? 30.0f : 0.0f));
      xy.push_back(normal(rng) + (b ? 25.0f : 0.0f));
      xy.push_back(normal(rng));
      meta += QByteArray(b ? "fonts" : "kernel") + "\t" + QByteArray::number(i * 7) + "\t\t" +
              (b ? "A typeface for " : "The kernel ") + filler[rng() % 4] + " " +
              filler[rng() % 4] + (i % 2 ? (b ? " glyphs" : " driver") : " module") + "\n";
    }
    QVERIFY(writeBytes(data(), npyBytes("<f4", {2 * kPerBlob, kDim}, rawBytes(x))));
    QVERIFY(writeBytes(map(), npyBytes("<f4", {2 * kPerBlob, 2}, rawBytes(xy))));
    QVERIFY(writeBytes(m_dir.filePath("blobs.meta.tsv"), meta));
  }

  void jsonWithGivenMap() {
    const Run r = cli({"labels", data(), "--column", "text", "--map", map(), "--clusters", "2",
                       "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["map"].toString(), map());
    QCOMPARE(j["dim"].toInt(), 2);
    checkTwoRegions(j);
    // The same again: deterministic for the seed.
    const Run again = cli({"labels", data(), "--column", "text", "--map", map(), "--clusters", "2",
                           "--json", "--backend", "cpu"});
    QCOMPARE(QJsonDocument::fromJson(again.out).object()["levels"],
             QJsonDocument::fromJson(r.out).object()["levels"]);
  }

  void jsonWithComputedMapAndDefaultColumn() {
    // No --column: the data's text column; no --map: the layout of the kNN graph.
    const Run r =
        cli({"labels", data(), "--clusters", "2", "--epochs", "50", "--json", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["map"].toString(), QString("computed"));
    checkTwoRegions(j);
  }

  void severalLevelsAndText() {
    const Run r =
        cli({"labels", data(), "--map", map(), "--clusters", "2", "6", "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.out.contains("2 clusters:") && r.out.contains("6 clusters:"), r.out.constData());
    QVERIFY2(r.out.contains("100 items at (") && r.out.contains("kernel"), r.out.constData());
  }

  void badInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing column") << QStringList{"--column", "title"}
                                    << "no metadata column named \"title\" (the columns are "
                                       "label, size, blank, text)";
    QTest::newRow("numeric column") << QStringList{"--column", "size"} << "holds numbers";
    QTest::newRow("empty column") << QStringList{"--column", "blank"} << "is empty";
    QTest::newRow("map of other data")
        << QStringList{"--map", m_dir.filePath("short.npy")} << "the data has 200 items";
    QTest::newRow("no clusters") << QStringList{"--clusters", "0"} << "--clusters";
  }
  void badInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QVERIFY(writeBytes(m_dir.filePath("short.npy"),
                       npyBytes("<f4", {10, 2}, rawBytes(randomFloats(20, 1)))));
    // Each is refused before a map is laid out (a column is checked first).
    const QStringList all = {"labels", data(), "--backend", "cpu"};
    const Run r = cli(all + args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
    QVERIFY(r.out.isEmpty());
  }

  void noTextColumn() {
    const QString bare = m_dir.filePath("bare.npy");
    QVERIFY(writeBytes(bare, npyBytes("<f4", {20, 2}, rawBytes(randomFloats(40, 2)))));
    const Run r = cli({"labels", bare, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no text column"), r.err.constData());
  }
};

QTEST_APPLESS_MAIN(TestCliLabels)
#include "tst_cli_labels.moc"
