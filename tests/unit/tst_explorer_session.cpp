// The explorer's model (ui/ExplorerSession): each change emits its own signal once (and none
// when nothing changes), and undo/redo of selection, colouring and filter restore the model.

#include "ExplorerSession.h"
#include "TestFiles.h"

#include <QSignalSpy>
#include <QTest>
#include <QUndoStack>

using namespace nearscape;
using namespace nearscape::ui;

namespace {

OpenedData dataOf(std::int64_t n, const QString& path) {
  auto ds = std::make_shared<Dataset>();
  ds->vectors = Matrix<float>(test::randomFloats(std::size_t(n * 3), 7), n, 3);
  ds->contentHash = contentHash(ds->vectors.view());
  OpenedData opened;
  opened.dataset = ds;
  opened.dataPath = path;
  opened.pca.assign(std::size_t(n * 3), 0.5f);
  opened.colourable = {QStringLiteral("score")};
  opened.numeric = {QStringLiteral("score")};
  return opened;
}

} // namespace

class TestExplorerSession : public QObject {
  Q_OBJECT

private slots:
  void eachChangeSignalsOnce() {
    ExplorerSession model;
    QSignalSpy data(&model, &ExplorerSession::dataChanged);
    QSignalSpy metric(&model, &ExplorerSession::metricChanged);
    QSignalSpy selection(&model, &ExplorerSession::selectionChanged);
    QSignalSpy colouring(&model, &ExplorerSession::colouringChanged);
    QSignalSpy filter(&model, &ExplorerSession::filterChanged);
    QSignalSpy search(&model, &ExplorerSession::searchChanged);
    QSignalSpy item(&model, &ExplorerSession::selectedItemChanged);
    QSignalSpy path(&model, &ExplorerSession::pathChanged);
    QSignalSpy dim(&model, &ExplorerSession::mapDimChanged);
    QSignalSpy artefacts(&model, &ExplorerSession::artefactsChanged);

    OpenedData opened = dataOf(10, QStringLiteral("a.npy"));
    opened.metric = Metric::Cosine;
    model.setData(std::move(opened));
    QCOMPARE(data.count(), 1);
    QCOMPARE(metric.count(), 1); // the data's metric differs from the default
    QVERIFY(model.metric() == Metric::Cosine);
    model.setMetric(Metric::Cosine, QStringLiteral("chosen"));
    QCOMPARE(metric.count(), 1); // the same: nothing changes

    // The selection is kept sorted, unique and within the data; the same one again is silent.
    model.setSelection({5, 3, 3, 99, -1});
    QCOMPARE(selection.count(), 1);
    QCOMPARE(model.selection(), (std::vector<std::int64_t>{3, 5}));
    model.setSelection({3, 5});
    QCOMPARE(selection.count(), 1);

    model.setColouring(QStringLiteral("score"));
    model.setColouring(QStringLiteral("score"));
    QCOMPARE(colouring.count(), 1);
    model.setFilter({{}, std::pair{1.0, 2.0}});
    model.setFilter({{}, std::pair{1.0, 2.0}});
    QCOMPARE(filter.count(), 1);
    model.setSearch(QStringLiteral("cat"), false);
    model.setSearch(QStringLiteral("cat"), false);
    QCOMPARE(search.count(), 1);
    model.setSelectedItem(4);
    model.setSelectedItem(4);
    QCOMPARE(item.count(), 1);
    model.setMapDim(3);
    model.setMapDim(3);
    QCOMPARE(dim.count(), 1);
    model.setArtefacts(std::make_shared<Artefacts>());
    QCOMPARE(artefacts.count(), 1);
    GraphPath p;
    p.nodes = {4, 2};
    model.setPath(p);
    QCOMPARE(path.count(), 1);

    // Dropping the artefacts drops the item and the path with them, each signalled once.
    model.clearArtefacts();
    QCOMPARE(artefacts.count(), 2);
    QCOMPARE(item.count(), 2);
    QCOMPARE(path.count(), 2);
    QCOMPARE(model.selectedItem(), std::int64_t(-1));
    QVERIFY(model.path().nodes.empty());

    // Other data resets what belonged to the old (the search text carries over).
    model.setData(dataOf(20, QStringLiteral("b.npy")));
    QCOMPARE(data.count(), 2);
    QVERIFY(model.selection().empty());
    QCOMPARE(model.colouring(), QStringLiteral("label"));
    QVERIFY(model.filter() == Filter{});
    QCOMPARE(model.searchText(), QStringLiteral("cat"));
    QCOMPARE(model.dataPath(), QStringLiteral("b.npy"));
  }

  void selectionEditsUndoAndRedo() {
    ExplorerSession model;
    model.setData(dataOf(10, QStringLiteral("a.npy")));
    QSignalSpy selection(&model, &ExplorerSession::selectionChanged);
    QUndoStack* history = model.undoStack();
    QVERIFY(!history->canUndo());
    model.editSelection({1, 2});
    model.editSelection({2, 1}); // the same selection: no step
    model.editSelection({7});
    QCOMPARE(history->count(), 2);
    QCOMPARE(selection.count(), 2);
    history->undo();
    QCOMPARE(model.selection(), (std::vector<std::int64_t>{1, 2}));
    history->undo();
    QVERIFY(model.selection().empty());
    QCOMPARE(selection.count(), 4);
    history->redo();
    history->redo();
    QCOMPARE(model.selection(), (std::vector<std::int64_t>{7}));
    QCOMPARE(selection.count(), 6);
    // Other data: the old ids mean nothing, the history goes.
    model.setData(dataOf(5, QStringLiteral("b.npy")));
    QVERIFY(!history->canUndo());
  }

  void colouringAndFilterEditsUndoAndRedo() {
    ExplorerSession model;
    model.setData(dataOf(10, QStringLiteral("a.npy")));
    QUndoStack* history = model.undoStack();
    QSignalSpy colouring(&model, &ExplorerSession::colouringChanged);
    QSignalSpy filter(&model, &ExplorerSession::filterChanged);
    const Filter hidden{{QStringLiteral("cat")}, std::nullopt};
    model.editFilter(hidden);
    QCOMPARE(filter.count(), 1);
    // A new colouring starts with no filter; undoing it brings the old colouring and its filter.
    model.editColouring(QStringLiteral("score"));
    QCOMPARE(colouring.count(), 1);
    QVERIFY(model.filter() == Filter{});
    const Filter range{{}, std::pair{0.25, 0.75}};
    model.editFilter(range);
    QCOMPARE(history->count(), 3);
    history->undo();
    QVERIFY(model.filter() == Filter{});
    QCOMPARE(model.colouring(), QStringLiteral("score"));
    history->undo();
    QCOMPARE(model.colouring(), QStringLiteral("label"));
    QVERIFY(model.filter() == hidden);
    QCOMPARE(colouring.count(), 2);
    history->redo();
    history->redo();
    QCOMPARE(model.colouring(), QStringLiteral("score"));
    QVERIFY(model.filter() == range);
    // The same colouring again is no step.
    model.editColouring(QStringLiteral("score"));
    QCOMPARE(history->count(), 3);
  }

  void inputsNameEveryFileRead() {
    ExplorerSession model;
    OpenedData opened = dataOf(4, QStringLiteral("/d/a.npy"));
    opened.metaPath = QStringLiteral("/d/labels.tsv");
    model.setData(std::move(opened));
    model.setSessionPath(QStringLiteral("/d/view.nearscape"));
    model.setComparedPath(QStringLiteral("/d/b.npy"));
    const QStringList inputs = model.inputFiles();
    for (const char* file :
         {"/d/a.npy", "/d/a.meta.tsv", "/d/labels.tsv", "/d/view.nearscape", "/d/b.npy"})
      QVERIFY2(inputs.contains(QString::fromLatin1(file)), file);
  }
};

QTEST_GUILESS_MAIN(TestExplorerSession)
#include "tst_explorer_session.moc"
