// SPDX-License-Identifier: Apache-2.0
// How replhost-server starts as a user's service starts it: --port auto gives each data
// directory (each user) a port of its own, recorded in server.json and kept across restarts
// while it is free; a configured port is never swapped for another. The banner shows the token
// only on a terminal (a pseudo-terminal here); anywhere else, as in the journal, it says where
// the token is. A real replhost-server with the build tree's plugins.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

namespace {

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The port in <data dir>/server.json's URL, or 0.
quint16 urlFilePort(const QString &dataDir)
{
    const QJsonObject urlFile = QJsonDocument::fromJson(readFile(QDir(dataDir).filePath(QStringLiteral("server.json")))).object();
    static const QRegularExpression port(QStringLiteral("^http://127\\.0\\.0\\.1:(\\d+)$"));
    const QRegularExpressionMatch match = port.match(urlFile.value(QLatin1String("url")).toString());
    return match.hasMatch() ? quint16(match.captured(1).toUInt()) : 0;
}

quint16 rememberedPort(const QString &dataDir)
{
    return quint16(readFile(QDir(dataDir).filePath(QStringLiteral("port"))).trimmed().toUInt());
}

const QStringList kAuto{QStringLiteral("--port"), QStringLiteral("auto")};

} // namespace

class tst_ServerStart : public QObject {
    Q_OBJECT

private slots:
    void autoPortIsFreeAndRecordedInServerJson();
    void autoPortIsKeptAcrossRestarts();
    void autoPortMovesWhenItsPortIsTaken();
    void twoDataDirectoriesGetPortsOfTheirOwn();
    void configuredPortIsNeverSwapped();
    void bannerOffATerminalSaysWhereTheTokenIs_data();
    void bannerOffATerminalSaysWhereTheTokenIs();
    void bannerOnATerminalShowsTheToken();

private:
    QTemporaryDir m_scratch;
};

void tst_ServerStart::autoPortIsFreeAndRecordedInServerJson()
{
    ServerProcess server;
    QVERIFY2(server.start(kAuto), qPrintable(server.error()));
    QVERIFY(server.port() != 0);
    QCOMPARE(urlFilePort(server.dataDir()), server.port());
    QCOMPARE(rememberedPort(server.dataDir()), server.port());
    QCOMPARE(ApiClient(server.port(), server.token()).get(QStringLiteral("/healthz")).status, 200);
}

void tst_ServerStart::autoPortIsKeptAcrossRestarts()
{
    const QString dataDir = m_scratch.filePath(QStringLiteral("kept"));
    ServerProcess first;
    QVERIFY2(first.start(kAuto, {}, dataDir), qPrintable(first.error()));
    const quint16 port = first.port();
    QCOMPARE(first.stop(), 0);

    ServerProcess again;
    QVERIFY2(again.start(kAuto, {}, dataDir), qPrintable(again.error()));
    QCOMPARE(again.port(), port);
    QCOMPARE(urlFilePort(dataDir), port);
}

void tst_ServerStart::autoPortMovesWhenItsPortIsTaken()
{
    const QString dataDir = m_scratch.filePath(QStringLiteral("moved"));
    ServerProcess first;
    QVERIFY2(first.start(kAuto, {}, dataDir), qPrintable(first.error()));
    const quint16 port = first.port();
    QCOMPARE(first.stop(), 0);

    // Somebody else listens there now.
    QTcpServer squatter;
    QVERIFY2(squatter.listen(QHostAddress::LocalHost, port), qPrintable(squatter.errorString()));
    ServerProcess again;
    QVERIFY2(again.start(kAuto, {}, dataDir), qPrintable(again.error()));
    QVERIFY(again.port() != 0 && again.port() != port);
    QCOMPARE(urlFilePort(dataDir), again.port());
    QCOMPARE(rememberedPort(dataDir), again.port());
    QVERIFY2(again.errors().contains(QByteArray::number(port) + ", this data directory's last, is not free"),
             again.errors().constData());
    QCOMPARE(ApiClient(again.port(), again.token()).get(QStringLiteral("/healthz")).status, 200);
}

void tst_ServerStart::twoDataDirectoriesGetPortsOfTheirOwn()
{
    // Two users' services, both with the unit's --port auto, running at once.
    ServerProcess alice;
    ServerProcess bob;
    QVERIFY2(alice.start(kAuto, {}, m_scratch.filePath(QStringLiteral("alice"))), qPrintable(alice.error()));
    QVERIFY2(bob.start(kAuto, {}, m_scratch.filePath(QStringLiteral("bob"))), qPrintable(bob.error()));
    QVERIFY(alice.port() != bob.port());
    QCOMPARE(urlFilePort(alice.dataDir()), alice.port());
    QCOMPARE(urlFilePort(bob.dataDir()), bob.port());
    QCOMPARE(ApiClient(alice.port(), alice.token()).get(QStringLiteral("/v1/info")).status, 200);
    QCOMPARE(ApiClient(bob.port(), bob.token()).get(QStringLiteral("/v1/info")).status, 200);
    QCOMPARE(ApiClient(bob.port(), alice.token()).get(QStringLiteral("/v1/info")).status, 401);
}

void tst_ServerStart::configuredPortIsNeverSwapped()
{
    QTcpServer squatter;
    QVERIFY(squatter.listen(QHostAddress::LocalHost, 0));
    const ServerProcess::Run run = ServerProcess::runOnce(
            {QStringLiteral("--port"), QString::number(squatter.serverPort()), QStringLiteral("--data-dir"),
             m_scratch.filePath(QStringLiteral("configured"))});
    QCOMPARE(run.exitCode, 1);
    QVERIFY(!run.out.contains("listening on"));
    QVERIFY(!QFile::exists(m_scratch.filePath(QStringLiteral("configured/port"))));
}

void tst_ServerStart::bannerOffATerminalSaysWhereTheTokenIs_data()
{
    QTest::addColumn<bool>("fromEnvironment");
    QTest::newRow("token file") << false;
    QTest::newRow("REPLHOST_TOKEN") << true;
}

void tst_ServerStart::bannerOffATerminalSaysWhereTheTokenIs()
{
    QFETCH(bool, fromEnvironment);
    const QString overrideToken = QStringLiteral("a-token-given-through-the-environment");
    QMap<QString, QString> environment;
    if (fromEnvironment)
        environment.insert(QStringLiteral("REPLHOST_TOKEN"), overrideToken);
    ServerProcess server;
    QVERIFY2(server.start({}, environment), qPrintable(server.error()));
    const QString tokenFile = QDir(server.dataDir()).filePath(QStringLiteral("token"));
    const QByteArray token = fromEnvironment ? overrideToken.toUtf8() : readFile(tokenFile).trimmed();
    QVERIFY(token.size() >= 16);
    QCOMPARE(server.token(), token);
    QCOMPARE(ApiClient(server.port(), token).get(QStringLiteral("/v1/info")).status, 200);

    QTRY_VERIFY_WITH_TIMEOUT(server.output().contains("E2B SDKs"), 10000);
    QCOMPARE(server.stop(), 0);
    const QByteArray out = server.output() + server.errors();
    QVERIFY2(!out.contains(token), out.constData());
    const QString text = QString::fromUtf8(out);
    const QString where = fromEnvironment ? QStringLiteral("$REPLHOST_TOKEN") : QStringLiteral("$(cat %1)").arg(tokenFile);
    if (fromEnvironment)
        QVERIFY2(text.contains(QLatin1String("\ntoken: from $REPLHOST_TOKEN  (not shown: standard output is not a terminal)\n")),
                 qPrintable(text));
    else
        QVERIFY2(text.contains(QStringLiteral("\ntoken: in %1  (new; not shown: standard output is not a terminal)\n").arg(tokenFile)),
                 qPrintable(text));
    // The examples read the token from where it is.
    QVERIFY2(text.contains(QStringLiteral("  TOKEN=") + where + QLatin1Char('\n')), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("/e2b/") + where + QLatin1Char('\n')), qPrintable(text));

    // What the example says, a shell does: the walk-through's first line gives the real token.
    if (!fromEnvironment) {
        QProcess shell;
        shell.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("TOKEN=%1; printf %s \"$TOKEN\"").arg(where)});
        QVERIFY(shell.waitForFinished(10000));
        QCOMPARE(shell.readAllStandardOutput(), token);
    }
}

void tst_ServerStart::bannerOnATerminalShowsTheToken()
{
    // The server's stdout is the slave side of a pseudo-terminal; stderr stays a pipe.
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    QVERIFY(master >= 0);
    QVERIFY(::grantpt(master) == 0 && ::unlockpt(master) == 0);
    const QByteArray slaveName = ::ptsname(master);
    QVERIFY(!slaveName.isEmpty());
    const QString dataDir = m_scratch.filePath(QStringLiteral("terminal"));

    QProcess server;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("REPLHOST_TOKEN"));
    server.setProcessEnvironment(environment);
    server.setProgram(ServerProcess::executable());
    server.setArguments({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--warm-pool"), QStringLiteral("0"),
                         QStringLiteral("--data-dir"), dataDir});
    server.setChildProcessModifier([slaveName] {
        const int slave = ::open(slaveName.constData(), O_RDWR | O_NOCTTY);
        if (slave >= 0)
            ::dup2(slave, STDOUT_FILENO);
    });
    server.start();
    QVERIFY(server.waitForStarted(10000));

    QByteArray seen;
    const QDeadlineTimer deadline(30000);
    while (!seen.contains("E2B SDKs") && !deadline.hasExpired() && server.state() == QProcess::Running) {
        pollfd ready{master, POLLIN, 0};
        if (::poll(&ready, 1, 100) <= 0)
            continue;
        char buffer[4096];
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n > 0)
            seen.append(buffer, n);
    }
    ::kill(pid_t(server.processId()), SIGTERM);
    QVERIFY(server.waitForFinished(15000));
    ::close(master);

    const QByteArray token = readFile(QDir(dataDir).filePath(QStringLiteral("token"))).trimmed();
    QVERIFY(token.size() >= 16);
    // A terminal turns "\n" into "\r\n".
    const QByteArray text = QByteArray(seen).replace("\r\n", "\n");
    QVERIFY2(text.contains("\ntoken: " + token + "  (new, saved in "), text.constData());
    QVERIFY2(text.contains("  TOKEN=" + token + "\n"), text.constData());
    QVERIFY2(text.contains("/e2b/" + token + "\n"), text.constData());
}

QTEST_GUILESS_MAIN(tst_ServerStart)
#include "tst_serverstart.moc"
