// Cluster labels: the tokeniser, c-TF-IDF against a hand computation, and maps whose regions use
// different vocabularies (each region must be named by its own word), deterministically.
#include "analysis/LabelWords.h"
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cmath>
#include <random>
#include <set>

using namespace nearscape;

namespace {

/// Two well-separated blobs of `perBlob` points each (centres (0, 0) and (20, 20)); blob A's texts
/// all hold "kernel", blob B's all "typeface", both mixed with a shared filler vocabulary.
struct TwoBlobs {
  std::vector<float> map;
  std::vector<std::string> texts;
};

TwoBlobs twoBlobs(int perBlob, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const char* filler[] = {"package", "tool", "support", "data", "files", "program"};
  TwoBlobs b;
  for (int blob = 0; blob < 2; ++blob)
    for (int i = 0; i < perBlob; ++i) {
      b.map.push_back(normal(rng) + 20.0f * float(blob));
      b.map.push_back(normal(rng) + 20.0f * float(blob));
      std::string text = blob == 0 ? "The Kernel " : "A typeface for ";
      text += filler[rng() % 6];
      text += ' ';
      text += filler[rng() % 6];
      text += blob == 0 ? (i % 2 ? " module" : " driver") : (i % 2 ? " fonts" : " glyphs");
      b.texts.push_back(text);
    }
  return b;
}

bool sameLabels(const ClusterLabels& a, const ClusterLabels& b) {
  if (a.levels.size() != b.levels.size())
    return false;
  for (std::size_t l = 0; l < a.levels.size(); ++l) {
    const auto& x = a.levels[l];
    const auto& y = b.levels[l];
    if (x.clusters != y.clusters || x.assignment != y.assignment ||
        x.labels.size() != y.labels.size())
      return false;
    for (std::size_t c = 0; c < x.labels.size(); ++c)
      if (x.labels[c].size != y.labels[c].size ||
          x.labels[c].centreItem != y.labels[c].centreItem ||
          x.labels[c].words != y.labels[c].words || x.labels[c].scores != y.labels[c].scores)
        return false;
  }
  return true;
}

Context cpuContext(int threads = 0) {
  Context c;
  c.backend = Backend::Cpu;
  c.threads = threads;
  c.seed = 7;
  return c;
}

} // namespace

class TestClusterLabels : public QObject {
  Q_OBJECT

private slots:
  void tokens() {
    using analysis::distinctWords;
    const std::vector<std::string> words =
        distinctWords("The Python3 library, for PYTHON-3 & numpy's 42 arrays; the library", 3);
    QCOMPARE(words, (std::vector<std::string>{"python3", "library", "python", "numpy", "arrays"}));
    QVERIFY(distinctWords("of the and with which", 3).empty());
    // UTF-8 letters stay inside their word; the length counts bytes.
    QCOMPARE(distinctWords("Übersetzung café", 3), (std::vector<std::string>{"\xc3\x9c"
                                                                             "bersetzung",
                                                                             "caf\xc3\xa9"}));
    QCOMPARE(distinctWords("go is ok yes", 3), (std::vector<std::string>{"yes"}));
    QVERIFY(analysis::isStopWord("the"));
    QVERIFY(analysis::isStopWord("yourselves")); // listed out of order in the source
    QVERIFY(!analysis::isStopWord("kernel"));
  }

  void classTfIdfByHand() {
    // Cluster 0: "apple banana", "apple cherry"; cluster 1: "banana date", "date elder".
    // A = 2 texts per cluster. apple: tf 2/2, f 2 → log(1 + 2/2); cherry: 1/2 · log(1 + 2/1);
    // banana: 1/2 · log(1 + 2/2).
    JobControl job;
    const analysis::WordSets sets =
        analysis::wordSets({"apple banana", "apple cherry", "banana date", "date elder"}, 3, job);
    QCOMPARE(sets.vocabulary.size(), std::size_t(5));
    const auto top = analysis::topWords(sets, {0, 0, 1, 1}, 2, 3, 1);
    QCOMPARE(top[0].size(), std::size_t(3));
    auto word = [&](const analysis::ScoredWord& w) { return sets.vocabulary[std::size_t(w.word)]; };
    QCOMPARE(word(top[0][0]), std::string("apple"));
    QCOMPARE(top[0][0].score, std::log(2.0));
    QCOMPARE(word(top[0][1]), std::string("cherry"));
    QCOMPARE(top[0][1].score, 0.5 * std::log(3.0));
    QCOMPARE(word(top[0][2]), std::string("banana"));
    QCOMPARE(top[0][2].score, 0.5 * std::log(2.0));
    QCOMPARE(word(top[1][0]), std::string("date"));
    // A word held by fewer texts of the cluster than asked is left out.
    const auto strict = analysis::topWords(sets, {0, 0, 1, 1}, 2, 3, 2);
    QCOMPARE(strict[0].size(), std::size_t(1));
    QCOMPARE(strict[1].size(), std::size_t(1));
    // A word that only extends one chosen before it does not take a second place.
    const analysis::WordSets stems =
        analysis::wordSets({"python python3 numpy", "python python3 numpy", "other"}, 3, job);
    const auto stemmed = analysis::topWords(stems, {0, 0, 1}, 2, 3, 1);
    QCOMPARE(stemmed[0].size(), std::size_t(2));
    // Nor one that holds it (four letters or more): "libboost" after "boost"; "zlib" stays.
    const analysis::WordSets held =
        analysis::wordSets({"boost libboost zlib", "boost libboost zlib", "other"}, 3, job);
    const auto heldTop = analysis::topWords(held, {0, 0, 1}, 2, 3, 1);
    QCOMPARE(heldTop[0].size(), std::size_t(2));
    QCOMPARE(held.vocabulary[std::size_t(heldTop[0][0].word)], std::string("boost"));
    QCOMPARE(held.vocabulary[std::size_t(heldTop[0][1].word)], std::string("zlib"));
  }

  void twoBlobsNamedByTheirWords() {
    const TwoBlobs b = twoBlobs(200, 3);
    ClusterLabelParams params;
    params.granularities = {2};
    const ClusterLabels labels =
        clusterLabels({b.map.data(), 400, 2}, b.texts, params, cpuContext());
    QCOMPARE(labels.levels.size(), std::size_t(1));
    const ClusterLabelLevel& level = labels.levels[0];
    QCOMPARE(level.clusters, 2);
    QCOMPARE(level.labels.size(), std::size_t(2));
    QCOMPARE(level.assignment.size(), std::size_t(400));
    std::set<std::string> tops;
    for (std::size_t c = 0; c < 2; ++c) {
      const ClusterLabel& label = level.labels[c];
      QCOMPARE(label.size, std::int64_t(200));
      QVERIFY(!label.words.empty());
      QCOMPARE(label.words.size(), label.scores.size());
      QVERIFY(label.words.size() <= 3);
      // Which blob: the centre item's; its members are exactly that blob's items.
      const bool blobA = label.centreItem < 200;
      QCOMPARE(label.words[0], std::string(blobA ? "kernel" : "typeface"));
      tops.insert(label.words[0]);
      QCOMPARE(label.centre.size(), std::size_t(2));
      QCOMPARE(label.centre[0], b.map[std::size_t(2 * label.centreItem)]);
      QVERIFY(std::abs(label.centre[0] - (blobA ? 0.0f : 20.0f)) < 1.0f); // near the blob's middle
      for (int i = 0; i < 400; ++i)
        QCOMPARE(level.assignment[std::size_t(i)] == int(c), (i < 200) == blobA);
      // The shared filler names neither blob.
      for (const std::string& w : label.words)
        QVERIFY2(w != "package" && w != "tool" && w != "support", w.c_str());
      for (std::size_t w = 1; w < label.scores.size(); ++w)
        QVERIFY(label.scores[w - 1] >= label.scores[w]);
    }
    QCOMPARE(tops.size(), std::size_t(2));
  }

  void deterministicAcrossThreadsAndRuns() {
    const TwoBlobs b = twoBlobs(300, 5);
    ClusterLabelParams params; // 8, 24, 64
    const MatrixView<float> map{b.map.data(), 600, 2};
    const ClusterLabels one = clusterLabels(map, b.texts, params, cpuContext(1));
    const ClusterLabels again = clusterLabels(map, b.texts, params, cpuContext(1));
    const ClusterLabels two = clusterLabels(map, b.texts, params, cpuContext(2));
    QVERIFY(sameLabels(one, again));
    QVERIFY(sameLabels(one, two));
    QCOMPARE(one.levels.size(), std::size_t(3));
    QCOMPARE(one.levels[0].clusters, 8);
    QCOMPARE(one.levels[2].clusters, 64);
    for (const ClusterLabelLevel& level : one.levels) {
      std::int64_t total = 0;
      for (std::size_t c = 0; c < level.labels.size(); ++c) {
        total += level.labels[c].size;
        if (c > 0) // largest first
          QVERIFY(level.labels[c - 1].size >= level.labels[c].size);
        // Every cluster lies in one blob, so its words come from that blob's vocabulary.
        const bool blobA = level.labels[c].centreItem < 300;
        for (const std::string& w : level.labels[c].words)
          QVERIFY2(w != (blobA ? "typeface" : "kernel"), w.c_str());
      }
      QCOMPARE(total, std::int64_t(600));
    }
  }

  void granularitiesHeldToTheItems() {
    const TwoBlobs b = twoBlobs(10, 9);
    ClusterLabelParams params;
    params.granularities = {8, 24, 64}; // 20 items: 8, 20 (24 and 64 both become 20)
    const ClusterLabels labels =
        clusterLabels({b.map.data(), 20, 2}, b.texts, params, cpuContext());
    QCOMPARE(labels.levels.size(), std::size_t(2));
    QCOMPARE(labels.levels[0].clusters, 8);
    QCOMPARE(labels.levels[1].clusters, 20);
  }

  void stopWordsOnlyGiveNoWords() {
    const std::vector<float> map = {0, 0, 0, 1, 1, 0, 1, 1};
    ClusterLabelParams params;
    params.granularities = {1};
    const ClusterLabels labels =
        clusterLabels({map.data(), 4, 2}, {"the", "of it", "and", ""}, params, cpuContext());
    QCOMPARE(labels.levels[0].labels.size(), std::size_t(1));
    QVERIFY(labels.levels[0].labels[0].words.empty());
    QCOMPARE(labels.levels[0].labels[0].size, std::int64_t(4));
  }

  void badInput() {
    const std::vector<float> map = {0, 0, 1, 1, 2, 2};
    const std::vector<std::string> texts = {"a", "b", "c"};
    ClusterLabelParams params;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             clusterLabels({map.data(), 3, 2}, {"a", "b"}, params, cpuContext()));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             clusterLabels({map.data(), 0, 2}, {}, params, cpuContext()));
    params.granularities = {};
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             clusterLabels({map.data(), 3, 2}, texts, params, cpuContext()));
    params.granularities = {0};
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             clusterLabels({map.data(), 3, 2}, texts, params, cpuContext()));
    params.granularities = {2};
    std::vector<float> nan = map;
    nan[3] = NAN;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             clusterLabels({nan.data(), 3, 2}, texts, params, cpuContext()));
  }

  void columns() {
    Dataset data;
    data.metadata.columnNames = {"size", "name", "blank", "about"};
    data.metadata.columns = {{"12", "3.5", "", "1e3"},
                             {"zlib", "curl", "vim", "gcc"},
                             {"", "", "", ""},
                             {"compression library", "transfer tool for urls", "editor", ""}};
    QCOMPARE(labelTexts(data, "ABOUT"), data.metadata.columns[3]);
    auto message = [&](const std::string& name) {
      try {
        labelTexts(data, name);
      } catch (const InvalidArgument& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QVERIFY2(message("size").find("holds numbers") != std::string::npos, message("size").c_str());
    QVERIFY2(message("blank").find("is empty") != std::string::npos, message("blank").c_str());
    QVERIFY2(message("nope").find("the columns are size, name, blank, about") != std::string::npos,
             message("nope").c_str());
    // No text column declared: the one with the most words per cell.
    QCOMPARE(defaultLabelColumn(data), 3);
    data.textColumn = 1;
    QCOMPARE(defaultLabelColumn(data), 1);
    data.textColumn = 0; // a declared column of numbers does not serve
    QCOMPARE(defaultLabelColumn(data), 3);
    QCOMPARE(defaultLabelColumn(Dataset{}), -1);
  }

  void cancelled() {
    const TwoBlobs b = twoBlobs(100, 1);
    JobControl job;
    job.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled,
                             clusterLabels({b.map.data(), 200, 2}, b.texts, {}, cpuContext(), job));
  }
};

QTEST_APPLESS_MAIN(TestClusterLabels)
#include "tst_cluster_labels.moc"
