// SPDX-License-Identifier: Apache-2.0
// The workbench on a data directory that a running replhost-server holds: it attaches to the
// server's engine over the server's API instead of refusing, says so in its title, and what it
// runs is the server's (its history has it). The window is driven with keys under the offscreen
// platform; the workbench process itself is checked for the same, and for SIGTERM.
//
// With REPLHOST_SCREENSHOT_DIR set, the attached window is also saved there as
// attached-1400x900.png (docs/screenshots).
#include "apiclient.h"
#include "serverprocess.h"

#include "core/engine.h"
#include "gui/codeeditor.h"
#include "gui/contexttree.h"
#include "gui/outputview.h"
#include "gui/workbenchengine.h"
#include "gui/workbenchwindow.h"
#include "gui/workspacesettingsdialog.h"

#include <QAction>
#include <QDeadlineTimer>
#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <csignal>
#include <optional>

using namespace replhost;
using namespace replhost::gui;

namespace {

constexpr int kTimeout = 60000;

// The engine the workbench finds for `dataDir`, as its main() finds it.
std::optional<Result<WorkbenchEngine>> openFor(const QString &dataDir)
{
    core::EngineConfig config;
    config.dataDir = dataDir;
    config.pluginPaths = {ServerProcess::pluginDir()};
    config.warmPoolSize = 0;
    auto opened = std::make_shared<std::optional<Result<WorkbenchEngine>>>();
    WorkbenchEngine::open(config, QByteArray(), [opened](Result<WorkbenchEngine> outcome) {
        *opened = std::move(outcome);
    });
    if (!QTest::qWaitFor([opened] { return opened->has_value(); }, kTimeout))
        return std::nullopt;
    return std::move(*opened);
}

// Starts `server` and attaches to it as the workbench does. Empty: done; else what failed.
QString startAndAttach(ServerProcess &server, WorkbenchEngine *attached)
{
    if (!server.start({QStringLiteral("--warm-pool"), QStringLiteral("0")}))
        return server.error();
    std::optional<Result<WorkbenchEngine>> opened = openFor(server.dataDir());
    if (!opened)
        return QStringLiteral("no answer from the server");
    if (!*opened)
        return opened->error().message;
    *attached = std::move(**opened);
    return attached->client->isAttached() ? QString() : QStringLiteral("opened in process, not attached");
}

// A window's options with its settings in `settings`.
WorkbenchOptions optionsIn(const QTemporaryDir &settings)
{
    WorkbenchOptions options;
    options.settingsFile = QDir(settings.path()).filePath(QStringLiteral("workbench.ini"));
    return options;
}

// The workbench process under the offscreen platform, killed if a test leaves it running; what
// it says is read from `channel`.
class WorkbenchProcess {
public:
    WorkbenchProcess(const QStringList &arguments, QProcess::ProcessChannel channel)
    {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        environment.remove(QStringLiteral("REPLHOST_TOKEN"));
        process.setProcessEnvironment(environment);
        process.setReadChannel(channel);
        process.start(QStringLiteral(REPLHOST_WORKBENCH_EXECUTABLE), arguments);
    }
    ~WorkbenchProcess()
    {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
    // Its first line that starts with "replhost: " (Qt may say things first).
    QByteArray lineOfItsOwn()
    {
        QByteArray said;
        for (;;) {
            for (const QByteArray &line : said.split('\n')) {
                if (line.startsWith("replhost: ") && said.contains(line + '\n'))
                    return line + '\n';
            }
            if (!process.waitForReadyRead(kTimeout))
                return said;
            said += process.readAll();
        }
    }
    // Sends SIGTERM and waits for the end.
    bool terminate()
    {
        return ::kill(pid_t(process.processId()), SIGTERM) == 0 && process.waitForFinished(15000);
    }

    QProcess process;
};

} // namespace

class tst_AttachedWorkbench : public QObject {
    Q_OBJECT
private slots:
    void attachesToTheServerAndRunsThroughIt();
    void aDirectoryOfItsOwnIsOpenedInProcess();
    void aServerThatWentAwayIsSaidInTheStatusBar();
    void whatOthersDoShowsWhileTheWindowIsElsewhere();
    void workspaceSettingsChangeTheServersWorkspace();
    void theWorkbenchProcessAttachesAndEndsOnSigterm();
    void aHolderWithoutAnApiIsRefusedWithWhyAndSigtermEndsTheDialog();
};

void tst_AttachedWorkbench::attachesToTheServerAndRunsThroughIt()
{
    ServerProcess server;
    WorkbenchEngine attached;
    const QString problem = startAndAttach(server, &attached);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(!attached.engine);
    const ApiClient api(server.port(), server.token());
    const QString why = api.missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));

    QTemporaryDir settings;
    auto window = std::make_unique<WorkbenchWindow>(*attached.client, optionsIn(settings));
    window->resize(1400, 900);
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    QCOMPARE(window->windowTitle(), QStringLiteral("replhost — attached to replhost-server on 127.0.0.1:%1 (pid %2)")
                                            .arg(server.port())
                                            .arg(server.pid()));

    core::CreateContextRequest request;
    request.language = QStringLiteral("python");
    request.name = QStringLiteral("attached");
    QVERIFY(window->createContext(request));
    QVERIFY(QTest::qWaitFor([&] { return !window->currentContextId().isEmpty(); }, kTimeout));
    const QString contextId = window->currentContextId();
    // The server has the context the window created.
    QCOMPARE(api.get(QStringLiteral("/v1/contexts/") + contextId).object().value(QStringLiteral("name")).toString(),
             QStringLiteral("attached"));

    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    CodeEditor *editor = window->editor();
    editor->setFocus();
    editor->setText(QStringLiteral("print('run from the attached workbench')\n6 * 7"));
    QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(QTest::qWaitFor([&] { return window->lastExecution() && window->lastExecution()->isFinished(); },
                            kTimeout));
    const core::ExecutionPtr ran = window->lastExecution();
    QCOMPARE(ran->status(), QStringLiteral("ok"));
    QVERIFY(QTest::qWaitFor([&] {
        return window->output()->toPlainText().contains(QLatin1String("run from the attached workbench"));
    }, kTimeout));
    QVERIFY(window->output()->toPlainText().contains(QLatin1String("42")));

    // The server's history, through its own API, has the run the window made.
    QJsonObject listed;
    QVERIFY(QTest::qWaitFor([&] {
        for (const QJsonValue &entry :
             api.get(QStringLiteral("/v1/contexts/%1/executions").arg(contextId)).object().value(QStringLiteral("executions")).toArray()) {
            if (entry.toObject().value(QStringLiteral("id")).toString() == ran->id())
                listed = entry.toObject();
        }
        return !listed.isEmpty();
    }, kTimeout));
    QCOMPARE(listed.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(listed.value(QStringLiteral("code")).toString(),
             QStringLiteral("print('run from the attached workbench')\n6 * 7"));

    if (const QString shots = qEnvironmentVariable("REPLHOST_SCREENSHOT_DIR"); !shots.isEmpty()) {
        QTest::qWait(400);  // let layouts and repaints settle
        QVERIFY(window->grab().save(QDir(shots).filePath(QStringLiteral("attached-1400x900.png"))));
    }
}

void tst_AttachedWorkbench::aDirectoryOfItsOwnIsOpenedInProcess()
{
    QTemporaryDir dataDir;
    std::optional<Result<WorkbenchEngine>> opened = openFor(dataDir.path());
    QVERIFY(opened);
    QVERIFY2(*opened, *opened ? "" : qPrintable(opened->error().message));
    QVERIFY((*opened)->engine);
    QVERIFY(!(*opened)->client->isAttached());
    QCOMPARE((*opened)->client->localEngine(), (*opened)->engine.get());
    WorkbenchWindow window(*(*opened)->client, optionsIn(dataDir));
    QCOMPARE(window.windowTitle(), QStringLiteral("replhost — %1").arg((*opened)->engine->dataDir()));
}

void tst_AttachedWorkbench::aServerThatWentAwayIsSaidInTheStatusBar()
{
    ServerProcess server;
    WorkbenchEngine attached;
    const QString problem = startAndAttach(server, &attached);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QTemporaryDir settings;
    WorkbenchWindow window(*attached.client, optionsIn(settings));
    QSignalSpy lost(attached.client.get(), &EngineClient::connectionLost);

    const qint64 pid = server.pid();
    QCOMPARE(server.stop(), 0);
    core::CreateContextRequest request;
    request.language = QStringLiteral("python");
    window.createContext(request);
    QVERIFY(QTest::qWaitFor([&] { return !lost.isEmpty(); }, kTimeout));
    const auto *engineStatus = window.findChild<QLabel *>(QStringLiteral("serverStatus"));
    QVERIFY(engineStatus);
    QCOMPARE(engineStatus->text(), QStringLiteral("Attached to replhost-server on 127.0.0.1:%1 (pid %2) — it cannot be reached")
                                           .arg(server.port())
                                           .arg(pid));
    // Said once, not for every request that finds nobody.
    window.createContext(request);
    QVERIFY(QTest::qWaitFor([&] { return window.statusBar()->currentMessage().startsWith(QLatin1String("Cannot create")); },
                            kTimeout));
    QCOMPARE(lost.size(), 1);
}

// What other clients do shows while the user is in another window: the context they create
// comes into the tree, and their run's output into the output view, without coming back.
void tst_AttachedWorkbench::whatOthersDoShowsWhileTheWindowIsElsewhere()
{
    ServerProcess server;
    WorkbenchEngine attached;
    const QString problem = startAndAttach(server, &attached);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const ApiClient api(server.port(), server.token());
    const QString why = api.missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));
    QTemporaryDir settings;
    WorkbenchWindow window(*attached.client, optionsIn(settings));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QWidget elsewhere;  // where the user is while an agent works
    elsewhere.show();
    elsewhere.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&elsewhere));

    const QString created = api.createContext(QStringLiteral("python"));
    QVERIFY(!created.isEmpty());
    QVERIFY(QTest::qWaitFor([&] { return window.contextTree()->contextItem(created) != nullptr; }, kTimeout));
    window.contextTree()->selectContext(created);
    QVERIFY(QTest::qWaitFor([&] { return window.currentContextId() == created; }, kTimeout));
    QVERIFY(!window.isActiveWindow());

    const QJsonObject run = api.runAndWait(created, QStringLiteral("print('printed by an agent')"));
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QVERIFY(QTest::qWaitFor([&] {
        return window.output()->toPlainText().contains(QLatin1String("printed by an agent"));
    }, kTimeout));
    QVERIFY(QTest::qWaitFor([&] {
        return window.lastExecution() && window.lastExecution()->id() == run.value(QStringLiteral("id")).toString()
               && window.lastExecution()->isFinished();
    }, kTimeout));
    QVERIFY(!window.isActiveWindow());
}

// The settings dialog works on the server's workspace: it reads the settings from the server
// and OK sends the change there.
void tst_AttachedWorkbench::workspaceSettingsChangeTheServersWorkspace()
{
    ServerProcess server;
    WorkbenchEngine attached;
    const QString problem = startAndAttach(server, &attached);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QTemporaryDir settings;
    WorkbenchWindow window(*attached.client, optionsIn(settings));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *action = window.findChild<QAction *>(QStringLiteral("actionWorkspaceSettings"));
    QVERIFY(action);
    QVERIFY(action->isEnabled());

    // The dialog is modal: it is worked from the event loop its exec() runs. Should it never
    // load, it is closed, and the check below says what is missing.
    bool edited = false;
    const QDeadlineTimer deadline(kTimeout);
    QTimer driver;
    connect(&driver, &QTimer::timeout, &window, [&] {
        auto *dialog = window.findChild<WorkspaceSettingsDialog *>();
        if (!dialog || !dialog->isVisible())
            return;
        if (dialog->isLoaded() && !edited) {
            edited = true;
            dialog->findChild<QSpinBox *>(QStringLiteral("max_contexts"))->setValue(7);
            dialog->accept();
        } else if (deadline.hasExpired()) {
            dialog->reject();
        }
    });
    driver.start(10);
    action->trigger();
    driver.stop();
    QVERIFY(edited);
    const ApiClient api(server.port(), server.token());
    QCOMPARE(api.get(QStringLiteral("/v1/workspaces/default")).object().value(QStringLiteral("settings"))
                     .toObject().value(QStringLiteral("limits")).toObject().value(QStringLiteral("max_contexts")).toInt(),
             7);
}

void tst_AttachedWorkbench::theWorkbenchProcessAttachesAndEndsOnSigterm()
{
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--warm-pool"), QStringLiteral("0")}), qPrintable(server.error()));

    WorkbenchProcess workbench({QStringLiteral("--data-dir"), server.dataDir(), QStringLiteral("--plugin-path"),
                                ServerProcess::pluginDir()},
                               QProcess::StandardOutput);
    QVERIFY2(workbench.process.waitForStarted(10000), qPrintable(workbench.process.errorString()));
    QCOMPARE(workbench.lineOfItsOwn(), QStringLiteral("replhost: attached to replhost-server on 127.0.0.1:%1 (pid %2)\n")
                                            .arg(server.port())
                                            .arg(server.pid())
                                            .toUtf8());

    QVERIFY2(workbench.terminate(), "the workbench did not end after SIGTERM");
    QCOMPARE(workbench.process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(workbench.process.exitCode(), 0);
    // The engine was the server's: it goes on.
    QVERIFY(server.isRunning());
    QCOMPARE(ApiClient(server.port(), server.token()).get(QStringLiteral("/healthz")).status, 200);
}

void tst_AttachedWorkbench::aHolderWithoutAnApiIsRefusedWithWhyAndSigtermEndsTheDialog()
{
    // This test's own engine holds the directory and serves nothing.
    QTemporaryDir dataDir;
    core::EngineConfig config;
    config.dataDir = dataDir.path();
    config.warmPoolSize = 0;
    auto holder = core::Engine::open(config);
    QVERIFY2(holder, holder ? "" : qPrintable(holder.error().message));

    WorkbenchProcess workbench({QStringLiteral("--data-dir"), dataDir.path()}, QProcess::StandardError);
    QVERIFY2(workbench.process.waitForStarted(10000), qPrintable(workbench.process.errorString()));
    const QByteArray said = workbench.lineOfItsOwn();
    QVERIFY2(said.contains("is in use by") && said.contains("cannot attach to it: no running replhost-server found"),
             said.constData());

    QVERIFY2(workbench.terminate(), "the workbench did not end after SIGTERM");
    QCOMPARE(workbench.process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(workbench.process.exitCode(), 1);
}

QTEST_MAIN(tst_AttachedWorkbench)
#include "tst_attachedworkbench.moc"
