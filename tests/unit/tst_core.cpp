// Core pieces: sizes, metrics, job control, PCA against a known answer, map picking.
#include "nearscape/Nearscape.h"
#include "util/RowValues.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace nearscape;

class TestCore : public QObject {
  Q_OBJECT

private slots:
  void byteSizes() {
    QCOMPARE(parseByteSize("4096"), std::uint64_t(4096));
    QCOMPARE(parseByteSize("2G"), std::uint64_t(2) << 30);
    QCOMPARE(parseByteSize("512M"), std::uint64_t(512) << 20);
    QCOMPARE(parseByteSize("1.5GiB"), std::uint64_t(3) << 29);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseByteSize("lots"));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseByteSize("3Q"));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, parseByteSize("-1G"));
  }

  void metricsParse() {
    QCOMPARE(int(*parseMetric("angular")), int(Metric::Cosine));
    QCOMPARE(int(*parseMetric("euclidean")), int(Metric::L2));
    QCOMPARE(int(*parseMetric("ip")), int(Metric::InnerProduct));
    QVERIFY(!parseMetric("hamming"));
  }

  void jobControlRateLimitsAndStops() {
    int calls = 0;
    double last = -1;
    JobControl job(
        [&](double f, const std::string&) {
          ++calls;
          last = f;
        },
        std::chrono::milliseconds(10000));
    for (int i = 0; i < 100; ++i)
      job.progress(i / 100.0);
    job.progress(1.0);
    QCOMPARE(calls, 2); // the first, then the final one
    QCOMPARE(last, 1.0);
    job.check();
    job.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled, job.check());
  }

  void jobStagesComposeProgressAndStop() {
    std::vector<double> seen;
    std::vector<std::string> messages;
    JobControl job(
        [&](double f, const std::string& m) {
          seen.push_back(f);
          messages.push_back(m);
        },
        std::chrono::milliseconds(0));
    {
      JobControl first = job.sub(0.0, 0.25);
      first.progress(0.0, "truth");
      first.progress(1.0, "truth");
      JobControl second = job.sub(0.25, 1.0);
      JobControl nested = second.sub(0.5, 1.0); // the second half of the second stage
      nested.progress(0.0, "sweep");
      nested.progress(0.5, "sweep");
      nested.progress(2.0, "sweep"); // clamped to its stage
    }
    const std::vector<double> expected = {0.0, 0.25, 0.625, 0.8125, 1.0};
    QCOMPARE(seen.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
      QVERIFY2(std::abs(seen[i] - expected[i]) < 1e-12, qPrintable(QString::number(seen[i])));
    QCOMPARE(messages.back(), std::string("sweep"));
    // A stop of the whole job stops every stage; a stage's own stop leaves the job running.
    JobControl stage = job.sub(0.0, 0.5);
    JobControl inner = stage.sub(0.0, 1.0);
    inner.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled, inner.check());
    stage.check();
    job.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled, stage.check());
    QVERIFY(stage.sub(0, 1).stopRequested());
  }

  void contentHashDependsOnShapeAndBytes() {
    std::vector<float> v = {1, 2, 3, 4, 5, 6};
    const std::string a = contentHash({v.data(), 2, 3});
    QCOMPARE(a, contentHash({v.data(), 2, 3}));
    QVERIFY(a != contentHash({v.data(), 3, 2}));
    v[5] = 7;
    QVERIFY(a != contentHash({v.data(), 2, 3}));
  }

  /// The data's check against a plain float64 loop — row by row through both versions of its
  /// row scan (the baseline's loop and the one this CPU runs, AVX2 where it has it), and over
  /// the whole matrix — at widths around the vector lanes (tails of 0–15 values), with NaN,
  /// ±Inf, subnormals, −0 and large values (squares within float's range and past it) anywhere.
  void nonFiniteScanMatchesAPlainLoop() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
    const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 1e-40f, -0.0f, 1e15f, -3e19f};
    const simd::RowValuesKernel kernels[] = {simd::rowValuesBaseline(), simd::rowValuesKernel()};
    for (int d = 1; d <= 41; ++d) {
      const std::int64_t rows = 40;
      std::vector<float> v(static_cast<std::size_t>(rows * d));
      for (auto& x : v)
        x = uniform(rng);
      for (int s = 0; s < 12; ++s) // a few rows get a special value somewhere
        v[std::size_t(rng() % v.size())] = specials[rng() % std::size(specials)];
      std::int64_t count = 0, first = -1;
      double maxAbs = 0, maxSquaredNorm = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* x = v.data() + r * d;
        std::int64_t bad = 0;
        double largest = 0, norm2 = 0;
        float norm2Float = 0;
        for (int c = 0; c < d; ++c) {
          if (!std::isfinite(x[c])) {
            ++bad;
            if (first < 0)
              first = r * d + c;
            continue;
          }
          largest = std::max(largest, double(std::fabs(x[c])));
          norm2 += double(x[c]) * double(x[c]);
          norm2Float += x[c] * x[c];
        }
        for (const simd::RowValuesKernel kernel : kernels) {
          const simd::RowValues got = kernel(x, d);
          QCOMPARE(got.nonFinite, bad);
          QCOMPARE(double(got.largest), largest);
          if (std::isinf(norm2Float)) // past float's range: +Inf, summed again in float64
            QVERIFY2(std::isinf(got.squared), qPrintable(QString("d = %1, row %2").arg(d).arg(r)));
          else // float32 sums in another order, subnormals' squares lost: within their rounding
            QVERIFY2(std::fabs(double(got.squared) - norm2) <= 1e-5 * norm2 + 1e-30,
                     qPrintable(QString("d = %1, row %2: %3 vs %4")
                                    .arg(d)
                                    .arg(r)
                                    .arg(double(got.squared))
                                    .arg(norm2)));
        }
        count += bad;
        maxAbs = std::max(maxAbs, largest);
        if (bad == 0)
          maxSquaredNorm = std::max(maxSquaredNorm, norm2);
      }
      const NonFiniteScan scan = scanNonFinite(MatrixView<float>{v.data(), rows, d});
      QCOMPARE(scan.count, count);
      QCOMPARE(scan.firstRow, count ? first / d : -1);
      QCOMPARE(scan.firstCol, count ? first % d : -1);
      QCOMPARE(scan.maxAbs, maxAbs);
      QVERIFY(std::fabs(scan.maxSquaredNorm - maxSquaredNorm) <= 1e-5 * maxSquaredNorm);
    }
  }

  void pcaFindsKnownAxes() {
    // Points spread along two known orthogonal axes with standard deviations 10 and 3, plus
    // tiny noise, shifted by a known mean: PCA must return those axes, variances and mean.
    const int n = 20000, d = 6;
    const double u[d] = {0.6, 0.8, 0, 0, 0, 0};
    const double w[d] = {0, 0, 0.0, 0.6, -0.8, 0};
    const double mean[d] = {5, -3, 2, 1, 0, 7};
    std::mt19937_64 rng(11);
    std::normal_distribution<double> normal;
    std::vector<float> x(std::size_t(n) * d);
    for (int i = 0; i < n; ++i) {
      const double a = 10 * normal(rng), b = 3 * normal(rng);
      for (int j = 0; j < d; ++j)
        x[std::size_t(i) * d + j] = float(mean[j] + a * u[j] + b * w[j] + 0.01 * normal(rng));
    }
    PcaParams params;
    params.components = 2;
    const PcaResult r = computePca({x.data(), n, d}, params, Context{});
    QCOMPARE(r.coordinates.rows(), n);
    QCOMPARE(r.coordinates.cols(), 2);
    for (int j = 0; j < d; ++j) {
      QVERIFY2(std::abs(r.axes[j] - u[j]) < 5e-3, qPrintable(QString::number(r.axes[j])));
      // The sign rule makes the largest-magnitude entry positive: w's is −0.8 → flipped.
      QVERIFY2(std::abs(r.axes[d + j] + w[j]) < 5e-3, qPrintable(QString::number(r.axes[d + j])));
      QVERIFY(std::abs(r.mean[j] - mean[j]) < 0.3);
    }
    QVERIFY(std::abs(r.variances[0] / 100.0 - 1) < 0.05);
    QVERIFY(std::abs(r.variances[1] / 9.0 - 1) < 0.05);
    // Coordinates are the centred projections.
    double dot = 0;
    for (int j = 0; j < d; ++j)
      dot += (x[j] - r.mean[j]) * r.axes[j];
    QVERIFY(std::abs(r.coordinates.row(0)[0] - dot) < 1e-3);
  }

  void pcaWideDataMatchesPowerIteration() {
    // d > 128 takes the subspace iteration, which stops once its eigenvalues settle. A slowly
    // decaying spectrum (sd 10 · 0.97^j) makes an early stop visible: its axes must be the
    // sample covariance's top two eigenvectors (here by plain power iteration in float64, run
    // far past convergence), and its coordinates (one float32 GEMM) the centred projections.
    const int n = 4000, d = 300;
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal;
    std::vector<float> x(std::size_t(n) * d);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        x[std::size_t(i) * d + j] = float(j % 7 + 10 * std::pow(0.97, j) * normal(rng));
    PcaParams params;
    params.components = 2;
    const PcaResult r = computePca({x.data(), n, d}, params, Context{});

    std::vector<double> mean(d, 0.0), cov(std::size_t(d) * d, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        mean[j] += x[std::size_t(i) * d + j] / double(n);
    std::vector<double> centred(d);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < d; ++j)
        centred[j] = x[std::size_t(i) * d + j] - mean[j];
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b)
          cov[std::size_t(a) * d + b] += centred[a] * centred[b];
    }
    std::vector<std::vector<double>> axes;
    for (int c = 0; c < 2; ++c) {
      std::vector<double> v(d, 1.0), next(d);
      for (int iter = 0; iter < 3000; ++iter) {
        for (const auto& found : axes) { // deflation: stay orthogonal to the axes found
          double along = 0;
          for (int j = 0; j < d; ++j)
            along += v[j] * found[j];
          for (int j = 0; j < d; ++j)
            v[j] -= along * found[j];
        }
        double norm = 0;
        for (int a = 0; a < d; ++a) {
          next[a] = 0;
          for (int b = 0; b < d; ++b)
            next[a] += cov[std::size_t(a) * d + b] * v[b];
          norm += next[a] * next[a];
        }
        for (int j = 0; j < d; ++j)
          v[j] = next[j] / std::sqrt(norm);
      }
      axes.push_back(v);
    }
    for (int c = 0; c < 2; ++c) {
      double along = 0;
      for (int j = 0; j < d; ++j)
        along += r.axes[c * d + j] * axes[c][j];
      QVERIFY2(1 - std::abs(along) < 1e-7, qPrintable(QString("axis %1: %2").arg(c).arg(along)));
    }
    for (int i : {0, 1, 1234, n - 1})
      for (int c = 0; c < 2; ++c) {
        double dot = 0, scale = 0;
        for (int j = 0; j < d; ++j) {
          dot += (double(x[std::size_t(i) * d + j]) - r.mean[j]) * r.axes[c * d + j];
          scale += std::abs((double(x[std::size_t(i) * d + j]) - r.mean[j]) * r.axes[c * d + j]);
        }
        QVERIFY2(
            std::abs(r.coordinates.row(i)[c] - dot) <= 1e-5 * scale + 1e-6,
            qPrintable(QString("row %1: %2 vs %3").arg(i).arg(r.coordinates.row(i)[c]).arg(dot)));
      }
  }

  void pcaRejectsBadInput() {
    std::vector<float> x = {1, 2, NAN, 4};
    PcaParams params;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, computePca({x.data(), 2, 2}, params, Context{}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, computePca({x.data(), 0, 2}, params, Context{}));
    params.components = 3;
    x[2] = 3;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, computePca({x.data(), 2, 2}, params, Context{}));
    JobControl job;
    job.requestStop();
    params.components = 1;
    QVERIFY_THROWS_EXCEPTION(Cancelled, computePca({x.data(), 2, 2}, params, Context{}, job));
  }

  void labelsInNaturalOrder() {
    QVERIFY(naturalLess("item2", "item10"));
    QVERIFY(!naturalLess("item10", "item2"));
    QVERIFY(naturalLess("a", "b"));
    QVERIFY(naturalLess("v1", "v1a"));
    QVERIFY(naturalLess("x9y", "x10"));
    QVERIFY(naturalLess("v01", "v1") != naturalLess("v1", "v01")); // a total order
    QVERIFY(!naturalLess("same", "same"));
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(5 * 2, 0.0f), 5, 2);
    ds.metadata.columnNames = {"label"};
    ds.metadata.columns = {{"class10", "class2", "class1", "class2", "Class3"}};
    attachMetadata(ds, ds.metadata, "test");
    QCOMPARE(ds.labelNames, (std::vector<std::string>{"Class3", "class1", "class2", "class10"}));
    QCOMPARE(ds.labelOf(0), std::string("class10"));
    // A column's categories: most frequent first, ties in natural order.
    const ColumnValues v = readColumn(ds, 0);
    QCOMPARE(v.categories, (std::vector<std::string>{"class2", "Class3", "class1", "class10"}));
  }

  void findItemsByIdAndText() {
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(5 * 2, 0.0f), 5, 2);
    ds.metadata.columnNames = {"label", "title"};
    ds.metadata.columns = {{"cat", "dog", "Cat", "bird", "dog"},
                           {"A Tabby", "Hound", "kitten", "Finch", "cathedral dog"}};
    attachMetadata(ds, ds.metadata, "test");
    auto find = [&](const std::string& text, MatchMode mode = MatchMode::Substring) {
      return findItems(ds, text, mode);
    };
    QCOMPARE(find("CAT"), (std::vector<std::int64_t>{0, 2, 4})); // labels and titles, any case
    QCOMPARE(find("3"), (std::vector<std::int64_t>{3}));         // an id
    QCOMPARE(find("9"), std::vector<std::int64_t>{});            // no such id, no text
    QCOMPARE(find(""), std::vector<std::int64_t>{});
    QCOMPARE(find("^(dog|bird)$", MatchMode::Regex), (std::vector<std::int64_t>{1, 3, 4}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, find("(", MatchMode::Regex));
  }

  void searchAndColumnsStopWhenAsked() {
    // The explorer runs them in the background and stops one when a new one starts.
    Dataset ds;
    const std::size_t n = 50000;
    ds.vectors = Matrix<float>(std::vector<float>(n, 0.0f), std::int64_t(n), 1);
    ds.metadata.columnNames = {"text", "score"};
    ds.metadata.columns.resize(2);
    for (std::size_t i = 0; i < n; ++i) {
      ds.metadata.columns[0].push_back("item " + std::to_string(i % 977));
      ds.metadata.columns[1].push_back(std::to_string(i % 13));
    }
    JobControl stopped;
    stopped.requestStop();
    QVERIFY_THROWS_EXCEPTION(Cancelled, findItems(ds, "item 5", MatchMode::Substring, stopped));
    QVERIFY_THROWS_EXCEPTION(Cancelled, findItems(ds, "item.5", MatchMode::Regex, stopped));
    QVERIFY_THROWS_EXCEPTION(Cancelled, readColumn(ds, 0, stopped));
    QVERIFY_THROWS_EXCEPTION(Cancelled, readColumn(ds, 1, stopped));
    // Progress as it goes; the same result as without a job.
    double last = 0;
    int reports = 0;
    JobControl watched(
        [&](double f, const std::string&) {
          QVERIFY(f >= last);
          last = f;
          ++reports;
        },
        std::chrono::milliseconds(0));
    const auto found = findItems(ds, "ITEM 97", MatchMode::Substring, watched);
    QCOMPARE(found, findItems(ds, "item 97", MatchMode::Substring));
    const auto expected =
        std::count_if(ds.metadata.columns[0].begin(), ds.metadata.columns[0].end(),
                      [](const std::string& v) { return v.find("item 97") != std::string::npos; });
    QCOMPARE(std::int64_t(found.size()), std::int64_t(expected)); // item 97, 970 … 976
    QVERIFY(reports > 5);
    // Categories by hashing: most frequent first, ties in natural order, as before.
    const ColumnValues text = readColumn(ds, 0);
    QCOMPARE(text.categories.size(), std::size_t(977));
    QCOMPARE(text.categories.front(), std::string("item 0")); // 52 each for 0 … 172, then 51
    QCOMPARE(text.categories[1], std::string("item 1"));
    QCOMPARE(text.categories[2], std::string("item 2"));
    QCOMPARE(text.counts.front(), std::int64_t(52));
    QCOMPARE(text.counts.back(), std::int64_t(51));
    QCOMPARE(text.categories.back(), std::string("item 976"));
    for (std::size_t i = 0; i < n; i += 101)
      QCOMPARE(text.categories[std::size_t(text.category[i])], ds.metadata.columns[0][i]);
    // The summary agrees with the whole read, and stops counting past its limit.
    QVERIFY(summarizeColumn(ds, 1, 5).numeric);
    QCOMPARE(summarizeColumn(ds, 0, 5000).distinct, std::int64_t(977));
    QCOMPARE(summarizeColumn(ds, 0, 100).distinct, std::int64_t(101));
    QVERIFY(!summarizeColumn(ds, 0, 100).numeric);
    QVERIFY_THROWS_EXCEPTION(Cancelled, summarizeColumn(ds, 1, 5, stopped));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, summarizeColumn(ds, 2, 5));
  }

  void oneColumnHeaderHints() {
    auto hint = [](std::vector<std::string> values) {
      Metadata m;
      m.columnNames = {"label"};
      m.columns = {std::move(values)};
      return oneColumnHeaderHint(m, "m.tsv");
    };
    // A column name at the top, found nowhere below it; any case.
    for (const char* name :
         {"label", "CLASS", "Text", "title", "name", "description", "image", "path", "filepath"})
      QVERIFY2(!hint({name, "a", "b", "a"}).empty(), name);
    const std::string text = hint({"class", "a", "b"});
    QVERIFY2(text.starts_with("m.tsv: ") && text.find("'class'") != std::string::npos &&
                 text.find("item 0's value") != std::string::npos &&
                 text.find("second column") != std::string::npos,
             text.c_str());
    QVERIFY(hint({"label", "a", "label"}).empty()); // a category that happens to be "label"
    QVERIFY(hint({"cat", "a", "b"}).empty());
    QVERIFY(hint({"label"}).empty()); // one row: nothing to compare
    // A word above numbers (empty values allowed); a number at the top is a value.
    QVERIFY(!hint({"score", "1", " 2.5", "", "-3e2", "+4"}).empty());
    QVERIFY(hint({"7", "1", "2"}).empty());
    QVERIFY(hint({"score", "1", "two", "3"}).empty());
    QVERIFY(hint({"score", "", ""}).empty());
    QVERIFY(hint({"", "1", "2"}).empty());
    // Several columns have a header row already.
    Metadata two;
    two.columnNames = {"label", "text"};
    two.columns = {{"label", "a"}, {"x", "y"}};
    QVERIFY(oneColumnHeaderHint(two, "m.tsv").empty());
    // Control characters from the file are shown escaped.
    QVERIFY(hint({"\x1b[31mscore", "1", "2"}).find("\x1b") == std::string::npos);
  }

  void columnsReadAsNumbersOrCategories() {
    Dataset ds;
    ds.vectors = Matrix<float>(std::vector<float>(6, 0.0f), 6, 1);
    ds.metadata.columnNames = {"score", "kind", "mixed"};
    ds.metadata.columns = {{"1.5", " -2", "", "+3e1", "0", "7"},
                           {"b", "a", "b", "c", "a", "b"},
                           {"1", "2", "x", "4", "5", "6"}};
    const ColumnValues score = readColumn(ds, 0);
    QVERIFY(score.numeric);
    QCOMPARE(score.minimum, -2.0);
    QCOMPARE(score.maximum, 30.0);
    QVERIFY(std::isnan(score.numbers[2])); // empty: no value
    const ColumnValues kind = readColumn(ds, 1);
    QVERIFY(!kind.numeric);
    QCOMPARE(kind.categories, (std::vector<std::string>{"b", "a", "c"})); // most frequent first
    QCOMPARE(kind.counts, (std::vector<std::int64_t>{3, 2, 1}));
    QCOMPARE(kind.category[3], 2);
    QVERIFY(!readColumn(ds, 2).numeric); // one word makes it categorical
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, readColumn(ds, 3));
  }

  void pointGridMatchesBruteForce() {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal;
    const int n = 5000;
    std::vector<float> xy(2 * n);
    for (auto& v : xy)
      v = normal(rng);
    const PointGrid grid({xy.data(), n, 2});
    for (int q = 0; q < 300; ++q) {
      const double x = normal(rng) * 1.5, y = normal(rng) * 1.5, radius = 0.05 + q * 0.002;
      std::int64_t best = -1;
      double bestD = radius * radius;
      for (int i = 0; i < n; ++i) {
        if (i % 3 == 0)
          continue; // the filter below hides these
        const double dx = xy[2 * i] - x, dy = xy[2 * i + 1] - y, dd = dx * dx + dy * dy;
        if (dd < bestD || (dd == bestD && best >= 0 && i < best)) {
          bestD = dd;
          best = i;
        }
      }
      QCOMPARE(grid.nearest(x, y, radius, [](std::int64_t i) { return i % 3 != 0; }), best);
    }
  }
};

QTEST_GUILESS_MAIN(TestCore)
#include "tst_core.moc"
