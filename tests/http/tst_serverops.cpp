// SPDX-License-Identifier: Apache-2.0
// Running the server: /v1/info with the plugins, /metrics as Prometheus text, and a graceful
// shutdown on SIGTERM that ends and records what was running. A real replhost-server and a Poco
// client; the fixture language makes runs that need no runtime.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>
#include <QTest>

#include <csignal>

namespace {

// One sample of the Prometheus text format.
struct Sample {
    QString name;
    QMap<QString, QString> labels;
    double value = 0;
};

// Parses the text exposition format strictly enough to catch what a Prometheus server would
// refuse: every line a comment or a sample, every sample's family declared by a TYPE line before
// it, label values quoted, values numbers. Returns the samples, or fails the test.
QList<Sample> parsePrometheus(const QByteArray &text, QString *error)
{
    static const QRegularExpression sampleLine(
            QStringLiteral("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$"));
    static const QRegularExpression label(QStringLiteral("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?"));
    static const QRegularExpression typeLine(QStringLiteral("^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$"));
    QHash<QString, QString> types;
    QList<Sample> samples;
    if (!text.endsWith('\n')) {
        *error = QStringLiteral("the text does not end with a newline");
        return {};
    }
    for (const QByteArray &raw : text.split('\n')) {
        const QString line = QString::fromUtf8(raw);
        if (line.isEmpty())
            continue;
        if (line.startsWith(QLatin1String("# TYPE "))) {
            const auto match = typeLine.match(line);
            if (!match.hasMatch()) {
                *error = QStringLiteral("bad TYPE line: ") + line;
                return {};
            }
            types.insert(match.captured(1), match.captured(2));
            continue;
        }
        if (line.startsWith(QLatin1Char('#')))
            continue;
        const auto match = sampleLine.match(line);
        if (!match.hasMatch()) {
            *error = QStringLiteral("not a sample: ") + line;
            return {};
        }
        Sample sample;
        sample.name = match.captured(1);
        bool ok = false;
        const QString valueText = match.captured(4);
        sample.value = valueText == QLatin1String("+Inf") ? qInf() : valueText.toDouble(&ok);
        if (!ok && valueText != QLatin1String("+Inf")) {
            *error = QStringLiteral("bad value: ") + line;
            return {};
        }
        QString labels = match.captured(3);
        qsizetype consumed = 0;
        auto it = label.globalMatch(labels);
        while (it.hasNext()) {
            const auto l = it.next();
            if (l.capturedStart() != consumed) {
                *error = QStringLiteral("bad labels: ") + line;
                return {};
            }
            consumed = l.capturedEnd();
            sample.labels.insert(l.captured(1), l.captured(2));
        }
        if (consumed != labels.size()) {
            *error = QStringLiteral("bad labels: ") + line;
            return {};
        }
        QString family = sample.name;
        for (const char *suffix : {"_bucket", "_sum", "_count"}) {
            if (!types.contains(family) && family.endsWith(QLatin1String(suffix)))
                family.chop(int(qstrlen(suffix)));
        }
        if (!types.contains(family)) {
            *error = QStringLiteral("sample before its TYPE line: ") + line;
            return {};
        }
        samples.append(sample);
    }
    return samples;
}

double valueOf(const QList<Sample> &samples, const QString &name, const QMap<QString, QString> &labels)
{
    for (const Sample &sample : samples) {
        if (sample.name != name)
            continue;
        bool matches = true;
        for (auto it = labels.cbegin(); it != labels.cend() && matches; ++it)
            matches = sample.labels.value(it.key()) == it.value();
        if (matches)
            return sample.value;
    }
    return -1;
}

} // namespace

class tst_ServerOps : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void infoListsVersionsAndPlugins();
    void metricsNeedTheToken();
    void metricsAreValidPrometheusText();
    void metricsCountWhatHappened();
    void warmPoolIsSizedByOptionAndReported();
    void badWarmPoolOptionIsRefused();
    void sigtermEndsAndRecordsRunningWork();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    static QStringList fixtureArguments()
    {
        return {QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_TEST_FIXTURE_PLUGIN_DIR)};
    }

    ServerProcess m_server;
};

void tst_ServerOps::initTestCase()
{
    QVERIFY2(m_server.start(fixtureArguments()), qPrintable(m_server.error()));
}

void tst_ServerOps::infoListsVersionsAndPlugins()
{
    const auto response = client().get(QStringLiteral("/v1/info"));
    QCOMPARE(response.status, 200);
    const QJsonObject info = response.object();
    QCOMPARE(info.value(QStringLiteral("api_version")).toInt(), 1);
    QHash<QString, QJsonObject> plugins;
    for (const QJsonValue &plugin : info.value(QStringLiteral("plugins")).toArray()) {
        const QJsonObject entry = plugin.toObject();
        QVERIFY(!entry.value(QStringLiteral("file")).toString().isEmpty());
        QVERIFY(!entry.value(QStringLiteral("state")).toString().isEmpty());
        if (entry.value(QStringLiteral("state")).toString() != QLatin1String("loaded"))
            QVERIFY(!entry.value(QStringLiteral("error")).toString().isEmpty());
        plugins.insert(entry.value(QStringLiteral("id")).toString(), entry);
    }
    QCOMPARE(plugins.value(QStringLiteral("plain")).value(QStringLiteral("state")).toString(), QStringLiteral("loaded"));
    QVERIFY(plugins.value(QStringLiteral("plain")).value(QStringLiteral("error")).isNull());
    QCOMPARE(plugins.value(QStringLiteral("plain")).value(QStringLiteral("runtime_available")).toBool(), true);
}

void tst_ServerOps::metricsNeedTheToken()
{
    QCOMPARE(client().request("GET", QStringLiteral("/metrics"), {}, {}, false).status, 401);
}

void tst_ServerOps::metricsAreValidPrometheusText()
{
    const QString id = client().createContext(QStringLiteral("plain"));
    client().runAndWait(id, QStringLiteral("a \"quoted\" \\ line\n"));
    const auto response = client().get(QStringLiteral("/metrics"));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.header("Content-Type"), QByteArray("text/plain; version=0.0.4; charset=utf-8"));
    QString error;
    const QList<Sample> samples = parsePrometheus(response.body, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(!samples.isEmpty());

    // Histogram buckets are cumulative and end with +Inf equal to the count.
    const QMap<QString, QString> plain{{QStringLiteral("language"), QStringLiteral("plain")}};
    double previous = 0;
    int buckets = 0;
    for (const Sample &sample : samples) {
        if (sample.name != QLatin1String("replhost_execution_duration_seconds_bucket")
            || sample.labels.value(QStringLiteral("language")) != QLatin1String("plain"))
            continue;
        QVERIFY(sample.value >= previous);
        previous = sample.value;
        ++buckets;
        if (sample.labels.value(QStringLiteral("le")) == QLatin1String("+Inf"))
            QCOMPARE(sample.value, valueOf(samples, QStringLiteral("replhost_execution_duration_seconds_count"), plain));
    }
    QVERIFY(buckets > 2);
    QVERIFY(valueOf(samples, QStringLiteral("replhost_execution_duration_seconds_sum"), plain) >= 0);
}

void tst_ServerOps::metricsCountWhatHappened()
{
    ServerProcess server;
    QVERIFY2(server.start(fixtureArguments()), qPrintable(server.error()));
    ApiClient api(server.port(), server.token());
    const QString id = api.createContext(QStringLiteral("plain"));
    QVERIFY(api.waitForContextState(id, QStringLiteral("idle")));
    for (int i = 0; i < 3; ++i)
        QCOMPARE(api.runAndWait(id, QStringLiteral("12345")).value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(api.post(QStringLiteral("/v1/contexts/%1/restart").arg(id), {}).status, 200);
    QCOMPARE(api.post(QStringLiteral("/v1/commands?wait=true"), {{QStringLiteral("command"), QStringLiteral("exit 2")}}).status, 200);
    QCOMPARE(api.get(QStringLiteral("/v1/no-such-route")).status, 404);
    QCOMPARE(api.get(QStringLiteral("/v1/contexts/nope")).status, 404);
    QVERIFY(api.waitForContextState(id, QStringLiteral("idle")));

    QString error;
    const QList<Sample> samples = parsePrometheus(api.get(QStringLiteral("/metrics")).body, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QString plain = QStringLiteral("plain");
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_executions_total"),
                     {{QStringLiteral("language"), plain}, {QStringLiteral("status"), QStringLiteral("ok")}}), 3.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_execution_duration_seconds_count"),
                     {{QStringLiteral("language"), plain}}), 3.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_execution_output_bytes_total"),
                     {{QStringLiteral("language"), plain}}), 15.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_contexts"),
                     {{QStringLiteral("language"), plain}, {QStringLiteral("state"), QStringLiteral("idle")}}), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_worker_starts_total"), {{QStringLiteral("language"), plain}}), 2.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_worker_restarts_total"), {{QStringLiteral("language"), plain}}), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_commands_total"), {{QStringLiteral("status"), QStringLiteral("error")}}), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_http_requests_total"),
                     {{QStringLiteral("route"), QStringLiteral("POST /v1/contexts/{id}/executions")},
                      {QStringLiteral("code"), QStringLiteral("200")}}), 3.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_http_requests_total"),
                     {{QStringLiteral("route"), QStringLiteral("POST /v1/contexts")}, {QStringLiteral("code"), QStringLiteral("201")}}), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_http_requests_total"),
                     {{QStringLiteral("route"), QStringLiteral("GET /v1/contexts/{id}")}, {QStringLiteral("code"), QStringLiteral("404")}}), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_http_requests_total"),
                     {{QStringLiteral("route"), QStringLiteral("unmatched")}, {QStringLiteral("code"), QStringLiteral("404")}}), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_http_streams_open"), {}), 0.0);
}

void tst_ServerOps::warmPoolIsSizedByOptionAndReported()
{
    ServerProcess server;
    QVERIFY2(server.start(fixtureArguments()
                          + QStringList{QStringLiteral("--warm-pool"), QStringLiteral("0"),
                                        QStringLiteral("--warm-pool"), QStringLiteral("plain=2")}),
             qPrintable(server.error()));
    ApiClient api(server.port(), server.token());
    auto pool = [&api] {
        return api.get(QStringLiteral("/v1/info")).object().value(QStringLiteral("warm_pool")).toObject();
    };
    auto ready = [&pool] {
        return pool().value(QStringLiteral("plain")).toObject().value(QStringLiteral("ready")).toInt();
    };
    QTRY_COMPARE_WITH_TIMEOUT(ready(), 2, 30000);
    const QJsonObject pools = pool();
    for (auto it = pools.begin(); it != pools.end(); ++it) {
        if (it.key() != QLatin1String("plain"))
            QCOMPARE(it.value().toObject().value(QStringLiteral("size")).toInt(), 0);
    }

    // A new context takes a pooled worker and runs at once; /metrics counts the hit.
    const QString id = api.createContext(QStringLiteral("plain"));
    QCOMPARE(api.runAndWait(id, QStringLiteral("pooled")).value(QStringLiteral("status")).toString(),
             QStringLiteral("ok"));
    QString error;
    const QList<Sample> samples = parsePrometheus(api.get(QStringLiteral("/metrics")).body, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QMap<QString, QString> plain{{QStringLiteral("language"), QStringLiteral("plain")}};
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_warm_pool_size"), plain), 2.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_warm_pool_hits_total"), plain), 1.0);
    QCOMPARE(valueOf(samples, QStringLiteral("replhost_warm_pool_misses_total"), plain), 0.0);
}

void tst_ServerOps::badWarmPoolOptionIsRefused()
{
    for (const QString &value : {QStringLiteral("-1"), QStringLiteral("java=many"),
                                 QStringLiteral("=2"), QStringLiteral("33")}) {
        const ServerProcess::Run run =
            ServerProcess::runOnce({QStringLiteral("--warm-pool"), value});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("--warm-pool must be a count from 0 to 32"), run.err.constData());
    }
}

void tst_ServerOps::sigtermEndsAndRecordsRunningWork()
{
    ServerProcess server;
    QVERIFY2(server.start(fixtureArguments()), qPrintable(server.error()));
    ApiClient api(server.port(), server.token());
    const QString why = api.missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));

    const QString id = api.createContext(QStringLiteral("python"));
    const std::unique_ptr<ApiClient::Stream> running = api.openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), QStringLiteral("import time\ntry:\n    print('going', flush=True)\n    time.sleep(60)\n"
                                                      "finally:\n    print('tail', flush=True)")}});
    const QString runningId = running->next(10000)->json().value(QStringLiteral("id")).toString();
    const std::unique_ptr<ApiClient::Stream> queued = api.openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), QStringLiteral("1")}});
    const QString queuedId = queued->next(10000)->json().value(QStringLiteral("id")).toString();
    // The whole first line (print() writes it in two pieces), so that the run is in its sleep
    // when the signal comes.
    QString seen;
    while (!seen.endsWith(QLatin1Char('\n'))) {
        const std::optional<ApiClient::Event> event = running->next(10000);
        QVERIFY2(event, qPrintable(QStringLiteral("the output so far: ") + seen));
        if (event->type == "stream")
            seen += event->json().value(QStringLiteral("text")).toString();
    }
    QCOMPARE(seen, QStringLiteral("going\n"));
    // A command running too, whose process must not outlive the server.
    const QString directory = api.get(QStringLiteral("/v1/workspaces/default")).object().value(QStringLiteral("directory")).toString();
    const std::unique_ptr<ApiClient::Stream> command = api.openStream(
            "POST", QStringLiteral("/v1/commands"), {{QStringLiteral("command"), QStringLiteral("echo $$ > cmd.pid; exec sleep 60")}});
    QVERIFY(command->next(10000));
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(QDir(directory).filePath(QStringLiteral("cmd.pid"))).size() > 0, 10000);
    QFile pidFile(QDir(directory).filePath(QStringLiteral("cmd.pid")));
    QVERIFY(pidFile.open(QIODevice::ReadOnly));
    const QString commandPid = QString::fromLatin1(pidFile.readAll().trimmed());

    QElapsedTimer timer;
    timer.start();
    const QString dataDir = server.dataDir();
    QCOMPARE(server.stop(), 0);
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));

    // The clients saw their runs end, rather than a cut connection: the running one interrupted
    // (its `finally` ran and what it printed is there), the queued one never started.
    QJsonObject runningDone, queuedDone;
    while (std::optional<ApiClient::Event> event = running->next(5000)) {
        if (event->type == "done")
            runningDone = event->json();
    }
    while (std::optional<ApiClient::Event> event = queued->next(5000)) {
        if (event->type == "done")
            queuedDone = event->json();
    }
    QCOMPARE(runningDone.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QCOMPARE(queuedDone.value(QStringLiteral("status")).toString(), QStringLiteral("aborted"));
    QTRY_VERIFY_WITH_TIMEOUT(!ServerProcess::isAlive(commandPid.toLongLong()), 5000);

    // And the history says so, complete, after a restart.
    ServerProcess again;
    QVERIFY2(again.start(fixtureArguments(), {}, dataDir), qPrintable(again.error()));
    ApiClient after(again.port(), again.token());
    const QJsonObject first = after.get(QStringLiteral("/v1/executions/") + runningId).object();
    QCOMPARE(first.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QCOMPARE(first.value(QStringLiteral("stdout")).toString(), QStringLiteral("going\ntail\n"));
    QCOMPARE(first.value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(), QStringLiteral("KeyboardInterrupt"));
    QCOMPARE(first.value(QStringLiteral("events")).toArray().last().toObject().value(QStringLiteral("type")).toString(),
             QStringLiteral("done"));
    const QJsonObject second = after.get(QStringLiteral("/v1/executions/") + queuedId).object();
    QCOMPARE(second.value(QStringLiteral("status")).toString(), QStringLiteral("aborted"));
    QVERIFY(second.value(QStringLiteral("error")).toObject().value(QStringLiteral("evalue")).toString().contains(QStringLiteral("shutting down")));
    const QJsonArray history = after.get(QStringLiteral("/v1/contexts/%1/executions").arg(id)).object()
                                       .value(QStringLiteral("executions")).toArray();
    QCOMPARE(history.size(), 2);
    for (const QJsonValue &row : history) {
        QCOMPARE(row.toObject().value(QStringLiteral("status")).toString(),
                 row.toObject().value(QStringLiteral("id")).toString() == runningId ? QStringLiteral("interrupted")
                                                                                   : QStringLiteral("aborted"));
        QVERIFY(row.toObject().value(QStringLiteral("duration_ms")).toInteger() >= 0);
    }
}

QTEST_GUILESS_MAIN(tst_ServerOps)
#include "tst_serverops.moc"
