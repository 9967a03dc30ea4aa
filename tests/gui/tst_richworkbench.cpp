// SPDX-License-Identifier: Apache-2.0
// The workbench's rich results and the panels built on them, over a real Engine and Debian's
// Python (which has matplotlib and pandas): display updates and clear_output in the output,
// tables, JSON trees and figures fitted to the pane; the Variables and Plots panels; the
// context tree's columns and the editor's view preferences.
#include "core/engine.h"
#include "gui/codeeditor.h"
#include "gui/contexttree.h"
#include "gui/datatabledialog.h"
#include "gui/datatablemodel.h"
#include "gui/editortabs.h"
#include "gui/inprocessengine.h"
#include "gui/outputview.h"
#include "gui/plotspanel.h"
#include "gui/variablespanel.h"
#include "gui/workbenchwindow.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QImage>
#include <QJsonObject>
#include <QListWidget>
#include <QMenu>
#include <QProcess>
#include <QScrollBar>
#include <QSettings>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextTable>
#include <QTreeWidgetItem>

#include <memory>

using namespace replhost;
using namespace replhost::gui;

namespace {

constexpr int kRunTimeout = 60000;
const QString kDebianPython = QStringLiteral("/usr/bin/python3");

bool debianPythonHas(const QString &modules)
{
    QProcess probe;
    probe.start(kDebianPython, {QStringLiteral("-c"), QStringLiteral("import ") + modules});
    return probe.waitForFinished(60000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0;
}

// One engine on a temporary data directory whose Python is Debian's, and a window over it with
// a Python context selected.
class Bench {
public:
    Bench()
    {
        core::EngineConfig config;
        config.dataDir = dir.path();
        config.pluginPaths = {QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)};
        config.warmPoolSize = 0;
        config.languageSettings.insert(QStringLiteral("python"),
                                       QJsonObject{{QStringLiteral("interpreter"), kDebianPython}});
        auto opened = core::Engine::open(config);
        if (!opened)
            qFatal("engine: %s", qPrintable(opened.error().message));
        engine = std::move(*opened);
        WorkbenchOptions options;
        options.settingsFile = QDir(dir.path()).filePath(QStringLiteral("workbench.ini"));
        client = std::make_unique<InProcessEngine>(*engine);
        window = std::make_unique<WorkbenchWindow>(*client, options);
        window->resize(1280, 820);
        window->show();
        if (!QTest::qWaitForWindowExposed(window.get()))
            qFatal("window not exposed");
        core::CreateContextRequest request;
        request.language = QStringLiteral("python");
        request.name = QStringLiteral("rich");
        if (!window->createContext(request))
            qFatal("no context");
    }
    ~Bench()
    {
        window.reset();
        client.reset();
        engine->contexts().shutdownAll();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        engine.reset();
    }

    // Runs `code` in the selected context through the window and waits for it to finish.
    core::ExecutionPtr run(const QString &code)
    {
        window->editor()->setText(code);
        window->runAll();
        const core::ExecutionPtr execution = window->lastExecution();
        if (!execution || !QTest::qWaitFor([&] { return execution->isFinished(); }, kRunTimeout))
            return {};
        QCoreApplication::processEvents();
        return execution;
    }

    QString outputText() const { return window->output()->toPlainText(); }

    QTemporaryDir dir;
    std::unique_ptr<core::Engine> engine;
    std::unique_ptr<InProcessEngine> client;
    std::unique_ptr<WorkbenchWindow> window;
};

// The anchors of a document whose href starts with `scheme`, in order.
QStringList anchors(const QTextDocument *document, const QString &scheme)
{
    QStringList found;
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextCharFormat format = it.fragment().charFormat();
            if (format.isAnchor() && format.anchorHref().startsWith(scheme) && !found.contains(format.anchorHref()))
                found << format.anchorHref();
        }
    }
    return found;
}

QStringList cellTexts(QTextTable *table, int row)
{
    QStringList texts;
    for (int c = 0; c < table->columns(); ++c) {
        QTextCursor cursor = table->cellAt(row, c).firstCursorPosition();
        cursor.setPosition(table->cellAt(row, c).lastCursorPosition().position(), QTextCursor::KeepAnchor);
        texts << cursor.selectedText();
    }
    return texts;
}

QStringList variableNames(QTableWidget *table)
{
    QStringList names;
    for (int row = 0; row < table->rowCount(); ++row)
        names << table->item(row, VariablesPanel::NameColumn)->text();
    return names;
}

int variableRow(QTableWidget *table, const QString &name)
{
    for (int row = 0; row < table->rowCount(); ++row) {
        if (table->item(row, VariablesPanel::NameColumn)->text() == name)
            return row;
    }
    return -1;
}

} // namespace

class tst_RichWorkbench : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void displayUpdateReplacesItInPlace();
    void clearOutputClearsAtOnce();
    void clearOutputWithWaitClearsAtTheNextOutput();
    void dataFrameIsATable();
    void jsonIsATreeThatFolds();
    void chartDataIsAFoldedTreeUnderItsFigure();
    void figureFitsThePaneAndAClickShowsItsFullSize();
    void imageMenuSavesCopiesAndZooms();
    void variablesAreListedAfterEachRun();
    void dataFrameAndListVariablesOpenAsTables();
    void plotsPanelListsNewestFirstAndSavesAPng();
    void stateColumnDoesNotSqueezeNames();
    void wordWrapAndWhitespacePreferencesApply();
};

void tst_RichWorkbench::initTestCase()
{
    if (!debianPythonHas(QStringLiteral("matplotlib, pandas")))
        QSKIP("Debian's python3 with matplotlib and pandas (python3-matplotlib, python3-pandas) is needed");
}

void tst_RichWorkbench::displayUpdateReplacesItInPlace()
{
    Bench bench;
    QVERIFY(bench.run(QStringLiteral(
            "from IPython.display import display, HTML, Markdown\n"
            "h = display(HTML('<b>progress %d%%</b>' % 0), display_id=True)\n"
            "display(Markdown('*the same display, twice*'), display_id='twice')\n"
            "display(Markdown('*a%s*' % 'gain'), display_id='twice')\n"
            "print('after', 'the displays')\n"
            "h.update(HTML('<b>progress %d%%</b>' % 100))\n"
            "h.update(HTML('<b>progress %s</b>' % 'done'))\n"
            "display(Markdown('*both %s*' % 'updated'), display_id='twice', update=True)\n")));
    const QString text = bench.outputText();
    QVERIFY2(!text.contains(QLatin1String("progress 0%")) && !text.contains(QLatin1String("progress 100%")), qPrintable(text));
    // In place: the updated display is still above what was printed after it.
    const int done = int(text.indexOf(QLatin1String("progress done")));
    QVERIFY2(done >= 0 && done < text.indexOf(QLatin1String("after the displays")), qPrintable(text));
    QCOMPARE(text.count(QLatin1String("both updated")), 2);  // every place it is shown
    QVERIFY(!text.contains(QLatin1String("again")));
    QVERIFY(!text.contains(QLatin1String("*both updated*")));  // Markdown is rendered, not shown as source
}

void tst_RichWorkbench::clearOutputClearsAtOnce()
{
    Bench bench;
    QVERIFY(bench.run(QStringLiteral("print('first run', 'stays')")));
    QVERIFY(bench.run(QStringLiteral(
            "from IPython.display import clear_output, display, HTML\n"
            "print('old', 'line')\n"
            "display(HTML('<i>old %s</i>' % 'display'))\n"
            "clear_output()\n"
            "print('new', 'line')\n")));
    const QString text = bench.outputText();
    QVERIFY2(!text.contains(QLatin1String("old line")) && !text.contains(QLatin1String("old display")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("new line")), qPrintable(text));
    QVERIFY(text.contains(QLatin1String("first run stays")));  // only the run's own output goes
    QVERIFY(text.contains(QLatin1String("clear_output()")));   // its code stays
}

void tst_RichWorkbench::clearOutputWithWaitClearsAtTheNextOutput()
{
    Bench bench;
    // Nothing comes after the clear: what was shown stays.
    QVERIFY(bench.run(QStringLiteral(
            "from IPython.display import clear_output\n"
            "print('kept', 'frame')\n"
            "clear_output(wait=True)\n")));
    QVERIFY2(bench.outputText().contains(QLatin1String("kept frame")), qPrintable(bench.outputText()));
    // The next output replaces it.
    QVERIFY(bench.run(QStringLiteral(
            "from IPython.display import clear_output\n"
            "for frame in range(3):\n"
            "    clear_output(wait=True)\n"
            "    print('frame', frame)\n")));
    const QString text = bench.outputText();
    QVERIFY2(text.contains(QLatin1String("frame 2")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("frame 0")) && !text.contains(QLatin1String("frame 1")), qPrintable(text));
    QVERIFY(text.contains(QLatin1String("kept frame")));
}

void tst_RichWorkbench::dataFrameIsATable()
{
    Bench bench;
    QVERIFY(bench.run(QStringLiteral(
            "import pandas as pd\n"
            "pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'rain': [763.0, 6.4, None]},\n"
            "             index=pd.Index(['a', 'b', 'c'], name='key'))\n")));
    const QList<QTextTable *> tables = bench.window->output()->document()->findChildren<QTextTable *>();
    QCOMPARE(tables.size(), 1);
    QTextTable *table = tables.first();
    QCOMPARE(table->rows(), 4);
    QCOMPARE(table->columns(), 3);
    QCOMPARE(cellTexts(table, 0), QStringList({QStringLiteral("key"), QStringLiteral("city"), QStringLiteral("rain")}));
    QCOMPARE(cellTexts(table, 1), QStringList({QStringLiteral("a"), QStringLiteral("Oslo"), QStringLiteral("763")}));
    QCOMPARE(cellTexts(table, 3), QStringList({QStringLiteral("c"), QStringLiteral("Pune"), QString()}));
    // The whole table opens in a window of its own.
    const QStringList links = anchors(bench.window->output()->document(), QStringLiteral("replhost-table:"));
    QCOMPARE(links.size(), 1);
    emit bench.window->output()->anchorClicked(QUrl(links.first()));
    auto *dialog = bench.window->output()->findChild<DataTableDialog *>();
    QVERIFY(dialog);
    QCOMPARE(dialog->model()->rowCount(), 3);
    QCOMPARE(dialog->model()->columnCount(), 3);
}

void tst_RichWorkbench::jsonIsATreeThatFolds()
{
    Bench bench;
    QVERIFY(bench.run(QStringLiteral(
            "from IPython.display import display, JSON\n"
            "display(JSON({'scores': [11, 2 * 11, 33], 'owner': {'name': 'ad' + 'a'}}))\n"
            "print('below', 'the tree')\n")));
    OutputView *view = bench.window->output();
    QString text = bench.outputText();
    QVERIFY2(text.contains(QLatin1String("scores: [3 items]")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("22")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("name: \"ada\"")), qPrintable(text));
    const QStringList toggles = anchors(view->document(), QStringLiteral("replhost-json:"));
    QCOMPARE(toggles.size(), 3);  // the root, "owner" and "scores" (keys in order)
    emit view->anchorClicked(QUrl(toggles.at(2)));  // fold "scores"
    text = bench.outputText();
    QVERIFY2(text.contains(QStringLiteral("▸ scores: [3 items]")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("22")), qPrintable(text));
    QVERIFY(text.contains(QLatin1String("name: \"ada\"")));
    QVERIFY(text.indexOf(QLatin1String("scores")) < text.indexOf(QLatin1String("below the tree")));  // in place
    emit view->anchorClicked(QUrl(toggles.at(2)));  // unfold it again
    QVERIFY(bench.outputText().contains(QLatin1String("22")));
}

void tst_RichWorkbench::chartDataIsAFoldedTreeUnderItsFigure()
{
    Bench bench;
    QVERIFY(bench.run(QStringLiteral(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots()\nax.bar(['a', 'b'], [3, 5])\nax.set_title('Sal' + 'es')\nplt.show()\n")));
    OutputView *view = bench.window->output();
    QCOMPARE(view->imageCount(), 1);
    QString text = bench.outputText();
    QVERIFY2(text.contains(QStringLiteral("▸ Chart data: {")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("Sales")), qPrintable(text));
    const QStringList toggles = anchors(view->document(), QStringLiteral("replhost-json:"));
    QCOMPARE(toggles.size(), 1);
    emit view->anchorClicked(QUrl(toggles.first()));
    text = bench.outputText();
    QVERIFY2(text.contains(QLatin1String("title: \"Sales\"")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("type: \"bar\"")), qPrintable(text));
}

void tst_RichWorkbench::figureFitsThePaneAndAClickShowsItsFullSize()
{
    Bench bench;
    OutputView *view = bench.window->output();
    QVERIFY(bench.run(QStringLiteral(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots(figsize=(14, 3), dpi=100)\nax.plot([1, 3, 2])\nplt.show()\n")));
    QCOMPARE(view->imageCount(), 1);
    const qreal own = view->image(0).size().width();
    QVERIFY2(own > view->viewport()->width(), qPrintable(QString::number(own)));
    QVERIFY(view->imageShownSize(0).width() <= view->viewport()->width());
    QVERIFY2(view->imageShownSize(0).width() >= view->viewport()->width() * 0.8,  // fitted, not a thumbnail
             qPrintable(QStringLiteral("%1 of %2").arg(view->imageShownSize(0).width()).arg(view->viewport()->width())));
    // A narrower pane: the figure follows.
    bench.window->resize(1000, 700);
    QTRY_VERIFY(view->imageShownSize(0).width() <= view->viewport()->width());

    view->verticalScrollBar()->setValue(view->verticalScrollBar()->maximum());
    QCoreApplication::processEvents();
    const QRect shown = view->imageRect(0);
    QVERIFY(view->viewport()->rect().intersects(shown));
    const QPoint inside = shown.intersected(view->viewport()->rect()).center();
    QCOMPARE(view->imageAt(inside), 0);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, inside);
    QVERIFY(view->isImageFullSize(0));
    QCOMPARE(view->imageShownSize(0).width(), own);
    view->setImageFullSize(0, false);
    QVERIFY(view->imageShownSize(0).width() <= view->viewport()->width());
}

void tst_RichWorkbench::imageMenuSavesCopiesAndZooms()
{
    Bench bench;
    OutputView *view = bench.window->output();
    QVERIFY(bench.run(QStringLiteral(
            "from IPython.display import display, SVG\n"
            "display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"60\">"
            "<rect width=\"120\" height=\"60\" fill=\"teal\"/></svg>'))\n")));
    QCOMPARE(view->imageCount(), 1);
    std::unique_ptr<QMenu> menu(view->createImageMenu(0, nullptr));
    QStringList names;
    for (const QAction *action : menu->actions()) {
        if (!action->isSeparator())
            names << action->objectName();
    }
    QCOMPARE(names, QStringList({QStringLiteral("saveImage"), QStringLiteral("copyImage"),
                                 QStringLiteral("zoomImage"), QStringLiteral("imageFullSize")}));
    // An SVG saves as what it is, as a PNG drawn from it, and as a vector PDF.
    QCOMPARE(view->image(0).saveFormats(), QStringList({QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}));
    QTemporaryDir out;
    for (const QString &format : view->image(0).saveFormats()) {
        const QString path = out.filePath(QStringLiteral("figure.") + format);
        QString error;
        QVERIFY2(view->image(0).save(path, format, &error), qPrintable(error));
        QVERIFY(QFileInfo(path).size() > 0);
    }
    QCOMPARE(QImage(out.filePath(QStringLiteral("figure.png"))).size(), QSize(120, 60));
    QFile pdf(out.filePath(QStringLiteral("figure.pdf")));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");

    QApplication::clipboard()->clear();
    menu->actions().at(1)->trigger();
    QCOMPARE(QApplication::clipboard()->image().size(), QSize(120, 60));
}

void tst_RichWorkbench::variablesAreListedAfterEachRun()
{
    Bench bench;
    VariablesPanel *panel = bench.window->variablesPanel();
    QTableWidget *table = panel->table();
    QVERIFY(bench.run(QStringLiteral("answer = 42\ngreeting = 'hello'\nitems = [1, 2, 3]\n_hidden = 1\n")));
    QTRY_COMPARE(variableNames(table), QStringList({QStringLiteral("answer"), QStringLiteral("greeting"),
                                                    QStringLiteral("items")}));
    const int items = variableRow(table, QStringLiteral("items"));
    QCOMPARE(table->item(items, VariablesPanel::TypeColumn)->text(), QStringLiteral("list"));
    QCOMPARE(table->item(items, VariablesPanel::ValueColumn)->text(), QStringLiteral("[1, 2, 3]"));
    QCOMPARE(table->item(items, VariablesPanel::SizeColumn)->text(), QStringLiteral("3"));
    QCOMPARE(table->item(variableRow(table, QStringLiteral("answer")), VariablesPanel::TypeColumn)->text(),
             QStringLiteral("int"));
    QCOMPARE(table->item(variableRow(table, QStringLiteral("greeting")), VariablesPanel::ValueColumn)->text(),
             QStringLiteral("'hello'"));

    // The next run's names show after it, and deleted ones go.
    QVERIFY(bench.run(QStringLiteral("ratio = 0.5\ndel greeting\n")));
    QTRY_COMPARE(variableNames(table), QStringList({QStringLiteral("answer"), QStringLiteral("items"),
                                                    QStringLiteral("ratio")}));
    QCOMPARE(table->item(variableRow(table, QStringLiteral("ratio")), VariablesPanel::TypeColumn)->text(),
             QStringLiteral("float"));
    // The same answer as the engine's (and the HTTP API's) variables.
    bool answered = false;
    QStringList engineNames;
    bench.engine->contexts().variables(bench.window->currentWorkspace(), bench.window->currentContextId(),
                                       [&](Result<QJsonObject> reply) {
        answered = true;
        if (reply) {
            for (const QJsonValue &v : reply->value(QLatin1String("variables")).toArray())
                engineNames << v.toObject().value(QLatin1String("name")).toString();
        }
    });
    QTRY_VERIFY(answered);
    engineNames.sort();
    QCOMPARE(engineNames, variableNames(table));
}

void tst_RichWorkbench::dataFrameAndListVariablesOpenAsTables()
{
    Bench bench;
    VariablesPanel *panel = bench.window->variablesPanel();
    QVERIFY(bench.run(QStringLiteral(
            "import pandas as pd\n"
            "df = pd.DataFrame({'n': range(250), 'sq': [i * i for i in range(250)]})\n"
            "rows = [{'name': 'ada', 'age': 36}, {'name': 'alan', 'age': 41}]\n"
            "label = 'not a table'\n")));
    QTRY_VERIFY(variableRow(panel->table(), QStringLiteral("df")) >= 0);
    const int df = variableRow(panel->table(), QStringLiteral("df"));
    QCOMPARE(panel->table()->item(df, VariablesPanel::TypeColumn)->text(), QStringLiteral("DataFrame"));
    QCOMPARE(panel->table()->item(df, VariablesPanel::SizeColumn)->text(), QStringLiteral("250 × 2"));

    DataTableDialog *frame = panel->openTable(QStringLiteral("df"));
    QVERIFY(frame);
    QCOMPARE(frame->model()->columnCount(), 3);  // the index, n, sq
    QCOMPARE(frame->model()->rowCount(), 200);    // bounded, and it says so
    QCOMPARE(frame->model()->totalRows(), 250);
    QVERIFY(frame->model()->isTruncated());
    QCOMPARE(frame->model()->data(frame->model()->index(12, 2)).toString(), QStringLiteral("144"));

    DataTableDialog *list = panel->openTable(QStringLiteral("rows"));
    QVERIFY(list);
    QCOMPARE(list->model()->rowCount(), 2);
    QCOMPARE(list->model()->headerData(1, Qt::Horizontal).toString(), QStringLiteral("name"));
    QCOMPARE(list->model()->data(list->model()->index(1, 1)).toString(), QStringLiteral("alan"));
    QVERIFY(!panel->openTable(QStringLiteral("label")));

    // Activating the row (a double click, Enter) opens it too.
    const int before = int(panel->findChildren<DataTableDialog *>().size());
    emit panel->table()->cellActivated(df, VariablesPanel::NameColumn);
    QCOMPARE(panel->findChildren<DataTableDialog *>().size(), before + 1);
}

void tst_RichWorkbench::plotsPanelListsNewestFirstAndSavesAPng()
{
    Bench bench;
    PlotsPanel *plots = bench.window->plotsPanel();
    const QString figure = QStringLiteral(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots(figsize=(%1, 2), dpi=100)\nax.plot([1, 2])\nplt.show()\n");
    QVERIFY(bench.run(figure.arg(3)));
    QVERIFY(bench.run(QStringLiteral("print('no plot here')")));
    QVERIFY(bench.run(figure.arg(7)));
    QTRY_COMPARE(plots->count(), 2);
    QVERIFY2(plots->plot(0).size().width() > plots->plot(1).size().width(), "the newest is first");
    QCOMPARE(plots->list()->count(), 2);

    QTemporaryDir out;
    const QString path = out.filePath(QStringLiteral("newest.png"));
    QString error;
    QVERIFY2(plots->plot(0).save(path, QStringLiteral("png"), &error), qPrintable(error));
    const QImage saved(path);
    QVERIFY(!saved.isNull());
    QCOMPARE(saved.size(), plots->plot(0).size());

    // Selected again, the context's plots come back from its history, in the same order.
    const QString id = bench.window->currentContextId();
    plots->setContext(bench.window->currentWorkspace(), QString());
    QCOMPARE(plots->count(), 0);
    plots->setContext(bench.window->currentWorkspace(), id);
    QCOMPARE(plots->count(), 2);
    QCOMPARE(plots->plot(0).size(), saved.size());
}

void tst_RichWorkbench::stateColumnDoesNotSqueezeNames()
{
    Bench bench;
    ContextTree *tree = bench.window->contextTree();
    QVERIFY(bench.engine->contexts().rename(bench.window->currentWorkspace(), bench.window->currentContextId(),
                                            QStringLiteral("analysis of the quarter")));
    QVERIFY(bench.run(QStringLiteral("x = 1")));
    QTreeWidgetItem *item = tree->contextItem(bench.window->currentContextId());
    QVERIFY(item);
    QTRY_COMPARE(item->text(ContextTree::StateColumn), QStringLiteral("idle"));
    QCoreApplication::processEvents();
    // The name column is as wide as the name needs (its level's indentation, the language
    // badge, the text), at the window's size and a narrow one.
    const int needed = 2 * tree->indentation() + tree->iconSize().width()
                       + tree->fontMetrics().horizontalAdvance(item->text(ContextTree::NameColumn));
    for (const QSize size : {QSize(1280, 820), QSize(1000, 700)}) {
        bench.window->resize(size);
        QCoreApplication::processEvents();
        QTRY_VERIFY2(tree->header()->sectionSize(ContextTree::NameColumn) >= needed,
                     qPrintable(QStringLiteral("%1 < %2").arg(tree->header()->sectionSize(ContextTree::NameColumn)).arg(needed)));
        QVERIFY(tree->header()->sectionSize(ContextTree::StateColumn) > 0);
    }
}

void tst_RichWorkbench::wordWrapAndWhitespacePreferencesApply()
{
    Bench bench;
    QCOMPARE(bench.window->editor()->wrapMode(), QsciScintilla::WrapNone);
    QCOMPARE(bench.window->editor()->whitespaceVisibility(), QsciScintilla::WsInvisible);
    WorkbenchSettings prefs = bench.window->preferences();
    prefs.wordWrap = true;
    prefs.showWhitespace = true;
    bench.window->applyPreferences(prefs);
    QCOMPARE(bench.window->editor()->wrapMode(), QsciScintilla::WrapWord);
    QCOMPARE(bench.window->editor()->whitespaceVisibility(), QsciScintilla::WsVisible);
    // An editor opened later has them too.
    core::CreateContextRequest request;
    request.language = QStringLiteral("python");
    request.name = QStringLiteral("second");
    QVERIFY(bench.window->createContext(request));
    QCOMPARE(bench.window->editorTabs()->count(), 2);
    QCOMPARE(bench.window->editor()->wrapMode(), QsciScintilla::WrapWord);
    QCOMPARE(bench.window->editor()->whitespaceVisibility(), QsciScintilla::WsVisible);
    // And they are kept.
    QSettings settings(QDir(bench.dir.path()).filePath(QStringLiteral("workbench.ini")), QSettings::IniFormat);
    prefs.save(settings);
    const WorkbenchSettings loaded = WorkbenchSettings::load(settings);
    QVERIFY(loaded.wordWrap);
    QVERIFY(loaded.showWhitespace);
}

QTEST_MAIN(tst_RichWorkbench)
#include "tst_richworkbench.moc"
