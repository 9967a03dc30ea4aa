// SPDX-License-Identifier: Apache-2.0
// The workbench process as its desktop session ends it: `replhost --serve` with code running
// (started through its HTTP API), then SIGTERM. The window asks before closing while code runs,
// but a signal is nobody who could answer: the process must end on its own, with the run
// interrupted and recorded, which a server opened on the same data directory then reads back.
#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

class tst_WorkbenchExit : public QObject {
    Q_OBJECT
private slots:
    void sigtermWhileCodeRunsEndsAndRecordsTheRun();
    void sigtermWhileTheStartErrorIsShownEnds();
};

void tst_WorkbenchExit::sigtermWhileCodeRunsEndsAndRecordsTheRun()
{
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        port = probe.serverPort();
    }

    QProcess workbench;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    environment.remove(QStringLiteral("REPLHOST_TOKEN"));
    workbench.setProcessEnvironment(environment);
    workbench.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    workbench.start(QStringLiteral(REPLHOST_WORKBENCH_EXECUTABLE),
                    {QStringLiteral("--serve"), QString::number(port), QStringLiteral("--data-dir"),
                     dataDir.path(), QStringLiteral("--plugin-path"), ServerProcess::pluginDir()});
    QVERIFY2(workbench.waitForStarted(10000), qPrintable(workbench.errorString()));
    auto killer = qScopeGuard([&workbench] {
        if (workbench.state() != QProcess::NotRunning) {
            workbench.kill();
            workbench.waitForFinished(5000);
        }
    });

    QFile tokenFile(QDir(dataDir.path()).filePath(QStringLiteral("token")));
    QTRY_VERIFY_WITH_TIMEOUT(tokenFile.exists() && tokenFile.size() > 0, 20000);
    QVERIFY(tokenFile.open(QIODevice::ReadOnly));
    const ApiClient api(port, tokenFile.readAll().trimmed());
    QTRY_VERIFY_WITH_TIMEOUT(api.get(QStringLiteral("/healthz")).status == 200, 20000);
    const QString why = api.missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));

    const QString context = api.createContext(QStringLiteral("python"));
    QVERIFY(!context.isEmpty());
    const std::unique_ptr<ApiClient::Stream> running = api.openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(context),
            {{QStringLiteral("code"), QStringLiteral("import time\ntry:\n    print('going', flush=True)\n"
                                                      "    time.sleep(60)\nfinally:\n"
                                                      "    print('tail', flush=True)")}});
    const std::optional<ApiClient::Event> first = running->next(20000);
    QVERIFY(first);
    const QString executionId = first->json().value(QStringLiteral("id")).toString();
    QVERIFY(!executionId.isEmpty());
    QString seen;
    while (!seen.endsWith(QLatin1Char('\n'))) {
        const std::optional<ApiClient::Event> event = running->next(20000);
        QVERIFY2(event, qPrintable(QStringLiteral("the output so far: ") + seen));
        if (event->type == "stream")
            seen += event->json().value(QStringLiteral("text")).toString();
    }
    QCOMPARE(seen, QStringLiteral("going\n"));

    QElapsedTimer timer;
    timer.start();
    QCOMPARE(::kill(pid_t(workbench.processId()), SIGTERM), 0);
    QVERIFY2(workbench.waitForFinished(15000), "the workbench did not end after SIGTERM");
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(workbench.exitStatus(), QProcess::NormalExit);
    QCOMPARE(workbench.exitCode(), 0);

    ServerProcess server;
    QVERIFY2(server.start({}, {}, dataDir.path()), qPrintable(server.error()));
    const ApiClient after(server.port(), server.token());
    const QJsonObject execution = after.get(QStringLiteral("/v1/executions/") + executionId).object();
    QCOMPARE(execution.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QCOMPARE(execution.value(QStringLiteral("stdout")).toString(), QStringLiteral("going\ntail\n"));
    QCOMPARE(execution.value(QStringLiteral("events")).toArray().last().toObject()
                     .value(QStringLiteral("type")).toString(),
             QStringLiteral("done"));
}

// The dialog that says why the workbench cannot start runs an event loop of its own; a signal
// must end it as it ends the window.
void tst_WorkbenchExit::sigtermWhileTheStartErrorIsShownEnds()
{
    QTemporaryDir parent;
    QVERIFY(parent.isValid());
    const QString notADirectory = QDir(parent.path()).filePath(QStringLiteral("file"));
    {
        QFile file(notADirectory);
        QVERIFY(file.open(QIODevice::WriteOnly));
    }

    QProcess workbench;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    workbench.setProcessEnvironment(environment);
    workbench.start(QStringLiteral(REPLHOST_WORKBENCH_EXECUTABLE),
                    {QStringLiteral("--data-dir"), notADirectory});
    workbench.setReadChannel(QProcess::StandardError);
    QVERIFY2(workbench.waitForStarted(10000), qPrintable(workbench.errorString()));
    auto killer = qScopeGuard([&workbench] {
        if (workbench.state() != QProcess::NotRunning) {
            workbench.kill();
            workbench.waitForFinished(5000);
        }
    });
    // The reason goes to stderr just before the dialog opens (after what Qt may say first).
    QByteArray said;
    while (!said.contains("replhost: cannot create the data directory") && workbench.waitForReadyRead(20000))
        said += workbench.readAllStandardError();
    QVERIFY2(said.contains("replhost: cannot create the data directory"), said.constData());

    QCOMPARE(::kill(pid_t(workbench.processId()), SIGTERM), 0);
    QVERIFY2(workbench.waitForFinished(15000), "the workbench did not end after SIGTERM");
    QCOMPARE(workbench.exitStatus(), QProcess::NormalExit);
    QCOMPARE(workbench.exitCode(), 1);
}

QTEST_GUILESS_MAIN(tst_WorkbenchExit)
#include "tst_workbenchexit.moc"
