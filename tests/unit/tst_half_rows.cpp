// The CPU graph walk's float16 rows (index/HalfRows.h): scores near float32's whatever the data's
// offset and range, early abandoning only above the bound, queries out of range refused.
#include "index/HalfRows.h"

#include <QTest>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

using namespace nearscape;
using namespace nearscape::index;

Q_DECLARE_METATYPE(nearscape::Metric)

namespace {

double exactScore(Metric metric, const float* q, const float* x, std::int64_t d) {
  double s = 0;
  for (std::int64_t j = 0; j < d; ++j)
    s += metric == Metric::L2 ? (double(q[j]) - x[j]) * (double(q[j]) - x[j])
                              : -double(q[j]) * double(x[j]);
  return s;
}

struct Aligned {
  explicit Aligned(std::int64_t n)
      : p(static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4)), &std::free) {}
  std::unique_ptr<float, decltype(&std::free)> p;
};

} // namespace

class TstHalfRows : public QObject {
  Q_OBJECT
private slots:
  void scoresFollowFloat32_data() {
    QTest::addColumn<Metric>("metric");
    QTest::addColumn<float>("offset");
    QTest::addColumn<float>("spread");
    // A large common offset would leave float16 (11 bits) no digits for the differences: L2
    // rows are centred first. Tiny and huge ranges: the power-of-two scale.
    QTest::newRow("l2 offset 1000") << Metric::L2 << 1000.0f << 0.01f;
    QTest::newRow("l2 tiny") << Metric::L2 << 0.0f << 1e-20f;
    QTest::newRow("l2 huge") << Metric::L2 << 0.0f << 1e20f;
    QTest::newRow("ip") << Metric::InnerProduct << 0.0f << 1.0f;
  }
  void scoresFollowFloat32() {
    QFETCH(Metric, metric);
    QFETCH(float, offset);
    QFETCH(float, spread);
    const std::int64_t n = 300, d = 77; // d not a multiple of the 32-half padding
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(std::size_t(n * d));
    for (std::int64_t j = 0; j < n * d; ++j) // dimensions of different variance
      x[std::size_t(j)] = offset + spread * float(1 + j % d) * normal(rng);
    const auto half = HalfRows::make({x.data(), n, d}, metric, 2);
    if (!half)
      QSKIP("this CPU has no AVX2 with F16C: the walk reads the float32 rows");
    QCOMPARE(half->paddedDim(), std::int64_t(96));
    const double s2 = double(half->scale()) * double(half->scale());
    Aligned prepared(half->paddedDim());
    for (std::int64_t q = 0; q < 20; ++q) {
      const float* query = x.data() + q * d;
      QVERIFY(half->prepareQuery(query, prepared.p.get()));
      for (std::int32_t r = 0; r < std::int32_t(n); ++r) {
        const double exact = exactScore(metric, query, x.data() + r * d, d);
        const double got = half->score(prepared.p.get(), r, INFINITY) / s2;
        // float16's relative step 2^-11 on each coordinate, relative to the data's own scale.
        double norms = 0;
        for (std::int64_t j = 0; j < d; ++j)
          norms += std::pow(double(query[j]) - (metric == Metric::L2 ? offset : 0.0), 2) +
                   std::pow(double(x[std::size_t(r * d + j)]) - (metric == Metric::L2 ? offset : 0.0), 2);
        QVERIFY2(std::abs(got - exact) <= 4e-3 * norms,
                 qPrintable(QString("row %1: %2 vs %3").arg(r).arg(got).arg(exact)));
      }
    }
  }

  void earlyAbandoningOnlyAboveTheBound() {
    const std::int64_t n = 50, d = 700;
    std::mt19937_64 rng(8);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(std::size_t(n * d));
    for (float& v : x)
      v = normal(rng);
    const auto half = HalfRows::make({x.data(), n, d}, Metric::L2, 1);
    if (!half)
      QSKIP("this CPU has no AVX2 with F16C");
    Aligned prepared(half->paddedDim());
    QVERIFY(half->prepareQuery(x.data(), prepared.p.get()));
    for (std::int32_t r = 1; r < std::int32_t(n); ++r) {
      const float full = half->score(prepared.p.get(), r, INFINITY);
      for (const float bound : {0.0f, full * 0.25f, full * 0.9f, full, full * 1.1f}) {
        const float s = half->score(prepared.p.get(), r, bound);
        if (bound < full) // a partial sum, but above the bound: the row is rejected all the same
          QVERIFY(s > bound && s <= full);
        else
          QCOMPARE(s, full); // a row within the bound is scored whole
      }
    }
  }

  void queriesOutOfRangeAreRefused() {
    const std::int64_t n = 10, d = 8;
    std::vector<float> x(std::size_t(n * d));
    for (std::size_t j = 0; j < x.size(); ++j)
      x[j] = float(j % 7) * 1e-6f;
    const auto half = HalfRows::make({x.data(), n, d}, Metric::L2, 1);
    if (!half)
      QSKIP("this CPU has no AVX2 with F16C");
    Aligned prepared(half->paddedDim());
    std::vector<float> query(std::size_t(d), 3e30f); // its squared distances overflow float32
    QVERIFY(!half->prepareQuery(query.data(), prepared.p.get()));
    query.assign(std::size_t(d), 1e-6f);
    QVERIFY(half->prepareQuery(query.data(), prepared.p.get()));
  }
};

QTEST_APPLESS_MAIN(TstHalfRows)
#include "tst_half_rows.moc"
