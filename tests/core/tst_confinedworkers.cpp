// SPDX-License-Identifier: Apache-2.0
// Worker limits from a workspace's settings, with a real Engine, real python3 and bash workers
// and, where this machine lets the server make cgroups, real cgroups: a fork bomb and a memory
// bomb in one workspace while a context of another keeps answering, CPU time and file size
// limits that end a run with an error naming them, and each worker's cgroup going with it.
//
// A fork bomb only runs after a bounded fork loop in the same setting has shown that the process
// limit holds; where no mechanism can hold it (root without a pids cgroup), the test is skipped
// with the reason instead.
#include "core/cgroupmanager.h"
#include "core/engine.h"
#include "core/pluginregistry.h"
#include "core/workerconfinement.h"
#include "executionevents.h"
#include "testengine.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTest>

#include <memory>

#include <signal.h>
#include <unistd.h>

using namespace replhost;
using namespace replhost::core;
using namespace replhost::core::testing;

namespace {

constexpr int kRunTimeout = 60000;
constexpr int kProcessLimit = 32;

QJsonObject parse(const QByteArray &json)
{
    return QJsonDocument::fromJson(json).object();
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed() : QByteArray();
}

// The "max" count of a pids.events file: process creations the cgroup refused.
qint64 refusals(const QString &directory)
{
    const QByteArray events = readFile(directory + QStringLiteral("/pids.events"));
    return events.startsWith("max ") ? events.mid(4).toLongLong() : -1;
}

// The directory of the worker's cgroup of one controller ("pids", "memory"), found through the
// worker's /proc/<pid>/cgroup: the server's directory for that controller plus "worker-N".
QString workerCgroup(qint64 pid, const CgroupManager::Controller &controller, const char *name)
{
    const QList<QByteArray> lines =
            readFile(QStringLiteral("/proc/%1/cgroup").arg(pid)).split('\n');
    for (const QByteArray &line : lines) {
        const QList<QByteArray> fields = line.split(':');
        if (fields.size() < 3)
            continue;
        const bool match = controller.version == CgroupManager::Version::V2
                                   ? fields[0] == "0"
                                   : fields[1].split(',').contains(name);
        if (match)
            return controller.directory + QLatin1Char('/')
                   + QFileInfo(QString::fromUtf8(fields[2])).fileName();
    }
    return {};
}

} // namespace

class ConfinedWorkersTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;

    ContextManager &contexts() { return m_engine->contexts(); }

    bool createWorkspace(const QString &name, const QByteArray &settings)
    {
        auto created = m_engine->workspaces().create(name, {}, parse(settings));
        if (!created)
            qWarning("cannot create workspace %s: %s", qPrintable(name),
                     qPrintable(created.error().message));
        return created.ok();
    }

    Result<ContextInfo> createContext(const QString &workspace, const QString &language)
    {
        CreateContextRequest request;
        request.workspace = workspace;
        request.language = language;
        return contexts().create(request);
    }

    ExecutionPtr run(const QString &workspace, const QString &contextId, const QString &code)
    {
        RunRequest request;
        request.workspace = workspace;
        request.contextId = contextId;
        request.code = code;
        return waitForEnd(startRun(contexts(), request), kRunTimeout);
    }

    qint64 workerPid(const QString &workspace, const QString &contextId)
    {
        auto info = contexts().get(workspace, contextId);
        return info ? info->pid : 0;
    }

    // A context of the default workspace, which has no limits: it must keep answering while
    // another workspace's worker runs into its own.
    void verifyAnswers(const QString &contextId)
    {
        const ExecutionPtr answer = run({}, contextId, QStringLiteral("echo still here"));
        QVERIFY(answer);
        VERIFY_EXEC(answer->status() == "ok", answer);
        QCOMPARE(out(answer), QStringLiteral("still here\n"));
    }

    static QString skipReasonForProcesses()
    {
        const CgroupManager::Controller &pids = CgroupManager::forThisProcess().pids();
        if (pids.version != CgroupManager::Version::None)
            return {};
        return QStringLiteral("no pids cgroup can be made here (%1), and RLIMIT_NPROC %2: a "
                              "fork bomb would not be held per worker")
                .arg(pids.reason,
                     ::geteuid() == 0 ? QStringLiteral("does not apply to root")
                                      : QStringLiteral("counts every process of this user"));
    }

private slots:
    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        QVERIFY(m_engine.open(m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR))));
    }

    void cleanup()
    {
        m_engine.reset();
    }

    void enforcementNamesAMechanismPerLimit()
    {
        const QJsonObject enforcement = WorkerConfinement::enforcement();
        const QStringList mechanisms = {QStringLiteral("cgroup v2"), QStringLiteral("cgroup v1"),
                                        QStringLiteral("rlimit"), QStringLiteral("not enforced")};
        for (const char *limit : {"memory_bytes", "cpu_seconds", "processes", "file_size_bytes"}) {
            const QString mechanism =
                    enforcement.value(QLatin1String(limit)).toObject().value("mechanism").toString();
            QVERIFY2(mechanisms.contains(mechanism), limit);
        }
        const CgroupManager &cgroups = CgroupManager::forThisProcess();
        QCOMPARE(enforcement.value("processes").toObject().value("mechanism").toString(),
                 cgroups.pids().version != CgroupManager::Version::None
                         ? CgroupManager::versionName(cgroups.pids().version)
                         : ::geteuid() == 0 ? QStringLiteral("not enforced") : QStringLiteral("rlimit"));
        QCOMPARE(enforcement.value("memory_bytes").toObject().value("mechanism").toString(),
                 cgroups.memory().version != CgroupManager::Version::None
                         ? CgroupManager::versionName(cgroups.memory().version)
                         : QStringLiteral("rlimit"));
    }

    void managerMakesItsTreeAndRemovesIt()
    {
        QString directories[2];
        std::unique_ptr<WorkerCgroup> left;
        {
            CgroupManager manager(QStringLiteral("replhost-test-%1").arg(::getpid()));
            const CgroupManager::Controller *controllers[] = {&manager.memory(), &manager.pids()};
            for (int i = 0; i < 2; ++i) {
                if (controllers[i]->version == CgroupManager::Version::None) {
                    QVERIFY(!controllers[i]->reason.isEmpty());
                    continue;
                }
                directories[i] = controllers[i]->directory;
                QVERIFY(QFileInfo(directories[i]).isDir());
            }
            auto placed = manager.create(64 << 20, 16);
            QVERIFY2(placed, placed ? "" : qPrintable(placed.error().message));
            if (placed->cgroup) {
                for (const QString &dir : placed->cgroup->directories())
                    QVERIFY(QFileInfo(dir).isDir());
                if (placed->processesPlaced)
                    QCOMPARE(readFile(manager.pids().directory + "/worker-1/pids.max"), "16");
            }
            // Left for the manager to remove: a worker cgroup that outlives it.
            left = std::move(placed->cgroup);
        }
        for (const QString &dir : directories)
            if (!dir.isEmpty())
                QVERIFY2(!QFileInfo::exists(dir), qPrintable(dir));
    }

    void workerCgroupHoldsTheLimitsAndGoesWithTheWorker_data()
    {
        QTest::addColumn<QString>("language");
        QTest::newRow("python") << "python";
        QTest::newRow("bash") << "bash";
    }
    void workerCgroupHoldsTheLimitsAndGoesWithTheWorker()
    {
        QFETCH(QString, language);
        const CgroupManager &cgroups = CgroupManager::forThisProcess();
        if (cgroups.pids().version == CgroupManager::Version::None)
            QSKIP(qPrintable(skipReasonForProcesses()));
        QVERIFY(createWorkspace("limited", R"({"limits": {"processes": 48}})"));
        auto context = createContext("limited", language);
        QVERIFY2(context, context ? "" : qPrintable(context.error().message));
        const QString code = language == "python" ? QStringLiteral("print('ready')")
                                                  : QStringLiteral("echo ready");
        const ExecutionPtr ready = run("limited", context->id, code);
        QVERIFY(ready);
        VERIFY_EXEC(ready->status() == "ok", ready);
        const QString dir = workerCgroup(workerPid("limited", context->id), cgroups.pids(), "pids");
        QVERIFY2(dir.contains(QStringLiteral("/worker-")), qPrintable(dir));
        QCOMPARE(readFile(dir + "/pids.max"), QByteArray("48"));
        QVERIFY(contexts().remove("limited", context->id));
        QVERIFY2(!QFileInfo::exists(dir), qPrintable(dir));
    }

    void forkBombIsHeldWhileAnotherContextAnswers_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("bomb");
        QTest::newRow("bash") << "bash" << ":(){ :|:& };:";
        // Every process forks for ever; a refused fork makes a child hold its slot and never
        // return to the driver, and makes the worker itself report and stop.
        QTest::newRow("python") << "python"
                                << "import os, time\n"
                                   "me = os.getpid()\n"
                                   "refused = 0\n"
                                   "while refused < 20:\n"
                                   "    try:\n"
                                   "        os.fork()\n"
                                   "    except BlockingIOError:\n"
                                   "        if os.getpid() != me:\n"
                                   "            time.sleep(120)\n"
                                   "            os._exit(0)\n"
                                   "        refused += 1\n"
                                   "if os.getpid() != me:\n"
                                   "    os._exit(0)\n"
                                   "print('refused', refused)";
    }
    void forkBombIsHeldWhileAnotherContextAnswers()
    {
        QFETCH(QString, language);
        QFETCH(QString, bomb);
        if (const QString reason = skipReasonForProcesses(); !reason.isEmpty())
            QSKIP(qPrintable(reason));
        auto bystander = createContext({}, QStringLiteral("bash"));
        QVERIFY(bystander);
        QVERIFY(createWorkspace("bombs", QByteArray(R"({"limits": {"processes": )")
                                                 + QByteArray::number(kProcessLimit) + "}}"));

        // First show that the limit holds in this very setting, with a loop that stops by itself.
        auto probe = createContext("bombs", QStringLiteral("python"));
        QVERIFY(probe);
        const ExecutionPtr bounded = run("bombs", probe->id, QStringLiteral(
                "import os, time\n"
                "kids = []\n"
                "try:\n"
                "    for _ in range(200):\n"
                "        pid = os.fork()\n"
                "        if pid == 0:\n"
                "            time.sleep(60)\n"
                "            os._exit(0)\n"
                "        kids.append(pid)\n"
                "except BlockingIOError:\n"
                "    pass\n"
                "for pid in kids:\n"
                "    os.kill(pid, 9)\n"
                "    os.waitpid(pid, 0)\n"
                "print(len(kids))"));
        QVERIFY(bounded);
        VERIFY_EXEC(bounded->status() == "ok", bounded);
        const int started = out(bounded).trimmed().toInt();
        QVERIFY2(started > 0 && started < kProcessLimit, qPrintable(describe(bounded)));
        // The run says which limit refused the forks.
        VERIFY_EXEC(err(bounded).contains(QStringLiteral("[replhost] process limit of %1 reached")
                                                  .arg(kProcessLimit)),
                    bounded);
        QVERIFY(contexts().remove("bombs", probe->id));

        // Now the bomb.
        auto context = createContext("bombs", language);
        QVERIFY(context);
        const ExecutionPtr warm = run("bombs", context->id,
                                      language == "python" ? QStringLiteral("pass")
                                                           : QStringLiteral("true"));
        QVERIFY(warm);
        const qint64 pid = workerPid("bombs", context->id);
        QVERIFY(pid > 0);
        const QString dir = workerCgroup(pid, CgroupManager::forThisProcess().pids(), "pids");
        QVERIFY2(dir.contains(QStringLiteral("/worker-")), qPrintable(dir));
        // Not waited for: a shell whose cgroup is full retries its own forks for a long while
        // before it reports; what matters is that everything else goes on meanwhile.
        RunRequest request;
        request.workspace = QStringLiteral("bombs");
        request.contextId = context->id;
        request.code = bomb;
        QVERIFY(contexts().run(request));
        QTRY_VERIFY_WITH_TIMEOUT(refusals(dir) > 0, kRunTimeout);
        QVERIFY(readFile(dir + "/pids.current").toInt() <= kProcessLimit);
        verifyAnswers(bystander->id);
        QVERIFY(readFile(dir + "/pids.current").toInt() <= kProcessLimit);

        // Deleting the context kills all of it, whatever left the worker's process group.
        QVERIFY(contexts().remove("bombs", context->id));
        QVERIFY2(!QFileInfo::exists(dir), qPrintable(dir));
        verifyAnswers(bystander->id);
    }

    void memoryBombEndsTheRunNamingTheLimit()
    {
        const CgroupManager::Controller &memory = CgroupManager::forThisProcess().memory();
        if (memory.version == CgroupManager::Version::None)
            QSKIP(qPrintable(QStringLiteral("no memory cgroup can be made here (%1); the "
                                            "address-space rlimit is covered by tst_workerlimits")
                                     .arg(memory.reason)));
        auto bystander = createContext({}, QStringLiteral("bash"));
        QVERIFY(bystander);
        QVERIFY(createWorkspace("hungry", R"({"limits": {"memory_bytes": 134217728}})"));
        auto context = createContext("hungry", QStringLiteral("python"));
        QVERIFY(context);
        const ExecutionPtr bomb = run("hungry", context->id, QStringLiteral(
                "chunks = []\n"
                "while True:\n"
                "    chunks.append(b'x' * (16 << 20))"));
        QVERIFY(bomb);
        const QJsonObject error = eventFields(bomb, QStringLiteral("error"));
        VERIFY_EXEC(error.value("ename").toString() == "LimitExceeded", bomb);
        VERIFY_EXEC(error.value("evalue").toString().startsWith(
                            "memory limit of 134217728 bytes (128 MiB) reached"),
                    bomb);
        QCOMPARE(error.value("limit").toString(), QStringLiteral("memory_bytes"));
        QCOMPARE(error.value("limit_value").toInteger(), 134217728);
        QCOMPARE(doneOf(bomb).value("state_lost").toBool(), true);
        verifyAnswers(bystander->id);
        // The context goes on in a new worker.
        const ExecutionPtr after = run("hungry", context->id, QStringLiteral("print('back')"));
        QVERIFY(after);
        VERIFY_EXEC(out(after) == "back\n", after);
    }

    void everyLanguageRunsUnderGenerousLimits_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("expected");
        QTest::newRow("python") << "python" << "print(6 * 7)" << "42\n";
        QTest::newRow("bash") << "bash" << "echo $((6 * 7))" << "42\n";
        QTest::newRow("javascript") << "javascript" << "console.log(6 * 7)" << "42\n";
        QTest::newRow("typescript") << "typescript" << "console.log((6 as number) * 7)" << "42\n";
        QTest::newRow("perl") << "perl" << "print 6 * 7, \"\\n\";" << "42\n";
        QTest::newRow("java") << "java" << "System.out.println(6 * 7);" << "42\n";
        QTest::newRow("go") << "go" << "fmt.Println(6 * 7)" << "42\n";
    }
    void everyLanguageRunsUnderGenerousLimits()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        QFETCH(QString, expected);
        auto plugin = m_engine->plugins().resolve(language);
        if (!plugin || !(*plugin)->runtime.available)
            QSKIP(qPrintable(language + QStringLiteral(" is not available here")));
        // Memory only where a cgroup holds it: as an address-space limit it stops the JVM and
        // Go from starting at any value a desktop would call generous (documented).
        const bool memoryInCgroup =
                CgroupManager::forThisProcess().memory().version != CgroupManager::Version::None;
        QByteArray settings = R"({"limits": {"cpu_seconds": 3600, "file_size_bytes": 1073741824)";
        if (memoryInCgroup)
            settings += R"(, "memory_bytes": 2147483648)";
        // Processes only where they can be limited: a server run as root without a pids cgroup
        // refuses a workspace that asks (limitsThatCannotBeEnforcedAreRefused).
        if (WorkerConfinement::enforcement().value(QLatin1String("processes")).toObject()
                    .value(QLatin1String("mechanism")) != QLatin1String("not enforced"))
            settings += R"(, "processes": 4096)";
        settings += "}}";
        QVERIFY(createWorkspace("generous", settings));
        auto context = createContext("generous", language);
        QVERIFY2(context, context ? "" : qPrintable(context.error().message));
        const ExecutionPtr answer = run("generous", context->id, code);
        QVERIFY(answer);
        VERIFY_EXEC(answer->status() == "ok" && out(answer) == expected, answer);
    }

    void cpuLimitEndsTheRunNamingTheLimit()
    {
        auto bystander = createContext({}, QStringLiteral("bash"));
        QVERIFY(bystander);
        QVERIFY(createWorkspace("busy", R"({"limits": {"cpu_seconds": 1}})"));
        auto context = createContext("busy", QStringLiteral("bash"));
        QVERIFY(context);
        const ExecutionPtr spin = run("busy", context->id, QStringLiteral("while :; do :; done"));
        QVERIFY(spin);
        const QJsonObject error = eventFields(spin, QStringLiteral("error"));
        VERIFY_EXEC(error.value("ename").toString() == "LimitExceeded", spin);
        VERIFY_EXEC(error.value("evalue").toString().startsWith("CPU time limit of 1 s reached"),
                    spin);
        verifyAnswers(bystander->id);
    }

    void fileSizeLimitStopsAWriteNamingTheLimit()
    {
        QVERIFY(createWorkspace("small", R"({"limits": {"file_size_bytes": 4096}})"));
        auto context = createContext("small", QStringLiteral("bash"));
        QVERIFY(context);
        // head is the one that dies of SIGXFSZ; the shell reports it and goes on.
        const ExecutionPtr write = run("small", context->id,
                                       QStringLiteral("head -c 100000 /dev/zero > big; echo $?; "
                                                      "stat -c %s big"));
        QVERIFY(write);
        VERIFY_EXEC(out(write) == QStringLiteral("%1\n4096\n").arg(128 + SIGXFSZ), write);
    }
};

QTEST_GUILESS_MAIN(ConfinedWorkersTest)
#include "tst_confinedworkers.moc"
