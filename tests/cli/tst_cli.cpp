// SPDX-License-Identifier: Apache-2.0
// replhost-cli as a user runs it: the real binary, started with QProcess, against a real
// replhost-server with real python3 and bash workers. Exit statuses, live output, Ctrl-C,
// contexts, env layers, files, history, --json, server discovery and its failures, usage errors.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <unistd.h>

// Skips the test when the server cannot run `language` (a QString). QSKIP only leaves the
// function it is written in, so this is a macro.
#define REQUIRE_LANGUAGE(language)                                               \
    do {                                                                         \
        if (const QString why = client().missingLanguage(language); !why.isEmpty()) \
            QSKIP(qPrintable(why));                                              \
    } while (false)

using Environment = QMap<QString, QString>;

namespace {

// What one replhost-cli process did.
struct CliRun {
    int exitCode = -1;  // -1: it crashed or did not finish
    QByteArray out;
    QByteArray err;
    QString describe() const
    {
        return QStringLiteral("exit %1\nstdout: %2\nstderr: %3")
                .arg(exitCode)
                .arg(QString::fromUtf8(out), QString::fromUtf8(err));
    }
};

QString cliExecutable()
{
    return QStringLiteral(REPLHOST_CLI_EXECUTABLE);
}

// Waits until `process` has written something that `done` accepts (its stdout, or both
// channels when merged). A guard against hanging, not a measure of speed.
bool waitForOutput(QProcess &process, QByteArray &seen, const std::function<bool(const QByteArray &)> &done,
                   int timeoutMs = 30000)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!done(seen)) {
        if (deadline.hasExpired() || process.state() == QProcess::NotRunning)
            return false;
        process.waitForReadyRead(100);
        seen += process.readAllStandardOutput();
    }
    return true;
}

QJsonDocument parseJson(const QByteArray &text)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(text, &error);
    return error.error == QJsonParseError::NoError ? document : QJsonDocument();
}

void writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    file.write(content);
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The pid of a process that has ended and been reaped.
qint64 deadPid()
{
    QProcess process;
    process.start(QStringLiteral("/bin/true"), {});
    process.waitForStarted(10000);
    const qint64 pid = process.processId();
    process.waitForFinished(10000);
    return pid;
}

quint16 closedPort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    const quint16 port = probe.serverPort();
    probe.close();
    return port;
}

} // namespace

class tst_Cli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void helpAndVersion();
    void usageErrorsSayWhatIsWrong_data();
    void usageErrorsSayWhatIsWrong();

    void runExitStatusFollowsTheRun_data();
    void runExitStatusFollowsTheRun();
    void resultIsPrintedAsText();
    void stateSurvivesRunsInOneContext();
    void codeComesFromStdinOrAFile_data();
    void codeComesFromStdinOrAFile();
    void outputStreamsLiveInOrder();
    void ctrlCInterruptsTheRunAndKeepsState_data();
    void ctrlCInterruptsTheRunAndKeepsState();
    void secondCtrlCStopsWaiting();
    void sigintToTheClientAndItsGroupIsOneCtrlC_data();
    void sigintToTheClientAndItsGroupIsOneCtrlC();
    void timeoutExitsWith124();
    void executionEnvReachesOnlyItsRun();
    void runJsonIsTheExecutionDocument();
    void refusedRunsAreReported_data();
    void refusedRunsAreReported();

    void contextsNewLsRestartRm();
    void contextsOutputPrintsWhatCameBetweenRuns();
    void contextsOutputAfterStartsWithWholeLines();
    void envLayersReachARun();
    void effectiveEnvIsWhatTheRunGets();
    void filesRoundTripBinaryContent();
    void filesRefusalsAreReported_data();
    void filesRefusalsAreReported();
    void historyPagesNewestFirst();
    void historyOutOfItsBoundsIsAUsageError_data();
    void historyOutOfItsBoundsIsAUsageError();
    void pluginsSaysWhereItLookedAndWhyAPluginWasRefused();
    void languagesListsWhatCanRunAndPointsAtRefusedPlugins();
    void jsonOutputParses_data();
    void jsonOutputParses();
    void workspaceOptionScopesCommands();
    void workspacesMoveToAnotherServerByExportAndImport();

    void serverWritesAndRemovesItsUrlFile();
    void discoveryFollowsTheServersDataDirRule_data();
    void discoveryFollowsTheServersDataDirRule();
    void urlAndTokenFromOptionsOrEnvironment_data();
    void urlAndTokenFromOptionsOrEnvironment();
    void urlFileProblemsAreReported_data();
    void urlFileProblemsAreReported();
    void wrongOrMissingTokenExitsWith4_data();
    void wrongOrMissingTokenExitsWith4();
    void unreachableServerExitsWith3();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_server.port()); }

    // The client's environment: none of the user's REPLHOST_* settings, and an XDG data dir with
    // no server in it, so only what a test gives can lead to a server. An empty value in
    // `extra` removes the variable.
    QProcessEnvironment environment(const Environment &extra = {}) const;
    void prepare(QProcess &process, const QStringList &arguments, const Environment &extra = {}) const;
    // Runs replhost-cli with exactly `arguments`.
    CliRun runCli(const QStringList &arguments, const QByteArray &input = {}, const Environment &extra = {}) const;
    // Runs replhost-cli against the test's server (--data-dir of the server).
    CliRun cli(const QStringList &arguments, const QByteArray &input = {}) const;
    // A new context of `language`; its id, or empty.
    QString newContext(const QString &language, const QStringList &extra = {}) const;
    // A data dir holding a copy of the server's URL file and token file, each when asked for.
    QString copiedDataDir(bool withUrlFile, bool withToken);

    ServerProcess m_server;
    QTemporaryDir m_scratch;
};

void tst_Cli::initTestCase()
{
    QVERIFY(m_scratch.isValid());
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
}

QProcessEnvironment tst_Cli::environment(const Environment &extra) const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"REPLHOST_URL", "REPLHOST_TOKEN", "REPLHOST_DATA_DIR"})
        env.remove(QString::fromLatin1(name));
    env.insert(QStringLiteral("XDG_DATA_HOME"), m_scratch.filePath(QStringLiteral("no-server-here")));
    for (auto it = extra.begin(); it != extra.end(); ++it) {
        if (it.value().isEmpty())
            env.remove(it.key());
        else
            env.insert(it.key(), it.value());
    }
    return env;
}

void tst_Cli::prepare(QProcess &process, const QStringList &arguments, const Environment &extra) const
{
    process.setProcessEnvironment(environment(extra));
    process.setProgram(cliExecutable());
    process.setArguments(arguments);
}

CliRun tst_Cli::runCli(const QStringList &arguments, const QByteArray &input, const Environment &extra) const
{
    QProcess process;
    prepare(process, arguments, extra);
    process.start();
    CliRun run;
    if (!process.waitForStarted(10000))
        return run;
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished(5000);
    }
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    if (process.exitStatus() == QProcess::NormalExit)
        run.exitCode = process.exitCode();
    return run;
}

CliRun tst_Cli::cli(const QStringList &arguments, const QByteArray &input) const
{
    return runCli(QStringList{QStringLiteral("--data-dir"), m_server.dataDir()} + arguments, input);
}

QString tst_Cli::newContext(const QString &language, const QStringList &extra) const
{
    const CliRun run = cli(QStringList{QStringLiteral("contexts"), QStringLiteral("new"), QStringLiteral("-l"), language}
                           + extra);
    if (run.exitCode != 0) {
        qWarning().noquote() << "contexts new failed:" << run.describe();
        return {};
    }
    return QString::fromUtf8(run.out).trimmed();
}

QString tst_Cli::copiedDataDir(bool withUrlFile, bool withToken)
{
    static int counter = 0;
    const QString directory = m_scratch.filePath(QStringLiteral("copy-%1").arg(++counter));
    QDir().mkpath(directory);
    if (withUrlFile)
        QFile::copy(QDir(m_server.dataDir()).filePath(QStringLiteral("server.json")), directory + "/server.json");
    if (withToken)
        QFile::copy(QDir(m_server.dataDir()).filePath(QStringLiteral("token")), directory + "/token");
    return directory;
}

// --- Command line -------------------------------------------------------------------------

void tst_Cli::helpAndVersion()
{
    const CliRun help = runCli({QStringLiteral("--help")});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains("Usage: replhost-cli"));
    QVERIFY(help.out.contains("Exit status"));

    const CliRun runHelp = runCli({QStringLiteral("run"), QStringLiteral("--help")});
    QCOMPARE(runHelp.exitCode, 0);
    QVERIFY(runHelp.out.contains("--timeout"));

    const CliRun version = runCli({QStringLiteral("--version")});
    QCOMPARE(version.exitCode, 0);
    QCOMPARE(version.out, QByteArray("replhost-cli " REPLHOST_VERSION "\n"));
}

void tst_Cli::usageErrorsSayWhatIsWrong_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");

    QTest::newRow("no command") << QStringList{} << "no command given";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command 'frobnicate'";
    QTest::newRow("unknown action") << QStringList{"contexts", "list"} << "unknown action 'list'";
    QTest::newRow("missing action") << QStringList{"contexts"} << "'contexts' needs an action";
    QTest::newRow("unknown option") << QStringList{"run", "--frob"} << "unknown option '--frob'";
    QTest::newRow("option of another command") << QStringList{"contexts", "ls", "--timeout", "3"}
                                               << "unknown option '--timeout'";
    QTest::newRow("missing value") << QStringList{"run", "-l"} << "option --language needs a value";
    QTest::newRow("value for a flag") << QStringList{"--json=yes", "contexts", "ls"} << "--json takes no value";
    QTest::newRow("option twice") << QStringList{"run", "-l", "python", "-l", "bash", "1"}
                                  << "--language is given twice";
    QTest::newRow("code and file") << QStringList{"run", "-l", "python", "-f", "x.py", "print(1)"}
                                   << "not both";
    QTest::newRow("two pieces of code") << QStringList{"run", "-l", "python", "a", "b"} << "as one argument";
    QTest::newRow("language and context") << QStringList{"run", "-l", "python", "--context", "c", "1"}
                                          << "-l LANGUAGE or --context ID, not both";
    QTest::newRow("no language") << QStringList{"run", "print(1)"} << "say which language";
    QTest::newRow("file without a language") << QStringList{"run", "-f", "-"} << "say which language";
    QTest::newRow("missing file") << QStringList{"run", "-l", "python", "-f", "/nonexistent/x.py"}
                                  << "cannot read /nonexistent/x.py";
    QTest::newRow("bad timeout") << QStringList{"run", "-l", "python", "-t", "soon", "1"} << "--timeout takes";
    QTest::newRow("zero timeout") << QStringList{"run", "-l", "python", "-t", "0", "1"} << "--timeout takes";
    QTest::newRow("bad env") << QStringList{"run", "-l", "python", "-e", "NOEQUALS", "1"}
                             << "--env takes KEY=VALUE";
    QTest::newRow("env set without value") << QStringList{"env", "set", "FOO"} << "takes KEY=VALUE";
    QTest::newRow("env unset with value") << QStringList{"env", "unset", "A=1"} << "names of variables";
    QTest::newRow("effective without context") << QStringList{"env", "show", "--effective"}
                                               << "--effective needs --context";
    QTest::newRow("files get without path") << QStringList{"files", "get"} << "files get PATH";
    QTest::newRow("files put without path") << QStringList{"files", "put", "x"} << "files put LOCAL PATH";
    QTest::newRow("files get --json to stdout") << QStringList{"--json", "files", "get", "x"}
                                                << "name one";
    QTest::newRow("history of nothing") << QStringList{"history"} << "--context ID";
    QTest::newRow("history limit 0") << QStringList{"history", "--context", "c", "-n", "0"} << "--limit takes";
    QTest::newRow("contexts new without language") << QStringList{"contexts", "new"} << "-l LANGUAGE";
    QTest::newRow("contexts new with two languages") << QStringList{"contexts", "new", "python", "perl"}
                                                     << "unexpected argument 'perl'";
    QTest::newRow("contexts new with -l and an argument")
        << QStringList{"contexts", "new", "-l", "python", "perl"} << "unexpected argument 'perl'";
    QTest::newRow("contexts rm without ids") << QStringList{"contexts", "rm"} << "contexts rm ID";
    QTest::newRow("contexts output without id") << QStringList{"contexts", "output"} << "contexts output ID";
    QTest::newRow("contexts output after text") << QStringList{"contexts", "output", "c", "--after", "x"}
                                                << "--after takes";
    QTest::newRow("contexts output follow as json") << QStringList{"--json", "contexts", "output", "c", "-F"}
                                                    << "leave out --json";
    QTest::newRow("https url") << QStringList{"--url", "https://127.0.0.1:1", "contexts", "ls"}
                               << "must look like http://";
}

void tst_Cli::usageErrorsSayWhatIsWrong()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);

    // A data dir without a server: reaching for one would end with 3, not 2.
    const CliRun run = runCli(QStringList{QStringLiteral("--data-dir"), m_scratch.filePath(QStringLiteral("empty"))}
                              + arguments);
    QVERIFY2(run.exitCode == 2, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(message.toUtf8()), qPrintable(run.describe()));
    QVERIFY2(run.err.startsWith("replhost-cli: ") || arguments.isEmpty(), qPrintable(run.describe()));
    // Mistakes in the words of the command line point to the help; a file or URL that is wrong
    // says so and no more.
    const bool aboutAValue = message.startsWith(QLatin1String("cannot read")) || message.contains(QLatin1String("http://"));
    QCOMPARE(run.err.contains("--help"), !aboutAValue);
    QVERIFY(run.out.isEmpty());
}

// --- run ----------------------------------------------------------------------------------

void tst_Cli::runExitStatusFollowsTheRun_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QByteArray>("out");
    QTest::addColumn<QByteArray>("errPart");

    QTest::newRow("python ok") << "python" << "print('hello')" << 0 << QByteArray("hello\n") << QByteArray();
    QTest::newRow("python exception") << "python" << "raise ValueError('bad value')" << 1 << QByteArray()
                                      << QByteArray("ValueError: bad value");
    QTest::newRow("bash ok") << "bash" << "echo hello" << 0 << QByteArray("hello\n") << QByteArray();
    QTest::newRow("bash failing command") << "bash" << "ls /nonexistent-directory-of-tst-cli" << 1
                                          << QByteArray() << QByteArray("nonexistent-directory-of-tst-cli");
}

void tst_Cli::runExitStatusFollowsTheRun()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(int, exitCode);
    QFETCH(QByteArray, out);
    QFETCH(QByteArray, errPart);
    REQUIRE_LANGUAGE(language);

    const CliRun run = cli({QStringLiteral("run"), QStringLiteral("-l"), language, code});
    QVERIFY2(run.exitCode == exitCode, qPrintable(run.describe()));
    QCOMPARE(run.out, out);
    QVERIFY2(run.err.contains(errPart), qPrintable(run.describe()));
}

void tst_Cli::resultIsPrintedAsText()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const CliRun run = cli({QStringLiteral("run"), QStringLiteral("-l"), QStringLiteral("python"),
                            QStringLiteral("print('six sevens')\n6 * 7")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(run.out, QByteArray("six sevens\n42\n"));
    QVERIFY(run.err.isEmpty());
}

void tst_Cli::stateSurvivesRunsInOneContext()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("x = 41")}).exitCode, 0);
    const CliRun second = cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("print(x + 1)")});
    QVERIFY2(second.exitCode == 0, qPrintable(second.describe()));
    QCOMPARE(second.out, QByteArray("42\n"));
}

void tst_Cli::codeComesFromStdinOrAFile_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QStringList>("arguments");  // %FILE% is the code file
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QByteArray>("code");
    QTest::addColumn<bool>("codeOnStdin");

    const QByteArray python = "print('from python')\nprint('second line')\n";
    QTest::newRow("stdin") << "python" << QStringList{"run", "-l", "python"} << "" << python << true;
    QTest::newRow("-f -") << "python" << QStringList{"run", "-l", "python", "-f", "-"} << "" << python << true;
    QTest::newRow("-f with -l") << "python" << QStringList{"run", "-l", "python", "-f", "%FILE%"} << "code.txt"
                                << python << false;
    QTest::newRow(".py picks python") << "python" << QStringList{"run", "-f", "%FILE%"} << "script.py" << python
                                      << false;
    QTest::newRow(".sh picks bash") << "bash" << QStringList{"run", "-f", "%FILE%"} << "script.sh"
                                    << QByteArray("echo from bash\necho second line\n") << false;
    QTest::newRow(".ts picks typescript") << "typescript" << QStringList{"run", "-f", "%FILE%"} << "script.ts"
                                          << QByteArray("const language: string = 'typescript'\nconsole.log(`from ${language}`)\n"
                                                        "console.log('second line')\n")
                                          << false;
}

void tst_Cli::codeComesFromStdinOrAFile()
{
    QFETCH(QString, language);
    QFETCH(QStringList, arguments);
    QFETCH(QString, fileName);
    QFETCH(QByteArray, code);
    QFETCH(bool, codeOnStdin);
    REQUIRE_LANGUAGE(language);

    const QString file = m_scratch.filePath(fileName);
    if (!fileName.isEmpty())
        writeFile(file, code);
    arguments.replaceInStrings(QStringLiteral("%FILE%"), file);
    const CliRun run = cli(arguments, codeOnStdin ? code : QByteArray());
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(run.out, QByteArray("from " + language.toUtf8() + "\nsecond line\n"));
}

void tst_Cli::outputStreamsLiveInOrder()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    // Each write waits for the test to see it on the client's terminal before the next one, so
    // the order below is the order of the run, and every line arrived while the run went on.
    const QString acks = m_scratch.filePath(QStringLiteral("acks"));
    QDir().mkpath(acks);
    const QString code = QStringLiteral(
            "import os, sys, time\n"
            "def step(n, stream, text):\n"
            "    print(text, file=stream, flush=True)\n"
            "    while not os.path.exists(os.path.join(%1, 'ack%d' % n)):\n"
            "        time.sleep(0.01)\n"
            "step(0, sys.stdout, 'out 0')\n"
            "step(1, sys.stderr, 'err 1')\n"
            "step(2, sys.stderr, 'err 2')\n"
            "step(3, sys.stdout, 'out 3')\n")
            .arg(QStringLiteral("'%1'").arg(acks));

    QProcess process;
    prepare(process, {QStringLiteral("--data-dir"), m_server.dataDir(), QStringLiteral("run"), QStringLiteral("-l"),
                      QStringLiteral("python"), code});
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start();
    QVERIFY(process.waitForStarted(10000));

    const QList<QByteArray> lines{"out 0\n", "err 1\n", "err 2\n", "out 3\n"};
    QByteArray seen;
    QByteArray expected;
    for (int n = 0; n < lines.size(); ++n) {
        expected += lines[n];
        QVERIFY2(waitForOutput(process, seen, [&expected](const QByteArray &text) { return text.size() >= expected.size(); }),
                 seen.constData());
        QCOMPARE(seen, expected);
        writeFile(QDir(acks).filePath(QStringLiteral("ack%1").arg(n)), {});
    }
    QVERIFY(process.waitForFinished(30000));
    seen += process.readAllStandardOutput();
    QCOMPARE(seen, expected);
    QCOMPARE(process.exitCode(), 0);
}

void tst_Cli::ctrlCInterruptsTheRunAndKeepsState_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("busy");
    QTest::addColumn<QString>("check");

    QTest::newRow("python loop") << "python" << "x = 5" << "print('ready', flush=True)\nwhile True: pass"
                                 << "print(x)";
    QTest::newRow("bash sleep") << "bash" << "x=5" << "echo ready; sleep 30" << "echo $x";
}

void tst_Cli::ctrlCInterruptsTheRunAndKeepsState()
{
    QFETCH(QString, language);
    QFETCH(QString, setup);
    QFETCH(QString, busy);
    QFETCH(QString, check);
    REQUIRE_LANGUAGE(language);

    const QString id = newContext(language);
    QVERIFY(!id.isEmpty());
    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, setup}).exitCode, 0);

    QProcess process;
    prepare(process, {QStringLiteral("--data-dir"), m_server.dataDir(), QStringLiteral("run"),
                      QStringLiteral("--context"), id, busy});
    process.start();
    QVERIFY(process.waitForStarted(10000));
    QByteArray seen;
    QVERIFY2(waitForOutput(process, seen, [](const QByteArray &text) { return text.contains("ready\n"); }),
             process.readAllStandardError().constData());

    ::kill(pid_t(process.processId()), SIGINT);
    QVERIFY(process.waitForFinished(30000));
    const QByteArray err = process.readAllStandardError();
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QVERIFY2(process.exitCode() == 130, err.constData());
    QVERIFY2(err.contains("interrupting the run"), err.constData());

    const CliRun after = cli({QStringLiteral("run"), QStringLiteral("--context"), id, check});
    QVERIFY2(after.exitCode == 0, qPrintable(after.describe()));
    QCOMPARE(after.out, QByteArray("5\n"));
    QCOMPARE(cli({QStringLiteral("contexts"), QStringLiteral("rm"), id}).exitCode, 0);
}

void tst_Cli::sigintToTheClientAndItsGroupIsOneCtrlC_data()
{
    QTest::addColumn<bool>("throughTimeout");
    QTest::addColumn<bool>("groupLate");  // the group's SIGINT only once the first was handled
    QTest::newRow("timeout -s INT") << true << false;
    QTest::newRow("kill to the process, then to its group") << false << false;
    QTest::newRow("the group's long after the process's") << false << true;
}

void tst_Cli::sigintToTheClientAndItsGroupIsOneCtrlC()
{
    QFETCH(bool, throughTimeout);
    QFETCH(bool, groupLate);
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    const QString id = newContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("kept=5")}).exitCode, 0);
    const QStringList run{QStringLiteral("--data-dir"), m_server.dataDir(), QStringLiteral("run"),
                          QStringLiteral("--context"), id, QStringLiteral("echo ready; sleep 60")};
    // A few rounds: the second SIGINT lands at any point of the first one's handling.
    for (int round = 0; round < (throughTimeout ? 1 : 4); ++round) {
        QProcess process;
        if (throughTimeout) {
            // timeout(1) signals the command, then its own process group, which holds the command.
            prepare(process, QStringList{QStringLiteral("--preserve-status"), QStringLiteral("-s"), QStringLiteral("INT"),
                                         QStringLiteral("3"), cliExecutable()} + run);
            process.setProgram(QStringLiteral("timeout"));
        } else {
            prepare(process, run);
        }
        // A group of its own, as a shell's job control gives a command (timeout's signal to its
        // group would otherwise reach this test too).
        process.setChildProcessModifier([] { ::setpgid(0, 0); });
        process.start();
        QVERIFY(process.waitForStarted(10000));
        QByteArray seen;
        QVERIFY2(waitForOutput(process, seen, [](const QByteArray &text) { return text.contains("ready\n"); }),
                 process.readAllStandardError().constData());
        QByteArray err;
        if (!throughTimeout) {
            const pid_t pid = pid_t(process.processId());
            ::kill(pid, SIGINT);
            // However late the echo to the group comes, it is the same request.
            const QDeadlineTimer deadline(30000);
            while (groupLate && !err.contains("interrupting the run") && !deadline.hasExpired()
                   && process.state() == QProcess::Running) {
                process.waitForReadyRead(100);
                err += process.readAllStandardError();
            }
            ::kill(-pid, SIGINT);
        }
        QVERIFY(process.state() == QProcess::NotRunning || process.waitForFinished(30000));
        err += process.readAllStandardError();
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QVERIFY2(process.exitCode() == 130, err.constData());
        QVERIFY2(err.contains("interrupting the run") && !err.contains("stopped waiting"), err.constData());
        QCOMPARE(err.count("interrupting the run"), 1);
    }
    // The run was interrupted, not abandoned: the context is idle and kept its state.
    const CliRun after = cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("echo $kept")});
    QVERIFY2(after.exitCode == 0, qPrintable(after.describe()));
    QCOMPARE(after.out, QByteArray("5\n"));
}

void tst_Cli::secondCtrlCStopsWaiting()
{
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    const QString id = newContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());

    // A run that shrugs off the interrupt: the client must not wait for the server to kill it.
    QProcess process;
    prepare(process, {QStringLiteral("--data-dir"), m_server.dataDir(), QStringLiteral("run"),
                      QStringLiteral("--context"), id, QStringLiteral("trap '' INT; echo ready; sleep 60")});
    process.start();
    QVERIFY(process.waitForStarted(10000));
    QByteArray seen;
    QVERIFY(waitForOutput(process, seen, [](const QByteArray &text) { return text.contains("ready\n"); }));

    ::kill(pid_t(process.processId()), SIGINT);
    QByteArray err;
    const QDeadlineTimer deadline(30000);
    while (!err.contains("interrupting the run") && !deadline.hasExpired() && process.state() == QProcess::Running) {
        process.waitForReadyRead(100);
        err += process.readAllStandardError();
    }
    QVERIFY2(err.contains("interrupting the run"), err.constData());
    // The second from another process, as a second Ctrl-C is another request (the same sender
    // again would be the echo of the first one to the process group, as timeout(1) sends it).
    QCOMPARE(QProcess::execute(QStringLiteral("/bin/sh"),
                               {QStringLiteral("-c"), QStringLiteral("kill -INT %1").arg(process.processId())}),
             0);
    QVERIFY(process.waitForFinished(30000));
    err += process.readAllStandardError();
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 130);
    QVERIFY2(err.contains("stopped waiting; execution "), err.constData());
    QVERIFY(err.contains("may still be running"));

    QCOMPARE(cli({QStringLiteral("contexts"), QStringLiteral("rm"), id}).exitCode, 0);
}

void tst_Cli::timeoutExitsWith124()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    const CliRun run = cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("--timeout"),
                            QStringLiteral("0.5"), QStringLiteral("import time\ny = 1\ntime.sleep(60)")});
    QVERIFY2(run.exitCode == 124, qPrintable(run.describe()));
    QVERIFY(run.err.contains("Timeout"));
    // The interrupt was enough: the context keeps what the run did before it.
    const CliRun after = cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("print(y)")});
    QCOMPARE(after.out, QByteArray("1\n"));
}

void tst_Cli::executionEnvReachesOnlyItsRun()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    const QString code = QStringLiteral("import os; print(os.environ.get('CLI_RUN_ONLY'))");
    const CliRun with = cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("-e"),
                             QStringLiteral("CLI_RUN_ONLY=a=b"), code});
    QVERIFY2(with.exitCode == 0, qPrintable(with.describe()));
    QCOMPARE(with.out, QByteArray("a=b\n"));
    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, code}).out, QByteArray("None\n"));
}

void tst_Cli::runJsonIsTheExecutionDocument()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const CliRun ok = cli({QStringLiteral("--json"), QStringLiteral("run"), QStringLiteral("-l"),
                           QStringLiteral("python"), QStringLiteral("print('hi')\n6 * 7")});
    QVERIFY2(ok.exitCode == 0, qPrintable(ok.describe()));
    const QJsonObject document = parseJson(ok.out).object();
    QCOMPARE(document.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(document.value(QStringLiteral("stdout")).toString(), QStringLiteral("hi\n"));
    QCOMPARE(document.value(QStringLiteral("result")).toObject().value(QStringLiteral("text/plain")).toString(),
             QStringLiteral("42"));
    QVERIFY(!document.value(QStringLiteral("events")).toArray().isEmpty());

    const CliRun error = cli({QStringLiteral("--json"), QStringLiteral("run"), QStringLiteral("-l"),
                              QStringLiteral("python"), QStringLiteral("1 / 0")});
    QCOMPARE(error.exitCode, 1);
    const QJsonObject failed = parseJson(error.out).object();
    QCOMPARE(failed.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
    QCOMPARE(failed.value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(),
             QStringLiteral("ZeroDivisionError"));
}

void tst_Cli::refusedRunsAreReported_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");

    QTest::newRow("unknown context") << QStringList{"run", "--context", "no-such-context", "1"} << 5
                                     << "no-such-context";
    QTest::newRow("unknown language") << QStringList{"run", "-l", "cobol", "1"} << 5 << "unknown language \"cobol\"";
    QTest::newRow("unknown workspace") << QStringList{"-w", "no-such-workspace", "contexts", "ls"} << 5
                                       << "no-such-workspace";
    // An extension that no language of the server claims is the user's to fix.
    QTest::newRow("no language for the extension") << QStringList{"run", "-f", "%FILE%"} << 2
                                                   << "no language on the server runs .zzz files";
}

void tst_Cli::refusedRunsAreReported()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const QString file = m_scratch.filePath(QStringLiteral("code.zzz"));
    writeFile(file, "1\n");
    arguments.replaceInStrings(QStringLiteral("%FILE%"), file);

    const CliRun run = cli(arguments);
    QVERIFY2(run.exitCode == exitCode, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(message.toUtf8()), qPrintable(run.describe()));
    QVERIFY(run.out.isEmpty());
}

// --- contexts, env, files, history, workspaces -----------------------------------------------

// A background job of a run writes after the run ended: `contexts output` prints it, each
// stream to its own fd, and --after skips what was seen.
void tst_Cli::contextsOutputPrintsWhatCameBetweenRuns()
{
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    const QString id = newContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    // The job writes only once the run has ended (the test says so with a file), so its output
    // is between runs however the machine schedules it.
    const QString gate = QStringLiteral("between-runs-%1").arg(id);
    const CliRun run = cli({QStringLiteral("run"), QStringLiteral("--context"), id,
                            QStringLiteral("(while [ ! -e %1 ]; do sleep 0.05; done; echo late; echo warned >&2) &")
                                    .arg(gate)});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(!run.out.contains("late"));
    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("put"), QStringLiteral("-"), gate}).exitCode, 0);

    const QStringList output{QStringLiteral("contexts"), QStringLiteral("output"), id};
    CliRun shown;
    QTRY_VERIFY_WITH_TIMEOUT((shown = cli(output)).err == "warned\n", 10000);
    QVERIFY2(shown.exitCode == 0 && shown.out == "late\n", qPrintable(shown.describe()));

    const CliRun rest = cli(output + QStringList{QStringLiteral("--after"), QStringLiteral("1")});
    QVERIFY2(rest.exitCode == 0 && rest.out.isEmpty() && rest.err == "warned\n", qPrintable(rest.describe()));
    const CliRun json = cli(QStringList{QStringLiteral("--json")} + output);
    QCOMPARE(json.exitCode, 0);
    const QJsonObject document = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(document.value(QStringLiteral("entries")).toArray().size(), 2);
    QCOMPARE(document.value(QStringLiteral("last_seq")).toInteger(), 2);

    const CliRun unknown = cli({QStringLiteral("contexts"), QStringLiteral("output"), QStringLiteral("nope")});
    QVERIFY2(unknown.exitCode == 5, qPrintable(unknown.describe()));
}

void tst_Cli::contextsOutputAfterStartsWithWholeLines()
{
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    const QString id = newContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    // Once the run has ended, half a line; then (once the test says so) the rest and one more
    // line: two entries. The files the test puts are the job's cues, so nothing hangs on timing.
    const QString start = QStringLiteral("whole-lines-start-%1").arg(id);
    const QString gate = QStringLiteral("whole-lines-%1").arg(id);
    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id,
                  QStringLiteral("(while [ ! -e %1 ]; do sleep 0.05; done; printf 'one '; "
                                 "while [ ! -e %2 ]; do sleep 0.05; done; printf 'two\\nthree\\n') &")
                          .arg(start, gate)})
                     .exitCode,
             0);
    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("put"), QStringLiteral("-"), start}).exitCode, 0);
    const QStringList output{QStringLiteral("contexts"), QStringLiteral("output"), id};
    QJsonArray entries;
    QTRY_VERIFY_WITH_TIMEOUT(!(entries = parseJson(cli(QStringList{QStringLiteral("--json")} + output).out)
                                                 .object().value(QStringLiteral("entries")).toArray()).isEmpty(),
                             10000);
    QCOMPARE(entries.size(), 1);
    const QString first = QString::number(entries.first().toObject().value(QStringLiteral("seq")).toInteger());
    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("put"), QStringLiteral("-"), gate}).exitCode, 0);
    QTRY_COMPARE_WITH_TIMEOUT(cli(output).out, QByteArray("one two\nthree\n"), 10000);

    // After the first entry: its line is completed from the start, then what came after it.
    const CliRun rest = cli(output + QStringList{QStringLiteral("--after"), first});
    QVERIFY2(rest.exitCode == 0 && rest.out == "one two\nthree\n", qPrintable(rest.describe()));
    // --json is the entries after SEQ, exactly (the job's write may be read in one piece or two).
    const QJsonObject document = parseJson(cli(QStringList{QStringLiteral("--json")} + output
                                               + QStringList{QStringLiteral("--after"), first}).out).object();
    QString afterFirst;
    for (const QJsonValue &entry : document.value(QStringLiteral("entries")).toArray()) {
        QVERIFY(entry.toObject().value(QStringLiteral("seq")).toInteger() > first.toLongLong());
        afterFirst += entry.toObject().value(QStringLiteral("event")).toObject().value(QStringLiteral("text")).toString();
    }
    QCOMPARE(afterFirst, QStringLiteral("two\nthree\n"));
    // After the last entry: nothing yet.
    const QString last = QString::number(document.value(QStringLiteral("last_seq")).toInteger());
    const CliRun none = cli(output + QStringList{QStringLiteral("--after"), last});
    QVERIFY2(none.exitCode == 0 && none.out.isEmpty() && none.err.isEmpty(), qPrintable(none.describe()));
}

void tst_Cli::contextsNewLsRestartRm()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"), {QStringLiteral("--name"), QStringLiteral("analysis")});
    QVERIFY(!id.isEmpty());

    const CliRun listed = cli({QStringLiteral("contexts"), QStringLiteral("ls")});
    QCOMPARE(listed.exitCode, 0);
    QVERIFY(listed.out.startsWith("ID "));
    const QRegularExpression row(QStringLiteral("^%1\\s+python\\s+\\w+\\s+0\\s+analysis$").arg(id),
                                 QRegularExpression::MultilineOption);
    QVERIFY2(row.match(QString::fromUtf8(listed.out)).hasMatch(), listed.out.constData());

    const CliRun filtered = cli({QStringLiteral("contexts"), QStringLiteral("ls"), QStringLiteral("-l"), QStringLiteral("bash")});
    QCOMPARE(filtered.exitCode, 0);
    QVERIFY(!filtered.out.contains(id.toUtf8()));

    // The language may also be the one argument.
    const CliRun second = cli({QStringLiteral("contexts"), QStringLiteral("new"), QStringLiteral("python")});
    QVERIFY2(second.exitCode == 0, qPrintable(second.describe()));
    const QString secondId = QString::fromUtf8(second.out).trimmed();
    QVERIFY(!secondId.isEmpty() && secondId != id);
    const QRegularExpression secondRow(QStringLiteral("^%1\\s+python\\s").arg(secondId),
                                       QRegularExpression::MultilineOption);
    QVERIFY(secondRow.match(QString::fromUtf8(cli({QStringLiteral("contexts"), QStringLiteral("ls")}).out)).hasMatch());
    QCOMPARE(cli({QStringLiteral("contexts"), QStringLiteral("rm"), secondId}).exitCode, 0);

    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("x = 1")}).exitCode, 0);
    QCOMPARE(cli({QStringLiteral("contexts"), QStringLiteral("restart"), id}).exitCode, 0);
    const CliRun gone = cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("x")});
    QCOMPARE(gone.exitCode, 1);
    QVERIFY(gone.err.contains("NameError"));

    QCOMPARE(cli({QStringLiteral("contexts"), QStringLiteral("rm"), id}).exitCode, 0);
    QVERIFY(!cli({QStringLiteral("contexts"), QStringLiteral("ls")}).out.contains(id.toUtf8()));
    const CliRun again = cli({QStringLiteral("contexts"), QStringLiteral("rm"), id});
    QVERIFY2(again.exitCode == 5, qPrintable(again.describe()));
    QVERIFY(again.err.contains(id.toUtf8()));
}

void tst_Cli::effectiveEnvIsWhatTheRunGets()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    QCOMPARE(cli({QStringLiteral("env"), QStringLiteral("set"), QStringLiteral("--context"), id, QStringLiteral("LAYERED=yes")}).exitCode, 0);
    const CliRun shown = cli({QStringLiteral("--json"), QStringLiteral("env"), QStringLiteral("show"), QStringLiteral("--context"),
                              id, QStringLiteral("--effective")});
    QVERIFY2(shown.exitCode == 0, qPrintable(shown.describe()));
    const QJsonObject effective = parseJson(shown.out).object().value(QStringLiteral("effective")).toObject();
    const CliRun run = cli({QStringLiteral("run"), QStringLiteral("--context"), id,
                            QStringLiteral("import os, json; print(json.dumps(dict(os.environ)))")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    const QJsonObject real = parseJson(run.out).object();
    QVERIFY2(!real.isEmpty(), run.out.constData());
    // What every worker gets, whatever the server's own environment says (a terminal's TERM).
    QCOMPARE(effective.value(QStringLiteral("TERM")).toString(), QStringLiteral("dumb"));
    QCOMPARE(effective.value(QStringLiteral("REPLHOST_CONTEXT_ID")).toString(), id);
    QCOMPARE(effective.value(QStringLiteral("LAYERED")).toString(), QStringLiteral("yes"));
    for (auto it = effective.begin(); it != effective.end(); ++it)
        QVERIFY2(real.value(it.key()) == it.value(), qPrintable(it.key() + QStringLiteral(": shown ") + it.value().toString()
                                                                + QStringLiteral(", the run has ") + real.value(it.key()).toString()));
    // The text form says the same.
    const CliRun text = cli({QStringLiteral("env"), QStringLiteral("show"), QStringLiteral("--context"), id, QStringLiteral("--effective")});
    QVERIFY2(text.out.contains("\nTERM=dumb\n") && text.out.contains("REPLHOST_CONTEXT_ID=" + id.toUtf8() + "\n"),
             text.out.constData());
}

void tst_Cli::envLayersReachARun()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QStringList ws{QStringLiteral("-w"), QStringLiteral("env-test")};
    QCOMPARE(cli({QStringLiteral("workspaces"), QStringLiteral("new"), QStringLiteral("env-test")}).exitCode, 0);
    QCOMPARE(cli(ws + QStringList{"env", "set", "WS_ONLY=ws", "SHARED=from-workspace"}).exitCode, 0);
    const QString id = newContext(QStringLiteral("python"), ws);
    QVERIFY(!id.isEmpty());
    QCOMPARE(cli(ws + QStringList{"env", "set", "--context", id, "SHARED=from-context", "CTX_ONLY=ctx"}).exitCode, 0);

    const QString show = QStringLiteral(
            "import os; print(*(os.environ.get(k) for k in ('WS_ONLY', 'SHARED', 'CTX_ONLY')))");
    auto run = [&] { return cli(ws + QStringList{QStringLiteral("run"), QStringLiteral("--context"), id, show}); };
    QCOMPARE(run().out, QByteArray("ws from-context ctx\n"));

    const CliRun workspaceLayer = cli(ws + QStringList{"env", "show"});
    QCOMPARE(workspaceLayer.out, QByteArray("SHARED=from-workspace\nWS_ONLY=ws\n"));
    const CliRun effective = cli(ws + QStringList{"env", "show", "--context", id, "--effective"});
    QVERIFY(effective.out.contains("\nSHARED=from-context\n"));
    QVERIFY(effective.out.contains("\nWS_ONLY=ws\n"));

    QCOMPARE(cli(ws + QStringList{"env", "unset", "--context", id, "WS_ONLY"}).exitCode, 0);
    QCOMPARE(run().out, QByteArray("None from-context ctx\n"));
    QCOMPARE(cli(ws + QStringList{"env", "show", "--context", id}).out,
             QByteArray("CTX_ONLY=ctx\nSHARED=from-context\nunset WS_ONLY\n"));

    QCOMPARE(cli(ws + QStringList{"env", "clear", "--context", id, "SHARED", "WS_ONLY"}).exitCode, 0);
    QCOMPARE(run().out, QByteArray("ws from-workspace ctx\n"));

    QCOMPARE(cli({QStringLiteral("workspaces"), QStringLiteral("rm"), QStringLiteral("env-test"),
                  QStringLiteral("--purge")}).exitCode, 0);
}

void tst_Cli::filesRoundTripBinaryContent()
{
    QByteArray content;
    for (int i = 0; i < 4; ++i) {
        for (int byte = 0; byte < 256; ++byte)
            content.append(char(byte));
    }
    for (int i = 0; i < 4096; ++i)
        content.append(char(QRandomGenerator::global()->bounded(256)));
    const QString local = m_scratch.filePath(QStringLiteral("blob.bin"));
    writeFile(local, content);

    const CliRun put = cli({QStringLiteral("files"), QStringLiteral("put"), local, QStringLiteral("cli/data/blob.bin")});
    QVERIFY2(put.exitCode == 0, qPrintable(put.describe()));

    const CliRun listed = cli({QStringLiteral("files"), QStringLiteral("ls"), QStringLiteral("cli/data")});
    QCOMPARE(listed.exitCode, 0);
    const QRegularExpression row(QStringLiteral("^\\S+\\s+%1\\s+\\S+\\s+blob\\.bin$").arg(content.size()),
                                 QRegularExpression::MultilineOption);
    QVERIFY2(row.match(QString::fromUtf8(listed.out)).hasMatch(), listed.out.constData());
    QVERIFY(cli({QStringLiteral("files"), QStringLiteral("ls"), QStringLiteral("cli")}).out.contains(" data/\n"));

    const QString copy = m_scratch.filePath(QStringLiteral("blob.copy"));
    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("get"), QStringLiteral("cli/data/blob.bin"), copy}).exitCode, 0);
    QCOMPARE(readFile(copy), content);

    // A directory receives the file under its own name.
    const QString into = m_scratch.filePath(QStringLiteral("into"));
    QDir().mkpath(into);
    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("get"), QStringLiteral("cli/data/blob.bin"), into}).exitCode, 0);
    QCOMPARE(readFile(QDir(into).filePath(QStringLiteral("blob.bin"))), content);

    const CliRun toStdout = cli({QStringLiteral("files"), QStringLiteral("get"), QStringLiteral("cli/data/blob.bin")});
    QCOMPARE(toStdout.exitCode, 0);
    QCOMPARE(toStdout.out, content);

    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("put"), QStringLiteral("-"), QStringLiteral("cli/stdin.bin")},
                 content).exitCode,
             0);
    QCOMPARE(cli({QStringLiteral("files"), QStringLiteral("get"), QStringLiteral("cli/stdin.bin")}).out, content);

    const CliRun json = cli({QStringLiteral("--json"), QStringLiteral("files"), QStringLiteral("get"),
                             QStringLiteral("cli/stdin.bin"), m_scratch.filePath(QStringLiteral("json.bin"))});
    QCOMPARE(json.exitCode, 0);
    QCOMPARE(parseJson(json.out).object().value(QStringLiteral("size")).toInteger(), content.size());
}

void tst_Cli::filesRefusalsAreReported_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");

    QTest::newRow("missing remote file") << QStringList{"files", "get", "no/such/file"} << 5 << "no/such/file";
    QTest::newRow("path outside the workspace") << QStringList{"files", "get", "../../../etc/passwd"} << 5 << "..";
    QTest::newRow("missing local file") << QStringList{"files", "put", "/nonexistent/local", "x"} << 1
                                        << "cannot read /nonexistent/local";
    QTest::newRow("unwritable local file") << QStringList{"files", "get", "cli/stdin.bin", "/nonexistent/dir/x"} << 1
                                           << "cannot write /nonexistent/dir/x";
}

void tst_Cli::filesRefusalsAreReported()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const CliRun run = cli(arguments);
    QVERIFY2(run.exitCode == exitCode, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(message.toUtf8()), qPrintable(run.describe()));
    QVERIFY(run.out.isEmpty());
}

void tst_Cli::historyPagesNewestFirst()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    for (int i = 0; i < 5; ++i)
        QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("x = %1").arg(i)}).exitCode, 0);
    const QStringList history{QStringLiteral("history"), QStringLiteral("--context"), id};

    const CliRun first = cli(history + QStringList{"-n", "2"});
    QCOMPARE(first.exitCode, 0);
    QList<QByteArray> lines = first.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines[0].startsWith("SEQ"));
    QVERIFY(lines[1].endsWith("x = 4"));
    QVERIFY(lines[2].endsWith("x = 3"));
    const QRegularExpression more(QStringLiteral("--before (\\S+)"));
    const QRegularExpressionMatch cursor = more.match(QString::fromUtf8(first.err));
    QVERIFY2(cursor.hasMatch(), first.err.constData());

    const CliRun second = cli(history + QStringList{"-n", "2", "--before", cursor.captured(1)});
    lines = second.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines[1].endsWith("x = 2"));
    QVERIFY(lines[2].endsWith("x = 1"));

    const CliRun all = cli(history + QStringList{"-n", "2", "--all"});
    QCOMPARE(all.out.trimmed().split('\n').size(), 6);
    QVERIFY(all.err.isEmpty());

    const QJsonObject page = parseJson(cli(QStringList{"--json"} + history + QStringList{"-n", "2"}).out).object();
    QCOMPARE(page.value(QStringLiteral("executions")).toArray().size(), 2);
    QVERIFY(page.value(QStringLiteral("next")).isString());
    const QJsonObject everything = parseJson(cli(QStringList{"--json"} + history + QStringList{"--all", "-n", "2"}).out).object();
    const QJsonArray runs = everything.value(QStringLiteral("executions")).toArray();
    QCOMPARE(runs.size(), 5);
    QCOMPARE(runs.first().toObject().value(QStringLiteral("code")).toString(), QStringLiteral("x = 4"));
    QVERIFY(everything.value(QStringLiteral("next")).isNull());
}

void tst_Cli::historyOutOfItsBoundsIsAUsageError_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("message");
    // The client sees the first, the server the others: the same exit status either way.
    QTest::newRow("-n 0") << QStringList{"-n", "0"} << "--limit takes a whole number of runs from 1";
    QTest::newRow("-n 501") << QStringList{"-n", "501"} << "500";
    QTest::newRow("--before 0") << QStringList{"--before", "0"} << "before";
}

void tst_Cli::historyOutOfItsBoundsIsAUsageError()
{
    QFETCH(QStringList, options);
    QFETCH(QString, message);
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    const QString id = newContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    const CliRun run = cli(QStringList{QStringLiteral("history"), QStringLiteral("--context"), id} + options);
    QVERIFY2(run.exitCode == 2, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(message.toUtf8()) && run.err.contains("replhost-cli history --help"), qPrintable(run.describe()));
    QVERIFY(run.out.isEmpty());
}

void tst_Cli::pluginsSaysWhereItLookedAndWhyAPluginWasRefused()
{
    ServerProcess server;
    const QString future = QStringLiteral(REPLHOST_FUTURE_SDK_FIXTURE_DIR);
    QVERIFY2(server.start({QStringLiteral("--plugin-path"), future}), qPrintable(server.error()));
    const CliRun run = runCli({QStringLiteral("--data-dir"), server.dataDir(), QStringLiteral("plugins")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    const QString text = QString::fromUtf8(run.out);
    const QStringList lines = text.split(QLatin1Char('\n'));
    // The search path in the server's order: the environment's directory, then --plugin-path,
    // then the standard ones; each with the number of plugin files found in it.
    const auto lineOf = [&lines](const QRegularExpression &pattern) {
        for (qsizetype i = 0; i < lines.size(); ++i) {
            if (pattern.match(lines.at(i)).hasMatch())
                return i;
        }
        return qsizetype(-1);
    };
    const qsizetype environment = lineOf(QRegularExpression(
            QStringLiteral("^environment +") + QRegularExpression::escape(ServerProcess::pluginDir()) + QStringLiteral(" +[1-9]")));
    const qsizetype configured = lineOf(QRegularExpression(
            QStringLiteral("^configured +") + QRegularExpression::escape(future) + QStringLiteral(" +1$")));
    const qsizetype local = lineOf(QRegularExpression(QStringLiteral("^local +/usr/local/lib/replhost/plugins +")));
    QVERIFY2(environment > 0 && configured > environment && local > configured, qPrintable(text));
    // The refused plugin, where it was found and why.
    const qsizetype refused = lineOf(QRegularExpression(
            QStringLiteral("^future +incompatible +configured +") + QRegularExpression::escape(future)
            + QStringLiteral("/\\S+ +built for replhost SDK 2\\.0.*rebuild")));
    QVERIFY2(refused > local, qPrintable(text));
    QVERIFY2(lineOf(QRegularExpression(QStringLiteral("^bash +loaded +environment +"))) > local, qPrintable(text));
}

void tst_Cli::languagesListsWhatCanRunAndPointsAtRefusedPlugins()
{
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_FUTURE_SDK_FIXTURE_DIR)}),
             qPrintable(server.error()));
    const CliRun run = runCli({QStringLiteral("--data-dir"), server.dataDir(), QStringLiteral("languages")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    const QString text = QString::fromUtf8(run.out);
    QVERIFY2(text.startsWith(QLatin1String("ID ")), qPrintable(text));
    QVERIFY2(text.contains(QRegularExpression(QStringLiteral("\\nbash +Bash +yes +\\S"))), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("future")), qPrintable(text));
    QVERIFY2(run.err.contains("1 plugin file was refused; 'replhost-cli plugins' says why"), qPrintable(run.describe()));
}

void tst_Cli::jsonOutputParses_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<bool>("isArray");

    QTest::newRow("contexts ls") << QStringList{"contexts", "ls"} << true;
    QTest::newRow("contexts new") << QStringList{"contexts", "new", "-l", "python"} << false;
    QTest::newRow("workspaces ls") << QStringList{"workspaces", "ls"} << true;
    QTest::newRow("workspaces where") << QStringList{"workspaces", "where", "default"} << false;
    QTest::newRow("env show") << QStringList{"env", "show"} << false;
    QTest::newRow("env set") << QStringList{"env", "set", "--context", "%CTX%", "A=1"} << false;
    QTest::newRow("files ls") << QStringList{"files", "ls"} << false;
    QTest::newRow("files put") << QStringList{"files", "put", "%FILE%", "json/put.txt"} << false;
    QTest::newRow("history") << QStringList{"history", "--context", "%CTX%"} << false;
    QTest::newRow("plugins") << QStringList{"plugins"} << false;
    QTest::newRow("languages") << QStringList{"languages"} << true;
    QTest::newRow("contexts restart") << QStringList{"contexts", "restart", "%CTX%"} << false;
    QTest::newRow("contexts rm") << QStringList{"contexts", "rm", "%CTX%"} << false;
}

void tst_Cli::jsonOutputParses()
{
    QFETCH(QStringList, arguments);
    QFETCH(bool, isArray);
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = newContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    const QString file = m_scratch.filePath(QStringLiteral("put.txt"));
    writeFile(file, "text\n");
    arguments.replaceInStrings(QStringLiteral("%CTX%"), id);
    arguments.replaceInStrings(QStringLiteral("%FILE%"), file);

    const CliRun run = cli(QStringList{QStringLiteral("--json")} + arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(run.out.endsWith('\n'));
    QCOMPARE(run.out.count('\n'), 1);  // one document, one line
    const QJsonDocument document = parseJson(run.out);
    QVERIFY2(!document.isNull(), run.out.constData());
    QCOMPARE(document.isArray(), isArray);
    QVERIFY(isArray || !document.object().isEmpty());
}

void tst_Cli::workspaceOptionScopesCommands()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const CliRun created = cli({QStringLiteral("--json"), QStringLiteral("workspaces"), QStringLiteral("new"),
                                QStringLiteral("cli-ws")});
    QVERIFY2(created.exitCode == 0, qPrintable(created.describe()));
    QCOMPARE(parseJson(created.out).object().value(QStringLiteral("name")).toString(), QStringLiteral("cli-ws"));
    QVERIFY(cli({QStringLiteral("workspaces"), QStringLiteral("ls")}).out.contains("\ncli-ws "));

    const QString id = newContext(QStringLiteral("python"), {QStringLiteral("--workspace"), QStringLiteral("cli-ws")});
    QVERIFY(!id.isEmpty());
    QVERIFY(cli({QStringLiteral("-w"), QStringLiteral("cli-ws"), QStringLiteral("contexts"), QStringLiteral("ls")})
                    .out.contains(id.toUtf8()));
    QVERIFY(!cli({QStringLiteral("contexts"), QStringLiteral("ls")}).out.contains(id.toUtf8()));
    // The context is not reachable through the default workspace.
    QCOMPARE(cli({QStringLiteral("run"), QStringLiteral("--context"), id, QStringLiteral("1")}).exitCode, 5);
    QCOMPARE(cli({QStringLiteral("-w"), QStringLiteral("cli-ws"), QStringLiteral("run"), QStringLiteral("--context"),
                  id, QStringLiteral("1")}).exitCode,
             0);

    QCOMPARE(cli({QStringLiteral("workspaces"), QStringLiteral("rm"), QStringLiteral("cli-ws")}).exitCode, 0);
    QVERIFY(!cli({QStringLiteral("workspaces"), QStringLiteral("ls")}).out.contains("\ncli-ws "));
}

void tst_Cli::workspacesMoveToAnotherServerByExportAndImport()
{
    REQUIRE_LANGUAGE(QStringLiteral("bash"));
    ServerProcess other;
    QVERIFY2(other.start({QStringLiteral("--instance-id"), QStringLiteral("other")}), qPrintable(other.error()));
    const QStringList onOther{QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:%1").arg(other.port()),
                              QStringLiteral("--token"), QString::fromUtf8(other.token())};
    QCOMPARE(cli({QStringLiteral("workspaces"), QStringLiteral("new"), QStringLiteral("leaving")}).exitCode, 0);
    const QString id = newContext(QStringLiteral("bash"), {QStringLiteral("-w"), QStringLiteral("leaving")});
    QVERIFY(!id.isEmpty());
    QCOMPARE(cli({QStringLiteral("-w"), QStringLiteral("leaving"), QStringLiteral("run"), QStringLiteral("--context"), id,
                  QStringLiteral("N=42; echo kept > note.txt")}).exitCode,
             0);

    const CliRun exported = cli({QStringLiteral("workspaces"), QStringLiteral("export"), QStringLiteral("leaving")});
    QVERIFY2(exported.exitCode == 0, qPrintable(exported.describe()));
    QVERIFY(exported.out.size() > 1024);  // a tar archive: 512-byte blocks
    // The name comes from the archive; "-" is stdin.
    const CliRun imported = runCli(onOther + QStringList{QStringLiteral("workspaces"), QStringLiteral("import"), QStringLiteral("-")},
                                   exported.out);
    QVERIFY2(imported.exitCode == 0, qPrintable(imported.describe()));
    QVERIFY2(imported.out.contains("imported leaving with 1 context(s) on other"), imported.out.constData());
    const CliRun renamed = runCli(onOther + QStringList{QStringLiteral("--json"), QStringLiteral("workspaces"), QStringLiteral("import"),
                                                         QStringLiteral("-"), QStringLiteral("--name"), QStringLiteral("copy")},
                                  exported.out);
    QCOMPARE(renamed.exitCode, 5);  // its context ids are on that server already: refused whole

    const CliRun run = runCli(onOther + QStringList{QStringLiteral("-w"), QStringLiteral("leaving"), QStringLiteral("run"),
                                                     QStringLiteral("--context"), id, QStringLiteral("echo $N $(cat note.txt)")});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    QCOMPARE(run.out, QByteArray("42 kept\n"));
    const CliRun where = runCli(onOther + QStringList{QStringLiteral("workspaces"), QStringLiteral("where"), QStringLiteral("leaving")});
    QCOMPARE(where.out, QByteArray("other\n"));
    QCOMPARE(cli({QStringLiteral("workspaces"), QStringLiteral("rm"), QStringLiteral("leaving"), QStringLiteral("--purge")}).exitCode, 0);
}

// --- Finding the server ---------------------------------------------------------------------

void tst_Cli::serverWritesAndRemovesItsUrlFile()
{
    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QString path = QDir(server.dataDir()).filePath(QStringLiteral("server.json"));
    const QJsonObject file = parseJson(readFile(path)).object();
    QCOMPARE(file.value(QStringLiteral("url")).toString(), QStringLiteral("http://127.0.0.1:%1").arg(server.port()));
    QCOMPARE(file.value(QStringLiteral("pid")).toInteger(), server.pid());

    QCOMPARE(server.stop(), 0);
    QVERIFY(!QFile::exists(path));
    QVERIFY(QFile::exists(QDir(server.dataDir()).filePath(QStringLiteral("token"))));
}

void tst_Cli::discoveryFollowsTheServersDataDirRule_data()
{
    QTest::addColumn<Environment>("environment");
    QTest::addColumn<QString>("dataDir");

    const QString root = m_scratch.filePath(QStringLiteral("discovery"));
    QTest::newRow("REPLHOST_DATA_DIR") << Environment{{"REPLHOST_DATA_DIR", root + "/explicit"}}
                                       << root + "/explicit";
    QTest::newRow("XDG_DATA_HOME") << Environment{{"XDG_DATA_HOME", root + "/xdg"}} << root + "/xdg/replhost";
    QTest::newRow("HOME") << Environment{{"XDG_DATA_HOME", ""}, {"HOME", root + "/home"}}
                          << root + "/home/.local/share/replhost";
}

void tst_Cli::discoveryFollowsTheServersDataDirRule()
{
    QFETCH(Environment, environment);
    QFETCH(QString, dataDir);

    // The server picks its data dir by its own rule; the client, given the same environment and
    // no --data-dir, --url or --token, must arrive at the same place.
    ServerProcess server;
    QVERIFY2(server.startWithDefaultDataDir({}, environment), qPrintable(server.error()));
    QCOMPARE(server.dataDir(), dataDir);

    const CliRun run = runCli({QStringLiteral("--json"), QStringLiteral("workspaces"), QStringLiteral("ls")}, {},
                              environment);
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    const QString directory = parseJson(run.out).array().first().toObject().value(QStringLiteral("directory")).toString();
    QVERIFY2(directory.startsWith(dataDir), qPrintable(directory));
    server.stop();
}

void tst_Cli::urlAndTokenFromOptionsOrEnvironment_data()
{
    QTest::addColumn<bool>("asOptions");
    QTest::newRow("--url and --token") << true;
    QTest::newRow("REPLHOST_URL and REPLHOST_TOKEN") << false;
}

void tst_Cli::urlAndTokenFromOptionsOrEnvironment()
{
    QFETCH(bool, asOptions);
    // No data dir leads to the server here; only the URL and token given.
    const QStringList command{QStringLiteral("workspaces"), QStringLiteral("ls")};
    const CliRun run = asOptions
            ? runCli(QStringList{QStringLiteral("--url"), url() + QStringLiteral("/"), QStringLiteral("--token"),
                                 QString::fromUtf8(m_server.token())}
                     + command)
            : runCli(command, {},
                     {{QStringLiteral("REPLHOST_URL"), url()},
                      {QStringLiteral("REPLHOST_TOKEN"), QString::fromUtf8(m_server.token())}});
    QVERIFY2(run.exitCode == 0, qPrintable(run.describe()));
    QVERIFY(run.out.contains("default"));
}

void tst_Cli::urlFileProblemsAreReported_data()
{
    QTest::addColumn<QByteArray>("content");  // empty: no file
    QTest::addColumn<QString>("message");

    QTest::newRow("no URL file") << QByteArray() << "no running replhost-server found";
    QTest::newRow("not JSON") << QByteArray("http://127.0.0.1:1\n") << "is not a server URL file";
    QTest::newRow("no pid") << QByteArray("{\"url\":\"http://127.0.0.1:1\"}") << "is not a server URL file";
    QTest::newRow("stale: its process is gone") << QByteArray("{\"url\":\"%URL%\",\"pid\":%DEADPID%}")
                                                << "stale server URL file";
    QTest::newRow("a live process, but nobody listens")
            << QByteArray("{\"url\":\"http://127.0.0.1:%CLOSEDPORT%\",\"pid\":%OWNPID%}") << "cannot reach replhost-server";
}

void tst_Cli::urlFileProblemsAreReported()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, message);

    const QString directory = copiedDataDir(false, true);
    if (!content.isEmpty()) {
        const qint64 dead = deadPid();
        content.replace("%URL%", url().toUtf8())
                .replace("%DEADPID%", QByteArray::number(dead))
                .replace("%CLOSEDPORT%", QByteArray::number(closedPort()))
                .replace("%OWNPID%", QByteArray::number(QCoreApplication::applicationPid()));
        writeFile(QDir(directory).filePath(QStringLiteral("server.json")), content);
        if (message.startsWith(QLatin1String("stale")))
            message += QStringLiteral(" %1: it names process %2, which is not running")
                               .arg(QDir(directory).filePath(QStringLiteral("server.json")))
                               .arg(dead);
    }
    const CliRun run = runCli({QStringLiteral("--data-dir"), directory, QStringLiteral("contexts"), QStringLiteral("ls")});
    QVERIFY2(run.exitCode == 3, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(message.toUtf8()), qPrintable(run.describe()));
    QVERIFY(run.out.isEmpty());
}

void tst_Cli::wrongOrMissingTokenExitsWith4_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<Environment>("environment");
    QTest::addColumn<QByteArray>("tokenFile");  // empty: none
    QTest::addColumn<QString>("message");

    const QString wrong = QStringLiteral("0123456789abcdef0123456789abcdef");
    QTest::newRow("--token") << QStringList{"--token", wrong} << Environment{} << QByteArray()
                             << "refused the token from --token";
    QTest::newRow("REPLHOST_TOKEN") << QStringList{} << Environment{{"REPLHOST_TOKEN", wrong}} << QByteArray()
                                    << "refused the token from REPLHOST_TOKEN";
    QTest::newRow("token file") << QStringList{} << Environment{} << wrong.toUtf8() + "\n"
                                << "refused the token from ";
    QTest::newRow("no token anywhere") << QStringList{} << Environment{} << QByteArray() << "no token:";
}

void tst_Cli::wrongOrMissingTokenExitsWith4()
{
    QFETCH(QStringList, arguments);
    QFETCH(Environment, environment);
    QFETCH(QByteArray, tokenFile);
    QFETCH(QString, message);

    const QString directory = copiedDataDir(true, false);
    if (!tokenFile.isEmpty())
        writeFile(QDir(directory).filePath(QStringLiteral("token")), tokenFile);
    const CliRun run = runCli(QStringList{QStringLiteral("--data-dir"), directory} + arguments
                                      + QStringList{QStringLiteral("contexts"), QStringLiteral("ls")},
                              {}, environment);
    QVERIFY2(run.exitCode == 4, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(message.toUtf8()), qPrintable(run.describe()));
    QVERIFY(run.out.isEmpty());
}

void tst_Cli::unreachableServerExitsWith3()
{
    const QString closed = QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
    const CliRun run = runCli({QStringLiteral("--url"), closed, QStringLiteral("--token"),
                               QStringLiteral("0123456789abcdef0123456789abcdef"), QStringLiteral("run"),
                               QStringLiteral("-l"), QStringLiteral("python"), QStringLiteral("1")});
    QVERIFY2(run.exitCode == 3, qPrintable(run.describe()));
    QVERIFY2(run.err.contains(QStringLiteral("cannot reach replhost-server at %1 (from --url)").arg(closed).toUtf8()),
             qPrintable(run.describe()));
}

QTEST_GUILESS_MAIN(tst_Cli)
#include "tst_cli.moc"
