// SPDX-License-Identifier: Apache-2.0
// Durable contexts across server processes: a context outlives replhost-server, whether it was
// stopped or killed with SIGKILL, and comes back with its state on its next run; no worker
// outlives a killed server. Real replhost-server processes on one data directory, real workers
// in every language, spoken to with Poco.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

namespace {

constexpr int kWorkerTimeout = 60000;

QJsonObject firstEvent(const QJsonObject &execution, const QString &type)
{
    for (const QJsonValue &event : execution.value(QStringLiteral("events")).toArray()) {
        if (event.toObject().value(QStringLiteral("type")).toString() == type)
            return event.toObject();
    }
    return {};
}

void addLanguageColumns()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("define");
    QTest::addColumn<QString>("show");
    QTest::addColumn<QString>("expected");
}

// A language is one row: code that defines state, code that prints it, what it prints.
void addLanguageRow(const char *suffix, const QString &language, const QString &define,
                    const QString &show, const QString &expected)
{
    QTest::addRow("%s %s", qPrintable(language), suffix) << language << define << show << expected;
}

void addLanguageRows(const char *suffix)
{
    addLanguageRow(suffix, QStringLiteral("python"), QStringLiteral("x = 41"),
                   QStringLiteral("print(x + 1)"), QStringLiteral("42\n"));
    addLanguageRow(suffix, QStringLiteral("bash"), QStringLiteral("x=41"),
                   QStringLiteral("echo $((x + 1))"), QStringLiteral("42\n"));
    addLanguageRow(suffix, QStringLiteral("perl"), QStringLiteral("my $x = 41;"),
                   QStringLiteral("print $x + 1, \"\\n\";"), QStringLiteral("42\n"));
    addLanguageRow(suffix, QStringLiteral("javascript"), QStringLiteral("let x = 41"),
                   QStringLiteral("console.log(x + 1)"), QStringLiteral("42\n"));
    addLanguageRow(suffix, QStringLiteral("java"), QStringLiteral("int x = 41;"),
                   QStringLiteral("System.out.println(x + 1);"), QStringLiteral("42\n"));
}

} // namespace

class tst_DurableServer : public QObject {
    Q_OBJECT

private slots:
    void contextSurvivesAStoppedServer_data();
    void contextSurvivesAStoppedServer();
    void contextSurvivesAKilledServer_data();
    void contextSurvivesAKilledServer();
    void acknowledgedRunSurvivesAnImmediateKill_data();
    void acknowledgedRunSurvivesAnImmediateKill();
    void workersDieWithAKilledServer_data();
    void workersDieWithAKilledServer();
    void restorePolicyIsChosenAtCreation();
    void shellComesBackFromItsSnapshotAfterAKilledServer();
    void residencyFlagsAreChecked_data();
    void residencyFlagsAreChecked();
    void maxWorkersFlagEvictsTheLeastRecentlyUsed();

private:
    void survivesRestart(bool kill);
};

void tst_DurableServer::contextSurvivesAStoppedServer_data()
{
    addLanguageColumns();
    addLanguageRows("stopped");
}

void tst_DurableServer::contextSurvivesAStoppedServer()
{
    survivesRestart(false);
}

void tst_DurableServer::contextSurvivesAKilledServer_data()
{
    addLanguageColumns();
    addLanguageRows("killed");
}

void tst_DurableServer::contextSurvivesAKilledServer()
{
    survivesRestart(true);
}

void tst_DurableServer::acknowledgedRunSurvivesAnImmediateKill_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("start");   // defines an empty list
    QTest::addColumn<QString>("append");  // %1: appends the number and prints the whole list
    QTest::newRow("python") << "python" << "xs = []" << "xs.append(%1); print(xs)";
    QTest::newRow("bash") << "bash" << "xs=()" << "xs+=(%1); echo \"${xs[*]}\"";
    QTest::newRow("javascript") << "javascript" << "let xs = []"
                                << "xs.push(%1); console.log(xs.join(' '))";
}

// The answer to ?wait=true is sent only after the run is committed: SIGKILL the moment the 200
// arrives, and the next server has the run, its output and the state it built. Each round kills
// one server and checks the last one's run; the state check is the next round's own output.
void tst_DurableServer::acknowledgedRunSurvivesAnImmediateKill()
{
    QFETCH(QString, language);
    QFETCH(QString, start);
    QFETCH(QString, append);
    constexpr int kRounds = 5;

    QTemporaryDir dir;
    const QString dataDir = dir.filePath(QStringLiteral("data"));
    QString id;
    QString lastExecution;
    QString lastStdout;
    QStringList numbers;
    for (int round = 0; round <= kRounds; ++round) {
        ServerProcess server;
        QVERIFY2(server.start({}, {}, dataDir), qPrintable(server.error()));
        ApiClient client(server.port(), server.token());
        if (round == 0) {
            if (const QString why = client.missingLanguage(language); !why.isEmpty())
                QSKIP(qPrintable(why));
            id = client.createContext(language);
            QVERIFY(!id.isEmpty());
            QCOMPARE(client.runAndWait(id, start).value(QStringLiteral("status")).toString(),
                     QStringLiteral("ok"));
        } else {
            const ApiClient::Response found =
                    client.get(QStringLiteral("/v1/executions/") + lastExecution);
            QVERIFY2(found.status == 200, found.body.constData());
            QCOMPARE(found.object().value(QStringLiteral("status")).toString(),
                     QStringLiteral("ok"));
            QCOMPARE(found.object().value(QStringLiteral("stdout")).toString(), lastStdout);
        }
        if (round == kRounds)
            break;
        numbers.append(QString::number(round));
        const QJsonObject ran = client.runAndWait(id, append.arg(round));
        QCOMPARE(::kill(pid_t(server.pid()), SIGKILL), 0);  // the moment the answer is here
        QCOMPARE(ran.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        lastExecution = ran.value(QStringLiteral("id")).toString();
        lastStdout = ran.value(QStringLiteral("stdout")).toString();
        const QString list = language == QLatin1String("python")
                ? QLatin1Char('[') + numbers.join(QStringLiteral(", ")) + QStringLiteral("]\n")
                : numbers.join(QLatin1Char(' ')) + QLatin1Char('\n');
        QCOMPARE(lastStdout, list);
        server.stop();
    }
}

void tst_DurableServer::survivesRestart(bool kill)
{
    QFETCH(QString, language);
    QFETCH(QString, define);
    QFETCH(QString, show);
    QFETCH(QString, expected);

    QTemporaryDir dir;
    const QString dataDir = dir.filePath(QStringLiteral("data"));
    ServerProcess first;
    QVERIFY2(first.start({}, {}, dataDir), qPrintable(first.error()));
    ApiClient before(first.port(), first.token());
    if (const QString why = before.missingLanguage(language); !why.isEmpty())
        QSKIP(qPrintable(why));

    const auto created = before.post(QStringLiteral("/v1/contexts"),
                                     {{QStringLiteral("language"), language},
                                      {QStringLiteral("env"), QJsonObject{{QStringLiteral("RH_KEPT"),
                                                                           QStringLiteral("yes")}}}});
    QCOMPARE(created.status, 201);
    const QJsonObject context = created.object();
    const QString id = context.value(QStringLiteral("id")).toString();
    QCOMPARE(context.value(QStringLiteral("restore")).toString(), QStringLiteral("replay"));
    QCOMPARE(context.value(QStringLiteral("resident")).toBool(), true);
    const QJsonObject defined = before.runAndWait(id, define);
    QCOMPARE(defined.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    const qint64 workerPid = before.get(QStringLiteral("/v1/contexts/") + id)
                                 .object().value(QStringLiteral("pid")).toInteger();
    QVERIFY(workerPid > 0);

    if (kill) {
        QCOMPARE(::kill(pid_t(first.pid()), SIGKILL), 0);
        first.stop();
    } else {
        QCOMPARE(first.stop(), 0);
    }
    QTRY_VERIFY_WITH_TIMEOUT(!ServerProcess::isAlive(workerPid), kWorkerTimeout);

    ServerProcess second;
    QVERIFY2(second.start({}, {}, dataDir), qPrintable(second.error()));
    ApiClient after(second.port(), second.token());
    const QJsonObject dormant = after.get(QStringLiteral("/v1/contexts/") + id).object();
    QCOMPARE(dormant.value(QStringLiteral("state")).toString(), QStringLiteral("dormant"));
    QCOMPARE(dormant.value(QStringLiteral("resident")).toBool(), false);
    QCOMPARE(dormant.value(QStringLiteral("language")).toString(), language);
    QCOMPARE(dormant.value(QStringLiteral("cwd")).toString(), context.value(QStringLiteral("cwd")).toString());
    QCOMPARE(dormant.value(QStringLiteral("execution_count")).toInt(), 1);
    const QJsonObject env = after.get(QStringLiteral("/v1/contexts/%1/env").arg(id)).object();
    QVERIFY2(QJsonDocument(env).toJson().contains("RH_KEPT"), QJsonDocument(env).toJson().constData());
    const QJsonArray history = after.get(QStringLiteral("/v1/contexts/%1/executions").arg(id))
                                   .object().value(QStringLiteral("executions")).toArray();
    QCOMPARE(history.size(), 1);
    QCOMPARE(history.at(0).toObject().value(QStringLiteral("id")).toString(),
             defined.value(QStringLiteral("id")).toString());

    const QJsonObject shown = after.runAndWait(id, show);
    QCOMPARE(shown.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(shown.value(QStringLiteral("stdout")).toString(), expected);
    // A shell restores from the snapshot taken after the run; Python from the one a clean stop
    // took; everything else (and Python after a crash) replays the run.
    const bool snapshot =
        language == QLatin1String("bash") || (language == QLatin1String("python") && !kill);
    const QJsonObject restored = firstEvent(shown, QStringLiteral("restored"));
    QCOMPARE(restored.value(QStringLiteral("mode")).toString(),
             snapshot ? QStringLiteral("snapshot") : QStringLiteral("replay"));
    QCOMPARE(restored.value(QStringLiteral("replayed")).toInt(), snapshot ? 0 : 1);
    QCOMPARE(restored.value(QStringLiteral("complete")).toBool(), true);
    QCOMPARE(shown.value(QStringLiteral("execution_count")).toInt(), 2);
    const QJsonObject restoredContext = after.get(QStringLiteral("/v1/contexts/") + id).object();
    QCOMPARE(restoredContext.value(QStringLiteral("state")).toString(), QStringLiteral("idle"));
    QCOMPARE(restoredContext.value(QStringLiteral("restored")).toObject()
                 .value(QStringLiteral("mode")).toString(),
             restored.value(QStringLiteral("mode")).toString());
}

void tst_DurableServer::workersDieWithAKilledServer_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("loop");
    QTest::newRow("python") << "python" << "while True:\n    pass";
    // A child of the shell is in the worker's process group too.
    QTest::newRow("bash") << "bash" << "sleep 600 &\nwhile :; do :; done";
    QTest::newRow("perl") << "perl" << "1 while 1;";
    QTest::newRow("javascript") << "javascript" << "while (true) {}";
    QTest::newRow("java") << "java" << "while (true) {}";
}

void tst_DurableServer::workersDieWithAKilledServer()
{
    QFETCH(QString, language);
    QFETCH(QString, loop);

    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    ApiClient client(server.port(), server.token());
    if (const QString why = client.missingLanguage(language); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString id = client.createContext(language);
    QVERIFY(!id.isEmpty());

    const std::unique_ptr<ApiClient::Stream> stream =
        client.openStream("POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
                          {{QStringLiteral("code"), loop}});
    QCOMPARE(stream->status(), 200);
    bool started = false;
    while (std::optional<ApiClient::Event> event = stream->next(kWorkerTimeout)) {
        if (event->type == "started") {
            started = true;
            break;
        }
    }
    QVERIFY(started);
    const qint64 group = client.get(QStringLiteral("/v1/contexts/") + id)
                             .object().value(QStringLiteral("pid")).toInteger();
    QVERIFY(group > 0);
    QVERIFY(!ServerProcess::membersOfGroup(group).isEmpty());

    QCOMPARE(::kill(pid_t(server.pid()), SIGKILL), 0);
    server.stop();
    QTRY_COMPARE_WITH_TIMEOUT(ServerProcess::membersOfGroup(group), QList<qint64>(), kWorkerTimeout);
}

// After SIGKILL of the server the shell is rebuilt from the snapshot taken after its last run
// that changed it: variables, arrays, functions, aliases, options and cwd, and no cell runs again
// (the one that appended to a file did so once).
void tst_DurableServer::shellComesBackFromItsSnapshotAfterAKilledServer()
{
    QTemporaryDir dir;
    const QString dataDir = dir.filePath(QStringLiteral("data"));
    ServerProcess first;
    QVERIFY2(first.start({}, {}, dataDir), qPrintable(first.error()));
    ApiClient before(first.port(), first.token());
    if (const QString why = before.missingLanguage(QStringLiteral("bash")); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString id = before.createContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    for (const QString &cell :
         {QStringLiteral("declare -a arr=(one 'two three'); declare -A map=([k]=v); n=7\n"
                         "hello() { echo \"hello $1\"; }; alias hi='hello alias'\n"
                         "set -o pipefail; shopt -s extglob; mkdir -p work && cd work"),
          QStringLiteral("echo once >> ../appended.txt")}) {
        const QJsonObject done = before.runAndWait(id, cell);
        QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    }
    // Reading the history commits what the history writer holds (see survivesRestart).
    QCOMPARE(before.get(QStringLiteral("/v1/contexts/%1/executions").arg(id)).status, 200);
    const qint64 workerPid = before.get(QStringLiteral("/v1/contexts/") + id)
                                 .object().value(QStringLiteral("pid")).toInteger();
    QCOMPARE(::kill(pid_t(first.pid()), SIGKILL), 0);
    first.stop();
    QTRY_VERIFY_WITH_TIMEOUT(!ServerProcess::isAlive(workerPid), kWorkerTimeout);

    ServerProcess second;
    QVERIFY2(second.start({}, {}, dataDir), qPrintable(second.error()));
    ApiClient after(second.port(), second.token());
    const QJsonObject shown = after.runAndWait(
        id, QStringLiteral("echo \"${arr[1]} ${map[k]} $n ${PWD##*/}\"\nhi\n"
                           "[[ -o pipefail ]] && shopt -q extglob && echo options\n"
                           "wc -l < ../appended.txt"));
    QCOMPARE(shown.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(shown.value(QStringLiteral("stdout")).toString(),
             QStringLiteral("two three v 7 work\nhello alias\noptions\n1\n"));
    const QJsonObject restored = firstEvent(shown, QStringLiteral("restored"));
    QCOMPARE(restored.value(QStringLiteral("mode")).toString(), QStringLiteral("snapshot"));
    QCOMPARE(restored.value(QStringLiteral("replayed")).toInt(), 0);
    QCOMPARE(restored.value(QStringLiteral("snapshot_execution_count")).toInt(), 1);
    const QJsonObject context = after.get(QStringLiteral("/v1/contexts/") + id).object();
    QCOMPARE(context.value(QStringLiteral("restored")).toObject()
                 .value(QStringLiteral("mode")).toString(),
             QStringLiteral("snapshot"));
    QVERIFY(context.value(QStringLiteral("cwd")).toString().endsWith(QLatin1String("/work")));
}

void tst_DurableServer::restorePolicyIsChosenAtCreation()
{
    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    ApiClient client(server.port(), server.token());
    if (const QString why = client.missingLanguage(QStringLiteral("bash")); !why.isEmpty())
        QSKIP(qPrintable(why));

    const auto fresh = client.post(QStringLiteral("/v1/contexts"),
                                   {{QStringLiteral("language"), QStringLiteral("bash")},
                                    {QStringLiteral("restore"), QStringLiteral("fresh")}});
    QCOMPARE(fresh.status, 201);
    QCOMPARE(fresh.object().value(QStringLiteral("restore")).toString(), QStringLiteral("fresh"));
    const QString id = fresh.object().value(QStringLiteral("id")).toString();
    const QJsonArray listed = client.get(QStringLiteral("/v1/contexts")).array();
    QCOMPARE(listed.size(), 1);
    QCOMPARE(listed.at(0).toObject().value(QStringLiteral("restore")).toString(), QStringLiteral("fresh"));
    QCOMPARE(client.get(QStringLiteral("/v1/contexts/") + id).object()
                 .value(QStringLiteral("restore")).toString(),
             QStringLiteral("fresh"));

    const auto unknown = client.post(QStringLiteral("/v1/contexts"),
                                     {{QStringLiteral("language"), QStringLiteral("bash")},
                                      {QStringLiteral("restore"), QStringLiteral("later")}});
    QCOMPARE(unknown.status, 400);
    QVERIFY2(unknown.body.contains("restore must be \\\"replay\\\" or \\\"fresh\\\""), unknown.body.constData());
    const auto wrongType = client.post(QStringLiteral("/v1/contexts"),
                                       {{QStringLiteral("language"), QStringLiteral("bash")},
                                        {QStringLiteral("restore"), true}});
    QCOMPARE(wrongType.status, 400);
    QCOMPARE(client.get(QStringLiteral("/v1/contexts")).array().size(), 1);
}

void tst_DurableServer::residencyFlagsAreChecked_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("no workers") << QStringList{"--max-workers", "0"} << "--max-workers must be";
    QTest::newRow("not a number") << QStringList{"--max-workers", "many"} << "--max-workers must be";
    QTest::newRow("negative idle") << QStringList{"--worker-idle-timeout", "-1"}
                                   << "--worker-idle-timeout must be";
    QTest::newRow("idle not a number") << QStringList{"--worker-idle-timeout", "soon"}
                                       << "--worker-idle-timeout must be";
}

void tst_DurableServer::residencyFlagsAreChecked()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const ServerProcess::Run run = ServerProcess::runOnce(arguments);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(message.toUtf8()), run.err.constData());
}

void tst_DurableServer::maxWorkersFlagEvictsTheLeastRecentlyUsed()
{
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--max-workers"), QStringLiteral("1")}),
             qPrintable(server.error()));
    ApiClient client(server.port(), server.token());
    if (const QString why = client.missingLanguage(QStringLiteral("bash")); !why.isEmpty())
        QSKIP(qPrintable(why));

    const QString first = client.createContext(QStringLiteral("bash"));
    QVERIFY(!first.isEmpty());
    QCOMPARE(client.runAndWait(first, QStringLiteral("v=first")).value(QStringLiteral("status")).toString(),
             QStringLiteral("ok"));
    const QString second = client.createContext(QStringLiteral("bash"));
    QVERIFY(!second.isEmpty());
    const QJsonObject evicted = client.get(QStringLiteral("/v1/contexts/") + first).object();
    QCOMPARE(evicted.value(QStringLiteral("state")).toString(), QStringLiteral("dormant"));
    QCOMPARE(evicted.value(QStringLiteral("resident")).toBool(), false);

    const QJsonObject shown = client.runAndWait(first, QStringLiteral("echo $v"));
    QCOMPARE(shown.value(QStringLiteral("stdout")).toString(), QStringLiteral("first\n"));
    QCOMPARE(firstEvent(shown, QStringLiteral("restored")).value(QStringLiteral("mode")).toString(),
             QStringLiteral("snapshot"));
    QCOMPARE(firstEvent(shown, QStringLiteral("restored")).value(QStringLiteral("replayed")).toInt(), 0);
    // The second one goes once it is idle (a starting worker is never evicted).
    QVERIFY2(client.waitForContextState(second, QStringLiteral("dormant")),
             client.get(QStringLiteral("/v1/contexts")).body.constData());
}

QTEST_GUILESS_MAIN(tst_DurableServer)
#include "tst_durableserver.moc"
