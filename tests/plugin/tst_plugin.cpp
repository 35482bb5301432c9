// The CUDA plugin's loader, seen from outside (nearscape-cli with NEARSCAPE_CUDA_PLUGIN) and
// from inside (an exception thrown in the plugin caught by its engine type).
#include "gpu/GpuBackend.h"
#include "nearscape/Nearscape.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace nearscape;

namespace {

struct Run {
  int code = -1;
  QByteArray out, err;
};

Run cli(const QStringList& args, const QString& plugin, bool traceLoads = false) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
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

  void eachFailureHasItsReason_data() {
    QTest::addColumn<QString>("plugin");
    QTest::addColumn<QString>("reason");
    QTest::newRow("no such file") << "/nonexistent/libnearscape_cuda.so"
                                  << "NEARSCAPE_CUDA_PLUGIN names no file: /nonexistent";
    QTest::newRow("not a library") << QString(NEARSCAPE_TEXT_FILE)
                                   << "the CUDA plugin did not load: ";
    QTest::newRow("another library") << QString(NEARSCAPE_OTHER_LIBRARY)
                                     << "is not a Nearscape GPU plugin";
    QTest::newRow("another interface") << QString(NEARSCAPE_WRONG_ABI_PLUGIN)
                                       << "has interface version 0, this program needs";
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

  void pluginExceptionsKeepTheirEngineType() {
    // In-process, through the real plugin when this build has one: an error raised inside it is
    // caught as nearscape::Error here (one copy of the type across the .so boundary).
    const gpu::PluginLoad& load = gpu::pluginLoad();
    if (!load.backend)
      QSKIP(qPrintable("no CUDA plugin loaded: " + QString::fromStdString(load.whyNot)));
    QVERIFY(load.pluginFound);
    std::vector<float> x(6, 1.0f), out(2);
    Context context;
    context.device = 4096; // no such device: cudaSetDevice fails inside the plugin
    bool caught = false;
    try {
      load.backend->rowNormsSquared({x.data(), 2, 3}, out.data(), context);
    } catch (const Error& e) {
      caught = QByteArray(e.what()).contains("cudaSetDevice");
    }
    QVERIFY(caught);
    const DeviceInfo info = queryDevice(0);
    QVERIFY(info.compiledWithCuda);
    QVERIFY(info.usable || !info.reason.empty());
  }
};

QTEST_GUILESS_MAIN(TestPlugin)
#include "tst_plugin.moc"
