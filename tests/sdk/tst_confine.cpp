// SPDX-License-Identifier: Apache-2.0
// The replhost-confine launcher on its own: each option reaches the program it runs, limits are
// really enforced by the kernel, and bad input ends it with status 127 and a message that names
// the problem, without running the program.
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>

namespace {

constexpr int kLong = 30000;

const QString kLauncher = QStringLiteral(REPLHOST_CONFINE);

struct Run {
    QProcess::ExitStatus status = QProcess::NormalExit;
    int code = -1;
    QString out;
    QString err;
};

Run launch(const QStringList &arguments, const QString &workingDirectory = {})
{
    QProcess process;
    process.setWorkingDirectory(workingDirectory);
    process.start(kLauncher, arguments);
    Run run;
    if (!process.waitForFinished(kLong)) {
        process.kill();
        process.waitForFinished();
        run.err = QStringLiteral("(did not finish)");
        return run;
    }
    run.status = process.exitStatus();
    run.code = process.exitCode();
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

// The soft and hard values of one line of /proc/<pid>/limits ("Max cpu time  1  2  seconds").
QStringList limitsLine(const QString &limits, const QString &name)
{
    for (const QString &line : limits.split(QLatin1Char('\n'))) {
        if (!line.startsWith(name))
            continue;
        return line.mid(name.size()).split(QRegularExpression(QStringLiteral("\\s+")),
                                           Qt::SkipEmptyParts).mid(0, 2);
    }
    return {};
}

QString statusLine(const QString &status, const QString &name)
{
    for (const QString &line : status.split(QLatin1Char('\n')))
        if (line.startsWith(name + QLatin1Char(':')))
            return line.mid(name.size() + 1).trimmed();
    return {};
}

} // namespace

class tst_Confine : public QObject {
    Q_OBJECT

private slots:
    void limitReachesTheProgram_data()
    {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("soft");
        QTest::addColumn<QString>("hard");
        QTest::newRow("address space") << "--rlimit-as" << "1073741824"
                                       << "Max address space" << "1073741824" << "1073741824";
        // The hard limit one second later: SIGXCPU first, SIGKILL for a program ignoring it.
        QTest::newRow("cpu time") << "--rlimit-cpu" << "7" << "Max cpu time" << "7" << "8";
        QTest::newRow("processes") << "--rlimit-nproc" << "300" << "Max processes" << "300"
                                   << "300";
        QTest::newRow("file size") << "--rlimit-fsize" << "65536" << "Max file size" << "65536"
                                   << "65536";
    }
    void limitReachesTheProgram()
    {
        QFETCH(QString, option);
        QFETCH(QString, value);
        QFETCH(QString, line);
        QFETCH(QString, soft);
        QFETCH(QString, hard);
        const Run run = launch({option, value, QStringLiteral("--"), QStringLiteral("/bin/cat"),
                                QStringLiteral("/proc/self/limits")});
        QCOMPARE(run.err, QString());
        QCOMPARE(run.code, 0);
        QCOMPARE(limitsLine(run.out, line), (QStringList{soft, hard}));
    }

    void programKeepsTheLaunchersPid()
    {
        // exec in place: the spawner's pid, process group and pipes are the worker's.
        QProcess process;
        process.start(kLauncher, {QStringLiteral("--"), QStringLiteral("/bin/sh"),
                                  QStringLiteral("-c"), QStringLiteral("echo $$")});
        QVERIFY(process.waitForStarted(kLong));
        const qint64 pid = process.processId();
        QVERIFY(process.waitForFinished(kLong));
        QCOMPARE(process.readAllStandardOutput().trimmed(), QByteArray::number(pid));
    }

    void cgroupOptionsWriteThePidToEachFile()
    {
        // A cgroup.procs file takes the pid of the writer; plain files show what was written.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString first = dir.filePath(QStringLiteral("a.procs"));
        const QString second = dir.filePath(QStringLiteral("b.procs"));
        for (const QString &path : {first, second}) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        const Run run = launch({QStringLiteral("--cgroup"), first, QStringLiteral("--cgroup"),
                                second, QStringLiteral("--"), QStringLiteral("/bin/sh"),
                                QStringLiteral("-c"), QStringLiteral("echo $$")});
        QCOMPARE(run.err, QString());
        QCOMPARE(run.code, 0);
        for (const QString &path : {first, second}) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QCOMPARE(QString::fromLatin1(file.readAll()), run.out);
        }
    }

    void ignoreSignalsSetsThemIgnored_data()
    {
        QTest::addColumn<QString>("list");
        QTest::newRow("names") << "INT,QUIT";
        QTest::newRow("SIG names") << "SIGINT,SIGQUIT";
        QTest::newRow("numbers") << "2,3";
    }
    void ignoreSignalsSetsThemIgnored()
    {
        QFETCH(QString, list);
        const Run run = launch({QStringLiteral("--ignore-signals"), list, QStringLiteral("--"),
                                QStringLiteral("/bin/cat"), QStringLiteral("/proc/self/status")});
        QCOMPARE(run.code, 0);
        const qulonglong ignored = statusLine(run.out, QStringLiteral("SigIgn")).toULongLong(nullptr, 16);
        QCOMPARE(ignored & ((1ULL << (SIGINT - 1)) | (1ULL << (SIGQUIT - 1))),
                 (1ULL << (SIGINT - 1)) | (1ULL << (SIGQUIT - 1)));
    }

    void defaultSignalsUndoesAnOuterIgnore()
    {
        // The sandbox layout: an outer launcher ignores INT and QUIT for bwrap's monitor, the
        // inner one gives the worker every signal back.
        const Run run = launch({QStringLiteral("--ignore-signals"), QStringLiteral("INT,QUIT"),
                                QStringLiteral("--"), kLauncher,
                                QStringLiteral("--default-signals"), QStringLiteral("--"),
                                QStringLiteral("/bin/cat"), QStringLiteral("/proc/self/status")});
        QCOMPARE(run.err, QString());
        QCOMPARE(run.code, 0);
        QCOMPARE(statusLine(run.out, QStringLiteral("SigIgn")), QStringLiteral("0000000000000000"));
        QCOMPARE(statusLine(run.out, QStringLiteral("SigBlk")), QStringLiteral("0000000000000000"));
    }

    void cpuLimitEndsABusyProgramWithSigxcpu()
    {
        const Run run = launch({QStringLiteral("--rlimit-cpu"), QStringLiteral("1"),
                                QStringLiteral("--"), QStringLiteral("/bin/sh"),
                                QStringLiteral("-c"), QStringLiteral("while :; do :; done")});
        QCOMPARE(run.status, QProcess::CrashExit);
        QCOMPARE(run.code, SIGXCPU);
    }

    void fileSizeLimitStopsAWriteAtTheLimit()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Run run = launch({QStringLiteral("--rlimit-fsize"), QStringLiteral("4096"),
                                QStringLiteral("--"), QStringLiteral("/bin/sh"),
                                QStringLiteral("-c"),
                                QStringLiteral("head -c 100000 /dev/zero > big; echo $?")},
                               dir.path());
        QCOMPARE(run.code, 0);
        // head died of SIGXFSZ: the shell reports 128 + 25.
        QCOMPARE(run.out.trimmed(), QString::number(128 + SIGXFSZ));
        QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("big"))).size(), 4096);
    }

    void badInputExits127WithAMessage_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString sh = QStringLiteral("/bin/true");
        QTest::newRow("not a number") << QStringList{"--rlimit-cpu", "ten", "--", sh}
                                      << "--rlimit-cpu: 'ten' is not a positive integer";
        QTest::newRow("zero") << QStringList{"--rlimit-as", "0", "--", sh}
                              << "--rlimit-as: '0' is not a positive integer";
        QTest::newRow("negative") << QStringList{"--rlimit-fsize", "-5", "--", sh}
                                  << "--rlimit-fsize: '-5' is not a positive integer";
        QTest::newRow("too large") << QStringList{"--rlimit-nproc", "99999999999999999999", "--", sh}
                                   << "--rlimit-nproc: '99999999999999999999' is not a positive integer";
        QTest::newRow("missing value") << QStringList{"--rlimit-cpu"}
                                       << "--rlimit-cpu needs a value";
        QTest::newRow("unknown option") << QStringList{"--rlimit-stack", "5", "--", sh}
                                        << "unknown option '--rlimit-stack'";
        QTest::newRow("no separator") << QStringList{"--rlimit-cpu", "5", sh}
                                      << "unknown option '/bin/true'";
        QTest::newRow("no program") << QStringList{"--rlimit-cpu", "5", "--"}
                                    << "no program to run";
        QTest::newRow("nothing") << QStringList{} << "no program to run";
        QTest::newRow("relative program") << QStringList{"--", "true"}
                                          << "the program must be an absolute path, not 'true'";
        QTest::newRow("missing program") << QStringList{"--", "/nonexistent/program"}
                                         << "cannot execute /nonexistent/program: No such file or directory";
        QTest::newRow("missing cgroup") << QStringList{"--cgroup", "/nonexistent/cgroup.procs", "--", sh}
                                        << "--cgroup /nonexistent/cgroup.procs: No such file or directory";
        QTest::newRow("unknown signal") << QStringList{"--ignore-signals", "INT,NOPE", "--", sh}
                                        << "--ignore-signals: 'NOPE' is not a signal";
        QTest::newRow("uncatchable signal") << QStringList{"--ignore-signals", "KILL", "--", sh}
                                            << "--ignore-signals KILL: Invalid argument";
        QTest::newRow("empty signal list") << QStringList{"--ignore-signals", "", "--", sh}
                                           << "--ignore-signals needs a list of signals";
    }
    void badInputExits127WithAMessage()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // The program, had it run, would leave a file behind.
        const QString marker = dir.filePath(QStringLiteral("ran"));
        if (arguments.contains(QStringLiteral("--"))
            && arguments.last() == QLatin1String("/bin/true")) {
            arguments.removeLast();
            arguments << QStringLiteral("/bin/touch") << marker;
        }
        const Run run = launch(arguments);
        QCOMPARE(run.status, QProcess::NormalExit);
        QCOMPARE(run.code, 127);
        QVERIFY2(run.err.startsWith(QStringLiteral("replhost-confine: ")), qPrintable(run.err));
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QCOMPARE(run.err.count(QLatin1Char('\n')), 1);
        QVERIFY(!QFile::exists(marker));
    }
};

QTEST_GUILESS_MAIN(tst_Confine)
#include "tst_confine.moc"
