// SPDX-License-Identifier: Apache-2.0
// The workbench as a person uses it: the real WorkbenchWindow over a real Engine with a real
// Python worker, driven with keys. Each test has its own data directory and settings file.
#include "core/engine.h"
#include "gui/codeeditor.h"
#include "gui/contexttree.h"
#include "gui/editortabs.h"
#include "gui/envlayertable.h"
#include "gui/envpanel.h"
#include "gui/filebrowser.h"
#include "gui/findbar.h"
#include "gui/historypanel.h"
#include "gui/inprocessengine.h"
#include "gui/newcontextdialog.h"
#include "gui/outputview.h"
#include "gui/pluginsdialog.h"
#include "gui/serverpanel.h"
#include "gui/workbenchwindow.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QScrollBar>
#include <QSettings>
#include <QInputDialog>
#include <QLabel>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QTimer>
#include <QTreeWidgetItem>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTableWidget>
#include <QTreeWidget>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace replhost;
using namespace replhost::gui;

namespace {

// A fresh worker starts and a short run finishes well within this on a busy machine.
constexpr int kRunTimeout = 60000;

// One engine and one window on a data directory.
class Bench {
public:
    explicit Bench(const QString &dataDir, QStringList pluginPaths = {QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)},
                   bool confirmClose = false)
    {
        core::EngineConfig config;
        config.dataDir = dataDir;
        config.pluginPaths = pluginPaths;
        config.warmPoolSize = 0;  // tst_warmpool covers the pool; a pooled JVM per window is not needed here
        auto opened = core::Engine::open(config);
        if (!opened)
            qFatal("engine: %s", qPrintable(opened.error().message));
        engine = std::move(*opened);
        WorkbenchOptions options;
        options.settingsFile = QDir(dataDir).filePath(QStringLiteral("workbench.ini"));
        options.confirmCloseWhileRunning = confirmClose;
        client = std::make_unique<InProcessEngine>(*engine);
        window = std::make_unique<WorkbenchWindow>(*client, options);
        window->show();
        if (!QTest::qWaitForWindowExposed(window.get()))
            qFatal("window not exposed");
    }
    ~Bench()
    {
        window.reset();
        client.reset();
        engine->contexts().shutdownAll();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        engine.reset();
    }

    bool createPython()
    {
        core::CreateContextRequest request;
        request.language = QStringLiteral("python");
        request.name = QStringLiteral("test");
        return window->createContext(request);
    }

    // Makes the window the active one again (a message box that closed leaves none active
    // under the offscreen platform, and shortcuts only reach the active window).
    void activate()
    {
        window->activateWindow();
        if (!QTest::qWaitForWindowActive(window.get()))
            qFatal("window not active");
    }

    // Types `code` into the editor and presses Ctrl+Enter, as a person would.
    core::ExecutionPtr typeAndRun(const QString &code)
    {
        activate();
        CodeEditor *editor = window->editor();
        editor->setFocus();
        editor->selectAll();
        editor->removeSelectedText();
        // Line by line, with Return between lines; the editor's auto-indent is undone so the
        // text ends up exactly as written.
        const QStringList lines = code.split(QLatin1Char('\n'));
        for (int i = 0; i < lines.size(); ++i) {
            if (i > 0) {
                QTest::keyClick(editor, Qt::Key_Return);
                int line = 0, index = 0;
                editor->getCursorPosition(&line, &index);
                if (index > 0) {
                    editor->setSelection(line, 0, line, index);
                    editor->removeSelectedText();
                }
            }
            QTest::keyClicks(editor, lines.at(i));
        }
        const core::ExecutionPtr before = window->lastExecution();
        QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
        const core::ExecutionPtr after = window->lastExecution();
        return after != before ? after : core::ExecutionPtr();
    }

    // Runs `code`, exactly as given, in the current context as an API client would.
    core::ExecutionPtr runFromApi(const QString &code)
    {
        core::RunRequest request;
        request.contextId = window->currentContextId();
        request.code = code;
        const auto run = engine->contexts().run(request);
        return run ? *run : core::ExecutionPtr();
    }

    std::unique_ptr<core::Engine> engine;
    std::unique_ptr<InProcessEngine> client;
    std::unique_ptr<WorkbenchWindow> window;
};

bool waitFinished(const core::ExecutionPtr &execution, int timeout = kRunTimeout)
{
    return execution && QTest::qWaitFor([&] { return execution->isFinished(); }, timeout);
}

// Answers the quit question, once it shows, with the button labelled `answer`; `asked` says
// whether one showed and `text` what it said.
void answerQuitQuestion(const QString &answer, bool *asked, QString *text)
{
    *asked = false;
    QTimer::singleShot(0, [=] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        if (!box || box->objectName() != QLatin1String("quitWhileRunning"))
            return;
        *asked = true;
        *text = box->text();
        for (QAbstractButton *button : box->buttons()) {
            if (button->text().remove(QLatin1Char('&')) == answer)
                button->click();
        }
    });
}

// Answers the next message box named `objectName`, once it shows, with the button labelled
// `answer`, ticking its "Don't ask again" first when `dontAskAgain`. `asked` says whether it
// showed and `text` what it said.
void answerBox(const QString &objectName, const QString &answer, bool dontAskAgain, bool *asked,
               QString *text = nullptr)
{
    *asked = false;
    QTimer::singleShot(0, [=] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        if (!box || box->objectName() != objectName)
            return;
        *asked = true;
        if (text)
            *text = box->text();
        if (dontAskAgain && box->checkBox())
            box->checkBox()->setChecked(true);
        for (QAbstractButton *button : box->buttons()) {
            if (button->text().remove(QLatin1Char('&')) == answer) {
                button->click();
                return;
            }
        }
        qWarning("no button %s", qPrintable(answer));
    });
}

// The window at the smaller screenshot size with the Environment panel shown.
bool showEnvPanelAt1000x700(Bench &bench)
{
    bench.window->resize(1000, 700);
    bench.window->action(QStringLiteral("actionFocusEnv"))->trigger();
    return QTest::qWaitFor([&] { return bench.window->envPanel()->isVisible(); });
}

QString writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return QFileInfo(path).canonicalFilePath();
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class tst_Workbench : public QObject {
    Q_OBJECT
private slots:
    void ctrlEnterRunsEditorAndStreamsOutput();
    void selectionRunsOnlyTheSelection();
    void escapeInterruptsALoopAndKeepsState();
    void errorShowsTraceback();
    void historySurvivesReopeningTheWindow();
    void historyLoadsOlderExecutionsOnRequest();
    void queuedRunIsListedBeforeItStarts();
    void renameFromTheWindowAndFromTheEngine();
    void workspacesAppearAndGoLive();
    void envEditorRoundTrip();
    void brokenPluginShowsItsError();
    void languagePickerExplainsUnusableRuntimes();
    void executionsFromTheApiAppearLive();
    void hugeOutputKeepsTheWindowResponsive();
    void shortcutsAreUniqueAndListed();
    void closingWhileCodeRunsAsksFirst();
    void backgroundOutputShowsAfterItsRun();
    void queuedRunsAreNumberedWhenTheyStart();
    void savedFileReopensWithItsContext();
    void untitledBufferSurvivesARelaunch();
    void closingAModifiedFileAsks();
    void filesPanelOpensTextInANewTab();
    void fileOfAnotherLanguageOffersAContext();
    void copyToEditorCanBeUndone();
    void ctrlEnterWithoutAContextKeepsTheText();
    void restartAsksAndMarksTheOutput();
    void deleteAsksNamingTheContext();
    void shiftEnterRunsTheCellAndAdvances();
    void f9RunsTheLineAndMovesOn();
    void restartAndRunAllStartsFresh();
    void findAndReplace();
    void noScrollLeakBetweenContexts();
    void aTabRunsInItsOwnContext();
    void treeMenuItemsAllHaveText();
    void copyContextIdPutsItOnTheClipboard();
    void viewMenuListsEachPanelOnce();
    void interruptedRunsAreMarkedApartFromErrors();
    void historyRowShowsTheFirstLineWithCode();
    void curlExampleUsesTheSelectedContext();
    void contextStatesAreExplained();
    void unnamedContextsAreNumbered();
    void envPanelFieldsAreUsableAt1000x700();
    void effectiveEnvironmentIsThePanelsLargestPart();
};

void tst_Workbench::ctrlEnterRunsEditorAndStreamsOutput()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QVERIFY(!bench.window->currentContextId().isEmpty());
    QCOMPARE(bench.window->editor()->lexerHint(), QStringLiteral("python"));

    // Auto-indent keeps the indentation of the line above.
    CodeEditor *editor = bench.window->editor();
    editor->setFocus();
    QTest::keyClicks(editor, QStringLiteral("    x = 1"));
    QTest::keyClick(editor, Qt::Key_Return);
    int line = 0, index = 0;
    editor->getCursorPosition(&line, &index);
    QCOMPARE(line, 1);
    QCOMPARE(index, 4);

    const core::ExecutionPtr run = bench.typeAndRun(QStringLiteral("print('hello from the editor')\n6 * 7"));
    QVERIFY2(run, "Ctrl+Enter did not start a run");
    QVERIFY(waitFinished(run));
    QCOMPARE(run->status(), QStringLiteral("ok"));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("hello from the editor")));
    QVERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("42")));
    QTRY_VERIFY2(bench.window->runStatusText().contains(QStringLiteral("ok")),
                 qPrintable(bench.window->runStatusText()));
    // The tree shows the execution count.
    QTreeWidgetItem *item = bench.window->contextTree()->contextItem(bench.window->currentContextId());
    QVERIFY(item);
    QTRY_COMPARE(item->text(ContextTree::RunsColumn), QStringLiteral("1"));
}

void tst_Workbench::selectionRunsOnlyTheSelection()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    CodeEditor *editor = bench.window->editor();
    editor->setText(QStringLiteral("print('first')\nprint('second')\n"));
    editor->setSelection(1, 0, 1, 15);
    QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
    const core::ExecutionPtr run = bench.window->lastExecution();
    QVERIFY(waitFinished(run));
    QCOMPARE(run->code(), QStringLiteral("print('second')"));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("second")));
}

void tst_Workbench::escapeInterruptsALoopAndKeepsState()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("kept = 'still here'"))));

    const core::ExecutionPtr loop = bench.typeAndRun(
            QStringLiteral("import time\nwhile True:\n    time.sleep(0.05)"));
    QVERIFY(loop);
    QTRY_VERIFY_WITH_TIMEOUT(loop->status() == QLatin1String("running"), kRunTimeout);
    QTRY_VERIFY(bench.window->action(QStringLiteral("actionInterrupt"))->isEnabled());
    QTest::keyClick(bench.window->editor(), Qt::Key_Escape);
    QVERIFY(waitFinished(loop, 15000));
    QCOMPARE(loop->status(), QStringLiteral("interrupted"));

    const core::ExecutionPtr after = bench.typeAndRun(QStringLiteral("print(kept)"));
    QVERIFY(waitFinished(after));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("still here")));
}

void tst_Workbench::errorShowsTraceback()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const core::ExecutionPtr run = bench.typeAndRun(QStringLiteral("def f():\n    return 1 / 0\n\nf()"));
    QVERIFY(waitFinished(run));
    QCOMPARE(run->status(), QStringLiteral("error"));
    const QString text = bench.window->output()->toPlainText();
    QVERIFY2(text.contains(QStringLiteral("ZeroDivisionError")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Traceback")), qPrintable(text));
}

void tst_Workbench::historySurvivesReopeningTheWindow()
{
    QTemporaryDir dir;
    QString contextId;
    {
        Bench bench(dir.path());
        QVERIFY(bench.createPython());
        contextId = bench.window->currentContextId();
        QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("answer = 40 + 2\nprint(answer)"))));
        QTRY_COMPARE(bench.window->history()->rowCount(), 1);
    }
    Bench bench(dir.path());
    bench.window->contextTree()->selectContext(contextId);
    QCOMPARE(bench.window->currentContextId(), contextId);
    HistoryPanel *history = bench.window->history();
    QCOMPARE(history->rowCount(), 1);
    history->selectRow(0);
    QCOMPARE(history->selectedCode(), QStringLiteral("answer = 40 + 2\nprint(answer)"));
    QTRY_VERIFY(history->outputView()->toPlainText().contains(QStringLiteral("42")));

    // Copy to the editor, then run it again from the editor.
    emit history->copyToEditorRequested(history->selectedCode());
    QCOMPARE(bench.window->editor()->text(), QStringLiteral("answer = 40 + 2\nprint(answer)"));
    QTest::keyClick(bench.window->editor(), Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(waitFinished(bench.window->lastExecution()));
    QTRY_COMPARE(history->rowCount(), 2);
}

void tst_Workbench::historyLoadsOlderExecutionsOnRequest()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const int total = HistoryPanel::kPageSize + 5;
    core::ExecutionPtr last;
    for (int i = 0; i < total; ++i) {
        core::RunRequest request;
        request.contextId = bench.window->currentContextId();
        request.code = QStringLiteral("n = %1").arg(i);
        auto run = bench.engine->contexts().run(request);
        QVERIFY(run);
        last = *run;
    }
    QVERIFY(waitFinished(last));
    // The stored history is complete once the history writer has committed its last batch.
    HistoryPanel *history = bench.window->history();
    QTRY_VERIFY_WITH_TIMEOUT((history->refresh(), history->hasOlder()), kRunTimeout);
    QCOMPARE(history->rowCount(), HistoryPanel::kPageSize);
    history->loadOlder();
    QVERIFY(!history->hasOlder());
    QCOMPARE(history->rowCount(), total);
    history->selectRow(total - 1);
    QCOMPARE(history->selectedCode(), QStringLiteral("n = 0"));
}

void tst_Workbench::queuedRunIsListedBeforeItStarts()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const core::ExecutionPtr busy = bench.typeAndRun(QStringLiteral("import time\nwhile True:\n    time.sleep(0.05)"));
    QVERIFY(busy);
    QTRY_VERIFY_WITH_TIMEOUT(busy->status() == QLatin1String("running"), kRunTimeout);
    const core::ExecutionPtr queued = bench.typeAndRun(QStringLiteral("print('after the loop')"));
    QVERIFY(queued);
    QCOMPARE(queued->status(), QStringLiteral("queued"));

    HistoryPanel *history = bench.window->history();
    QCOMPARE(history->rowCount(), 2);
    QCOMPARE(history->statusAt(0), QStringLiteral("queued"));
    QCOMPARE(history->statusAt(1), QStringLiteral("running"));
    history->selectRow(0);
    QCOMPARE(history->selectedCode(), QStringLiteral("print('after the loop')"));
    QVERIFY(bench.window->runStatusText().contains(QStringLiteral("Queued")));

    // Interrupting the context stops the loop and drops the queue: both rows say so.
    QTest::keyClick(bench.window->editor(), Qt::Key_Escape);
    QVERIFY(waitFinished(busy, 15000));
    QVERIFY(waitFinished(queued, 15000));
    QTRY_COMPARE(history->statusAt(0), QStringLiteral("aborted"));
    QCOMPARE(history->statusAt(1), QStringLiteral("interrupted"));
}

void tst_Workbench::renameFromTheWindowAndFromTheEngine()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString id = bench.window->currentContextId();
    QTreeWidgetItem *item = bench.window->contextTree()->contextItem(id);
    QVERIFY(item);
    QCOMPARE(item->text(0), QStringLiteral("test"));

    // F2 asks for the name, as a person would type it.
    bool answered = false;
    QTimer::singleShot(0, this, [&] {
        auto *dialog = qobject_cast<QInputDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        auto *line = dialog->findChild<QLineEdit *>();
        line->selectAll();
        QTest::keyClicks(line, QStringLiteral("data cleaning"));
        answered = true;
        dialog->accept();
    });
    QTest::keyClick(bench.window->editor(), Qt::Key_F2);
    QVERIFY(answered);
    QCOMPARE(item->text(0), QStringLiteral("data cleaning"));
    QCOMPARE(bench.engine->contexts().get({}, id)->name, QStringLiteral("data cleaning"));

    // A rename through the engine (what the HTTP API calls) shows up too.
    QVERIFY(bench.engine->contexts().rename({}, id, QStringLiteral("renamed by an agent")));
    QCOMPARE(item->text(0), QStringLiteral("renamed by an agent"));
    // A refused name changes nothing.
    QVERIFY(!bench.engine->contexts().rename({}, id, QStringLiteral("bad\nname")));
    QCOMPARE(item->text(0), QStringLiteral("renamed by an agent"));
}

void tst_Workbench::workspacesAppearAndGoLive()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    ContextTree *tree = bench.window->contextTree();
    const auto names = [tree] {
        QStringList result;
        for (int i = 0; i < tree->topLevelItemCount(); ++i)
            result.append(tree->topLevelItem(i)->text(0));
        return result;
    };
    QVERIFY(!names().contains(QStringLiteral("analysis")));
    QVERIFY(bench.engine->workspaces().create(QStringLiteral("analysis")));
    QVERIFY(names().contains(QStringLiteral("analysis")));

    core::CreateContextRequest request;
    request.workspace = QStringLiteral("analysis");
    request.language = QStringLiteral("python");
    const auto created = bench.engine->contexts().create(request);
    QVERIFY(created);
    QVERIFY(tree->contextItem(created->id));

    QVERIFY(bench.engine->workspaces().remove(QStringLiteral("analysis")));
    QVERIFY(!names().contains(QStringLiteral("analysis")));
    QVERIFY(!tree->contextItem(created->id));
}

void tst_Workbench::envEditorRoundTrip()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    EnvPanel *env = bench.window->envPanel();

    QVERIFY(env->workspaceLayer()->setVariable(QStringLiteral("RH_GREETING"), QStringLiteral("workspace")));
    QCOMPARE(env->effectiveValue(QStringLiteral("RH_GREETING")), QStringLiteral("workspace"));
    QVERIFY(env->contextLayer()->setVariable(QStringLiteral("RH_GREETING"), QStringLiteral("context")));
    QCOMPARE(env->effectiveValue(QStringLiteral("RH_GREETING")), QStringLiteral("context"));
    QCOMPARE(env->contextLayer()->table()->rowCount(), 1);

    core::ExecutionPtr run = bench.typeAndRun(QStringLiteral("import os\nprint(os.environ.get('RH_GREETING'))"));
    QVERIFY(waitFinished(run));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("context")));

    QVERIFY(env->contextLayer()->unsetVariable(QStringLiteral("RH_GREETING")));
    QVERIFY(env->effectiveValue(QStringLiteral("RH_GREETING")).isNull());
    run = bench.typeAndRun(QStringLiteral("print('value:', os.environ.get('RH_GREETING'))"));
    QVERIFY(waitFinished(run));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("value: None")));

    QVERIFY(env->contextLayer()->clearVariable(QStringLiteral("RH_GREETING")));
    QCOMPARE(env->contextLayer()->table()->rowCount(), 0);
    QCOMPARE(env->effectiveValue(QStringLiteral("RH_GREETING")), QStringLiteral("workspace"));

    QVERIFY(!env->contextLayer()->setVariable(QStringLiteral("BAD=KEY"), QStringLiteral("x")));
    QVERIFY(!env->contextLayer()->lastError().isEmpty());
}

void tst_Workbench::brokenPluginShowsItsError()
{
    QTemporaryDir dir;
    const QString fixtures = QStringLiteral(REPLHOST_TEST_FIXTURE_DIR);
    Bench bench(dir.path(), {fixtures + QStringLiteral("/fixture_no_id"),
                             fixtures + QStringLiteral("/not_a_library"),
                             QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)});
    bench.window->showPlugins();
    PluginsDialog *dialog = bench.window->pluginsDialog();
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QTableWidget *table = dialog->table();
    int broken = 0;
    bool pythonLoaded = false;
    for (int row = 0; row < table->rowCount(); ++row) {
        const QString state = table->item(row, PluginsDialog::StateColumn)->text();
        if (state == QLatin1String("broken")) {
            ++broken;
            QVERIFY2(!table->item(row, PluginsDialog::DetailsColumn)->text().isEmpty(),
                     "a broken plugin must say why");
        }
        if (table->item(row, PluginsDialog::PluginColumn)->text().contains(QStringLiteral("python"))
            && state == QLatin1String("loaded"))
            pythonLoaded = true;
    }
    QCOMPARE(broken, 2);
    QVERIFY(pythonLoaded);
    // Where it looked, in order: the configured directories first, then the standard ones.
    const QString searched = dialog->searchPathLabel()->text();
    const qsizetype noId = searched.indexOf(fixtures + QStringLiteral("/fixture_no_id (configured)"));
    const qsizetype local = searched.indexOf(QStringLiteral("/usr/local/lib/replhost/plugins (local"));
    QVERIFY2(noId >= 0 && local > noId, qPrintable(searched));
}

void tst_Workbench::languagePickerExplainsUnusableRuntimes()
{
    QTemporaryDir dir;
    Bench bench(dir.path(), {QStringLiteral(REPLHOST_TEST_FIXTURE_DIR "/fixture_ghost"),
                             QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)});
    NewContextDialog dialog(*bench.client, QStringLiteral("python"), QString(), bench.window.get());
    QCOMPARE(dialog.language(), QStringLiteral("python"));
    QVERIFY(dialog.usableCount() >= 1);
    // The ghost runtime is never installed: listed, not selectable, with its reason.
    QVERIFY(!dialog.selectLanguage(QStringLiteral("ghost")));
    QListWidget *list = dialog.findChild<QListWidget *>();
    QVERIFY(list);
    bool explained = false;
    for (int i = 0; i < list->count(); ++i) {
        if (!(list->item(i)->flags() & Qt::ItemIsEnabled) && list->item(i)->text().contains(QStringLiteral("not available:")))
            explained = true;
    }
    QVERIFY(explained);
}

void tst_Workbench::executionsFromTheApiAppearLive()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    // Any execution the engine starts (the API calls the same ContextManager::run) shows up in
    // the window without the window asking for it.
    core::RunRequest request;
    request.contextId = bench.window->currentContextId();
    request.code = QStringLiteral("print('from an agent')");
    const auto run = bench.engine->contexts().run(request);
    QVERIFY(run);
    QVERIFY(waitFinished(*run));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("from an agent")));

    // And the server panel serves the same engine.
    ServerPanel *server = bench.window->serverPanel();
    QVERIFY2(server->start(0), qPrintable(server->lastError()));
    QVERIFY(server->baseUrl().startsWith(QStringLiteral("http://127.0.0.1:")));
    QVERIFY(server->curlExample().contains(QString::fromLatin1(server->token())));
    // replhost-cli finds the workbench's server as it finds replhost-server.
    QFile urlFile(QDir(dir.path()).filePath(QStringLiteral("server.json")));
    QVERIFY(urlFile.open(QIODevice::ReadOnly));
    const QJsonObject found = QJsonDocument::fromJson(urlFile.readAll()).object();
    urlFile.close();
    QCOMPARE(found.value(QStringLiteral("url")).toString(), server->baseUrl());
    QCOMPARE(qint64(found.value(QStringLiteral("pid")).toDouble()), QCoreApplication::applicationPid());
    server->stop();
    QVERIFY(!server->isRunning());
    QVERIFY(!urlFile.exists());
}

void tst_Workbench::hugeOutputKeepsTheWindowResponsive()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    // 100 MB of stdout. The view keeps a bounded part; the event loop must keep turning.
    const core::ExecutionPtr run = bench.typeAndRun(QStringLiteral(
            "import sys\nline = 'x' * 1023 + '\\n'\nfor _ in range(100 * 1024):\n    sys.stdout.write(line)"));
    QVERIFY(run);
    qint64 longestGap = 0;
    QElapsedTimer gap;
    gap.start();
    QElapsedTimer total;
    total.start();
    while (!run->isFinished() && total.elapsed() < 240000) {
        QTest::qWait(20);
        longestGap = qMax(longestGap, gap.restart());
    }
    QVERIFY(run->isFinished());
    QTest::qWait(100);
    OutputView *output = bench.window->output();
    QVERIFY2(output->document()->characterCount() < 4 * OutputView::kStreamCharsShown,
             qPrintable(QString::number(output->document()->characterCount())));
    QVERIFY(output->hiddenCharacters() > 0);
    QVERIFY(output->toPlainText().contains(QStringLiteral("not shown here")));
    qInfo("longest event-loop gap during 100 MB of output: %lld ms", longestGap);
    QVERIFY2(longestGap < 1000, qPrintable(QString::number(longestGap)));
}

void tst_Workbench::shortcutsAreUniqueAndListed()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QSet<QString> seen;
    for (QAction *action : bench.window->allActions()) {
        for (const QKeySequence &key : action->shortcuts()) {
            const QString text = key.toString();
            QVERIFY2(!seen.contains(text), qPrintable(text + QStringLiteral(" is bound twice")));
            seen.insert(text);
        }
    }
    QVERIFY(seen.contains(QStringLiteral("Ctrl+Return")));
    QVERIFY(seen.contains(QStringLiteral("Esc")));
}

// What a run's thread prints after the run ended is shown under a line that says so, after
// that run and before the next, live and when the context is shown again.
void tst_Workbench::backgroundOutputShowsAfterItsRun()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString first = bench.window->currentContextId();
    const core::ExecutionPtr leaver = bench.typeAndRun(QStringLiteral(
            "import threading, time\n"
            "def later():\n    time.sleep(0.3)\n    print('written', 'later', flush=True)\n"
            "threading.Thread(target=later).start()"));
    QVERIFY(waitFinished(leaver));
    const QString label = QStringLiteral("Written in the background after In [1]:");
    // (The code says 'written', 'later': only the output has the two words together.)
    QTRY_VERIFY_WITH_TIMEOUT(bench.window->output()->toPlainText().contains(QStringLiteral("written later")),
                             kRunTimeout);
    // In [1] (its prompt numbered once the run started), its code, the label, the output, In [2].
    const auto inOrder = [&] {
        const QString text = bench.window->output()->toPlainText();
        const qsizetype at = text.indexOf(label);
        return text.startsWith(QLatin1String("In [1]\nimport threading"))
               && at > text.indexOf(QStringLiteral(".start()"))
               && text.indexOf(QStringLiteral("written later")) > at
               && text.indexOf(QStringLiteral("In [2]")) > text.indexOf(QStringLiteral("written later"));
    };
    const core::ExecutionPtr next = bench.typeAndRun(QStringLiteral("print('mine')"));
    QVERIFY(waitFinished(next));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("mine")));
    QVERIFY2(inOrder(), qPrintable(bench.window->output()->toPlainText()));
    QVERIFY(!next->events().isEmpty());

    // Shown again from the engine's log after another context was on screen.
    QVERIFY(bench.createPython());
    QVERIFY(!bench.window->output()->toPlainText().contains(QStringLiteral("written later")));
    bench.window->contextTree()->selectContext(first);
    QTRY_COMPARE(bench.window->currentContextId(), first);
    QTRY_VERIFY(inOrder());
}

// Runs queued behind a busy one are shown when they start, each with its number and its own
// output under its code. (A run that waits only for its interpreter shows "In [ ]" until then.)
void tst_Workbench::queuedRunsAreNumberedWhenTheyStart()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    for (int i = 1; i <= 8; ++i)
        QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("n = %1").arg(i))));
    const core::ExecutionPtr busy = bench.typeAndRun(QStringLiteral("import time\ntime.sleep(0.5)"));
    const core::ExecutionPtr tenth = bench.typeAndRun(QStringLiteral("print('ten')"));
    const core::ExecutionPtr eleventh = bench.typeAndRun(QStringLiteral("print('eleven')"));
    QVERIFY(busy && tenth && eleventh);
    QVERIFY(!bench.window->output()->toPlainText().contains(QLatin1String("print('ten')")));
    QVERIFY(waitFinished(eleventh));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QLatin1String("eleven\n")));
    const QString text = bench.window->output()->toPlainText();
    QVERIFY2(text.contains(QLatin1String("In [9]\nimport time")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("In [10]\nprint('ten')\nten")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("In [11]\nprint('eleven')\neleven")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("In [ ]")), qPrintable(text));
}

// The tree's context menu is its actions: each one says what it does (none shows only a key),
// and the tree's Delete key still asks to delete the context.
void tst_Workbench::treeMenuItemsAllHaveText()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    ContextTree *tree = bench.window->contextTree();
    QCOMPARE(tree->contextMenuPolicy(), Qt::ActionsContextMenu);
    const QList<QAction *> actions = tree->actions();
    QVERIFY(!actions.isEmpty());
    for (QAction *action : actions) {
        if (!action->isSeparator())
            QVERIFY2(!action->text().remove(QLatin1Char('&')).trimmed().isEmpty(),
                     qPrintable(action->shortcut().toString()));
    }
    QVERIFY(actions.contains(bench.window->action(QStringLiteral("actionCopyContextId"))));

    bool asked = false;
    answerBox(QStringLiteral("confirmDelete"), QStringLiteral("Cancel"), false, &asked);
    tree->setFocus();
    QTest::keyClick(tree, Qt::Key_Delete);
    QVERIFY(asked);
    QVERIFY(bench.engine->contexts().get({}, bench.window->currentContextId()));
}

// The HTTP API and the command line name a context by its id: the window copies it.
void tst_Workbench::copyContextIdPutsItOnTheClipboard()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QApplication::clipboard()->clear();
    bench.window->action(QStringLiteral("actionCopyContextId"))->trigger();
    QCOMPARE(QApplication::clipboard()->text(), bench.window->currentContextId());
    QVERIFY(!bench.window->currentContextId().isEmpty());
}

void tst_Workbench::viewMenuListsEachPanelOnce()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QMenu *view = nullptr;
    for (QAction *entry : bench.window->menuBar()->actions()) {
        if (entry->text().remove(QLatin1Char('&')) == QLatin1String("View"))
            view = entry->menu();
    }
    QVERIFY(view);
    QStringList texts;
    for (QAction *action : view->actions()) {
        if (!action->isSeparator())
            texts.append(action->text().remove(QLatin1Char('&')));
    }
    for (QDockWidget *dock : bench.window->findChildren<QDockWidget *>()) {
        QVERIFY2(texts.count(dock->windowTitle()) == 1,
                 qPrintable(QStringLiteral("%1 in %2").arg(dock->windowTitle(), texts.join(QStringLiteral(", ")))));
    }
    QCOMPARE(QSet<QString>(texts.cbegin(), texts.cend()).size(), texts.size());
    // A panel's entry shows a closed panel again.
    auto *history = bench.window->findChild<QDockWidget *>(QStringLiteral("historyDock"));
    QVERIFY(history);
    history->close();
    QVERIFY(!history->isVisible());
    bench.window->action(QStringLiteral("actionFocusHistory"))->trigger();
    QVERIFY(history->isVisible());
}

// A run stopped on request is not a failure: its history row's dot differs from an error's.
void tst_Workbench::interruptedRunsAreMarkedApartFromErrors()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const core::ExecutionPtr failing = bench.runFromApi(QStringLiteral("1 / 0"));
    QVERIFY(waitFinished(failing));
    QCOMPARE(failing->status(), QStringLiteral("error"));
    const core::ExecutionPtr loop = bench.runFromApi(QStringLiteral("import time\nwhile True:\n    time.sleep(0.05)"));
    QVERIFY(loop);
    QTRY_VERIFY_WITH_TIMEOUT(loop->status() == QLatin1String("running"), kRunTimeout);
    bench.window->interruptCurrent();
    QVERIFY(waitFinished(loop, 15000));
    QCOMPARE(loop->status(), QStringLiteral("interrupted"));

    HistoryPanel *history = bench.window->history();
    QTRY_COMPARE(history->rowCount(), 2);
    QTRY_COMPARE(history->statusAt(0), QStringLiteral("interrupted"));
    QCOMPARE(history->statusAt(1), QStringLiteral("error"));
    auto *list = history->findChild<QTreeWidget *>();
    QVERIFY(list);
    const auto dot = [list](int row) {
        return list->topLevelItem(row)->icon(1).pixmap(16, 16).toImage().pixelColor(8, 8);
    };
    QVERIFY(dot(0).alpha() > 0);
    QVERIFY2(dot(0) != dot(1), qPrintable(dot(0).name()));
}

// Code that starts with blank lines (a cell's, often) is listed by its first line with code.
void tst_Workbench::historyRowShowsTheFirstLineWithCode()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    for (const char *code : {"\n\nx = 1", "\n  \nprint(x)\nprint(x + 1)\n"})
        QVERIFY(waitFinished(bench.runFromApi(QString::fromLatin1(code))));
    HistoryPanel *history = bench.window->history();
    QTRY_COMPARE(history->rowCount(), 2);
    auto *list = history->findChild<QTreeWidget *>();
    QVERIFY(list);
    QCOMPARE(list->topLevelItem(0)->text(4), QStringLiteral("print(x) ⋯"));
    QCOMPARE(list->topLevelItem(1)->text(4), QStringLiteral("x = 1"));
}

// The server panel's example runs in the selected Python context, so pasting it twice does not
// make two contexts; its streaming curl is silent (no progress meter over the events).
void tst_Workbench::curlExampleUsesTheSelectedContext()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    ServerPanel *server = bench.window->serverPanel();
    QVERIFY2(server->start(0), qPrintable(server->lastError()));
    QVERIFY(server->curlExample().contains(QLatin1String("\"language\":\"python\"")));
    QVERIFY(bench.createPython());
    const QString example = server->curlExample();
    QVERIFY2(example.contains(QStringLiteral("CTX=%1\n").arg(bench.window->currentContextId())), qPrintable(example));
    QVERIFY2(!example.contains(QLatin1String("\"language\"")), qPrintable(example));
    QVERIFY2(example.contains(QLatin1String("curl -sN ")), qPrintable(example));
    QVERIFY(!example.contains(QLatin1String("curl -N ")));
    server->stop();
}

// "dormant" (a context without an interpreter, after a relaunch) says what it means and what
// the next run does; so does a running context's state.
void tst_Workbench::contextStatesAreExplained()
{
    QTemporaryDir dir;
    QString contextId;
    {
        Bench bench(dir.path());
        QVERIFY(bench.createPython());
        contextId = bench.window->currentContextId();
        QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("x = 1"))));
        QTreeWidgetItem *item = bench.window->contextTree()->contextItem(contextId);
        QVERIFY(item);
        QTRY_COMPARE(item->text(ContextTree::StateColumn), QStringLiteral("idle"));
        QVERIFY2(item->toolTip(ContextTree::StateColumn).startsWith(QLatin1String("Idle: ")),
                 qPrintable(item->toolTip(ContextTree::StateColumn)));
    }
    Bench bench(dir.path());
    QTreeWidgetItem *item = bench.window->contextTree()->contextItem(contextId);
    QVERIFY(item);
    QCOMPARE(item->text(ContextTree::StateColumn), QStringLiteral("dormant"));
    const QString tip = item->toolTip(ContextTree::StateColumn);
    QVERIFY2(tip.contains(QLatin1String("no interpreter is running")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("next run")), qPrintable(tip));
    QVERIFY2(tip.contains(contextId), qPrintable(tip));  // the details stay below
}

// A context made in the window without a name is called by its language and a number, not by
// its id; a name given is kept.
void tst_Workbench::unnamedContextsAreNumbered()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QStringList names;
    for (const QString &name : {QString(), QString(), QStringLiteral("analysis")}) {
        core::CreateContextRequest request;
        request.language = QStringLiteral("python");
        request.name = name;
        QVERIFY(bench.window->createContext(request));
        names.append(bench.window->contextTree()->contextItem(bench.window->currentContextId())->text(ContextTree::NameColumn));
    }
    QCOMPARE(names, (QStringList{QStringLiteral("python 1"), QStringLiteral("python 2"), QStringLiteral("analysis")}));
}

// At 1000x700 the Environment panel's key and value fields show what is typed: 16 characters or
// more (PYTHONPATH, LD_LIBRARY_PATH), not the few they had beside the buttons.
void tst_Workbench::envPanelFieldsAreUsableAt1000x700()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QVERIFY(showEnvPanelAt1000x700(bench));
    const QList<QLineEdit *> fields = bench.window->envPanel()->findChildren<QLineEdit *>();
    int checked = 0;
    for (QLineEdit *field : fields) {
        const QString hint = field->placeholderText();
        if (hint != QLatin1String("KEY") && hint != QLatin1String("value"))
            continue;
        ++checked;
        const int wanted = 16 * field->fontMetrics().averageCharWidth();
        QVERIFY2(field->width() >= wanted,
                 qPrintable(QStringLiteral("%1: %2 px of %3").arg(hint).arg(field->width()).arg(wanted)));
    }
    QCOMPARE(checked, 4);  // a key and a value in each of the two layers
}

// The effective environment (what the next run gets, dozens of variables) is the panel's largest
// part at 1000x700: taller than the layers' area, and eight rows or more, not three.
void tst_Workbench::effectiveEnvironmentIsThePanelsLargestPart()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QVERIFY(showEnvPanelAt1000x700(bench));
    QTableWidget *effective = nullptr;
    for (QTableWidget *table : bench.window->envPanel()->findChildren<QTableWidget *>()) {
        if (table->accessibleName() == QLatin1String("Effective environment"))
            effective = table;
    }
    QVERIFY(effective);
    QTRY_VERIFY(effective->rowCount() > 10);
    const QWidget *layers = bench.window->envPanel()->findChild<QWidget *>(QStringLiteral("envLayers"));
    QVERIFY(layers);
    QVERIFY2(effective->height() > layers->height(),
             qPrintable(QStringLiteral("%1 px, layers %2 px").arg(effective->height()).arg(layers->height())));
    const int rows = effective->viewport()->height() / effective->rowHeight(0);
    QVERIFY2(rows >= 8, qPrintable(QStringLiteral("%1 rows").arg(rows)));
}

QTEST_MAIN(tst_Workbench)

// Closing the window while code runs asks first: Cancel keeps the window and the run, Quit
// closes it. Without a run, or when closed without asking, nothing is asked.
void tst_Workbench::closingWhileCodeRunsAsksFirst()
{
    QTemporaryDir dir;
    Bench bench(dir.path(), {QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)}, true);
    QVERIFY(bench.createPython());
    QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("x = 1"))));
    bool asked = false;
    QString text;
    answerQuitQuestion(QStringLiteral("Cancel"), &asked, &text);
    QVERIFY(bench.window->close());
    QVERIFY(!asked);
    bench.window->show();
    QVERIFY(QTest::qWaitForWindowExposed(bench.window.get()));

    const core::ExecutionPtr loop = bench.typeAndRun(
            QStringLiteral("import time\nwhile True:\n    time.sleep(0.05)"));
    QVERIFY(loop);
    QTRY_VERIFY_WITH_TIMEOUT(loop->status() == QLatin1String("running"), kRunTimeout);

    answerQuitQuestion(QStringLiteral("Cancel"), &asked, &text);
    QVERIFY(!bench.window->close());
    QVERIFY(asked);
    QVERIFY2(text.contains(QLatin1String("1 context")), qPrintable(text));
    QVERIFY(bench.window->isVisible());
    QVERIFY(!loop->isFinished());

    answerQuitQuestion(QStringLiteral("Quit"), &asked, &text);
    QVERIFY(bench.window->close());
    QVERIFY(asked);
    QVERIFY(!bench.window->isVisible());

    bench.window->show();
    QVERIFY(QTest::qWaitForWindowExposed(bench.window.get()));
    answerQuitQuestion(QStringLiteral("Cancel"), &asked, &text);
    bench.window->closeWithoutAsking();
    QVERIFY(!asked);
    QVERIFY(!bench.window->isVisible());
}

// A file opened into a tab is saved with Ctrl+S (the tab says when it has unsaved changes), and
// the next start shows it again, in its context.
void tst_Workbench::savedFileReopensWithItsContext()
{
    QTemporaryDir dir;
    const QString path = writeFile(dir.filePath(QStringLiteral("analysis.py")), "total = 1\n");
    QString contextId;
    {
        Bench bench(dir.path());
        QVERIFY(bench.createPython());
        contextId = bench.window->currentContextId();
        bench.window->openFile(path);
        EditorTabs *tabs = bench.window->editorTabs();
        CodeEditor *editor = bench.window->editor();
        QCOMPARE(editor->filePath(), path);
        QCOMPARE(editor->contextId(), contextId);
        QCOMPARE(editor->text(), QStringLiteral("total = 1\n"));
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("analysis.py"));
        QCOMPARE(tabs->count(), 2);  // the context's buffer and the file

        editor->setFocus();
        editor->setCursorPosition(1, 0);
        QTest::keyClicks(editor, QStringLiteral("total += 41"));
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("analysis.py *"));
        QTest::keyClick(editor, Qt::Key_S, Qt::ControlModifier);
        QCOMPARE(readFile(path), QByteArray("total = 1\ntotal += 41"));
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("analysis.py"));
        QVERIFY(!editor->isModified());
    }
    Bench bench(dir.path());
    CodeEditor *editor = bench.window->editor();
    QCOMPARE(editor->filePath(), path);
    QCOMPARE(editor->text(), QStringLiteral("total = 1\ntotal += 41"));
    QCOMPARE(editor->contextId(), contextId);
    QCOMPARE(editor->lexerHint(), QStringLiteral("python"));
    QCOMPARE(bench.window->currentContextId(), contextId);
    QCOMPARE(bench.window->editorTabs()->count(), 2);
    QVERIFY(waitFinished(bench.window->runCode(editor->codeToRun())));
    QVERIFY(waitFinished(bench.window->runCode(QStringLiteral("print(total)"))));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("42")));
}

// What is typed into a context's untitled buffer, or into the buffer before there is a context,
// is there after quitting and starting again.
void tst_Workbench::untitledBufferSurvivesARelaunch()
{
    QTemporaryDir dir;
    QString contextId;
    {
        Bench bench(dir.path());
        QTest::keyClicks(bench.window->editor(), QStringLiteral("before any context"));
    }
    {
        Bench bench(dir.path());
        QCOMPARE(bench.window->editor()->text(), QStringLiteral("before any context"));
        QVERIFY(bench.createPython());
        contextId = bench.window->currentContextId();
        CodeEditor *editor = bench.window->editor();
        QCOMPARE(editor->contextId(), contextId);
        editor->setFocus();
        QTest::keyClick(editor, Qt::Key_End, Qt::ControlModifier);
        QTest::keyClick(editor, Qt::Key_Return);
        QTest::keyClicks(editor, QStringLiteral("kept = 'typed, never run'"));
    }
    Bench bench(dir.path());
    QCOMPARE(bench.window->currentContextId(), contextId);
    QCOMPARE(bench.window->editor()->text(), QStringLiteral("before any context\nkept = 'typed, never run'"));
    // The buffer is the context's own: another context has an empty one.
    QVERIFY(bench.createPython());
    QVERIFY(bench.window->editor()->text().isEmpty());
    bench.window->contextTree()->selectContext(contextId);
    QCOMPARE(bench.window->editor()->text(), QStringLiteral("before any context\nkept = 'typed, never run'"));
}

// Closing a file's tab with unsaved changes asks: Cancel keeps the tab, Discard closes it and
// leaves the file as it was.
void tst_Workbench::closingAModifiedFileAsks()
{
    QTemporaryDir dir;
    const QString path = writeFile(dir.filePath(QStringLiteral("notes.txt")), "as on disk\n");
    Bench bench(dir.path());
    bench.window->openFile(path);
    CodeEditor *editor = bench.window->editor();
    QCOMPARE(editor->filePath(), path);
    editor->setFocus();
    QTest::keyClicks(editor, QStringLiteral("changed "));
    QVERIFY(editor->isModified());
    bool asked = false;
    answerBox(QStringLiteral("closeModifiedFile"), QStringLiteral("Cancel"), false, &asked);
    QTest::keyClick(editor, Qt::Key_W, Qt::ControlModifier);
    QVERIFY(asked);
    QCOMPARE(bench.window->editor(), editor);

    bench.activate();
    answerBox(QStringLiteral("closeModifiedFile"), QStringLiteral("Discard"), false, &asked);
    QTest::keyClick(editor, Qt::Key_W, Qt::ControlModifier);
    QVERIFY(asked);
    QVERIFY(!bench.window->editorTabs()->fileEditor(path));
    QCOMPARE(readFile(path), QByteArray("as on disk\n"));
}

// Activating a text file in Files opens it in a tab of its own; the context's buffer keeps what
// it had, and the file runs nowhere (it is not code).
void tst_Workbench::filesPanelOpensTextInANewTab()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString contextId = bench.window->currentContextId();
    CodeEditor *buffer = bench.window->editor();
    QTest::keyClicks(buffer, QStringLiteral("x = 1"));
    const auto workspace = bench.engine->workspaces().get(bench.window->currentWorkspace());
    QVERIFY(workspace);
    const QString path = writeFile(QDir(workspace->directory).filePath(QStringLiteral("readme.txt")),
                                   "plain words\n");
    emit bench.window->fileBrowser()->openRequested(path);
    CodeEditor *opened = bench.window->editor();
    QVERIFY(opened != buffer);
    QCOMPARE(opened->filePath(), path);
    QCOMPARE(opened->text(), QStringLiteral("plain words\n"));
    QVERIFY(opened->contextId().isEmpty());
    QVERIFY(opened->lexerHint().isEmpty());
    QCOMPARE(buffer->text(), QStringLiteral("x = 1"));
    QCOMPARE(bench.window->currentContextId(), contextId);
    // Opening it again shows the same tab.
    emit bench.window->fileBrowser()->openRequested(path);
    QCOMPARE(bench.window->editorTabs()->count(), 2);
    // A binary file is refused, not shown as text.
    const QString binary = writeFile(QDir(workspace->directory).filePath(QStringLiteral("image.png")),
                                     QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
    emit bench.window->fileBrowser()->openRequested(binary);
    QCOMPARE(bench.window->editorTabs()->count(), 2);
}

// A file's language (from its extension) picks its context: with no context of that language,
// the workbench offers to create one and binds the tab to it.
void tst_Workbench::fileOfAnotherLanguageOffersAContext()
{
    QTemporaryDir dir;
    const QString path = writeFile(dir.filePath(QStringLiteral("greet.sh")), "echo \"hi from bash\"\n");
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString python = bench.window->currentContextId();
    bool asked = false;
    QString text;
    answerBox(QStringLiteral("offerContext"), QStringLiteral("Create a bash Context"), false, &asked, &text);
    bench.window->openFile(path);
    QVERIFY(asked);
    QVERIFY2(text.contains(QStringLiteral("bash")), qPrintable(text));
    CodeEditor *editor = bench.window->editor();
    QCOMPARE(editor->filePath(), path);
    QVERIFY(!editor->contextId().isEmpty());
    QVERIFY(editor->contextId() != python);
    QCOMPARE(bench.window->currentContextId(), editor->contextId());
    QCOMPARE(bench.engine->contexts().get({}, editor->contextId())->language, QStringLiteral("bash"));
    QCOMPARE(editor->lexerHint(), QStringLiteral("bash"));
    bench.activate();
    QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(waitFinished(bench.window->lastExecution()));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("hi from bash")));
    // Back to the Python buffer: its tab shows again, and the tree follows the tabs.
    bench.window->contextTree()->selectContext(python);
    QCOMPARE(bench.window->editor()->contextId(), python);
    bench.window->editorTabs()->setCurrentWidget(editor);
    QCOMPARE(bench.window->currentContextId(), editor->contextId());
}

// "Copy to editor" from the history replaces the text as one step that Ctrl+Z undoes.
void tst_Workbench::copyToEditorCanBeUndone()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    CodeEditor *editor = bench.window->editor();
    editor->setFocus();
    QTest::keyClicks(editor, QStringLiteral("work = 'not to lose'"));
    emit bench.window->history()->copyToEditorRequested(QStringLiteral("print('from the history')"));
    QCOMPARE(editor->text(), QStringLiteral("print('from the history')"));
    QTest::keyClick(editor, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(editor->text(), QStringLiteral("work = 'not to lose'"));
}

// Ctrl+Enter with no context creates one in the default language, runs what was typed and
// keeps it in the new context's buffer.
void tst_Workbench::ctrlEnterWithoutAContextKeepsTheText()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.window->currentContextId().isEmpty());
    CodeEditor *editor = bench.window->editor();
    editor->setFocus();
    QTest::keyClicks(editor, QStringLiteral("print('typed first')"));
    QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(!bench.window->currentContextId().isEmpty());
    QVERIFY(waitFinished(bench.window->lastExecution()));
    QCOMPARE(bench.window->editor(), editor);
    QCOMPARE(editor->text(), QStringLiteral("print('typed first')"));
    QCOMPARE(editor->contextId(), bench.window->currentContextId());
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("typed first")));
}

// Ctrl+Shift+R asks before it restarts; a restart writes a line into the output. "Don't ask
// again" is remembered in the preferences.
void tst_Workbench::restartAsksAndMarksTheOutput()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("state = 'precious'"))));
    CodeEditor *editor = bench.window->editor();
    const QString marker = QStringLiteral("restarted");

    bool asked = false;
    QString text;
    answerBox(QStringLiteral("confirmRestart"), QStringLiteral("Cancel"), false, &asked, &text);
    QTest::keyClick(editor, Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(asked);
    QVERIFY2(text.contains(QStringLiteral("\"test\"")), qPrintable(text));
    QVERIFY(!bench.window->output()->toPlainText().contains(marker));
    QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("print(state)"))));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("precious")));

    bench.activate();
    answerBox(QStringLiteral("confirmRestart"), QStringLiteral("Restart"), true, &asked);
    QTest::keyClick(editor, Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(asked);
    QVERIFY(bench.window->output()->toPlainText().contains(marker));
    QVERIFY(!bench.window->preferences().askBeforeRestart);
    QSettings saved(QDir(dir.path()).filePath(QStringLiteral("workbench.ini")), QSettings::IniFormat);
    QCOMPARE(saved.value(QStringLiteral("confirm/restart")).toBool(), false);

    const core::ExecutionPtr after = bench.typeAndRun(QStringLiteral("print('state' in globals())"));
    QVERIFY(waitFinished(after));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("False")));
    // The line stays where it was when the transcript is drawn again.
    bench.window->applyPreferences(bench.window->preferences());
    const QString redrawn = bench.window->output()->toPlainText();
    QVERIFY2(redrawn.indexOf(marker) > redrawn.indexOf(QStringLiteral("precious"))
                     && redrawn.indexOf(marker) < redrawn.indexOf(QStringLiteral("False")),
             qPrintable(redrawn));

    // Not asked again.
    bench.activate();
    answerBox(QStringLiteral("confirmRestart"), QStringLiteral("Cancel"), false, &asked);
    QTest::keyClick(editor, Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(!asked);
    QCOMPARE(bench.window->output()->toPlainText().count(marker), 2);
}

// Delete asks, naming the context; Cancel keeps it.
void tst_Workbench::deleteAsksNamingTheContext()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString id = bench.window->currentContextId();
    bool asked = false;
    QString text;
    answerBox(QStringLiteral("confirmDelete"), QStringLiteral("Cancel"), false, &asked, &text);
    QTest::keyClick(bench.window->editor(), Qt::Key_Delete, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(asked);
    QVERIFY2(text.contains(QStringLiteral("\"test\"")), qPrintable(text));
    QVERIFY(bench.engine->contexts().get({}, id));

    bench.activate();
    answerBox(QStringLiteral("confirmDelete"), QStringLiteral("Delete"), false, &asked);
    QTest::keyClick(bench.window->editor(), Qt::Key_Delete, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(asked);
    QVERIFY(!bench.engine->contexts().get({}, id));
    QVERIFY(bench.window->preferences().askBeforeDelete);
    QVERIFY(bench.window->editor()->contextId().isEmpty());
}

// Shift+Enter runs the cell under the cursor and puts the cursor in the next one; Ctrl+Enter
// runs the cell and stays.
void tst_Workbench::shiftEnterRunsTheCellAndAdvances()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    CodeEditor *editor = bench.window->editor();
    editor->setText(QStringLiteral("# %% one\nprint('cell one')\n# %% two\nprint('cell two')\n# %% three\nprint('cell three')"));
    editor->setFocus();
    editor->setCursorPosition(1, 3);
    QTest::keyClick(editor, Qt::Key_Return, Qt::ShiftModifier);
    core::ExecutionPtr run = bench.window->lastExecution();
    QVERIFY(waitFinished(run));
    QCOMPARE(run->code(), QStringLiteral("# %% one\nprint('cell one')"));
    int line = 0, index = 0;
    editor->getCursorPosition(&line, &index);
    QCOMPARE(line, 3);
    QCOMPARE(editor->text(), QStringLiteral("# %% one\nprint('cell one')\n# %% two\nprint('cell two')\n# %% three\nprint('cell three')"));

    QTest::keyClick(editor, Qt::Key_Return, Qt::ShiftModifier);
    run = bench.window->lastExecution();
    QVERIFY(waitFinished(run));
    QCOMPARE(run->code(), QStringLiteral("# %% two\nprint('cell two')"));
    editor->getCursorPosition(&line, &index);
    QCOMPARE(line, 5);

    QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
    run = bench.window->lastExecution();
    QVERIFY(waitFinished(run));
    QCOMPARE(run->code(), QStringLiteral("# %% three\nprint('cell three')"));
    editor->getCursorPosition(&line, &index);
    QCOMPARE(line, 5);
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("cell three")));
}

// F9 runs the cursor's line and moves to the next one; with a selection, the selection.
void tst_Workbench::f9RunsTheLineAndMovesOn()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    CodeEditor *editor = bench.window->editor();
    editor->setText(QStringLiteral("a = 20\nb = a + 22\nprint(b)"));
    editor->setFocus();
    editor->setCursorPosition(0, 0);
    for (const QString &expected : {QStringLiteral("a = 20"), QStringLiteral("b = a + 22"), QStringLiteral("print(b)")}) {
        QTest::keyClick(editor, Qt::Key_F9);
        const core::ExecutionPtr run = bench.window->lastExecution();
        QVERIFY(waitFinished(run));
        QCOMPARE(run->code(), expected);
    }
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("42")));
    editor->setSelection(1, 4, 1, 10);
    QTest::keyClick(editor, Qt::Key_F9);
    QVERIFY(waitFinished(bench.window->lastExecution()));
    QCOMPARE(bench.window->lastExecution()->code(), QStringLiteral("a + 22"));
}

// F5 runs the whole text, cells and all; Restart and Run All does it in a fresh interpreter.
void tst_Workbench::restartAndRunAllStartsFresh()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    QVERIFY(waitFinished(bench.typeAndRun(QStringLiteral("leftover = 1"))));
    CodeEditor *editor = bench.window->editor();
    editor->setText(QStringLiteral("# %%\nseen = 'leftover' in globals()\n# %%\nprint('fresh:', not seen)"));
    editor->setCursorPosition(1, 0);
    QTest::keyClick(editor, Qt::Key_F5);
    QVERIFY(waitFinished(bench.window->lastExecution()));
    QCOMPARE(bench.window->lastExecution()->code(), editor->text());
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("fresh: False")));

    bool asked = false;
    answerBox(QStringLiteral("confirmRestart"), QStringLiteral("Restart"), false, &asked);
    QTest::keyClick(editor, Qt::Key_F5, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(asked);
    QVERIFY(waitFinished(bench.window->lastExecution()));
    QTRY_VERIFY(bench.window->output()->toPlainText().contains(QStringLiteral("fresh: True")));
}

// Ctrl+F opens the find bar on the selection, Enter and F3 go to the next match, Shift+F3 to the
// previous one; Ctrl+H adds the replace field, Replace All is one undo step; Esc closes the bar.
void tst_Workbench::findAndReplace()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    CodeEditor *editor = bench.window->editor();
    editor->setText(QStringLiteral("alpha = 1\nbeta = alpha\nprint(alpha, beta)"));
    editor->setFocus();
    editor->setCursorPosition(0, 0);
    FindBar *bar = bench.window->findBar();
    QVERIFY(bar->isHidden());
    QTest::keyClick(editor, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(bar->isVisible());
    QVERIFY(!bar->replaceField()->isVisible());
    QTRY_VERIFY(bar->findField()->hasFocus());
    QTest::keyClicks(bar->findField(), QStringLiteral("alpha"));
    const auto selectionStart = [editor] {
        int line = 0, index = 0, endLine = 0, endIndex = 0;
        editor->getSelection(&line, &index, &endLine, &endIndex);
        return QPoint(index, line);
    };
    QCOMPARE(editor->selectedText(), QStringLiteral("alpha"));
    QCOMPARE(selectionStart(), QPoint(0, 0));
    QTest::keyClick(bar->findField(), Qt::Key_Return);
    QCOMPARE(selectionStart(), QPoint(7, 1));
    QTest::keyClick(bar->findField(), Qt::Key_F3);
    QCOMPARE(selectionStart(), QPoint(6, 2));
    QTest::keyClick(bar->findField(), Qt::Key_F3);  // wraps
    QCOMPARE(selectionStart(), QPoint(0, 0));
    QTest::keyClick(bar->findField(), Qt::Key_F3, Qt::ShiftModifier);
    QCOMPARE(selectionStart(), QPoint(6, 2));
    QTest::keyClick(bar->findField(), Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(selectionStart(), QPoint(7, 1));
    QVERIFY(!bench.window->lastExecution());  // Shift+Enter in the field finds, it does not run

    QTest::keyClick(bar->findField(), Qt::Key_H, Qt::ControlModifier);
    QVERIFY(bar->replaceField()->isVisible());
    bar->replaceField()->setFocus();
    QTest::keyClicks(bar->replaceField(), QStringLiteral("omega"));
    QCOMPARE(bar->replaceAll(), 3);
    QCOMPARE(editor->text(), QStringLiteral("omega = 1\nbeta = omega\nprint(omega, beta)"));
    QVERIFY(bar->statusText().contains(QStringLiteral("3 replaced")));
    editor->undo();
    QCOMPARE(editor->text(), QStringLiteral("alpha = 1\nbeta = alpha\nprint(alpha, beta)"));

    // Replace: the match shown, then on to the next.
    editor->setCursorPosition(0, 0);
    bar->findNext();
    QCOMPARE(selectionStart(), QPoint(0, 0));
    QVERIFY(bar->replaceOne());
    QCOMPARE(editor->text(), QStringLiteral("omega = 1\nbeta = alpha\nprint(alpha, beta)"));
    QCOMPARE(selectionStart(), QPoint(7, 1));

    QTest::keyClick(bar->replaceField(), Qt::Key_Escape);
    QVERIFY(bar->isHidden());
    QTRY_VERIFY(editor->hasFocus());
}

// Each tab keeps its own scroll position: a long line scrolled in one context's buffer does not
// scroll the next context's.
void tst_Workbench::noScrollLeakBetweenContexts()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString first = bench.window->currentContextId();
    CodeEditor *wide = bench.window->editor();
    QStringList lines;
    for (int i = 0; i < 200; ++i)
        lines.append(QStringLiteral("row_%1 = '%2'").arg(i).arg(QString(300, QLatin1Char('x'))));
    wide->setText(lines.join(QLatin1Char('\n')));
    wide->setCursorPosition(150, 300);
    wide->ensureCursorVisible();
    QTRY_VERIFY(wide->horizontalScrollBar()->value() > 0);
    const int across = wide->horizontalScrollBar()->value();
    const int down = wide->verticalScrollBar()->value();
    QVERIFY(down > 0);

    QVERIFY(bench.createPython());
    CodeEditor *narrow = bench.window->editor();
    QVERIFY(narrow != wide);
    QTest::keyClicks(narrow, QStringLiteral("x = 1"));
    QCOMPARE(narrow->horizontalScrollBar()->value(), 0);
    QCOMPARE(narrow->verticalScrollBar()->value(), 0);

    bench.window->contextTree()->selectContext(first);
    QCOMPARE(bench.window->editor(), wide);
    QCOMPARE(wide->horizontalScrollBar()->value(), across);
    QCOMPARE(wide->verticalScrollBar()->value(), down);
}

// With a workspace selected in the tree, Ctrl+Enter in a context's tab runs in that context; it
// does not make a new one.
void tst_Workbench::aTabRunsInItsOwnContext()
{
    QTemporaryDir dir;
    Bench bench(dir.path());
    QVERIFY(bench.createPython());
    const QString id = bench.window->currentContextId();
    ContextTree *tree = bench.window->contextTree();
    tree->setCurrentItem(tree->contextItem(id)->parent());
    QVERIFY(bench.window->currentContextId().isEmpty());
    QCOMPARE(bench.window->editor()->contextId(), id);
    const core::ExecutionPtr run = bench.typeAndRun(QStringLiteral("print('in my own context')"));
    QVERIFY(waitFinished(run));
    QCOMPARE(run->contextId(), id);
    QCOMPARE(bench.window->currentContextId(), id);
    QCOMPARE(bench.engine->contexts().all().size(), 1);
}

#include "tst_workbench.moc"
