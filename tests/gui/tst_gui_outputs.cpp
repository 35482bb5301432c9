// What the explorer writes never costs a file it reads: `--screenshot` naming the data, its
// metadata or the session is refused before anything is written; a full disk keeps the old
// picture; File → Export and Save Session refuse their inputs; `--sweep-plot` refuses a FIFO, a
// QPS it cannot draw, and takes a byte-order mark; a failed standard output is an error.
#include "Export.h"
#include "Session.h"
#include "TestFiles.h"

#include "nearscape/Nearscape.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace nearscape;
using namespace nearscape::test;

namespace {

struct Run {
  int code = -1;
  QByteArray err;
};

/// Runs the explorer with `args` in its own cache and settings folders (under `dir`), standard
/// output to `out` when given; a run past `seconds` is killed and reported as code -1.
Run gui(const QTemporaryDir& dir, const QStringList& args, const QString& fault = {},
        bool display = true, const QString& out = {}, int seconds = 180) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("XDG_CACHE_HOME", dir.filePath("cache"));
  env.insert("XDG_CONFIG_HOME", dir.filePath("config"));
  if (!fault.isEmpty())
    env.insert("NEARSCAPE_FAULT_WRITE", fault);
  if (!display) {
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");
  }
  p.setProcessEnvironment(env);
  if (!out.isEmpty())
    p.setStandardOutputFile(out);
  p.start(QStringLiteral(NEARSCAPE_GUI_PATH), args);
  if (!p.waitForFinished(seconds * 1000)) {
    p.kill();
    p.waitForFinished(10000);
    return {};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardError()};
}

/// 300 × 8 float32 in three clusters, and a sidecar of labels beside it.
QString writeData(const QTemporaryDir& dir) {
  std::vector<float> x = randomFloats(300 * 8, 11);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] += float((i / 8) % 3) * 4.0f;
  const QString file = dir.filePath("data.npy");
  writeBytes(file, npyBytes("<f4", {300, 8}, rawBytes(x)));
  QByteArray labels = "label\tnote\n";
  for (int i = 0; i < 300; ++i)
    labels += "c" + QByteArray::number(i % 3) + "\tn\n";
  writeBytes(dir.filePath("data.meta.tsv"), labels);
  return file;
}

const char* kStudyHeader = "run,index,k,build.degree,ef,recall,qps,p50_ms,p99_ms,build_s,bytes,"
                           "pareto,pareto_all\n";

} // namespace

class TestGuiOutputs : public QObject {
  Q_OBJECT

private slots:
  void screenshotNeverReplacesAnInput() {
    QTemporaryDir dir;
    const QString data = writeData(dir), sidecar = dir.filePath("data.meta.tsv");
    const QString meta = dir.filePath("labels.tsv"), session = dir.filePath("view.nearscape");
    QVERIFY(writeBytes(meta, readBytes(sidecar)));
    QVERIFY(writeBytes(session, "{\"format\": \"nearscape-session\", \"version\": 1, "
                                "\"data\": \"data.npy\"}\n"));
    QVERIFY(QFile::link(data, dir.filePath("link.png")));
    QVERIFY(QDir(dir.path()).mkdir("sub"));
    const QMap<QString, QByteArray> before = {{data, readBytes(data)},
                                              {sidecar, readBytes(sidecar)},
                                              {meta, readBytes(meta)},
                                              {session, readBytes(session)}};
    const QList<QStringList> runs = {
        {data, "--screenshot", data},
        {data, "--screenshot", dir.filePath("sub/../data.npy")}, // another spelling
        {data, "--screenshot", dir.filePath("link.png")},        // a link to it
        {data, "--screenshot", sidecar},                         // the sidecar metadata
        {data, "--meta", meta, "--screenshot", meta},
        {"--session", session, "--screenshot", session},
        {"--session", session, "--screenshot", data}, // the data the session names
    };
    for (const QStringList& args : runs) {
      const Run r = gui(dir, args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + ": " + r.err));
      QVERIFY2(r.err.contains("refusing to overwrite"), r.err.constData());
      for (auto it = before.begin(); it != before.end(); ++it)
        QVERIFY2(readBytes(it.key()) == it.value(), qPrintable(it.key() + " changed"));
    }
    QVERIFY(QFileInfo(dir.filePath("link.png")).isSymLink());
  }

  void screenshotOnAFullDiskKeepsTheOldPicture() {
    QTemporaryDir dir;
    const QString data = writeData(dir), shot = dir.filePath("shot.png");
    QVERIFY(writeBytes(shot, "an earlier picture"));
    Run r = gui(dir, {data, "--screenshot", shot, "--backend", "cpu"}, "enospc:shot.png");
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("could not save") && r.err.contains("No space left on device"),
             r.err.constData());
    QCOMPARE(readBytes(shot), QByteArray("an earlier picture"));
    const QStringList files = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(files, (QStringList{"data.meta.tsv", "data.npy", "shot.png"}));
    // With room on the disk, the picture replaces the old one.
    r = gui(dir, {data, "--screenshot", shot, "--backend", "cpu"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.err.contains("saved") && r.err.contains("(300 items on the map)"),
             r.err.constData());
    QVERIFY(QImage(shot).width() > 100);
  }

  void exportsAndSessionsRefuseTheirInputs() {
    // In the window's own calls: File → Export and Save Session never write over the data, its
    // sidecar, the session opened or the file compared with; a refused write changes nothing.
    QTemporaryDir dir;
    const QString data = writeData(dir), sidecar = dir.filePath("data.meta.tsv");
    const QString other = dir.filePath("other.npy"), opened = dir.filePath("opened.nearscape");
    QVERIFY(writeBytes(other, readBytes(data)));
    QVERIFY(writeBytes(opened, "a session"));
    Dataset ds;
    ds.path = data.toStdString();
    QImage image(40, 30, QImage::Format_RGB32);
    image.fill(Qt::red);
    auto refused = [](const std::function<void()>& write) {
      try {
        write();
      } catch (const InvalidArgument& e) {
        return std::string(e.what()).find("refusing to overwrite") != std::string::npos;
      }
      return false;
    };
    QVERIFY(refused([&] { ui::exportPicture(data, ds, image); }));
    QVERIFY(refused([&] { ui::exportPicture(sidecar, ds, image); }));
    QVERIFY(refused([&] { ui::exportText(opened, ds, "groups", {opened, other}); }));
    QVERIFY(refused([&] { ui::exportText(other, ds, "groups", {opened, other}); }));
    ui::Session session;
    session.data = data;
    QVERIFY(refused([&] { session.write(sidecar); }));
    QVERIFY(refused([&] { session.write(other, {other}); }));
    QCOMPARE(readBytes(opened), QByteArray("a session"));
    QCOMPARE(readBytes(other), readBytes(data));
    // Elsewhere, both land: a PNG (encoded in memory, written atomically) and a session.
    ui::exportPicture(dir.filePath("map.png"), ds, image);
    QCOMPARE(QImage(dir.filePath("map.png")).pixelColor(5, 5), QColor(Qt::red));
    session.write(opened, {other});
    QVERIFY(ui::Session::read(opened).data == data);
  }

  void sweepPlotReadsOnlyRegularStudies() {
    QTemporaryDir dir;
    const QString png = dir.filePath("plot.png"), fifo = dir.filePath("fifo.csv");
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
    // A FIFO: refused at once (bad input), never waited on.
    Run r = gui(dir, {"--sweep-plot", png, fifo}, {}, false, {}, 30);
    QVERIFY2(r.code == 2, r.err.constData());
    QVERIFY2(r.err.contains("not a regular file"), r.err.constData());
    QVERIFY(!QFile::exists(png));
    // A spreadsheet's byte-order mark before a one-run CSV's "recall" column: read as the
    // study it is.
    const QByteArray rows = "1,graph,10,16,10,0.9,5000,0.2,0.4,1.5,4096,1,1\n"
                            "1,graph,10,16,40,0.99,2000,0.5,1,1.5,4096,1,1\n";
    const QString marked = dir.filePath("marked.csv");
    QVERIFY(writeBytes(marked, "\xEF\xBB\xBFrecall,qps,p50_ms,p99_ms,build_s,bytes,pareto\n"
                               "0.9,5000,0.2,0.4,1.5,4096,1\n0.99,2000,0.5,1,1.5,4096,1\n"));
    r = gui(dir, {"--sweep-plot", png, marked}, {}, false);
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(QImage(png).size(), QSize(1600, 760));
    // A QPS the log axis cannot place: exit 2 naming the line and column, the old picture kept.
    const QByteArray picture = readBytes(png);
    for (const char* qps : {"inf", "0"}) {
      const QString bad = dir.filePath("bad.csv");
      QVERIFY(writeBytes(bad, QByteArray(kStudyHeader) + rows + "1,graph,10,16,80,0.999," + qps +
                                  ",1,2,1.5,4096,1,1\n"));
      r = gui(dir, {"--sweep-plot", png, bad}, {}, false);
      QVERIFY2(r.code == 2, r.err.constData());
      QVERIFY2(r.err.contains("bad.csv: line 4, column 'qps'"), r.err.constData());
      QCOMPARE(readBytes(png), picture);
    }
    // The picture never over the study it is drawn from.
    r = gui(dir, {"--sweep-plot", marked, marked}, {}, false);
    QCOMPARE(r.code, 2);
    QVERIFY(readBytes(marked).endsWith("0.99,2000,0.5,1,1.5,4096,1\n"));
  }

  void failedStandardOutputIsAnError() {
    // --help and --version to a full disk: exit 1 with the reason, not a silent 0.
    QTemporaryDir dir;
    for (const char* option : {"--help", "--version"}) {
      const Run r = gui(dir, {option}, {}, false, "/dev/full", 60);
      QVERIFY2(r.code == 1, qPrintable(QString(option) + ": " + r.err));
      QVERIFY2(r.err.contains("cannot write standard output: No space left on device"),
               r.err.constData());
    }
    QCOMPARE(gui(dir, {"--version"}, {}, false, "/dev/null", 60).code, 0);
  }
};

QTEST_MAIN(TestGuiOutputs)
#include "tst_gui_outputs.moc"
