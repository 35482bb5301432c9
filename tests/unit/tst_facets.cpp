// Facets (core/Facets.h): which columns are facets, brushes read from text, AND across facets,
// each facet counted within the other facets' brushes, the selection among them; and the same
// counts from `nearscape-cli facets`. Oracles: counts by brute force over the rows written.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/core/Facets.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace nearscape;
using namespace nearscape::test;

namespace {

constexpr int kN = 600;

double sizeOf(int i) {
  return 1 + (i * 7) % 5000 / (i % 10 + 1);
}

/// Row i: kind = "k" + i % 3, size = 1 + (i * 7) % 5000 / (i % 10 + 1) (skewed), score = i / 10,
/// id = unique (not a facet), note empty on every fifth row of score.
QByteArray metaText() {
  QByteArray meta = "kind\tsize\tscore\tid\n";
  for (int i = 0; i < kN; ++i)
    meta += "k" + QByteArray::number(i % 3) + "\t" + QByteArray::number(sizeOf(i)) + "\t" +
            (i % 5 == 4 ? QByteArray() : QByteArray::number(i / 10.0)) + "\tid" +
            QByteArray::number(i) + "\n";
  return meta;
}

} // namespace

class TestFacets : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  QString m_data;

  int columnIndex(const std::vector<FacetColumn>& columns, const std::string& name) {
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (columns[c].name == name)
        return int(c);
    return -1;
  }

private slots:
  void initTestCase() {
    m_data = m_dir.filePath("f.npy");
    QVERIFY(writeBytes(m_data, npyBytes("<f4", {kN, 2}, rawBytes(randomFloats(2 * kN, 3)))));
    QVERIFY(writeBytes(m_dir.filePath("f.meta.tsv"), metaText()));
  }

  void parsesBrushes() {
    const FacetBrush one = parseFacetBrush("kind=k1");
    QCOMPARE(one.column, std::string("kind"));
    QCOMPARE(one.values, std::vector<std::string>{"k1"});
    QVERIFY(!one.range);
    QCOMPARE(parseFacetBrush("kind=k1|k2").values, (std::vector<std::string>{"k1", "k2"}));
    const FacetBrush range = parseFacetBrush("size=10..100");
    QCOMPARE(range.range, std::optional(std::pair{10.0, 100.0}));
    QCOMPARE(parseFacetBrush("size=..100").range->first, -INFINITY);
    QCOMPARE(parseFacetBrush("size=5..").range->second, INFINITY);
    QCOMPARE(parseFacetBrush(" a b =x=y").column, std::string("a b")); // the first '=' splits
    QCOMPARE(parseFacetBrush("a b=x=y").values, std::vector<std::string>{"x=y"});
    for (const char* bad : {"kind", "=x", "size=100..10", "size=..", "size=a..b", "size=1..2x"})
      QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseFacetBrush(bad));
    for (const char* text : {"kind=k1|k2", "size=10..100", "size=..3.5", "kind="})
      QCOMPARE(facetBrushText(parseFacetBrush(text)), std::string(text));
  }

  void countsWithinTheOtherBrushes() {
    OpenOptions options;
    options.metaPath = m_dir.filePath("f.meta.tsv").toStdString();
    const Dataset ds = openDataset(m_data.toStdString(), options);
    const std::vector<FacetColumn> columns = readFacetColumns(ds);
    // Identifiers are no facet; numbers and categories are.
    QCOMPARE(columnIndex(columns, "id"), -1);
    const int kind = columnIndex(columns, "kind"), size = columnIndex(columns, "size"),
              score = columnIndex(columns, "score");
    QVERIFY(kind >= 0 && size >= 0 && score >= 0);
    QVERIFY(!columns[std::size_t(kind)].numeric && columns[std::size_t(size)].numeric);

    // No brush: every facet counts every item; the missing scores apart.
    const FacetPass none = facetPass(columns, {});
    const FacetCounts all = countFacet(columns, score, none, {});
    std::int64_t sum = 0;
    for (const std::int64_t c : all.total)
      sum += c;
    QCOMPARE(sum + all.missingTotal, std::int64_t(kN));
    QCOMPARE(all.missingTotal, std::int64_t(kN / 5));
    QCOMPARE(all.filtered, all.total);
    // Sizes span more than two decades, all > 0: log bins.
    QVERIFY(countFacet(columns, size, none, {}).logBins);
    QVERIFY(!all.logBins);

    // kind = k1 AND size in 10 … 100.
    const std::vector<FacetBrush> brushes = {parseFacetBrush("kind=k1"),
                                             parseFacetBrush("size=10..100")};
    const FacetPass pass = facetPass(columns, brushes);
    std::vector<std::int64_t> selection;
    for (int i = 0; i < kN; i += 4)
      selection.push_back(i);
    const FacetCounts byScore = countFacet(columns, score, pass, selection);
    const FacetCounts byKind = countFacet(columns, kind, pass, selection);
    const FacetCounts bySize = countFacet(columns, size, pass, selection);
    std::int64_t passing = 0, scoreFiltered = 0, scoreSelected = 0;
    std::vector<std::int64_t> kindFiltered(3, 0), sizeFiltered(bySize.total.size(), 0);
    for (int i = 0; i < kN; ++i) {
      const bool inKind = i % 3 == 1, inSize = sizeOf(i) >= 10 && sizeOf(i) <= 100;
      QCOMPARE(pass.passes(std::size_t(i)), inKind && inSize);
      passing += inKind && inSize;
      if (inKind && inSize && i % 5 != 4) {
        ++scoreFiltered;
        scoreSelected += i % 4 == 0;
      }
      if (inSize) // the kind facet counts within the other brush only
        ++kindFiltered[std::size_t(i % 3)];
      if (inKind)
        ++sizeFiltered[std::size_t(bySize.binOf(columns[std::size_t(size)], std::size_t(i)))];
    }
    QVERIFY(passing > 10 && passing < kN / 3);
    std::int64_t f = 0, s = 0;
    for (std::size_t b = 0; b < byScore.filtered.size(); ++b)
      f += byScore.filtered[b], s += byScore.selected[b];
    QCOMPARE(f, scoreFiltered);
    QCOMPARE(s, scoreSelected);
    QCOMPARE(byScore.missingFiltered, passing - scoreFiltered);
    for (std::size_t b = 0; b < byKind.labels.size(); ++b)
      QCOMPARE(byKind.filtered[b],
               kindFiltered[std::size_t(std::stoi(byKind.labels[b].substr(1)))]);
    QCOMPARE(bySize.filtered, sizeFiltered);

    // Bad brushes: a column the data lacks (the columns named), a range on categories, values
    // on numbers.
    const auto message = [&columns](const char* text) -> QString {
      try {
        (void)facetPass(columns, std::vector<FacetBrush>{parseFacetBrush(text)});
      } catch (const InvalidArgument& e) {
        return QString::fromUtf8(e.what());
      }
      return {};
    };
    QVERIFY(message("colour=red").contains("kind, size, score"));
    QVERIFY(message("kind=1..2").contains("values, not a range"));
    QVERIFY(message("size=big").contains("takes a range"));
  }

  void topValuesAndOther() {
    // 30 values: the 12 most frequent listed, then one "other" bar for 18.
    FacetColumn c;
    c.name = "city";
    for (int v = 0; v < 30; ++v)
      c.categories.push_back("c" + std::to_string(v));
    for (int i = 0; i < 300; ++i)
      c.category.push_back(i % 30);
    const std::vector<FacetColumn> columns = {c};
    const FacetCounts counts = countFacet(columns, 0, facetPass(columns, {}), {}, 20, 12);
    QCOMPARE(int(counts.labels.size()), 13);
    QVERIFY(counts.hasOther);
    QCOMPARE(counts.labels.back(), std::string("other (18 values)"));
    QCOMPARE(counts.total.back(), std::int64_t(180));
    // 13 values with top 12: all 13 listed (an "other" of one says nothing more).
    c.categories.resize(13);
    for (auto& k : c.category)
      k %= 13;
    const std::vector<FacetColumn> thirteen = {c};
    QVERIFY(!countFacet(thirteen, 0, facetPass(thirteen, {}), {}, 20, 12).hasOther);
  }

  void cliPrintsTheSameCounts() {
    QProcess p;
    p.start(QStringLiteral(NEARSCAPE_CLI_PATH),
            {"facets", m_data, "--filter", "kind=k1", "--filter", "size=10..100", "--json"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    QCOMPARE(j["items"].toInt(), kN);
    int passing = 0;
    for (int i = 0; i < kN; ++i)
      passing += i % 3 == 1 && sizeOf(i) >= 10 && sizeOf(i) <= 100;
    QCOMPARE(j["passing"].toInt(), passing);
    QJsonObject kind;
    for (const QJsonValue& f : j["facets"].toArray())
      if (f["column"].toString() == "kind")
        kind = f.toObject();
    QCOMPARE(kind["kind"].toString(), QString("categorical"));
    QCOMPARE(kind["total"].toArray().size(), 3);
    // One column, as text; a column the data lacks: exit 2, the columns named.
    QProcess one;
    one.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"facets", m_data, "--column", "kind"});
    QVERIFY(one.waitForFinished(60000));
    QCOMPARE(one.exitCode(), 0);
    const QByteArray text = one.readAllStandardOutput();
    QVERIFY2(text.contains("k0") && text.contains("200") && !text.contains("size"), text);
    QProcess bad;
    bad.start(QStringLiteral(NEARSCAPE_CLI_PATH), {"facets", m_data, "--filter", "colour=red"});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 2);
    QVERIFY(bad.readAllStandardError().contains("kind, size, score"));
  }
};

QTEST_MAIN(TestFacets)
#include "tst_facets.moc"
