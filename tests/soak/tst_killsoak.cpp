// SPDX-License-Identifier: Apache-2.0
// Kill -9 soak: eight clients run cells in eight contexts of three languages over HTTP against a
// real replhost-server, which is killed with SIGKILL at random moments and started again on the
// same data directory. After each restart, every execution a client was told had finished is in
// the history with its output, every context comes back with the state those executions built,
// and the database passes SQLite's integrity check. Each cell appends its number to a list of
// its context, so the state after a restore is a list the test can check against what was
// acknowledged: a run the client never heard back about may or may not be in it, an
// acknowledged one must be, in order.
//
// Bounded: about REPLHOST_SOAK_SECONDS (default 60) of clients running, split over ten kills.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int kClients = 8;
constexpr int kKills = 10;

struct Language {
    QString name;
    QString start;   // defines an empty list
    QString append;  // %1: appends the number and prints it
    QString show;    // prints the list, numbers separated by spaces
};

const Language &languageOf(int client)
{
    static const Language languages[] = {
        {QStringLiteral("python"), QStringLiteral("xs = []"),
         QStringLiteral("xs.append(%1); print(%1)"),
         QStringLiteral("print(' '.join(map(str, xs)))")},
        {QStringLiteral("bash"), QStringLiteral("xs=()"), QStringLiteral("xs+=(%1); echo %1"),
         QStringLiteral("echo \"${xs[*]}\"")},
        {QStringLiteral("javascript"), QStringLiteral("let xs = []"),
         QStringLiteral("xs.push(%1); console.log(%1)"),
         QStringLiteral("console.log(xs.join(' '))")},
    };
    return languages[client % 3];
}

int soakSeconds()
{
    bool ok = false;
    const int seconds = qEnvironmentVariableIntValue("REPLHOST_SOAK_SECONDS", &ok);
    return ok && seconds > 0 ? seconds : 60;
}

// What one client knows about its context's runs.
struct Ledger {
    QString contextId;
    int next = 0;                          // the number the next cell appends
    QList<int> acknowledged;               // a 200 with status ok came back, in order
    QHash<int, QString> executionOf;       // acknowledged number -> execution id
    QSet<int> inDoubt;                     // sent, but no answer came back (the server died)
    QList<int> sinceLastCheck;             // acknowledged since the last restart's check
};

// The server the clients talk to; replaced after each kill. Clients wait while it is down or
// being checked.
class Target {
public:
    void publish(quint16 port, const QByteArray &token)
    {
        std::lock_guard lock(m_mutex);
        m_port = port;
        m_token = token;
        m_up = true;
        ++m_generation;
        m_changed.notify_all();
    }
    void takeDown()
    {
        std::lock_guard lock(m_mutex);
        m_up = false;
    }
    void finish()
    {
        std::lock_guard lock(m_mutex);
        m_finished = true;
        m_changed.notify_all();
    }
    // Waits until a server newer than `seen` is up; false once the soak is over.
    bool await(quint64 seen, quint16 *port, QByteArray *token, quint64 *generation)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return m_finished || (m_up && m_generation > seen); });
        if (m_finished)
            return false;
        *port = m_port;
        *token = m_token;
        *generation = m_generation;
        return true;
    }
    bool isCurrent(quint64 generation)
    {
        std::lock_guard lock(m_mutex);
        return m_up && !m_finished && m_generation == generation;
    }

    // Clients hold this while a request is in flight; the checker takes it whole to pause them.
    std::mutex pause;

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    quint16 m_port = 0;
    QByteArray m_token;
    quint64 m_generation = 0;
    bool m_up = false;
    bool m_finished = false;
};

// One client: runs cells in its context until the soak ends. A connection that fails (the
// server was killed) leaves the cell in doubt; the client then waits for the next server.
void runClient(Target &target, const Language &language, Ledger &ledger, std::mutex &ledgerMutex)
{
    quint64 generation = 0;
    quint16 port = 0;
    QByteArray token;
    while (target.await(generation, &port, &token, &generation)) {
        const ApiClient client(port, token);
        while (target.isCurrent(generation)) {
            int number = 0;
            {
                std::lock_guard lock(ledgerMutex);
                number = ledger.next++;
            }
            ApiClient::Response response;
            {
                std::lock_guard paused(target.pause);
                if (!target.isCurrent(generation)) {
                    std::lock_guard lock(ledgerMutex);
                    --ledger.next;  // never sent
                    break;
                }
                response = client.request(
                        "POST",
                        QStringLiteral("/v1/contexts/%1/executions?wait=true").arg(ledger.contextId),
                        QJsonDocument(QJsonObject{{QStringLiteral("code"),
                                                   language.append.arg(number)}})
                                .toJson(QJsonDocument::Compact),
                        {{"Content-Type", "application/json"}});
            }
            const QJsonObject execution = response.object();
            std::lock_guard lock(ledgerMutex);
            if (response.status == 200
                && execution.value(QStringLiteral("status")).toString() == QLatin1String("ok")) {
                ledger.acknowledged.append(number);
                ledger.sinceLastCheck.append(number);
                ledger.executionOf.insert(number, execution.value(QStringLiteral("id")).toString());
            } else if (response.status == 0) {
                ledger.inDoubt.insert(number);
                break;
            } else {
                // Not a crash (the server answered): a failure the soak is not about. Recorded
                // in doubt, and the check below fails if it ever made a number disappear.
                qWarning("client of %s: %d %s", qPrintable(ledger.contextId), response.status,
                         response.body.left(300).constData());
                ledger.inDoubt.insert(number);
            }
            // A quick user's pace: each context's history, replayed after every kill, stays a
            // few hundred cells long over the default minute.
            QThread::msleep(100);
        }
    }
}

QString integrityOf(const QString &path)
{
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        const QString why = QString::fromUtf8(sqlite3_errmsg(db));
        sqlite3_close(db);
        return QStringLiteral("cannot open: ") + why;
    }
    QStringList lines;
    sqlite3_stmt *stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) != SQLITE_OK) {
        lines.append(QString::fromUtf8(sqlite3_errmsg(db)));
    } else {
        while (sqlite3_step(stmt) == SQLITE_ROW)
            lines.append(QString::fromUtf8(reinterpret_cast<const char *>(sqlite3_column_text(stmt, 0))));
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return lines.join(QLatin1Char('\n'));
}

} // namespace

class tst_KillSoak : public QObject {
    Q_OBJECT

private slots:
    void acknowledgedRunsSurviveRepeatedKills();
};

void tst_KillSoak::acknowledgedRunsSurviveRepeatedKills()
{
    QTemporaryDir dir;
    const QString dataDir = dir.filePath(QStringLiteral("data"));
    auto server = std::make_unique<ServerProcess>();
    QVERIFY2(server->start({}, {}, dataDir), qPrintable(server->error()));
    {
        const ApiClient setup(server->port(), server->token());
        for (int client = 0; client < 3; ++client) {
            if (const QString why = setup.missingLanguage(languageOf(client).name); !why.isEmpty())
                QSKIP(qPrintable(why));
        }
    }

    std::vector<Ledger> ledgers(kClients);
    std::mutex ledgerMutex;
    {
        const ApiClient setup(server->port(), server->token());
        for (int client = 0; client < kClients; ++client) {
            const Language &language = languageOf(client);
            ledgers[client].contextId = setup.createContext(language.name);
            QVERIFY(!ledgers[client].contextId.isEmpty());
            QCOMPARE(setup.runAndWait(ledgers[client].contextId, language.start)
                             .value(QStringLiteral("status")).toString(),
                     QStringLiteral("ok"));
        }
    }

    Target target;
    std::vector<std::thread> clients;
    for (int client = 0; client < kClients; ++client)
        clients.emplace_back(runClient, std::ref(target), std::cref(languageOf(client)),
                             std::ref(ledgers[client]), std::ref(ledgerMutex));
    const auto joinClients = qScopeGuard([&] {
        target.finish();
        for (std::thread &thread : clients)
            thread.join();
    });

    const int meanMs = soakSeconds() * 1000 / kKills;
    int acknowledgedLost = 0;
    qint64 acknowledgedTotal = 0;
    for (int kill = 0; kill < kKills; ++kill) {
        target.publish(server->port(), server->token());
        // A random moment: anywhere from right after the start to twice the mean.
        QThread::msleep(QRandomGenerator::global()->bounded(50, 2 * meanMs));
        QCOMPARE(::kill(pid_t(server->pid()), SIGKILL), 0);
        target.takeDown();
        server->stop();

        // The clients have all seen the server die or are blocked on it: none is in flight.
        std::lock_guard paused(target.pause);
        const QString integrity = integrityOf(QDir(dataDir).filePath(QStringLiteral("replhost.db")));
        QVERIFY2(integrity == QLatin1String("ok"), qPrintable(integrity));

        server = std::make_unique<ServerProcess>();
        QVERIFY2(server->start({}, {}, dataDir), qPrintable(server->error()));
        const ApiClient checker(server->port(), server->token());
        std::lock_guard lock(ledgerMutex);
        for (int client = 0; client < kClients; ++client) {
            Ledger &ledger = ledgers[client];
            // Every acknowledged run of the last round is in the history with its output
            // (the state check below covers the earlier ones too).
            for (const int number : std::as_const(ledger.sinceLastCheck)) {
                const ApiClient::Response found =
                        checker.get(QStringLiteral("/v1/executions/") + ledger.executionOf.value(number));
                const QJsonObject execution = found.object();
                if (found.status != 200
                    || execution.value(QStringLiteral("status")).toString() != QLatin1String("ok")
                    || execution.value(QStringLiteral("stdout")).toString()
                               != QString::number(number) + QLatin1Char('\n')) {
                    qWarning("context %s: acknowledged run %d: %d %s", qPrintable(ledger.contextId),
                             number, found.status, found.body.left(300).constData());
                    ++acknowledgedLost;
                }
            }
            ledger.sinceLastCheck.clear();

            // The state: every acknowledged number, in order; nothing that was never sent;
            // runs in doubt may be there or not.
            const QJsonObject shown = checker.runAndWait(ledger.contextId, languageOf(client).show);
            QCOMPARE(shown.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
            QList<int> state;
            for (const QString &word : shown.value(QStringLiteral("stdout")).toString()
                                           .split(QLatin1Char(' '), Qt::SkipEmptyParts))
                state.append(word.trimmed().toInt());
            qsizetype matched = 0;
            for (qsizetype i = 0; i < state.size(); ++i) {
                QVERIFY2(i == 0 || state.at(i) > state.at(i - 1),
                         qPrintable(QStringLiteral("context %1 holds its numbers out of order")
                                            .arg(ledger.contextId)));
                if (matched < ledger.acknowledged.size()
                    && state.at(i) == ledger.acknowledged.at(matched)) {
                    ++matched;
                } else {
                    QVERIFY2(ledger.inDoubt.contains(state.at(i)),
                             qPrintable(QStringLiteral("context %1 holds %2, which no client sent "
                                                       "or whose run failed")
                                                .arg(ledger.contextId)
                                                .arg(state.at(i))));
                }
            }
            if (matched != ledger.acknowledged.size()) {
                qWarning("context %s lost acknowledged runs from %d on", qPrintable(ledger.contextId),
                         ledger.acknowledged.value(matched));
                acknowledgedLost += int(ledger.acknowledged.size() - matched);
            }
        }
    }
    for (const Ledger &ledger : ledgers)
        acknowledgedTotal += ledger.acknowledged.size();
    qInfo("%lld runs acknowledged over %d kills, %d of them lost", acknowledgedTotal, kKills,
          acknowledgedLost);
    QVERIFY2(acknowledgedTotal > 0, "no run was acknowledged: the soak tested nothing");
    QCOMPARE(acknowledgedLost, 0);
}

QTEST_GUILESS_MAIN(tst_KillSoak)
#include "tst_killsoak.moc"
