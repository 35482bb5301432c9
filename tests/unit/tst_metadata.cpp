// Metadata as files come: which column labels the items (label, class, the only one), many
// distinct values, the text and image columns by name, CRLF line ends, a UTF-8 byte-order mark,
// negative numbers, empty cells and quotes — read by the engine, and coloured by the explorer.
#include "TestFiles.h"

#include "nearscape/Nearscape.h"
#include "nearscape/core/ItemSearch.h"

#ifdef NEARSCAPE_TEST_UI
#include "Colouring.h"
#endif

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <future>
#include <set>

using namespace nearscape;
using namespace nearscape::test;

class TestMetadata : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  int m_files = 0;

  /// `n` random items of 2 dimensions with `meta` as their metadata file (<stem>.meta.tsv),
  /// opened as asked for (--meta: any problem is an error) or, with `sidecar`, as found beside
  /// the data.
  Dataset open(std::int64_t n, const QByteArray& meta, bool sidecar = false) {
    const QString stem = m_dir.filePath(QString("m%1").arg(m_files++));
    if (!writeBytes(stem + ".npy", npyBytes("<f4", {n, 2}, rawBytes(randomFloats(2 * n, 9)))) ||
        !writeBytes(stem + ".meta.tsv", meta))
      throw std::runtime_error("cannot write the test files");
    OpenOptions options;
    if (!sidecar)
      options.metaPath = (stem + ".meta.tsv").toStdString();
    return openDataset((stem + ".npy").toStdString(), options);
  }
  /// Each item's label name, as the explorer shows it.
  static std::vector<std::string> labelsOf(const Dataset& ds) {
    std::vector<std::string> out;
    for (std::int64_t i = 0; i < ds.size(); ++i)
      out.push_back(ds.labelOf(i));
    return out;
  }
  template <typename Error> static QString errorOf(const std::function<void()>& body) {
    try {
      body();
    } catch (const Error& e) {
      return QString::fromStdString(e.what());
    }
    return {};
  }

private slots:
  void classColumnLabelsTheItems() {
    // "class" (any case) labels the items when there is no "label"; "label" wins over it.
    Dataset ds = open(4, "id\tClass\tnote\n1\tdog\tx\n2\tcat\ty\n3\tdog\tz\n4\tbird\tw\n");
    QVERIFY(ds.hasLabels());
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"bird", "cat", "dog"}));
    QCOMPARE(labelsOf(ds), (std::vector<std::string>{"dog", "cat", "dog", "bird"}));
    QVERIFY2(QString::fromStdString(ds.labelSource).endsWith("(Class)"), ds.labelSource.c_str());
    QCOMPARE(ds.metadata.columnNames.size(), std::size_t(3)); // every column kept
    ds = open(3, "class\tLabel\na\tx\nb\ty\na\tz\n");
    QCOMPARE(labelsOf(ds), (std::vector<std::string>{"x", "y", "z"}));
    // Neither name and several columns: no labels, the columns still there.
    ds = open(2, "kind\tnote\na\tb\nc\td\n");
    QVERIFY(!ds.hasLabels());
    QCOMPARE(ds.metadata.columns[0], (std::vector<std::string>{"a", "c"}));
    // One column: the labels, without a header row.
    ds = open(3, "b\na\nb\n");
    QCOMPARE(labelsOf(ds), (std::vector<std::string>{"b", "a", "b"}));
  }

  void labelsInNumericAndNaturalOrder() {
    // Integer labels, negative ones too, in numeric order; other names in natural order.
    Dataset ds = open(6, "label\tx\n10\ta\n-3\tb\n2\tc\n-12\td\n2\te\n0\tf\n");
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"-12", "-3", "0", "2", "10"}));
    QCOMPARE(labelsOf(ds), (std::vector<std::string>{"10", "-3", "2", "-12", "2", "0"}));
    ds = open(4, "item10\nitem2\nitem1\nItem3\n");
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"Item3", "item1", "item2", "item10"}));
    // Integers beyond 64 bits are names, not numbers (no overflow).
    ds = open(3, "99999999999999999999\n5\n-99999999999999999999\n");
    QCOMPARE(ds.labelNames.size(), std::size_t(3));
    QCOMPARE(labelsOf(ds)[1], std::string("5"));
  }

  void manyDistinctValues() {
    // Up to 1,000 distinct values label the items; beyond, a label column of several is an
    // identifier and labels nothing (its values stay as metadata); one column always labels.
    for (const int distinct : {1000, 1001}) {
      QByteArray meta = "label\tgroup\n";
      for (int i = 0; i < 2 * distinct; ++i)
        meta += "v" + QByteArray::number(i % distinct) + "\tg" + QByteArray::number(i % 7) + "\n";
      const Dataset ds = open(2 * distinct, meta);
      QCOMPARE(ds.hasLabels(), distinct <= 1000);
      QCOMPARE(ds.metadata.rows(), std::int64_t(2 * distinct));
      if (ds.hasLabels()) {
        QCOMPARE(ds.labelNames.size(), std::size_t(distinct));
        QCOMPARE(ds.labelOf(1500), "v" + std::to_string(1500 % distinct));
      }
      const ColumnValues values = readColumn(ds, 0);
      QVERIFY(!values.numeric);
      QCOMPARE(values.categories.size(), std::size_t(distinct));
      for (const std::int64_t count : values.counts)
        QCOMPARE(count, std::int64_t(2));
      QCOMPARE(values.categories[values.category[std::size_t(distinct + 5)]],
               "v" + std::to_string(5));
      QCOMPARE(summarizeColumn(ds, 0, 50).distinct, std::int64_t(51)); // counted up to the limit
      QCOMPARE(summarizeColumn(ds, 1, 50).distinct, std::int64_t(7));
    }
    QByteArray single;
    for (int i = 0; i < 1500; ++i)
      single += "w" + QByteArray::number(i) + "\n";
    const Dataset one = open(1500, single);
    QCOMPARE(one.labelNames.size(), std::size_t(1500));
    QCOMPARE(one.labelOf(1499), std::string("w1499"));
  }

  void textAndImageColumnsByName() {
    // The text column by name, in the documented order of preference; image paths by theirs.
    for (const char* name : {"text", "Title", "NAME", "description", "caption"}) {
      const Dataset ds =
          open(2, QByteArray("label\tscore\t") + name + "\na\t1\tfirst\nb\t2\tsecond\n");
      QCOMPARE(ds.textColumn, 2);
      QCOMPARE(ds.textOf(1), std::string("second"));
    }
    Dataset ds = open(2, "caption\ttitle\tlabel\tText\nc1\tt1\tx\tx1\nc2\tt2\ty\tx2\n");
    QCOMPARE(ds.textOf(0), std::string("x1")); // "text" before "title" before "caption"
    // Two columns, one the label: the other is the text unless it names images.
    ds = open(2, "label\tremark\na\tfree words\nb\tmore words\n");
    QCOMPARE(ds.textOf(1), std::string("more words"));
    for (const char* name : {"image", "image_path", "filepath", "file", "path"}) {
      ds = open(2, QByteArray("label\t") + name + "\na\tpics/a.png\nb\t/abs/b.png\n");
      QCOMPARE(ds.imageColumn, 1);
      QCOMPARE(ds.textColumn, -1);
      QVERIFY2(QString::fromStdString(ds.imagePathOf(0)).endsWith(m_dir.path() + "/pics/a.png"),
               ds.imagePathOf(0).c_str());
      QCOMPARE(ds.imagePathOf(1), std::string("/abs/b.png"));
    }
    // Other names are plain columns: no text, no images, searchable all the same.
    ds = open(3, "species\thabitat\nowl\twood\nfox\tfield\neel\tsea\n");
    QCOMPARE(ds.textColumn, -1);
    QCOMPARE(ds.imageColumn, -1);
    QCOMPARE(findItems(ds, "FIELD", MatchMode::Substring), (std::vector<std::int64_t>{1}));
  }

  void crlfAndByteOrderMark() {
    // Windows files: CRLF line ends and a leading BOM are not part of any value or name.
    const QByteArray bom = "\xEF\xBB\xBF";
    Dataset ds = open(3, bom + "label\tcaption\r\ncat\tTabby cat\r\ndog\tHound\r\ncat\tKitten\r\n",
                      /*sidecar=*/true);
    QVERIFY(ds.warnings.empty());
    QCOMPARE(ds.metadata.columnNames, (std::vector<std::string>{"label", "caption"}));
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"cat", "dog"}));
    QCOMPARE(ds.textOf(1), std::string("Hound"));
    QCOMPARE(findItems(ds, "(tabby cat|hound)$", MatchMode::Regex),
             (std::vector<std::int64_t>{0, 1})); // no '\r' before the end
    // One column, BOM and CRLF, no final line end: three items.
    ds = open(3, bom + "7\r\n-2\r\n7");
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"-2", "7"}));
    QCOMPARE(labelsOf(ds), (std::vector<std::string>{"7", "-2", "7"}));
    // A BOM-only header line that names "class" still finds it.
    ds = open(2, bom + "class\tx\r\na\t1\r\nb\t2\r\n");
    QVERIFY(ds.hasLabels());
    const ColumnValues x = readColumn(ds, 1);
    QVERIFY(x.numeric);
    QCOMPARE(x.numbers, (std::vector<double>{1, 2}));
    // Rows are counted without the final line end: CRLF files match their items exactly.
    const QString error = errorOf<FormatError>([&] { open(4, "label\tx\r\na\t1\r\nb\t2\r\n"); });
    QVERIFY2(error.contains("2 rows but the data has 4 items"), qPrintable(error));
  }

  void negativeNumbersAndEmptyCells() {
    // A column of numbers (negative, exponents, '+', blanks around) reads as numbers; empty
    // cells are no value (NaN) and do not make it text; anything else does.
    Dataset ds = open(7, "label\tscore\tnote\n"
                         "a\t-1.5\t\n"
                         "b\t\tx\n"
                         "c\t-2e3\t\n"
                         "d\t+4\t\n"
                         "e\t  7 \t\n"
                         "f\t \t\n"
                         "\t0\t\n");
    ColumnValues score = readColumn(ds, 1);
    QVERIFY(score.numeric);
    QCOMPARE(score.minimum, -2000.0);
    QCOMPARE(score.maximum, 7.0);
    QCOMPARE(score.numbers[0], -1.5);
    QVERIFY(std::isnan(score.numbers[1]) && std::isnan(score.numbers[5]));
    QCOMPARE(score.numbers[3], 4.0);
    QCOMPARE(score.numbers[6], 0.0);
    QVERIFY(summarizeColumn(ds, 1, 10).numeric);
    // The empty label is a category of its own; an almost empty column is still text.
    QCOMPARE(ds.labelNames.front(), std::string());
    QCOMPARE(ds.labelOf(6), std::string());
    const ColumnValues note = readColumn(ds, 2);
    QVERIFY(!note.numeric);
    QCOMPARE(note.categories, (std::vector<std::string>{"", "x"}));
    QCOMPARE(note.counts, (std::vector<std::int64_t>{6, 1}));
    // Not finite, or not a whole number: text.
    for (const char* value : {"nan", "inf", "-", "1,5", "3 4", "0x10", "--2"}) {
      ds = open(2, QByteArray("label\tv\na\t1\nb\t") + value + "\n");
      QVERIFY2(!readColumn(ds, 1).numeric, value);
      QVERIFY2(!summarizeColumn(ds, 1, 10).numeric, value);
    }
    // Every cell empty: no numbers at all, so one (empty) category.
    ds = open(2, "label\tv\na\t\nb\t\n");
    QVERIFY(!readColumn(ds, 1).numeric);
  }

  void quotesAreText() {
    // TSV as TensorBoard reads it: no quoting, a quote is a character of the value.
    const Dataset ds = open(2, "label\ttext\n\"cat, dog\"\t\"said \"\"hi\"\"\"\nbird\t'x'\n");
    QCOMPARE(ds.labelOf(0), std::string("\"cat, dog\""));
    QCOMPARE(ds.textOf(0), std::string("\"said \"\"hi\"\"\""));
    QCOMPARE(ds.textOf(1), std::string("'x'"));
  }

  void malformedMetadataIsNamed() {
    // Ragged rows, invalid UTF-8 and an empty file: FormatError naming the file and the line.
    QString error = errorOf<FormatError>([&] { open(2, "label\tx\na\t1\nb\t2\textra\n"); });
    QVERIFY2(error.contains(".meta.tsv: line 3 has 3 columns, the header has 2"),
             qPrintable(error));
    error = errorOf<FormatError>([&] { open(2, "label\tx\na\t1\nb\t\xff\n"); });
    QVERIFY2(error.contains("invalid UTF-8") && error.contains("line 3"), qPrintable(error));
    error = errorOf<FormatError>([&] { open(2, ""); });
    QVERIFY2(error.contains("empty"), qPrintable(error));
    // Asked for explicitly, a file of other rows is refused with both counts.
    const QString meta = m_dir.filePath("other-rows.tsv"), data = m_dir.filePath("rows.npy");
    QVERIFY(writeBytes(meta, "a\nb\nc\n"));
    QVERIFY(writeBytes(data, npyBytes("<f4", {5, 2}, rawBytes(randomFloats(10, 3)))));
    OpenOptions options;
    options.metaPath = meta.toStdString();
    error = errorOf<FormatError>([&] { openDataset(data.toStdString(), options); });
    QVERIFY2(error.contains("3 rows but the data has 5 items"), qPrintable(error));
  }

  void regexSearchIsLinearTime() {
    // std::regex recursed once a character (SIGSEGV on a 50,000-character value) and took
    // 2^35 steps for (a+)+$ over 35 characters; RE2 takes milliseconds, in any case.
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(4, 0.0f), 4, 1);
    ds.metadata.columnNames = {"title"};
    ds.metadata.columns = {
        {std::string(50000, 'a'), std::string(34, 'a') + "b", std::string(35, 'A'), "x!"}};
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(findItems(ds, "a*b", MatchMode::Regex), std::vector<std::int64_t>{1});
    QCOMPARE(findItems(ds, "(a+)+$", MatchMode::Regex), (std::vector<std::int64_t>{0, 2}));
    QCOMPARE(findItems(ds, "^(A|a)*B$", MatchMode::Regex), std::vector<std::int64_t>{1});
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString("%1 ms").arg(clock.elapsed())));
    // RE2's reason for a pattern it does not take.
    QString error = errorOf<InvalidArgument>([&] { findItems(ds, "(", MatchMode::Regex); });
    QVERIFY2(error.contains("'(' is not a regular expression: missing ): ("), qPrintable(error));
    error = errorOf<InvalidArgument>(
        [&] { findItems(ds, "((a{1000}){1000}){1000}", MatchMode::Regex); });
    QVERIFY2(error.contains("invalid repetition size"), qPrintable(error));
    // A pattern whose program would outgrow RE2's memory bound is refused, not run.
    error = errorOf<InvalidArgument>([&] { findItems(ds, "\\pL{1000}", MatchMode::Regex); });
    QVERIFY2(error.contains("pattern too large"), qPrintable(error));
  }

  void regexSearchStopsWithin200ms() {
    // A pattern RE2's automaton cannot cache (it falls back to simulating all states) over 20,000
    // values of 1,000 random letters: seconds of work. Cancel, once it reports progress, ends it
    // within 200 ms (the stop was looked for every 4096 items: several seconds apart).
    Dataset ds;
    constexpr std::int64_t n = 20000;
    ds.vectors = Matrix<float>(std::vector<float>(std::size_t(n), 0.0f), n, 1);
    ds.metadata.columnNames = {"title"};
    ds.metadata.columns.resize(1);
    std::uint32_t state = 1;
    for (std::int64_t i = 0; i < n; ++i) {
      std::string value(1000, ' ');
      for (char& c : value) {
        state = state * 1664525u + 1013904223u;
        c = char('a' + (state >> 16) % 26);
      }
      ds.metadata.columns[0].push_back(std::move(value));
    }
    std::promise<void> reported;
    std::atomic<bool> once{false};
    JobControl job(
        [&](double fraction, const std::string&) {
          if (fraction > 0 && !once.exchange(true))
            reported.set_value();
        },
        std::chrono::milliseconds(0));
    auto search = std::async(std::launch::async, [&] {
      try {
        findItems(ds, "[a-z]*a[a-z]{60}q9", MatchMode::Regex, job);
        return false;
      } catch (const Cancelled&) {
        return true;
      }
    });
    QVERIFY(reported.get_future().wait_for(std::chrono::seconds(120)) == std::future_status::ready);
    QElapsedTimer clock;
    clock.start();
    job.requestStop();
    search.wait();
    const qint64 ms = clock.elapsed();
    QVERIFY2(search.get(), "the search ended before Cancel: give it more work");
    qInfo("regex search stopped %lld ms after Cancel", ms);
    QVERIFY2(ms <= 200, qPrintable(QString("%1 ms after Cancel").arg(ms)));
  }

#ifdef NEARSCAPE_TEST_UI
  void explorerColoursManyCategories() {
    // More categories than colours: the 20 most frequent keep theirs, and past them the rare
    // ones (under 0.5 % of the items each) are one grey "other" group; identifier-like columns
    // are not offered for colouring, numbers are.
    QByteArray meta = "label\tbreed\tid\tweight\n";
    const int n = 400;
    for (int i = 0; i < n; ++i) {
      const int breed = i < 360 ? i % 10 : 10 + (i - 360); // ten frequent breeds, forty of one
      meta += "x\tb" + QByteArray::number(breed) + "\tid" + QByteArray::number(i) + "\t" +
              QByteArray::number(-0.5 * i) + "\n";
    }
    const Dataset ds = open(n, meta);
    const ui::ColourScheme s = ui::columnScheme(ds, 1);
    QCOMPARE(int(s.groupNames.size()), ui::kMaxCategories + 1);
    QCOMPARE(s.groupNames.back(), std::string("other (30 values)"));
    qint64 total = 0;
    for (const qint64 count : s.groupCounts)
      total += count;
    QCOMPARE(total, qint64(n));
    std::set<std::string> kept(s.groupNames.begin(), s.groupNames.end() - 1);
    for (int b = 0; b < 20; ++b) // the frequent ones, then the first rare ones by name
      QVERIFY(kept.count("b" + std::to_string(b)));
    for (int i = 0; i < n; ++i) {
      const std::string& name = ds.metadata.columns[1][std::size_t(i)];
      const bool other = !kept.count(name);
      QCOMPARE(s.group[std::size_t(i)] == ui::kMaxCategories, other);
      const QColor drawn(s.rgb[std::size_t(3 * i)], s.rgb[std::size_t(3 * i + 1)],
                         s.rgb[std::size_t(3 * i + 2)]);
      QCOMPARE(drawn == ui::missingColor(), other);
    }
    const ui::ColumnChoices choices = ui::columnChoices(ds);
    QCOMPARE(choices.colourable, (QStringList{"breed", "weight"}));
    QCOMPARE(choices.numeric, QStringList{"weight"});
    // Labels from a column named otherwise ("Class", "LABEL"): offered once, as "label".
    for (const char* name : {"Class", "LABEL"}) {
      const Dataset labelled =
          open(4, QByteArray(name) + "\tsize\ncat\t1\ndog\t2\ncat\t3\ndog\t4\n");
      QVERIFY(labelled.hasLabels());
      QCOMPARE(ui::columnChoices(labelled).colourable, QStringList{"size"});
    }
    // A "class" column beside "label" is no label: offered.
    const Dataset both = open(4, "label\tclass\na\tx\nb\ty\na\tx\nb\ty\n");
    QCOMPARE(ui::columnChoices(both).colourable, QStringList{"class"});
    const ui::ColourScheme weight = ui::columnScheme(ds, 3);
    QVERIFY(weight.numeric);
    QCOMPARE(weight.minimum, -0.5 * (n - 1));
    QCOMPARE(weight.maximum, 0.0);
  }
#endif
};

QTEST_GUILESS_MAIN(TestMetadata)
#include "tst_metadata.moc"
