// The CUDA plugin's loader, seen from outside (nearscape-cli with NEARSCAPE_CUDA_PLUGIN) and
// from inside (an exception thrown in the plugin caught by its engine type).
#include "gpu/DeviceRuntime.h"
#include "gpu/Plugin.h"
#include "knn/KnnDevice.h"
#include "nearscape/Nearscape.h"

#include "TestFiles.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace nearscape;

namespace {

struct Run {
  int code = -1;
  QByteArray out, err;
};

Run cli(const QStringList& args, const QString& plugin, bool traceLoads = false,
        const QString& gpuFailure = QString(), const QString& staleDevice = QString()) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (!gpuFailure.isEmpty())
    env.insert("NEARSCAPE_TEST_GPU_FAILURE", gpuFailure);
  if (!staleDevice.isEmpty())
    env.insert("NEARSCAPE_TEST_STALE_DEVICE", staleDevice);
  if (plugin.isNull())
    env.remove("NEARSCAPE_CUDA_PLUGIN");
  else
    env.insert("NEARSCAPE_CUDA_PLUGIN", plugin);
  if (traceLoads)
    env.insert("LD_DEBUG", "files"); // the dynamic loader names every object it opens
  p.setProcessEnvironment(env);
  p.start(NEARSCAPE_CLI_PATH, args);
  p.waitForFinished(120000);
  return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

} // namespace

class TestPlugin : public QObject {
  Q_OBJECT

private slots:
  void versionNamesCommitAndBackends() {
    const Run r = cli({"--version"}, QString());
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.startsWith("nearscape-cli " + QByteArray(engineVersion()) + " (commit "),
             r.out.constData());
    QVERIFY2(r.out.contains("backends: cpu ("), r.out.constData());
  }

#if defined(__x86_64__)
  void versionNamesBlasKernels() {
    // A CPU with AVX2 never runs OpenBLAS's SSE3 fallback (restartWithMatchingBlasKernels); a
    // user's OPENBLAS_CORETYPE is kept as it is, without a restart.
    auto version = [](const QString& coreType) {
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.remove("OPENBLAS_CORETYPE");
      if (!coreType.isEmpty())
        env.insert("OPENBLAS_CORETYPE", coreType);
      p.setProcessEnvironment(env);
      p.start(NEARSCAPE_CLI_PATH, {"--version"});
      p.waitForFinished(120000);
      return p.readAllStandardOutput();
    };
    const QByteArray chosen = version("Prescott");
    QVERIFY2(chosen.contains("OpenBLAS Prescott kernels"), chosen.constData());
    const QByteArray detected = version(QString());
    QVERIFY2(detected.contains("OpenBLAS "), detected.constData());
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      QVERIFY2(!detected.contains("Prescott kernels"), detected.constData());
  }
#endif

  void eachFailureHasItsReason_data() {
    QTest::addColumn<QString>("plugin");
    QTest::addColumn<QString>("reason");
    QTest::newRow("no such file") << "/nonexistent/libnearscape_cuda.so"
                                  << "NEARSCAPE_CUDA_PLUGIN names no file: /nonexistent";
    QTest::newRow("not a library")
        << QString(NEARSCAPE_TEXT_FILE) << "the CUDA plugin did not load: ";
    QTest::newRow("another library")
        << QString(NEARSCAPE_OTHER_LIBRARY) << "is not a Nearscape GPU plugin";
    QTest::newRow("another interface")
        << QString(NEARSCAPE_WRONG_ABI_PLUGIN) << "has interface version 0, this program needs";
    // The build before's plugin: refused by its version before its (other) factory is asked for.
    QTest::newRow("previous interface")
        << QString(NEARSCAPE_PREVIOUS_ABI_PLUGIN)
        << QString("has interface version %1, this program needs %2")
               .arg(gpu::kPluginAbiVersion - 1)
               .arg(gpu::kPluginAbiVersion);
  }
  void eachFailureHasItsReason() {
    QFETCH(QString, plugin);
    QFETCH(QString, reason);
    // --version, `info --json` (the status bar's text) and a forced GPU all carry the reason.
    Run r = cli({"--version"}, plugin);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("cuda unavailable: ") && r.out.contains(reason.toUtf8()),
             r.out.constData());
    QTemporaryDir dir;
    const QString file = dir.filePath("x.tsv");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("1\t2\n3\t4\n5\t6\n");
    f.close();
    r = cli({"info", file, "--json"}, plugin);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains(reason.toUtf8()), r.out.constData());
    r = cli({"knn", file, "--k", "1", "--backend", "cuda"}, plugin);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(reason.toUtf8()), r.err.constData());
  }

  void cpuBackendNeverLoadsThePlugin() {
    QTemporaryDir dir;
    const QString file = dir.filePath("x.tsv");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("1\t2\n3\t4\n5\t6\n");
    f.close();
    const QString plugin = NEARSCAPE_WRONG_ABI_PLUGIN;
    Run r = cli({"knn", file, "--k", "1", "--backend", "cpu"}, plugin, true);
    QCOMPARE(r.code, 0);
    QVERIFY2(!r.err.contains("wrong_abi_plugin"), r.err.constData());
    // The control: auto looks for a GPU, so it loads it.
    r = cli({"knn", file, "--k", "1"}, plugin, true);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("wrong_abi_plugin"), r.err.constData());
  }

  void failingGpuFallsBackToTheCpu_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("failure");
    // Every GPU entry point of each command fails; `auto` must give the CPU's own result.
    const QStringList commands[] = {
        {"knn", "DATA", "--k", "5", "--out", "OUT/r.npy"},
        {"knn", "DATA", "--queries", "DATA", "--k", "5", "--out", "OUT/r.npy"},
        {"knn", "DATA", "--k", "5", "--method", "nndescent", "--out", "OUT/r.npy"},
        {"layout", "DATA", "--epochs", "30", "--out", "OUT/r.npy"},
        {"path", "DATA", "--from", "0", "--to", "7", "--bridge", "--json"},
        {"duplicates", "DATA", "--quantile", "0.2", "--out", "OUT/r.tsv"},
        {"duplicates", "DATA", "--threshold", "1.5", "--metric", "cos", "--out", "OUT/r.tsv"},
        {"sweep", "DATA", "--index", "ivf", "--holdout", "50", "--latency-queries", "0", "--out",
         "OUT/r.csv"},
        // The ef grid is named: by default it spans the device's queue, not the CPU's.
        {"sweep", "DATA", "--index", "graph", "--holdout", "50", "--latency-queries", "0", "--grid",
         "ef=8,16,64", "--out", "OUT/r.csv"},
    };
    for (const QString failure : {"error", "oom"})
      for (const QStringList& c : commands)
        QTest::addRow("%s %s %s", qPrintable(failure), qPrintable(c[0]),
                      qPrintable(c.mid(2).join(' ').left(40)))
            << c << failure;
  }

  void failingGpuFallsBackToTheCpu() {
    QFETCH(QStringList, args);
    QFETCH(QString, failure);
    QTemporaryDir dir;
    const QString data = dir.filePath("data.npy");
    QVERIFY(test::writeBytes(
        data, test::npyBytes("<f4", {400, 8}, test::rawBytes(test::randomFloats(3200, 7)))));
    auto withPaths = [&](const QString& out) {
      QStringList a = args;
      QDir().mkpath(out);
      for (QString& s : a)
        s = s == "DATA" ? data : s.replace("OUT", out);
      return a + QStringList{"--seed", "3", "--threads", "1"};
    };
    const Run cpu = cli(withPaths(dir.filePath("cpu")) << "--backend"
                                                       << "cpu",
                        QString());
    QVERIFY2(cpu.code == 0, cpu.err.constData());
    const Run gpu =
        cli(withPaths(dir.filePath("auto")), NEARSCAPE_FAILING_GPU_PLUGIN, false, failure);
    QVERIFY2(gpu.code == 0, gpu.err.constData());
    // Exact results and seeded CPU work: the fallback's output is the CPU's, byte for byte
    // (timings aside: sweeps and paths compare their result columns only).
    const QString name = args.contains("--out") ? args[args.indexOf("--out") + 1].mid(4) : "";
    if (args[0] == "path") {
      const QJsonObject a = QJsonDocument::fromJson(cpu.out).object();
      const QJsonObject b = QJsonDocument::fromJson(gpu.out).object();
      QCOMPARE(b["path"], a["path"]);
      QCOMPARE(b["bottleneck"], a["bottleneck"]);
    } else if (args[0] == "sweep") {
      auto recalls = [](const QByteArray& csv) {
        QStringList rows;
        const QList<QByteArray> lines = csv.split('\n');
        const int column = lines[0].split(',').indexOf("recall");
        for (const QByteArray& line : lines.mid(1))
          if (!line.isEmpty())
            rows << line.split(',').value(column);
        return rows;
      };
      const QStringList a = recalls(test::readBytes(dir.filePath("cpu/" + name)));
      QVERIFY(!a.isEmpty());
      QCOMPARE(recalls(test::readBytes(dir.filePath("auto/" + name))), a);
    } else {
      QCOMPARE(test::readBytes(dir.filePath("auto/" + name)),
               test::readBytes(dir.filePath("cpu/" + name)));
    }
    // Asked for by name, the GPU's failure is reported (exit 1), and nothing is written.
    const Run named = cli(withPaths(dir.filePath("named")) << "--backend"
                                                           << "cuda",
                          NEARSCAPE_FAILING_GPU_PLUGIN, false, failure);
    QVERIFY2(named.code == 1, named.err.constData());
    QVERIFY2(named.err.contains("test GPU:"), named.err.constData());
    QVERIFY(QDir(dir.filePath("named")).isEmpty());
  }

  void failingGpusOfASplitFallBackTogether() {
    // The test plugin shows two GPUs; a search split over both fails on each, and `auto` gives
    // the CPU's result, as for one GPU. Enough rows that the split happens (4,096 a GPU).
    QTemporaryDir dir;
    const QString data = dir.filePath("data.npy");
    QVERIFY(test::writeBytes(
        data, test::npyBytes("<f4", {10000, 8}, test::rawBytes(test::randomFloats(80000, 5)))));
    const QString cpuOut = dir.filePath("cpu.npy");
    const Run cpu = cli({"knn", data, "--k", "5", "--out", cpuOut, "--backend", "cpu"}, QString());
    QVERIFY2(cpu.code == 0, cpu.err.constData());
    for (const QString failure : {"error", "oom"}) {
      const QString out = dir.filePath("auto-" + failure + ".npy");
      const Run spread = cli({"knn", data, "--k", "5", "--devices", "all", "--out", out, "--json"},
                             NEARSCAPE_FAILING_GPU_PLUGIN, false, failure);
      QVERIFY2(spread.code == 0, spread.err.constData());
      QCOMPARE(test::readBytes(out), test::readBytes(cpuOut));
      // A graph over several GPUs asks each for its share of the paired sweeps first.
      QVERIFY2(spread.out.contains("test GPU: paired sweeps' share failed"),
               spread.out.constData());
      // Named, the failure is the command's, and nothing is written.
      const QString named = dir.filePath("named-" + failure + ".npy");
      const Run forced =
          cli({"knn", data, "--k", "5", "--devices", "0,1", "--backend", "cuda", "--out", named},
              NEARSCAPE_FAILING_GPU_PLUGIN, false, failure);
      QVERIFY2(forced.code == 1, forced.err.constData());
      QVERIFY2(forced.err.contains("test GPU:"), forced.err.constData());
      QVERIFY(!QFile::exists(named));
    }
    // Lists the plugin cannot serve are bad input, said before any work.
    const Run missing =
        cli({"knn", data, "--k", "5", "--devices", "0,2"}, NEARSCAPE_FAILING_GPU_PLUGIN);
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains("GPU 2 is not usable: no such device"), missing.err.constData());
    const Run twice =
        cli({"knn", data, "--k", "5", "--devices", "1,1"}, NEARSCAPE_FAILING_GPU_PLUGIN);
    QCOMPARE(twice.code, 2);
    QVERIFY2(twice.err.contains("names GPU 1 twice"), twice.err.constData());
  }

  void staleDomainInterfaceRunsOnTheCpu() {
    // A plugin whose kNN interface is of the build before: kNN is refused alone (the CPU's result
    // under auto, with the reason; exit 1 under --backend cuda), the other domains still reach
    // the device.
    QTemporaryDir dir;
    const QString data = dir.filePath("data.npy");
    QVERIFY(test::writeBytes(
        data, test::npyBytes("<f4", {400, 8}, test::rawBytes(test::randomFloats(3200, 7)))));
    const QString cpuOut = dir.filePath("cpu.npy"), autoOut = dir.filePath("auto.npy");
    const Run cpu = cli({"knn", data, "--k", "5", "--out", cpuOut, "--backend", "cpu"}, QString());
    QVERIFY2(cpu.code == 0, cpu.err.constData());
    const QByteArray reason = QString("knn interface version %1, this program needs %2")
                                  .arg(gpu::KnnDevice::kVersion - 1)
                                  .arg(gpu::KnnDevice::kVersion)
                                  .toUtf8();
    const Run stale = cli({"knn", data, "--k", "5", "--out", autoOut, "--json"},
                          NEARSCAPE_FAILING_GPU_PLUGIN, false, "error", "knn");
    QVERIFY2(stale.code == 0, stale.err.constData());
    QCOMPARE(test::readBytes(autoOut), test::readBytes(cpuOut));
    QVERIFY2(stale.out.contains(reason), stale.out.constData());
    QVERIFY2(!stale.out.contains("test GPU:"), stale.out.constData());
    const Run named = cli({"knn", data, "--k", "5", "--backend", "cuda"},
                          NEARSCAPE_FAILING_GPU_PLUGIN, false, "error", "knn");
    QCOMPARE(named.code, 1);
    QVERIFY2(named.err.contains(reason), named.err.constData());
    // Another domain's stale interface leaves kNN's on the device: its call reaches the
    // (failing) test GPU.
    const Run other = cli({"knn", data, "--k", "5", "--backend", "cuda"},
                          NEARSCAPE_FAILING_GPU_PLUGIN, false, "error", "layout");
    QCOMPARE(other.code, 1);
    QVERIFY2(other.err.contains("test GPU: exact search failed"), other.err.constData());
    // A stale runtime leaves no device to ask: the whole plugin is refused, as for another ABI.
    const Run runtime = cli({"--version"}, NEARSCAPE_FAILING_GPU_PLUGIN, false, "error", "runtime");
    QCOMPARE(runtime.code, 0);
    QVERIFY2(runtime.out.contains("cuda unavailable: ") &&
                 runtime.out.contains("runtime interface version"),
             runtime.out.constData());
  }

  void pluginExceptionsKeepTheirEngineType() {
    // In-process, through the real plugin when this build has one: an error raised inside it is
    // caught as nearscape::Error here (one copy of the type across the .so boundary).
    const gpu::PluginLoad& load = gpu::pluginLoad();
    if (!load.usable())
      QSKIP(qPrintable("no CUDA plugin loaded: " + QString::fromStdString(load.whyNot)));
    QVERIFY(load.pluginFound);
    std::vector<float> x(6, 1.0f), out(2);
    Context context;
    context.device = 4096; // no such device: cudaSetDevice fails inside the plugin
    bool caught = false;
    try {
      load.devices.runtime.device->rowNormsSquared({x.data(), 2, 3}, out.data(), context);
    } catch (const Error& e) {
      caught = QByteArray(e.what()).contains("cudaSetDevice");
    }
    QVERIFY(caught);
    const DeviceInfo info = queryDevice(0);
    QVERIFY(info.compiledWithCuda);
    QVERIFY(info.usable || !info.reason.empty());
    // The real plugin offers every domain's interface, each of this build's version.
    for (const auto& [domain, why] : load.refused)
      QFAIL(qPrintable(QString::fromStdString(domain + ": " + why)));
  }
};

QTEST_GUILESS_MAIN(TestPlugin)
#include "tst_plugin.moc"
