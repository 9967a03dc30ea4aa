// SPDX-License-Identifier: Apache-2.0
// WorkspaceSettings as a value: its defaults, its JSON form, validation that names the bad
// field, JSON Merge Patch, and the rule for an execution's timeout.
#include "core/workspacesettings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <climits>

using namespace replhost;
using namespace replhost::core;

namespace {

QJsonObject parse(const char *json)
{
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

QJsonObject parse(const QString &json)
{
    return QJsonDocument::fromJson(json.toUtf8()).object();
}

} // namespace

class WorkspaceSettingsTest : public QObject {
    Q_OBJECT

private slots:
    void defaultsLimitNothingADesktopUserWouldNotice()
    {
        const WorkspaceSettings defaults;
        QCOMPARE(defaults.limits.maxContexts, 64);
        QCOMPARE(defaults.limits.timeoutMs, 0);
        QCOMPARE(defaults.limits.outputBytes, qint64(16 * 1024 * 1024));
        QCOMPARE(defaults.limits.memoryBytes, 0);
        QCOMPARE(defaults.limits.cpuSeconds, 0);
        QCOMPARE(defaults.limits.processes, 0);
        QCOMPARE(defaults.limits.fileSizeBytes, 0);
        QCOMPARE(defaults.isolation, WorkspaceSettings::Isolation::None);
        QVERIFY(defaults.network);
    }

    void toJsonHasEveryField()
    {
        const QJsonObject json = WorkspaceSettings().toJson();
        QCOMPARE(json, parse(R"({"limits": {"max_contexts": 64, "timeout_ms": 0,
                                            "output_bytes": 16777216, "memory_bytes": 0,
                                            "cpu_seconds": 0, "processes": 0,
                                            "file_size_bytes": 0, "cpu_millicores": 0},
                                 "restore": {"max_replay_cells": 1000, "max_replay_seconds": 300},
                                 "history": {"max_executions": 100000,
                                             "max_bytes": 1073741824, "max_age": 0},
                                 "isolation": "none", "network": true, "volumes": []})"));
    }

    void volumesAreBoundFromAllowedDirectoriesOnly()
    {
        QTemporaryDir allowed;
        QVERIFY(allowed.isValid() && QDir(allowed.path()).mkpath(QStringLiteral("logs")));
        QVERIFY(QFile::link(QStringLiteral("/etc"), allowed.filePath(QStringLiteral("out"))));
        WorkspaceSettings defaults;
        defaults.allowedVolumeRoots = {allowed.path()};
        const auto volume = [&](const QString &host, const QString &extra = {}) {
            return parse(QStringLiteral(R"({"isolation": "sandbox", "volumes": [{"host_path": "%1",
                                            "mount_path": "/mnt/logs/"%2}]})").arg(host, extra));
        };
        auto settings = WorkspaceSettings::fromJson(volume(allowed.filePath(QStringLiteral("logs"))), defaults);
        QVERIFY2(settings, settings ? "" : qPrintable(settings.error().message));
        QCOMPARE(settings->volumes.size(), 1);
        QCOMPARE(settings->volumes[0].hostPath, QFileInfo(allowed.filePath(QStringLiteral("logs"))).canonicalFilePath());
        QCOMPARE(settings->volumes[0].mountPath, QStringLiteral("/mnt/logs"));
        QVERIFY(settings->volumes[0].readOnly);  // unless asked otherwise
        auto back = WorkspaceSettings::fromJson(settings->toJson(), defaults);
        QVERIFY(back && *back == *settings);

        const QList<std::pair<QJsonObject, QString>> refused{
                {volume(QStringLiteral("/etc")), QStringLiteral("not under a directory the server allows")},
                {volume(allowed.filePath(QStringLiteral("out"))), QStringLiteral("not under a directory the server allows")},
                {volume(allowed.filePath(QStringLiteral("missing"))), QStringLiteral("is not a directory")},
                {volume(allowed.filePath(QStringLiteral("logs")), QStringLiteral(R"(, "owner": 0)")), QStringLiteral("unknown settings field volumes[].owner")},
                {parse(QStringLiteral(R"({"isolation": "sandbox", "volumes": [{"host_path": "%1", "mount_path": "/usr/lib"}]})")
                               .arg(allowed.filePath(QStringLiteral("logs")))), QStringLiteral("system directories")},
                {parse(QStringLiteral(R"({"volumes": [{"host_path": "%1", "mount_path": "/logs"}]})")
                               .arg(allowed.filePath(QStringLiteral("logs")))), QStringLiteral("needs isolation")},
        };
        for (const auto &[json, named] : refused) {
            auto bad = WorkspaceSettings::fromJson(json, defaults);
            QVERIFY(!bad);
            QCOMPARE(bad.error().code, QStringLiteral("bad_request"));
            QVERIFY2(bad.error().message.contains(named), qPrintable(bad.error().message));
        }
        // A server that allows none: none at all.
        QVERIFY(!WorkspaceSettings::fromJson(volume(allowed.filePath(QStringLiteral("logs"))), WorkspaceSettings()));
    }

    void fromJsonAppliesGivenFieldsOverTheDefaults()
    {
        WorkspaceSettings defaults;
        defaults.limits.timeoutMs = 5000;
        defaults.limits.processes = 100;
        auto settings = WorkspaceSettings::fromJson(
            parse(R"({"limits": {"max_contexts": 3, "memory_bytes": 1073741824,
                                 "processes": null},
                      "isolation": "sandbox", "network": false})"),
            defaults);
        QVERIFY2(settings, settings ? "" : qPrintable(settings.error().message));
        QCOMPARE(settings->limits.maxContexts, 3);
        QCOMPARE(settings->limits.memoryBytes, qint64(1) << 30);
        QCOMPARE(settings->limits.timeoutMs, 5000);   // not given: the default
        QCOMPARE(settings->limits.processes, 100);    // null: the default
        QCOMPARE(settings->isolation, WorkspaceSettings::Isolation::Sandbox);
        QVERIFY(!settings->network);
    }

    void toJsonAndFromJsonRoundTrip()
    {
        WorkspaceSettings original;
        original.limits = {7, 1234, 99999, qint64(3) << 30, 60, 512, 1 << 20};
        original.isolation = WorkspaceSettings::Isolation::Sandbox;
        original.network = false;
        auto back = WorkspaceSettings::fromJson(original.toJson(), WorkspaceSettings());
        QVERIFY(back);
        QVERIFY(*back == original);
    }

    void zeroMeansNoLimitForEveryLimit_data()
    {
        QTest::addColumn<QString>("field");
        for (const char *field : {"max_contexts", "timeout_ms", "output_bytes", "memory_bytes",
                                  "cpu_seconds", "processes", "file_size_bytes", "cpu_millicores"})
            QTest::newRow(field) << QString::fromLatin1(field);
    }

    void zeroMeansNoLimitForEveryLimit()
    {
        QFETCH(QString, field);
        WorkspaceSettings defaults;
        defaults.limits = {5, 5, 5, qint64(5) << 20, 5, 5, 5};
        auto settings = WorkspaceSettings::fromJson(
            QJsonObject{{QStringLiteral("limits"), QJsonObject{{field, 0}}}}, defaults);
        QVERIFY(settings);
        QCOMPARE(settings->toJson().value(QLatin1String("limits")).toObject().value(field).toInteger(),
                 0);
    }

    void badSettingsAreRefusedNamingTheField_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("named");  // what the message must contain

        QTest::newRow("negative") << R"({"limits": {"max_contexts": -1}})"
                                  << "limits.max_contexts must be 0 (no limit) or an integer "
                                     "from 1 to 100000";
        QTest::newRow("fraction") << R"({"limits": {"timeout_ms": 1.5}})" << "limits.timeout_ms";
        QTest::newRow("string") << R"({"limits": {"cpu_seconds": "60"}})" << "limits.cpu_seconds";
        QTest::newRow("boolean") << R"({"limits": {"processes": true}})" << "limits.processes";
        QTest::newRow("timer overflow") << R"({"limits": {"timeout_ms": 2147483648}})"
                                        << "from 1 to 2147483647";
        QTest::newRow("too little memory") << R"({"limits": {"memory_bytes": 4096}})"
                                           << "limits.memory_bytes must be 0 (no limit) or an "
                                              "integer from 1048576";
        QTest::newRow("too many processes") << R"({"limits": {"processes": 10000000}})"
                                            << "limits.processes";
        QTest::newRow("huge file size") << R"({"limits": {"file_size_bytes": 1e300}})"
                                        << "limits.file_size_bytes";
        QTest::newRow("unknown limit") << R"({"limits": {"max_context": 3}})"
                                       << "unknown settings field limits.max_context";
        QTest::newRow("unknown field") << R"({"limit": {"max_contexts": 3}})"
                                       << "unknown settings field limit";
        QTest::newRow("limits not an object") << R"({"limits": 3})" << "limits must be an object";
        QTest::newRow("unknown isolation") << R"({"isolation": "docker"})"
                                           << "isolation must be \"none\" or \"sandbox\"";
        QTest::newRow("network not a boolean") << R"({"network": "no"})"
                                               << "network must be true or false";
        QTest::newRow("view without a sandbox") << R"({"view_path": "/home/user"})"
                                                << "view_path needs isolation \"sandbox\"";
        QTest::newRow("relative view") << R"({"isolation": "sandbox", "view_path": "home"})"
                                       << "view_path must be an absolute path";
        QTest::newRow("view climbing") << R"({"isolation": "sandbox", "view_path": "/home/../usr"})"
                                       << "view_path must be an absolute path";
        QTest::newRow("view at the root") << R"({"isolation": "sandbox", "view_path": "/"})"
                                          << "view_path / is in the sandbox's system";
        QTest::newRow("view in the system") << R"({"isolation": "sandbox", "view_path": "/usr/local/w"})"
                                            << "view_path /usr/local/w is in the sandbox's system";
        QTest::newRow("view in /tmp") << R"({"isolation": "sandbox", "view_path": "/tmp/w"})"
                                      << "view_path /tmp/w is in the sandbox's system";
        QTest::newRow("view not a string") << R"({"isolation": "sandbox", "view_path": 3})"
                                           << "view_path must be an absolute path";
    }

    void aViewPathIsKeptOnlyWhenSet()
    {
        const auto viewed = WorkspaceSettings::fromJson(
                parse(R"({"isolation": "sandbox", "view_path": "/home/user/"})"), WorkspaceSettings());
        QVERIFY2(viewed, qPrintable(viewed ? QString() : viewed.error().message));
        QCOMPARE(viewed->viewPath, QStringLiteral("/home/user"));
        QCOMPARE(viewed->toJson().value(QLatin1String("view_path")).toString(), QStringLiteral("/home/user"));
        QVERIFY(!(*viewed == WorkspaceSettings()));
        const auto plain = WorkspaceSettings::fromJson(parse(R"({"isolation": "sandbox"})"), WorkspaceSettings());
        QVERIFY(plain);
        QVERIFY(plain->viewPath.isEmpty());
        QVERIFY(!plain->toJson().contains(QLatin1String("view_path")));
    }

    void badSettingsAreRefusedNamingTheField()
    {
        QFETCH(QString, json);
        QFETCH(QString, named);
        const QJsonDocument document = QJsonDocument::fromJson(json.toUtf8());
        QVERIFY(document.isObject());
        auto settings = WorkspaceSettings::fromJson(document.object(), WorkspaceSettings());
        QVERIFY(!settings);
        QCOMPARE(settings.error().code, QStringLiteral("bad_request"));
        QVERIFY2(settings.error().message.contains(named), qPrintable(settings.error().message));
    }

    void mergePatchReplacesMergesAndRemoves()
    {
        const QJsonObject overrides = parse(R"({"limits": {"max_contexts": 3, "timeout_ms": 100},
                                               "network": false})");
        const QJsonObject patch = parse(R"({"limits": {"timeout_ms": null, "processes": 10},
                                           "network": null, "isolation": "sandbox"})");
        QCOMPARE(WorkspaceSettings::mergePatch(overrides, patch),
                 parse(R"({"limits": {"max_contexts": 3, "processes": 10},
                           "isolation": "sandbox"})"));
        // An empty patch changes nothing; nulls for absent fields remove nothing.
        QCOMPARE(WorkspaceSettings::mergePatch(overrides, {}), overrides);
        QCOMPARE(WorkspaceSettings::mergePatch({}, parse(R"({"limits": {"processes": null}})")),
                 parse(R"({"limits": {}})"));
    }

    void timeoutMayBeShorterNeverLongerThanTheLimit_data()
    {
        QTest::addColumn<int>("limit");
        QTest::addColumn<int>("requested");
        QTest::addColumn<int>("effective");

        QTest::newRow("no limit, none asked") << 0 << 0 << 0;
        QTest::newRow("no limit, asked") << 0 << 700 << 700;
        QTest::newRow("limit, none asked") << 1000 << 0 << 1000;
        QTest::newRow("limit, shorter asked") << 1000 << 300 << 300;
        QTest::newRow("limit, same asked") << 1000 << 1000 << 1000;
        QTest::newRow("limit, longer asked") << 1000 << INT_MAX << 1000;
    }

    void timeoutMayBeShorterNeverLongerThanTheLimit()
    {
        QFETCH(int, limit);
        QFETCH(int, requested);
        QFETCH(int, effective);
        WorkspaceSettings settings;
        settings.limits.timeoutMs = limit;
        QCOMPARE(settings.effectiveTimeoutMs(requested), effective);
    }
};

QTEST_GUILESS_MAIN(WorkspaceSettingsTest)
#include "tst_workspacesettings.moc"
