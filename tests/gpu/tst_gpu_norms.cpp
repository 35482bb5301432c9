// The CUDA row-norm kernel against the CPU twin, on fresh random data of awkward shapes.
#include "nearscape/Nearscape.h"

#include <QTest>

#include <cmath>
#include <random>

using namespace nearscape;

class TestGpuNorms : public QObject {
  Q_OBJECT

private slots:
  void deviceQueryNeverThrows() {
    const DeviceInfo info = queryDevice(0);
    QVERIFY(info.usable || !info.reason.empty());
    const DeviceInfo bad = queryDevice(4096);
    QVERIFY(!bad.usable);
  }

  void forcedCudaWithoutDeviceIsAClearError() {
    if (queryDevice(0).usable)
      QSKIP("a GPU is usable here; this checks the no-GPU message");
    Context context;
    context.backend = Backend::Cuda;
    std::vector<float> x(6, 1.0f);
    QVERIFY_THROWS_EXCEPTION(DeviceUnavailable, rowNormsSquared({x.data(), 2, 3}, context));
  }

  void normsMatchCpu_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("d");
    QTest::newRow("1x1") << 1 << 1;
    QTest::newRow("1000x3") << 1000 << 3;
    QTest::newRow("777x17") << 777 << 17;
    QTest::newRow("4099x128") << 4099 << 128;
    QTest::newRow("3000x784") << 3000 << 784;
  }
  void normsMatchCpu() {
    const DeviceInfo info = queryDevice(0);
    if (!info.usable)
      QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(info.reason)));
    QFETCH(int, n);
    QFETCH(int, d);
    std::random_device seed;
    std::mt19937_64 rng(seed());
    std::normal_distribution<float> normal(0.0f, 10.0f);
    std::vector<float> x(std::size_t(n) * d);
    for (auto& v : x)
      v = normal(rng);
    Context gpu;
    gpu.backend = Backend::Cuda;
    const auto got = rowNormsSquared({x.data(), n, d}, gpu);
    for (int i = 0; i < n; ++i) {
      double ref = 0;
      for (int j = 0; j < d; ++j)
        ref += double(x[std::size_t(i) * d + j]) * x[std::size_t(i) * d + j];
      QVERIFY2(std::abs(got[i] - ref) <= 1e-6 * ref + 1e-30,
               qPrintable(QString("row %1: %2 vs %3").arg(i).arg(got[i]).arg(ref)));
    }
  }
};

QTEST_GUILESS_MAIN(TestGpuNorms)
#include "tst_gpu_norms.moc"
