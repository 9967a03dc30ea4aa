// SPDX-License-Identifier: Apache-2.0
// replhost-cli answering a run's questions from its terminal: the real binary in a
// pseudo-terminal (python3-pexpect, terminaldriver.py) against a real replhost-server. The line
// typed is the answer, a password is not echoed, Ctrl-D is the end of input, Ctrl-C at the
// question interrupts the run and keeps the state, and a client whose input is not a terminal
// never waits.

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

QTEST_GUILESS_MAIN(tst_CliInput)
#include "tst_cliinput.moc"
