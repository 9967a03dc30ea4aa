// SPDX-License-Identifier: Apache-2.0
#include <replhost/sdk/runtimeprobe.h>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace replhost;

class RuntimeProbeTest : public QObject {
    Q_OBJECT

    static sdk::RuntimeLookup lookup()
    {
        return {QStringLiteral("widget"), QStringLiteral("replhost-no-such-program"),
                QStringLiteral("REPLHOST_TEST_WIDGET"), QStringLiteral("install widget")};
    }

private slots:
    void init() { qunsetenv("REPLHOST_TEST_WIDGET"); }

    void missingDefaultProgramSaysWhatToInstallAndSet()
    {
        const auto found = sdk::locateRuntime(lookup(), {});
        QVERIFY(!found);
        QCOMPARE(found.error().code, QStringLiteral("unavailable"));
        QCOMPARE(found.error().message,
                 QStringLiteral("replhost-no-such-program not found on PATH; install widget or "
                                "set REPLHOST_TEST_WIDGET"));
    }

    void settingWinsOverEnvironmentAndPath()
    {
        qputenv("REPLHOST_TEST_WIDGET", "/bin/false");
        const auto found =
            sdk::locateRuntime(lookup(), {{QStringLiteral("interpreter"), QStringLiteral("sh")}});
        QVERIFY2(found, qPrintable(found ? QString() : found.error().message));
        QVERIFY(found->endsWith(QLatin1String("/sh")));
    }

    void environmentVariableIsUsedWithoutSetting()
    {
        qputenv("REPLHOST_TEST_WIDGET", "/bin/sh");
        const auto found = sdk::locateRuntime(lookup(), {});
        QVERIFY(found);
        QCOMPARE(*found, QStringLiteral("/bin/sh"));
    }

    void nonExecutablePathNamesItsOrigin()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("plain"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        qputenv("REPLHOST_TEST_WIDGET", file.toLocal8Bit());
        const auto found = sdk::locateRuntime(lookup(), {});
        QVERIFY(!found);
        QVERIFY(found.error().message.contains(file));
        QVERIFY(found.error().message.contains(QLatin1String("REPLHOST_TEST_WIDGET")));
    }

    void probeCommandReturnsStandardOutput()
    {
        const auto out = sdk::runProbeCommand(QStringLiteral("/bin/sh"),
                                              {QStringLiteral("-c"), QStringLiteral("echo 1.2.3")},
                                              10000);
        QVERIFY(out);
        QCOMPARE(*out, QByteArray("1.2.3\n"));
    }

    void failingProbeReportsExitCodeAndStderr()
    {
        const auto out = sdk::runProbeCommand(
            QStringLiteral("/bin/sh"),
            {QStringLiteral("-c"), QStringLiteral("echo first >&2; echo last >&2; exit 3")}, 10000);
        QVERIFY(!out);
        QVERIFY(out.error().message.contains(QLatin1String("exit code 3")));
        QVERIFY(out.error().message.contains(QLatin1String("first ... last")));
    }

    void hangingProbeTimesOut()
    {
        const auto out = sdk::runProbeCommand(QStringLiteral("/bin/sh"),
                                              {QStringLiteral("-c"), QStringLiteral("sleep 30")},
                                              300);
        QVERIFY(!out);
        QVERIFY(out.error().message.contains(QLatin1String("did not answer")));
    }
};

QTEST_GUILESS_MAIN(RuntimeProbeTest)
#include "tst_runtimeprobe.moc"
