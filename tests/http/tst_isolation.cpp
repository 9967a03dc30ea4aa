// SPDX-License-Identifier: Apache-2.0
// Workspace isolation "sandbox": every guarantee checked with real python3 and bash workers under
// the real bwrap, against a real data directory (the server's token file and database), a real
// listening socket for the network, and a real replhost-server killed with SIGKILL. Each check
// first shows that the same probe succeeds where it should (an unsandboxed workspace, the
// workspace itself), so that a probe that could never succeed cannot pass for isolation.
#include "apiclient.h"
#include "codequoting.h"
#include "core/engine.h"
#include "executionevents.h"
#include "testengine.h"
#include "http/tokenstore.h"
#include "sandboxrequirement.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

#include <csignal>
#include <memory>

#include <unistd.h>

using namespace replhost;
using namespace replhost::core;
using namespace replhost::core::testing;
using sdk::Event;

namespace {

constexpr int kRunTimeout = 60000;
constexpr int kPromptly = 8000;

using replhost::testing::pythonString;
using replhost::testing::shellWord;

// Code that prints "readable" when the file or directory at `path` can be read, else
// "unreadable".
QString readProbe(const QString &language, const QString &path)
{
    if (language == QLatin1String("python"))
        return QStringLiteral("import os\n"
                              "p = %1\n"
                              "try:\n"
                              "    os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1)\n"
                              "    print('readable')\n"
                              "except OSError:\n"
                              "    print('unreadable')")
            .arg(pythonString(path));
    return QStringLiteral("p=%1; if { [ -d \"$p\" ] && ls \"$p\"; } >/dev/null 2>&1 || "
                          "{ [ -f \"$p\" ] && head -c1 \"$p\"; } >/dev/null 2>&1; "
                          "then echo readable; else echo unreadable; fi")
        .arg(shellWord(path));
}

// Code that writes `text` and a newline to the file at `path`, then prints what the file holds.
QString writeProbe(const QString &language, const QString &path, const QString &text)
{
    if (language == QLatin1String("python"))
        return QStringLiteral("with open(%1, 'w') as f:\n    f.write(%2 + '\\n')\n"
                              "print(open(%1).read(), end='')")
            .arg(pythonString(path), pythonString(text));
    return QStringLiteral("echo %2 > %1 && cat %1").arg(shellWord(path), shellWord(text));
}

// Code that prints "connected" when a TCP connection to 127.0.0.1:`port` opens, else "refused".
QString connectProbe(const QString &language, quint16 port)
{
    if (language == QLatin1String("python"))
        return QStringLiteral("import socket\n"
                              "try:\n"
                              "    socket.create_connection(('127.0.0.1', %1), timeout=10).close()\n"
                              "    print('connected')\n"
                              "except OSError:\n"
                              "    print('refused')")
            .arg(port);
    return QStringLiteral("if (exec 3<>/dev/tcp/127.0.0.1/%1) 2>/dev/null; then echo connected; "
                          "else echo refused; fi")
        .arg(port);
}

// The processes descended from `pid`, found through their parents in /proc.
QList<qint64> descendantsOf(qint64 pid)
{
    QHash<qint64, qint64> parents;
    const QDir proc(QStringLiteral("/proc"));
    for (const QString &entry : proc.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile stat(proc.filePath(entry + QStringLiteral("/stat")));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = stat.readAll();
        const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 1)
            parents.insert(entry.toLongLong(), fields.at(1).toLongLong());
    }
    QList<qint64> found;
    for (auto it = parents.cbegin(); it != parents.cend(); ++it) {
        for (qint64 up = it.value(); up > 1; up = parents.value(up, 0)) {
            if (up == pid) {
                found.append(it.key());
                break;
            }
        }
    }
    return found;
}

void addLanguageRows()
{
    QTest::addColumn<QString>("language");
    QTest::newRow("python") << QStringLiteral("python");
    QTest::newRow("bash") << QStringLiteral("bash");
}

// A row per language and value of the boolean column `flag`, named "<language>, <what>".
void addLanguageRows(const char *flag, const QString &whenFalse, const QString &whenTrue)
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<bool>(flag);
    for (const QString &language : {QStringLiteral("python"), QStringLiteral("bash")})
        for (const bool value : {false, true})
            QTest::newRow(qPrintable(language + ", " + (value ? whenTrue : whenFalse)))
                << language << value;
}

} // namespace

class IsolationTest : public QObject {
    Q_OBJECT

    TestEngine m_engine;
    QString m_bwrap;
    // Why bwrap cannot make a sandbox on this machine (not installed; as root in a chroot whose
    // / is not a mount point; no user namespaces), found without the code under test; or empty.
    QString m_bwrapUnusable;
    QHash<QString, QString> m_probeContexts;  // workspace + language → context

    bool openEngine(const QString &bwrapPath = {})
    {
        m_probeContexts.clear();
        if (!m_engine.makeDataDir())
            return false;
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.bwrapPath = bwrapPath;
        return m_engine.open(config);
    }

    // A workspace with these settings; its directory, or empty (and a warning).
    QString createWorkspace(const QString &name, const QJsonObject &settings)
    {
        auto created = m_engine->workspaces().create(name, {}, settings);
        if (!created) {
            qWarning("cannot create workspace %s: %s", qPrintable(name),
                     qPrintable(created.error().message));
            return {};
        }
        return created->directory;
    }

    QString createSandbox(const QString &name, bool network = false)
    {
        return createWorkspace(name, {{QStringLiteral("isolation"), QStringLiteral("sandbox")},
                                      {QStringLiteral("network"), network}});
    }

    QString createContext(const QString &workspace, const QString &language)
    {
        CreateContextRequest request;
        request.workspace = workspace;
        request.language = language;
        auto created = m_engine->contexts().create(request);
        if (!created) {
            qWarning("cannot create a %s context: %s", qPrintable(language),
                     qPrintable(created.error().message));
            return {};
        }
        return created->id;
    }

    ExecutionPtr start(const QString &workspace, const QString &contextId, const QString &code)
    {
        RunRequest request;
        request.workspace = workspace;
        request.contextId = contextId;
        request.code = code;
        auto execution = m_engine->contexts().run(request);
        if (!execution) {
            qWarning("run refused: %s", qPrintable(execution.error().message));
            return nullptr;
        }
        return *execution;
    }

    ExecutionPtr run(const QString &workspace, const QString &contextId, const QString &code)
    {
        ExecutionPtr execution = start(workspace, contextId, code);
        if (execution && !QTest::qWaitFor([&] { return execution->isFinished(); }, kRunTimeout)) {
            qWarning("the run did not finish: %s", qPrintable(describe(execution)));
            return nullptr;
        }
        return execution;
    }

    // The standard output of `code` run to success in a context of `workspace` (one per
    // workspace and language); a null string (and a warning) when it did not succeed.
    QString output(const QString &workspace, const QString &language, const QString &code)
    {
        QString &context = m_probeContexts[workspace + QLatin1Char('/') + language];
        if (context.isEmpty())
            context = createContext(workspace, language);
        const ExecutionPtr execution = context.isEmpty() ? nullptr : run(workspace, context, code);
        if (!execution || execution->status() != QLatin1String("ok")) {
            qWarning("the run failed: %s", execution ? qPrintable(describe(execution)) : "");
            return {};
        }
        return out(execution);
    }

    // Why `language` cannot run here (QSKIP it), or empty.
    QString missingLanguage(const QString &language) const
    {
        const auto plugin = m_engine->plugins().resolve(language);
        return plugin ? QString() : plugin.error().message;
    }

private slots:
    void initTestCase()
    {
        m_bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
        m_bwrapUnusable = replhost::testing::sandboxUnavailableReason();
    }

    void init()
    {
        // The refusals need no bwrap; everything else is about what bwrap does.
        const QLatin1String test(QTest::currentTestFunction());
        const bool refusal = test == QLatin1String("missingBwrapRefusesToStart")
                             || test == QLatin1String("infoReportsAnUnusableSandbox");
        if (!refusal)
            REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_bwrapUnusable);
        QVERIFY(openEngine());
    }

    void cleanup() { m_engine.reset(); }

    void sandboxIsAvailable()
    {
        const SandboxSupport &support = m_engine->sandbox();
        QVERIFY2(support.available(), qPrintable(support.reason()));
        QCOMPARE(support.bwrap(), m_bwrap);
        QCOMPARE(support.hidden(), QStringList{m_engine->dataDir()});
    }

    void everyLanguageRunsInASandbox_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python" << "print('hello')";
        // The driver's IPython.display, whatever IPython the interpreter has of its own.
        QTest::newRow("python's IPython.display")
                << "python"
                << "import sys\n"
                   "shim = [f for f in sys.meta_path if type(f).__name__ == '_IPythonShim'][0]\n"
                   "print(shim._display_module().HTML('hello')._repr_html_())";
        QTest::newRow("bash") << "bash" << "echo hello";
        QTest::newRow("javascript") << "javascript" << "console.log('hello')";
        QTest::newRow("typescript") << "typescript" << "console.log('hello' as string)";
        QTest::newRow("perl") << "perl" << "print \"hello\\n\"";
        QTest::newRow("java") << "java" << "System.out.println(\"hello\")";
        QTest::newRow("go") << "go" << "fmt.Println(\"hello\")";
    }

    // Whatever a runtime needs besides the system (its installation prefix, its driver, the
    // Go worker, the JVM's jar and native library) is in the sandbox.
    void everyLanguageRunsInASandbox()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        QVERIFY(!createSandbox(QStringLiteral("boxed")).isEmpty());
        QCOMPARE(output(QStringLiteral("boxed"), language, code), QStringLiteral("hello\n"));
    }

    // A Jupyter kernel's connection (ipc sockets or loopback ports) would have to cross the
    // wall, so the Jupyter languages refuse a sandbox and say so, rather than run outside it.
    void jupyterKernelsAreRefusedInASandboxSayingWhy()
    {
        if (const QString why = missingLanguage(QStringLiteral("jupyter-ir")); !why.isEmpty())
            QSKIP(qPrintable(why));
        QVERIFY(!createSandbox(QStringLiteral("boxed")).isEmpty());
        const QString context = createContext(QStringLiteral("boxed"), QStringLiteral("r"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(QStringLiteral("boxed"), context, QStringLiteral("1"));
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() != QLatin1String("ok"), execution);
        const QList<Event> errors = eventsOfType(execution, QStringLiteral("error"));
        QVERIFY(!errors.isEmpty());
        VERIFY_EXEC(errors.first().fields.value(QLatin1String("evalue")).toString().contains(
                        QLatin1String("sandbox")), execution);
    }

    void readsOutsideTheWorkspaceFail_data() { addLanguageRows(); }

    void readsOutsideTheWorkspaceFail()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        const auto token = http::TokenStore::load(m_engine->dataDir());
        QVERIFY2(token, qPrintable(token ? QString() : token.error().message));
        const QString open = createWorkspace(QStringLiteral("open"), {});
        QVERIFY(QFile(open + "/neighbour.txt").open(QIODevice::WriteOnly));
        const QString boxed = createSandbox(QStringLiteral("boxed"));
        QVERIFY(!boxed.isEmpty());

        const QDir data(m_engine->dataDir());
        const QStringList outside = {token->source, data.filePath(QStringLiteral("replhost.db")),
                                     open + "/neighbour.txt", open};
        for (const QString &path : outside) {
            QVERIFY2(QFileInfo::exists(path), qPrintable(path));
            // Without a sandbox the same probe reads it: the probe can tell.
            QCOMPARE(output(QStringLiteral("open"), language, readProbe(language, path)),
                     QStringLiteral("readable\n"));
            QCOMPARE(output(QStringLiteral("boxed"), language, readProbe(language, path)),
                     QStringLiteral("unreadable\n"));
        }
        QCOMPARE(output(QStringLiteral("boxed"), language, readProbe(language, boxed)),
                 QStringLiteral("readable\n"));
    }

    void writesInTheWorkspaceReachTheHost_data() { addLanguageRows(); }

    void writesInTheWorkspaceReachTheHost()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        const QString boxed = createSandbox(QStringLiteral("boxed"));
        QVERIFY(!boxed.isEmpty());
        QCOMPARE(output(QStringLiteral("boxed"), language,
                        writeProbe(language, QStringLiteral("made-inside.txt"), language)),
                 language + "\n");
        QFile made(boxed + "/made-inside.txt");
        QVERIFY(made.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(made.readAll()), language + "\n");
    }

    void systemIsReadOnly_data() { addLanguageRows(); }

    void systemIsReadOnly()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        QVERIFY(!createSandbox(QStringLiteral("boxed")).isEmpty());
        // Even as root: the bind mount is read-only.
        const QString code = language == QLatin1String("python")
                                 ? QStringLiteral("try:\n    open('/etc/replhost-probe', 'w')\n"
                                                  "    print('written')\n"
                                                  "except OSError:\n    print('refused')")
                                 : QStringLiteral("if : > /etc/replhost-probe 2>/dev/null; then "
                                                  "echo written; else echo refused; fi");
        QCOMPARE(output(QStringLiteral("boxed"), language, code), QStringLiteral("refused\n"));
        QVERIFY(!QFile::exists(QStringLiteral("/etc/replhost-probe")));
    }

    void tmpIsPrivate_data() { addLanguageRows(); }

    void tmpIsPrivate()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        QVERIFY(!createSandbox(QStringLiteral("boxed")).isEmpty());
        const QString path = QStringLiteral("/tmp/replhost-isolation-%1")
                                 .arg(QUuid::createUuid().toString(QUuid::Id128));
        QCOMPARE(output(QStringLiteral("boxed"), language, writeProbe(language, path, "inside")),
                 QStringLiteral("inside\n"));
        QVERIFY(!QFile::exists(path));
    }

    void hostProcessesAreHidden_data() { addLanguageRows(); }

    void hostProcessesAreHidden()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        QVERIFY(!createSandbox(QStringLiteral("boxed")).isEmpty());
        // /proc/<pid>/root of a host process would give the host's file system back.
        const QString self = QStringLiteral("/proc/%1/root/").arg(::getpid());
        QVERIFY(!createWorkspace(QStringLiteral("open"), {}).isEmpty());
        QCOMPARE(output(QStringLiteral("open"), language, readProbe(language, self)),
                 QStringLiteral("readable\n"));
        QCOMPARE(output(QStringLiteral("boxed"), language, readProbe(language, self)),
                 QStringLiteral("unreadable\n"));
    }

    void networkIsCutUnlessAllowed_data()
    {
        addLanguageRows("allowed", QStringLiteral("not allowed"), QStringLiteral("allowed"));
    }

    void networkIsCutUnlessAllowed()
    {
        QFETCH(QString, language);
        QFETCH(bool, allowed);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        QTcpServer listener;
        QVERIFY(listener.listen(QHostAddress::LocalHost));
        QVERIFY(!createSandbox(QStringLiteral("boxed"), allowed).isEmpty());
        QCOMPARE(output(QStringLiteral("boxed"), language,
                        connectProbe(language, listener.serverPort())),
                 allowed ? QStringLiteral("connected\n") : QStringLiteral("refused\n"));
        // The connection reached the listener, if there was one.
        QCOMPARE(listener.hasPendingConnections() || listener.waitForNewConnection(0), allowed);
    }

    void interruptKeepsState_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("ready");
        QTest::newRow("python") << "python" << "x = 41" << "while True: pass"
                                << "print(x + 1)" << "42\n" << "";
        QTest::newRow("python loop state")
            << "python" << "n = 0" << "print('looping', flush=True)\nwhile True:\n    n += 1"
            << "print(n > 0)" << "True\n" << "looping";
        QTest::newRow("python sleep") << "python" << "import time\nx = 41" << "time.sleep(30)"
                                      << "print(x + 1)" << "42\n" << "";
        QTest::newRow("bash") << "bash" << "x=41" << "while true; do :; done"
                              << "echo $((x + 1))" << "42\n" << "";
        QTest::newRow("bash loop state")
            << "bash" << "n=0" << "echo looping; while true; do n=$((n + 1)); done"
            << "[ \"$n\" -gt 0 ] && echo counted" << "counted\n" << "looping";
        QTest::newRow("bash child process") << "bash" << "x=41" << "sleep 30"
                                            << "echo $((x + 1))" << "42\n" << "";
    }

    // As outside a sandbox (tst_contexts): the group's SIGINT reaches the worker, not bwrap's
    // monitor, and the interpreter keeps its state and its process.
    void interruptKeepsState()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, code);
        QFETCH(QString, check);
        QFETCH(QString, expected);
        QFETCH(QString, ready);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        const QString ws = QStringLiteral("boxed");
        QVERIFY(!createSandbox(ws).isEmpty());
        const QString context = createContext(ws, language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr before = run(ws, context, setup);
        QVERIFY(before);
        VERIFY_EXEC(before->status() == "ok", before);
        const qint64 pid = m_engine->contexts().get(ws, context)->pid;

        const ExecutionPtr busy = start(ws, context, code);
        QVERIFY(busy);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(busy, "started"), kRunTimeout);
        if (!ready.isEmpty())
            QTRY_VERIFY_WITH_TIMEOUT(out(busy).contains(ready), kRunTimeout);
        QVERIFY(m_engine->contexts().interruptExecution(busy->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(busy->isFinished(), kPromptly);
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        VERIFY_EXEC(!doneOf(busy).value(QLatin1String("state_lost")).toBool(), busy);

        const ExecutionPtr after = run(ws, context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), expected);
        QCOMPARE(m_engine->contexts().get(ws, context)->pid, pid);
    }

    void workerKilledBySignalIsReportedSo_data() { addLanguageRows(); }

    // bwrap exits with 128 + N for a child killed by signal N; the host says "killed by signal".
    void workerKilledBySignalIsReportedSo()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        const QString ws = QStringLiteral("boxed");
        QVERIFY(!createSandbox(ws).isEmpty());
        const QString context = createContext(ws, language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr killed = run(
            ws, context,
            language == QLatin1String("python")
                ? QStringLiteral("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
                : QStringLiteral("builtin kill -KILL $$"));
        QVERIFY(killed);
        VERIFY_EXEC(killed->status() == "error", killed);
        const QJsonObject error = eventFields(killed, QStringLiteral("error"));
        QCOMPARE(error.value(QLatin1String("ename")).toString(), QStringLiteral("WorkerDied"));
        VERIFY_EXEC(error.value(QLatin1String("evalue")).toString().contains(
                            QLatin1String("killed by signal 9 (SIGKILL)")),
                    killed);
    }

    void noControllingTerminal_data() { addLanguageRows(); }

    // No terminal to inject input into: the worker was started in a session of its own,
    // without a terminal, and bwrap's --new-session makes yet another inside.
    void noControllingTerminal()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        QVERIFY(!createSandbox(QStringLiteral("boxed")).isEmpty());
        QCOMPARE(output(QStringLiteral("boxed"), language,
                        readProbe(language, QStringLiteral("/dev/tty"))),
                 QStringLiteral("unreadable\n"));
    }

    void missingBwrapRefusesToStart_data()
    {
        addLanguageRows("installed", QStringLiteral("configured path missing"),
                        QStringLiteral("installed but unusable"));
    }

    // No unsandboxed worker ever starts: the run is refused with the reason, the code never
    // runs, and no process was started for the context.
    void missingBwrapRefusesToStart()
    {
        QFETCH(QString, language);
        QFETCH(bool, installed);
        QTemporaryDir tools;
        QString bwrap = tools.filePath(QStringLiteral("missing/bwrap"));
        if (installed) {
            // What bwrap says where user namespaces are disabled.
            bwrap = tools.filePath(QStringLiteral("bwrap"));
            QFile script(bwrap);
            QVERIFY(script.open(QIODevice::WriteOnly));
            script.write("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\n"
                         "exit 1\n");
            script.close();
            QVERIFY(script.setPermissions(script.permissions() | QFileDevice::ExeOwner));
        }
        QVERIFY(openEngine(bwrap));
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        const SandboxSupport &support = m_engine->sandbox();
        QVERIFY(!support.available());
        QVERIFY2(support.reason().contains(bwrap), qPrintable(support.reason()));

        const QString ws = QStringLiteral("boxed");
        const QString boxed = createSandbox(ws);
        QVERIFY(!boxed.isEmpty());
        // Refused at creation: a context that could never start is not made.
        CreateContextRequest request;
        request.workspace = ws;
        request.language = language;
        const auto created = m_engine->contexts().create(request);
        QVERIFY(!created);
        QCOMPARE(created.error().code, QStringLiteral("unavailable"));
        const QString reason = created.error().message;
        QVERIFY2(reason.contains(QLatin1String("sandbox")) && reason.contains(bwrap),
                 qPrintable(reason));
        QVERIFY2(reason.contains(installed ? QLatin1String("user namespaces")
                                           : QLatin1String("install bubblewrap")),
                 qPrintable(reason));
        // And so is a run in the workspace's default context.
        RunRequest inDefault;
        inDefault.workspace = ws;
        inDefault.language = language;
        inDefault.code = writeProbe(language, QStringLiteral("ran.txt"), "ran");
        const auto refused = m_engine->contexts().run(inDefault);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, QStringLiteral("unavailable"));
        QVERIFY(!QFile::exists(boxed + "/ran.txt"));
        // Other workspaces are not affected.
        QCOMPARE(output(QString(), language, writeProbe(language, QStringLiteral("ran.txt"), "ok")),
                 QStringLiteral("ok\n"));
    }

    void workersDieWithTheServer_data() { addLanguageRows(); }

    // The worker guard kills the whole process group, bwrap's monitor, the sandboxed worker and
    // its children, when the server is killed without a chance to clean up.
    void workersDieWithTheServer()
    {
        QFETCH(QString, language);
        if (const QString why = missingLanguage(language); !why.isEmpty())
            QSKIP(qPrintable(why));
        ServerProcess server;
        QVERIFY2(server.start({QStringLiteral("--workspace-defaults"),
                               QStringLiteral("{\"isolation\":\"sandbox\",\"network\":false}")}),
                 qPrintable(server.error()));
        ApiClient client(server.port(), server.token());
        const QJsonObject info = client.get(QStringLiteral("/v1/info")).object();
        QCOMPARE(info.value(QLatin1String("sandbox")).toObject()
                     .value(QLatin1String("available")).toBool(),
                 true);
        const QString id = client.createContext(language);
        QVERIFY(!id.isEmpty());
        // A child that sleeps while the interpreter is busy in a loop.
        const std::unique_ptr<ApiClient::Stream> stream = client.openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"),
              language == QLatin1String("python")
                  ? QStringLiteral("import subprocess\nsubprocess.Popen(['sleep', '300'])\n"
                                   "print('looping', flush=True)\nwhile True: pass")
                  : QStringLiteral("sleep 300 | cat & echo looping; while true; do :; done")}});
        QCOMPARE(stream->status(), 200);
        bool looping = false;
        while (std::optional<ApiClient::Event> event = stream->next(kRunTimeout)) {
            if (event->type == "stream" && event->data.contains("looping")) {
                looping = true;
                break;
            }
        }
        QVERIFY(looping);
        const qint64 group = client.get(QStringLiteral("/v1/contexts/") + id)
                                 .object().value(QLatin1String("pid")).toInteger();
        QVERIFY(group > 0);
        // bwrap's monitor and everything below it: its init, the interpreter, the sleep (which
        // bash's job control puts in a group of its own).
        const QList<qint64> started = QList<qint64>{group} + descendantsOf(group);
        QVERIFY2(started.size() >= 4, qPrintable(QString::number(started.size())));

        QCOMPARE(::kill(pid_t(server.pid()), SIGKILL), 0);
        server.stop();
        QTRY_COMPARE_WITH_TIMEOUT(ServerProcess::membersOfGroup(group), QList<qint64>(),
                                  kRunTimeout);
        const auto survivors = [&] {
            QStringList alive;
            for (qint64 pid : started) {
                QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
                if (ServerProcess::isAlive(pid) && cmdline.open(QIODevice::ReadOnly))
                    alive.append(QStringLiteral("%1 %2").arg(pid).arg(
                            QString::fromLocal8Bit(cmdline.readAll().replace('\0', ' '))));
            }
            return alive;
        };
        QTRY_VERIFY2_WITH_TIMEOUT(survivors().isEmpty(), qPrintable(survivors().join('\n')),
                                  kRunTimeout);
    }

    // With bwrap unusable, a sandbox workspace starts nothing: every surface that would start a
    // process for it answers 503 saying why, and nothing runs unconfined instead.
    void unusableSandboxStartsNoProcess_data()
    {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");

        QTest::newRow("context") << QByteArray("POST") << QStringLiteral("/v1/contexts")
                                 << QByteArray(R"({"language":"bash"})");
        QTest::newRow("run in the default context")
            << QByteArray("POST") << QStringLiteral("/v1/executions?wait=true")
            << QByteArray(R"({"language":"bash","code":"touch escaped"})");
        QTest::newRow("command") << QByteArray("POST") << QStringLiteral("/v1/commands?wait=true")
                                 << QByteArray(R"({"command":"touch escaped"})");
        QTest::newRow("opensandbox command")
            << QByteArray("POST") << QStringLiteral("/opensandbox/execd/default/command")
            << QByteArray(R"({"command":"touch escaped"})");
        QTest::newRow("opensandbox code without a context")
            << QByteArray("POST") << QStringLiteral("/opensandbox/execd/default/code")
            << QByteArray(R"j({"code":"open('escaped', 'w')","context":{"language":"python"}})j");
    }

    void unusableSandboxStartsNoProcess()
    {
        QFETCH(QByteArray, method);
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        ServerProcess server;
        QVERIFY2(server.start({QStringLiteral("--bwrap"), QStringLiteral("/nonexistent/bwrap"),
                               QStringLiteral("--workspace-defaults"),
                               QStringLiteral("{\"isolation\":\"sandbox\"}")}),
                 qPrintable(server.error()));
        ApiClient client(server.port(), server.token());
        const auto answer = client.request(method, path, body,
                                           {{"Content-Type", "application/json"}});
        QCOMPARE(answer.status, 503);
        QVERIFY2(answer.object().value(QLatin1String("message")).toString().contains(
                         QLatin1String("sandboxes are unavailable")),
                 answer.body.constData());
        const QString workspace = client.get(QStringLiteral("/v1/workspaces/default")).object()
                                          .value(QLatin1String("directory")).toString();
        QVERIFY(!workspace.isEmpty());
        QVERIFY(!QFileInfo::exists(workspace + QStringLiteral("/escaped")));
    }

    void infoReportsAnUnusableSandbox()
    {
        ServerProcess server;
        QVERIFY2(server.start({QStringLiteral("--bwrap"), QStringLiteral("/nonexistent/bwrap")}),
                 qPrintable(server.error()));
        ApiClient client(server.port(), server.token());
        const QJsonObject sandbox =
            client.get(QStringLiteral("/v1/info")).object().value(QLatin1String("sandbox")).toObject();
        QCOMPARE(sandbox.value(QLatin1String("available")).toBool(), false);
        QCOMPARE(sandbox.value(QLatin1String("bwrap")).toString(), QStringLiteral("/nonexistent/bwrap"));
        QVERIFY(sandbox.value(QLatin1String("reason")).toString().contains(
                QLatin1String("install bubblewrap")));
    }
};

QTEST_GUILESS_MAIN(IsolationTest)
#include "tst_isolation.moc"
