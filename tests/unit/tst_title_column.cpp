// Which metadata column names items (core/TitleColumn): a column named as titles are, else a
// string column of short, mostly unique values, never the label, text or image column, and
// none when nothing fits.
#include "nearscape/core/TitleColumn.h"

#include <QTest>

#include <string>
#include <vector>

using namespace nearscape;

class TestTitleColumn : public QObject {
  Q_OBJECT

private:
  /// A data set of `n` rows whose metadata has `names` columns, `fill(c, i)` giving cell i of c.
  template <typename Fill>
  static Dataset withColumns(const std::vector<std::string>& names, std::size_t n, Fill fill) {
    Metadata m;
    m.columnNames = names;
    m.columns.resize(names.size());
    for (std::size_t c = 0; c < names.size(); ++c)
      for (std::size_t i = 0; i < n; ++i)
        m.columns[c].push_back(fill(c, i));
    Dataset ds;
    ds.metadata = std::move(m);
    return ds;
  }

private slots:
  void namedColumnWins() {
    // Debian's packages: section (the label), package, description (the text).
    Dataset ds =
        withColumns({"label", "Package", "description"}, 300, [](std::size_t c, std::size_t i) {
          return c == 0   ? std::string(i % 2 ? "utils" : "libs")
                 : c == 1 ? "pkg-" + std::to_string(i)
                          : "a long description of package number " + std::to_string(i);
        });
    ds.textColumn = 2;
    const TitleChoice choice = pickTitleColumn(ds);
    QCOMPARE(choice.column, 1);
    QCOMPARE(choice.reason, TitleReason::Named);
    QCOMPARE(titleOf(ds, choice.column, 7), std::string("pkg-7"));
    QCOMPARE(titleReasonName(choice.reason), std::string_view("named"));
    // "title" comes before "name"; a named column of few values is no title.
    ds = withColumns({"name", "title"}, 100, [](std::size_t c, std::size_t i) {
      return c == 0 ? std::string("same") : "t" + std::to_string(i);
    });
    QCOMPARE(pickTitleColumn(ds).column, 1);
    ds = withColumns({"name"}, 100,
                     [](std::size_t, std::size_t i) { return std::string(i % 3 ? "a" : "b"); });
    QCOMPARE(pickTitleColumn(ds).reason, TitleReason::None);
  }

  void mostlyUniqueShortStringsElse() {
    // slug: 95% distinct and short; code: all distinct but numbers; note: long sentences.
    Dataset ds =
        withColumns({"label", "code", "note", "slug"}, 1000, [](std::size_t c, std::size_t i) {
          switch (c) {
          case 0:
            return "c" + std::to_string(i); // unique, but the label column
          case 1:
            return std::to_string(1000 + i);
          case 2:
            return std::string(80, 'x') + std::to_string(i);
          default:
            return "w" + std::to_string(i < 50 ? 0 : i);
          }
        });
    TitleChoice choice = pickTitleColumn(ds);
    QCOMPARE(choice.column, 3);
    QCOMPARE(choice.reason, TitleReason::Unique);
    // The text column is a description, not a title.
    ds.textColumn = 3;
    QCOMPARE(pickTitleColumn(ds).column, -1);
    QCOMPARE(titleOf(ds, -1, 0), std::string());
    QCOMPARE(titleOf(ds, 3, 5000), std::string()); // out of range: nothing, no throw
  }

  void noneWithoutMetadataOrAtTheEdges() {
    QCOMPARE(pickTitleColumn(Dataset{}).column, -1);
    // 80% distinct: not enough.
    const Dataset ds = withColumns({"tag"}, 100, [](std::size_t, std::size_t i) {
      return "t" + std::to_string(i < 20 ? 0 : i);
    });
    QCOMPARE(pickTitleColumn(ds).column, -1);
  }
};

QTEST_APPLESS_MAIN(TestTitleColumn)
#include "tst_title_column.moc"
