// SPDX-License-Identifier: Apache-2.0
// WorkerProcess under a confinement (SessionOptions::settings["confinement"]), with the real
// Python and Bash drivers: the limits reach the interpreter, a limit that ends it ends the run
// with an error naming the limit and its value, and a confinement that cannot be applied is a
// start failure that says why. Cgroup limits need a host-made cgroup: tests/core covers them.
#include "replhost/sdk/workerprocess.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <unistd.h>

using namespace replhost::sdk;

namespace {

constexpr int kLong = 30000;

struct Language {
    QString program;
    QStringList arguments;
};

Language language(const QString &name)
{
    if (name == QLatin1String("python"))
        return {QStringLiteral(REPLHOST_TEST_PYTHON),
                {QStringLiteral("-u"), QStringLiteral("-X"), QStringLiteral("utf8"),
                 QStringLiteral(REPLHOST_PYTHON_DRIVER)}};
    return {QStringLiteral(REPLHOST_TEST_BASH),
            {QStringLiteral("--norc"), QStringLiteral("--noprofile"),
             QStringLiteral(REPLHOST_BASH_DRIVER)}};
}

QJsonObject confinement(const QJsonObject &limits, const QJsonArray &cgroups = {})
{
    QJsonObject c{{QStringLiteral("launcher"), QStringLiteral(REPLHOST_CONFINE)},
                  {QStringLiteral("limits"), limits}};
    if (!cgroups.isEmpty())
        c.insert(QStringLiteral("cgroups"), cgroups);
    return c;
}

class Worker {
public:
    Worker(const QString &name, const QJsonValue &confinementValue, const QString &cwd)
    {
        const Language lang = language(name);
        WorkerSpec spec;
        spec.program = lang.program;
        spec.arguments = lang.arguments;
        spec.startTimeoutMs = 20000;
        spec.interruptKillMs = 3000;
        spec.shutdownGraceMs = 300;
        SessionOptions options;
        options.contextId = QStringLiteral("limits");
        options.workingDirectory = cwd;
        const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const QString &key : env.keys())
            options.environment.insert(key, env.value(key));
        if (!confinementValue.isUndefined())
            options.settings.insert(QStringLiteral("confinement"), confinementValue);
        session = std::make_unique<WorkerProcess>(spec, options);
        QObject::connect(session.get(), &Session::event, &context,
                         [this](const Event &e) { events.append(e); });
        QObject::connect(session.get(), &Session::failed, &context,
                         [this](const QString &message) { failure = message; ++ends; });
        QObject::connect(session.get(), &Session::ready, &context, [this] { ++ends; });
        session->start();
    }

    bool waitStarted() { return QTest::qWaitFor([this] { return ends > 0; }, kLong); }

    // Runs code to its done.
    bool run(const QString &id, const QString &code)
    {
        ExecuteRequest request;
        request.id = id;
        request.code = code;
        request.executionCount = ++count;
        session->execute(request);
        return QTest::qWaitFor([&] { return find(id, Event::Kind::Done).kind == Event::Kind::Done; },
                               kLong);
    }
    Event find(const QString &id, Event::Kind kind) const
    {
        for (const Event &e : events)
            if (e.executionId == id && e.kind == kind)
                return e;
        return {};
    }
    QString text(const QString &id, const QString &stream) const
    {
        QString t;
        for (const Event &e : events)
            if (e.executionId == id && e.kind == Event::Kind::Stream
                && e.fields.value(QStringLiteral("name")).toString() == stream)
                t += e.fields.value(QStringLiteral("text")).toString();
        return t;
    }

    std::unique_ptr<WorkerProcess> session;
    QList<Event> events;
    QString failure;
    int ends = 0;
    int count = 0;

private:
    QObject context;
};

void addLanguages()
{
    QTest::addColumn<QString>("lang");
    QTest::newRow("python") << "python";
    QTest::newRow("bash") << "bash";
}

} // namespace

class tst_WorkerLimits : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void eachLimitReachesTheInterpreter_data()
    {
        QTest::addColumn<QString>("lang");
        QTest::addColumn<QString>("limit");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("expected");
        const QString py = QStringLiteral("import resource; print(*resource.getrlimit(resource.RLIMIT_%1))");
        QTest::newRow("python cpu") << "python" << "cpu_seconds" << py.arg("CPU") << "5 6";
        QTest::newRow("python memory") << "python" << "memory_bytes"
                                       << py.arg("AS") << "4294967296 4294967296";
        QTest::newRow("python processes") << "python" << "processes"
                                          << py.arg("NPROC") << "5 5";
        QTest::newRow("python file size") << "python" << "file_size_bytes"
                                          << py.arg("FSIZE") << "5 5";
        // bash reports CPU time in seconds, address space and file size in KiB.
        QTest::newRow("bash cpu") << "bash" << "cpu_seconds" << "echo $(ulimit -St) $(ulimit -Ht)"
                                  << "5 6";
        QTest::newRow("bash memory") << "bash" << "memory_bytes"
                                     << "echo $(ulimit -Sv) $(ulimit -Hv)" << "4194304 4194304";
        QTest::newRow("bash processes") << "bash" << "processes"
                                        << "echo $(ulimit -Su) $(ulimit -Hu)" << "5 5";
        QTest::newRow("bash file size") << "bash" << "file_size_bytes"
                                        << "echo $(ulimit -Sf) $(ulimit -Hf)" << "5 5";
    }
    void eachLimitReachesTheInterpreter()
    {
        QFETCH(QString, lang);
        QFETCH(QString, limit);
        QFETCH(QString, code);
        QFETCH(QString, expected);
        // Values the interpreter starts under; the limit is the only thing set.
        qint64 value = 5;
        if (limit == QLatin1String("memory_bytes"))
            value = qint64(4) << 30;
        else if (limit == QLatin1String("file_size_bytes"))
            value = lang == QLatin1String("bash") ? 5 * 1024 : 5;
        if (limit == QLatin1String("processes") && ::geteuid() != 0) {
            // RLIMIT_NPROC counts every process of the user: a small value would stop this
            // user's other processes from being counted under it and the shell from forking.
            value = 4096;
            expected = QStringLiteral("4096 4096");
        }
        Worker worker(lang, confinement({{limit, value}}), m_dir.path());
        QVERIFY(worker.waitStarted());
        QCOMPARE(worker.failure, QString());
        QVERIFY(worker.run(QStringLiteral("r"), code));
        QCOMPARE(worker.text(QStringLiteral("r"), QStringLiteral("stdout")).trimmed(), expected);
    }

    void cpuLimitEndsTheRunNamingTheLimit_data() { addLanguages(); }
    void cpuLimitEndsTheRunNamingTheLimit()
    {
        QFETCH(QString, lang);
        Worker worker(lang, confinement({{QStringLiteral("cpu_seconds"), 1}}), m_dir.path());
        QVERIFY(worker.waitStarted());
        QSignalSpy terminated(worker.session.get(), &Session::terminated);
        const QString busy = lang == QLatin1String("python") ? QStringLiteral("while True: pass")
                                                             : QStringLiteral("while :; do :; done");
        QVERIFY(worker.run(QStringLiteral("busy"), busy));
        const Event error = worker.find(QStringLiteral("busy"), Event::Kind::Error);
        QCOMPARE(error.fields.value(QStringLiteral("ename")).toString(),
                 QStringLiteral("LimitExceeded"));
        const QString evalue = error.fields.value(QStringLiteral("evalue")).toString();
        QVERIFY2(evalue.startsWith(QStringLiteral("CPU time limit of 1 s reached")), qPrintable(evalue));
        QVERIFY2(evalue.contains(QStringLiteral("SIGXCPU")), qPrintable(evalue));
        QCOMPARE(error.fields.value(QStringLiteral("limit")).toString(), QStringLiteral("cpu_seconds"));
        QCOMPARE(error.fields.value(QStringLiteral("limit_value")).toInteger(), 1);
        const Event done = worker.find(QStringLiteral("busy"), Event::Kind::Done);
        QCOMPARE(done.fields.value(QStringLiteral("state_lost")).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QVERIFY(terminated.first().at(1).toString().contains(QStringLiteral("CPU time limit")));
    }

    void fileSizeLimit_data()
    {
        QTest::addColumn<QString>("lang");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("ename");
        QTest::addColumn<QString>("evalue");
        QTest::addColumn<bool>("workerSurvives");
        // CPython ignores SIGXFSZ, so the write fails with EFBIG and the program says so.
        QTest::newRow("python") << "python"
                                << "open('big-py', 'wb').write(b'x' * 100000)"
                                << "OSError" << "File too large" << true;
        // bash's own printf writes the file: the shell itself gets SIGXFSZ.
        QTest::newRow("bash") << "bash" << "printf '%100000s' x > big-sh"
                              << "LimitExceeded"
                              << "file size limit of 8192 bytes reached: the interpreter was "
                                 "killed by signal 25 (SIGXFSZ)"
                              << false;
    }
    void fileSizeLimit()
    {
        QFETCH(QString, lang);
        QFETCH(QString, code);
        QFETCH(QString, ename);
        QFETCH(QString, evalue);
        QFETCH(bool, workerSurvives);
        Worker worker(lang, confinement({{QStringLiteral("file_size_bytes"), 8192}}), m_dir.path());
        QVERIFY(worker.waitStarted());
        QVERIFY(worker.run(QStringLiteral("write"), code));
        const Event error = worker.find(QStringLiteral("write"), Event::Kind::Error);
        QCOMPARE(error.fields.value(QStringLiteral("ename")).toString(), ename);
        QVERIFY2(error.fields.value(QStringLiteral("evalue")).toString().contains(evalue),
                 qPrintable(error.fields.value(QStringLiteral("evalue")).toString()));
        const QFileInfo written(m_dir.filePath(lang == QLatin1String("python")
                                                       ? QStringLiteral("big-py")
                                                       : QStringLiteral("big-sh")));
        QCOMPARE(written.size(), 8192);
        const Event done = worker.find(QStringLiteral("write"), Event::Kind::Done);
        QCOMPARE(done.fields.value(QStringLiteral("state_lost")).toBool(), !workerSurvives);
        if (workerSurvives) {
            QVERIFY(worker.run(QStringLiteral("after"), QStringLiteral("print(1 + 1)")));
            QCOMPARE(worker.text(QStringLiteral("after"), QStringLiteral("stdout")), QStringLiteral("2\n"));
        }
    }

    void addressSpaceLimitIsTheProgramsMemoryError()
    {
        // Without a memory cgroup, memory is an address-space limit: allocation fails inside
        // the program, which reports it and lives on.
        Worker worker(QStringLiteral("python"),
                      confinement({{QStringLiteral("memory_bytes"), 512 * 1024 * 1024}}),
                      m_dir.path());
        QVERIFY(worker.waitStarted());
        QVERIFY(worker.run(QStringLiteral("big"), QStringLiteral("x = bytearray(2 * 1024 ** 3)")));
        QCOMPARE(worker.find(QStringLiteral("big"), Event::Kind::Error)
                         .fields.value(QStringLiteral("ename")).toString(),
                 QStringLiteral("MemoryError"));
        QVERIFY(worker.run(QStringLiteral("after"), QStringLiteral("print('alive')")));
        QCOMPARE(worker.text(QStringLiteral("after"), QStringLiteral("stdout")), QStringLiteral("alive\n"));
    }

    void emptyConfinementRunsTheWorkerAsIs_data()
    {
        QTest::addColumn<QJsonValue>("value");
        QTest::newRow("null") << QJsonValue(QJsonValue::Null);
        QTest::newRow("empty object") << QJsonValue(QJsonObject{});
    }
    void emptyConfinementRunsTheWorkerAsIs()
    {
        QFETCH(QJsonValue, value);
        Worker worker(QStringLiteral("python"), value, m_dir.path());
        QVERIFY(worker.waitStarted());
        QCOMPARE(worker.failure, QString());
        QVERIFY(worker.run(QStringLiteral("r"),
                           QStringLiteral("import resource; print(resource.getrlimit("
                                          "resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY)")));
        QCOMPARE(worker.text(QStringLiteral("r"), QStringLiteral("stdout")), QStringLiteral("True\n"));
    }

    void badConfinementFailsTheStart_data()
    {
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("message");
        const QJsonValue launcher(QStringLiteral(REPLHOST_CONFINE));
        QTest::newRow("not an object") << QJsonValue(5) << "confinement must be an object";
        QTest::newRow("no launcher")
                << QJsonValue(QJsonObject{{"limits", QJsonObject{{"cpu_seconds", 1}}}})
                << "confinement.launcher must be the absolute path of replhost-confine";
        QTest::newRow("relative launcher")
                << QJsonValue(QJsonObject{{"launcher", "replhost-confine"}})
                << "confinement.launcher must be the absolute path";
        QTest::newRow("unknown key")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"limit", QJsonObject{}}})
                << "confinement has unknown keys: limit";
        QTest::newRow("unknown limit")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"limits", QJsonObject{{"memory", 5}}}})
                << "confinement.limits has unknown keys: memory";
        QTest::newRow("negative limit")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"limits", QJsonObject{{"cpu_seconds", -1}}}})
                << "confinement.limits.cpu_seconds must be a whole number >= 0";
        QTest::newRow("fractional limit")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"limits", QJsonObject{{"processes", 1.5}}}})
                << "confinement.limits.processes must be a whole number >= 0";
        QTest::newRow("string limit")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"limits", QJsonObject{{"file_size_bytes", "1"}}}})
                << "confinement.limits.file_size_bytes must be a whole number >= 0";
        QTest::newRow("cgroups not a list")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"cgroups", "/sys/fs/cgroup"}})
                << "confinement.cgroups must be an array";
        QTest::newRow("relative cgroup")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"cgroups", QJsonArray{"cgroup.procs"}}})
                << "confinement.cgroups entries must be absolute paths";
        // The launcher itself refuses: its message is the start failure.
        QTest::newRow("missing cgroup")
                << QJsonValue(QJsonObject{{"launcher", launcher},
                                          {"cgroups", QJsonArray{"/nonexistent/cgroup.procs"}}})
                << "replhost-confine: --cgroup /nonexistent/cgroup.procs: No such file or directory";
        // Only a cgroup holds a rate: one no cgroup took is not left out, the worker does not start.
        QTest::newRow("CPU rate without a cgroup")
                << QJsonValue(QJsonObject{{"launcher", launcher}, {"limits", QJsonObject{{"cpu_millicores", 250}}}})
                << "limits.cpu_millicores 250 is held only by a cgroup's CPU quota";
        QTest::newRow("missing launcher")
                << QJsonValue(QJsonObject{{"launcher", "/nonexistent/replhost-confine"}})
                << "cannot start /nonexistent/replhost-confine: no such executable file";
    }
    void badConfinementFailsTheStart()
    {
        QFETCH(QJsonValue, value);
        QFETCH(QString, message);
        Worker worker(QStringLiteral("python"), value, m_dir.path());
        QVERIFY(worker.waitStarted());
        QVERIFY2(worker.failure.contains(message), qPrintable(worker.failure));
        QCOMPARE(worker.session->state(), Session::State::Dead);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(tst_WorkerLimits)
#include "tst_workerlimits.moc"
