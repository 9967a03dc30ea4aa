// SPDX-License-Identifier: Apache-2.0
// replhost-cli answering a run's questions from its terminal: the real binary in a
// pseudo-terminal (python3-pexpect, terminaldriver.py) against a real replhost-server. The line
// typed is the answer, a password is not echoed, Ctrl-D is the end of input, Ctrl-C at the
// question interrupts the run and keeps the state, and a client whose input is not a terminal
// never waits. Displays that change: at the terminal an update rewrites its display in place and
// clear_output clears, in a pipe each state is a line.

#include "apiclient.h"
#include "serverprocess.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#define REQUIRE_LANGUAGE(language)                                               \
    do {                                                                         \
        if (const QString why = client().missingLanguage(language); !why.isEmpty()) \
            QSKIP(qPrintable(why));                                              \
    } while (false)

class tst_CliInput : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void lineTypedAtTheTerminalIsTheAnswer_data();
    void lineTypedAtTheTerminalIsTheAnswer();
    void passwordIsNotEchoed();
    void ctrlDIsTheEndOfInput();
    void ctrlCAtTheQuestionInterruptsAndKeepsState();
    void clientInAPipeFindsTheEndOfInput();
    void changingDisplaysAtTheTerminal_data();
    void changingDisplaysAtTheTerminal();
    void changingDisplaysInAPipe_data();
    void changingDisplaysInAPipe();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    struct Terminal {
        int exitCode = -1;       // the driver's: 0 when every step happened
        QString output;          // what the terminal showed
        int status = -1;         // replhost-cli's exit status
        QByteArray err;
    };
    // replhost-cli `arguments` (after --data-dir) in a pseudo-terminal, typed at with `steps`.
    Terminal inTerminal(const QStringList &steps, const QStringList &arguments) const;
    QProcessEnvironment environment() const;

    ServerProcess m_server;
    QTemporaryDir m_scratch;
};

void tst_CliInput::initTestCase()
{
    QVERIFY(m_scratch.isValid());
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
}

QProcessEnvironment tst_CliInput::environment() const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"REPLHOST_URL", "REPLHOST_TOKEN", "REPLHOST_DATA_DIR"})
        env.remove(QString::fromLatin1(name));
    env.insert(QStringLiteral("XDG_DATA_HOME"), m_scratch.filePath(QStringLiteral("no-server-here")));
    return env;
}

tst_CliInput::Terminal tst_CliInput::inTerminal(const QStringList &steps, const QStringList &arguments) const
{
    QProcess driver;
    driver.setProcessEnvironment(environment());
    // Debian's Python, which has python3-pexpect, whatever python3 comes first on PATH.
    driver.start(QStringLiteral("/usr/bin/python3"),
                 QStringList{QStringLiteral(REPLHOST_TERMINAL_DRIVER)} + steps
                         + QStringList{QStringLiteral("--"), QStringLiteral(REPLHOST_CLI_EXECUTABLE),
                                       QStringLiteral("--data-dir"), m_server.dataDir()}
                         + arguments);
    Terminal terminal;
    if (!driver.waitForStarted(10000) || !driver.waitForFinished(180000)) {
        driver.kill();
        driver.waitForFinished(5000);
        return terminal;
    }
    terminal.exitCode = driver.exitCode();
    terminal.err = driver.readAllStandardError();
    const QJsonObject transcript = QJsonDocument::fromJson(driver.readAllStandardOutput()).object();
    terminal.output = transcript.value(QStringLiteral("output")).toString();
    terminal.status = transcript.value(QStringLiteral("status")).toInt(-1);
    return terminal;
}

void tst_CliInput::lineTypedAtTheTerminalIsTheAnswer_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("prompt");
    QTest::newRow("python") << "python" << "name = input('Name? ')\nprint('hello ' + name)" << "Name? ";
    QTest::newRow("bash") << "bash" << "read -r -p 'Name? ' name\necho \"hello $name\"" << "Name? ";
    QTest::newRow("perl") << "perl" << "print 'Name? ';\nmy $name = <STDIN>;\nprint \"hello $name\";" << "Name? ";
}

void tst_CliInput::lineTypedAtTheTerminalIsTheAnswer()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, prompt);
    REQUIRE_LANGUAGE(language);
    const Terminal terminal = inTerminal({QStringLiteral("expect:") + prompt, QStringLiteral("send:Ada Lovelace"),
                                          QStringLiteral("expect:hello Ada Lovelace")},
                                         {QStringLiteral("run"), QStringLiteral("-l"), language, code});
    QVERIFY2(terminal.exitCode == 0, terminal.err.constData());
    QCOMPARE(terminal.status, 0);
    QVERIFY2(terminal.output.endsWith(QStringLiteral("hello Ada Lovelace\n")), qPrintable(terminal.output));
}

void tst_CliInput::passwordIsNotEchoed()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const Terminal terminal = inTerminal(
            {QStringLiteral("expect:Password: "), QStringLiteral("send:s3cret-typed"), QStringLiteral("expect:length 12")},
            {QStringLiteral("run"), QStringLiteral("-l"), QStringLiteral("python"),
             QStringLiteral("import getpass\nprint('length', len(getpass.getpass()))")});
    QVERIFY2(terminal.exitCode == 0, terminal.err.constData());
    QCOMPARE(terminal.status, 0);
    QVERIFY2(!terminal.output.contains(QStringLiteral("s3cret-typed")), qPrintable(terminal.output));
}

void tst_CliInput::ctrlDIsTheEndOfInput()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const Terminal terminal = inTerminal(
            {QStringLiteral("expect:? "), QStringLiteral("ctrl-d"), QStringLiteral("expect:no more input")},
            {QStringLiteral("run"), QStringLiteral("-l"), QStringLiteral("python"),
             QStringLiteral("try:\n    input('? ')\nexcept EOFError:\n    print('no more input')")});
    QVERIFY2(terminal.exitCode == 0, terminal.err.constData());
    QCOMPARE(terminal.status, 0);
}

void tst_CliInput::ctrlCAtTheQuestionInterruptsAndKeepsState()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    QCOMPARE(client().runAndWait(id, QStringLiteral("kept = 41")).value(QStringLiteral("status")).toString(),
             QStringLiteral("ok"));
    const Terminal terminal = inTerminal({QStringLiteral("expect:waiting? "), QStringLiteral("ctrl-c")},
                                         {QStringLiteral("run"), QStringLiteral("--context"), id,
                                          QStringLiteral("input('waiting? ')")});
    QVERIFY2(terminal.exitCode == 0, terminal.err.constData());
    QCOMPARE(terminal.status, 130);
    QVERIFY2(terminal.output.contains(QStringLiteral("KeyboardInterrupt")), qPrintable(terminal.output));
    QCOMPARE(ApiClient::resultText(client().runAndWait(id, QStringLiteral("kept + 1"))), QStringLiteral("42"));
}

void tst_CliInput::clientInAPipeFindsTheEndOfInput()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    QProcess cli;
    cli.setProcessEnvironment(environment());
    cli.start(QStringLiteral(REPLHOST_CLI_EXECUTABLE),
              {QStringLiteral("--data-dir"), m_server.dataDir(), QStringLiteral("run"), QStringLiteral("-l"),
               QStringLiteral("python"), QStringLiteral("input('Name? ')")});
    QVERIFY(cli.waitForStarted(10000));
    cli.closeWriteChannel();
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 1);
    QVERIFY(cli.readAllStandardError().contains("EOFError"));
}

namespace {

// Rows of code whose displays change, with what a terminal and a pipe get.
void changingDisplayRows()
{
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("atTheTerminal");
    QTest::addColumn<QString>("inAPipe");
    const QString rewrite = QStringLiteral("\x1b[1A\r\x1b[J");
    QTest::newRow("a progress display")
            << "class P:\n    def __init__(self, n):\n        self.n = n\n"
               "    def __repr__(self):\n        return 'progress %d/3' % self.n\n"
               "h = display(P(0), display_id=True)\nfor i in range(1, 4):\n    h.update(P(i))\nprint('done')"
            << "progress 0/3\n" + rewrite + "progress 1/3\n" + rewrite + "progress 2/3\n" + rewrite
                       + "progress 3/3\ndone\n"
            << "progress 0/3\nprogress 1/3\nprogress 2/3\nprogress 3/3\ndone\n";
    QTest::newRow("clear_output")
            << "from IPython.display import clear_output\nprint('a')\nprint('b')\nclear_output()\nprint('done')"
            << "a\nb\n\x1b[2A\r\x1b[Jdone\n" << "a\nb\ndone\n";
}

} // namespace

void tst_CliInput::changingDisplaysAtTheTerminal_data()
{
    changingDisplayRows();
}

void tst_CliInput::changingDisplaysAtTheTerminal()
{
    QFETCH(QString, code);
    QFETCH(QString, atTheTerminal);
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const Terminal terminal = inTerminal({QStringLiteral("expect:done")},
                                         {QStringLiteral("run"), QStringLiteral("-l"), QStringLiteral("python"), code});
    QVERIFY2(terminal.exitCode == 0, terminal.err.constData());
    QCOMPARE(terminal.status, 0);
    QCOMPARE(terminal.output, atTheTerminal);
}

void tst_CliInput::changingDisplaysInAPipe_data()
{
    changingDisplayRows();
}

void tst_CliInput::changingDisplaysInAPipe()
{
    QFETCH(QString, code);
    QFETCH(QString, inAPipe);
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    QProcess cli;
    cli.setProcessEnvironment(environment());
    cli.start(QStringLiteral(REPLHOST_CLI_EXECUTABLE),
              {QStringLiteral("--data-dir"), m_server.dataDir(), QStringLiteral("run"), QStringLiteral("-l"),
               QStringLiteral("python"), code});
    QVERIFY(cli.waitForStarted(10000));
    cli.closeWriteChannel();
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(cli.readAllStandardOutput()), inAPipe);
}

QTEST_GUILESS_MAIN(tst_CliInput)
#include "tst_cliinput.moc"
