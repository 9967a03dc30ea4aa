// SPDX-License-Identifier: Apache-2.0
// The Debian packages made by CPack from the build tree: their control fields, their files,
// lintian's verdict, the unpacked package running code, and a real dpkg installation into a
// throw-away root.
#include "commandrun.h"
#include "installedapp.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

class DebPackageTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_scratch;
    QMap<QString, QString> m_debs;  // package name → .deb file
    QString m_unpacked;             // both packages unpacked with dpkg-deb -x

    QString field(const QString &package, const QString &name)
    {
        const CommandRun run = CommandRun::run(QStringLiteral("dpkg-deb"),
                                               {QStringLiteral("--field"), m_debs.value(package), name});
        return QString::fromUtf8(run.out).simplified();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_scratch.isValid());
        for (const char *tool : {"cpack", "dpkg-deb", "dpkg-shlibdeps", "lintian"})
            QVERIFY2(!QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty(),
                     qPrintable(QStringLiteral("%1 is missing; scripts/setup installs it").arg(QLatin1String(tool))));
        const QString out = m_scratch.filePath(QStringLiteral("cpack"));
        const CommandRun cpack = CommandRun::run(
                QStringLiteral("cpack"), {QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("--config"),
                                          QStringLiteral(REPLHOST_BUILD_DIR "/CPackConfig.cmake"),
                                          QStringLiteral("-B"), out});
        QVERIFY2(cpack.succeeded(), qPrintable(cpack.describe()));
        for (const QFileInfo &deb : QDir(out).entryInfoList({QStringLiteral("*.deb")}, QDir::Files))
            m_debs.insert(deb.fileName().section(QLatin1Char('_'), 0, 0), deb.absoluteFilePath());
        QCOMPARE(m_debs.keys(), (QStringList{QStringLiteral("replhost"), QStringLiteral("replhost-sdk-dev")}));

        m_unpacked = m_scratch.filePath(QStringLiteral("unpacked"));
        for (const QString &deb : std::as_const(m_debs)) {
            const CommandRun unpack = CommandRun::run(QStringLiteral("dpkg-deb"), {QStringLiteral("-x"), deb, m_unpacked});
            QVERIFY2(unpack.succeeded(), qPrintable(unpack.describe()));
        }
    }

    void controlFieldsSayWhatIsNeeded_data()
    {
        QTest::addColumn<QString>("package");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("mentions");
        // Computed by dpkg-shlibdeps from the binaries.
        QTest::newRow("Qt Core") << "replhost" << "Depends" << "libqt6core6";
        QTest::newRow("Qt Network") << "replhost" << "Depends" << "libqt6network6";
        QTest::newRow("Qt Widgets") << "replhost" << "Depends" << "libqt6widgets6";
        QTest::newRow("SQLite") << "replhost" << "Depends" << "libsqlite3-0";
        QTest::newRow("Poco") << "replhost" << "Depends" << "libpoconet";
        QTest::newRow("xeus") << "replhost" << "Depends" << "libxeus6";
        QTest::newRow("C library") << "replhost" << "Depends" << "libc6";
        // A language's runtime is only needed to use that language.
        QTest::newRow("Python") << "replhost" << "Recommends" << "python3";
        QTest::newRow("Node") << "replhost" << "Recommends" << "nodejs (>= 18)";
        QTest::newRow("Perl") << "replhost" << "Recommends" << "perl";
        QTest::newRow("JDK") << "replhost" << "Suggests" << "openjdk-17-jdk-headless";
        QTest::newRow("sdk needs the runtime of the same version")
                << "replhost-sdk-dev" << "Depends" << "replhost (= " REPLHOST_VERSION ")";
        QTest::newRow("sdk needs Qt's headers") << "replhost-sdk-dev" << "Depends" << "qt6-base-dev";
        QTest::newRow("template's runtime") << "replhost-sdk-dev" << "Suggests" << "lua5.3";
    }

    void controlFieldsSayWhatIsNeeded()
    {
        QFETCH(QString, package);
        QFETCH(QString, field);
        QFETCH(QString, mentions);
        const QString value = this->field(package, field);
        QVERIFY2(value.contains(mentions), qPrintable(QStringLiteral("%1: %2").arg(field, value)));
    }

    void packagesHoldTheirFiles_data()
    {
        QTest::addColumn<QString>("package");
        QTest::addColumn<QString>("file");
        for (const char *binary : {"replhost", "replhost-server", "replhost-cli", "replhost-kernel"})
            QTest::newRow(binary) << "replhost" << QStringLiteral("usr/bin/") + QLatin1String(binary);
        QTest::newRow("python kernelspec") << "replhost" << "usr/share/jupyter/kernels/replhost-python/kernel.json";
        QTest::newRow("bash kernelspec") << "replhost" << "usr/share/jupyter/kernels/replhost-bash/kernel.json";
        QTest::newRow("python plugin") << "replhost" << "usr/lib/replhost/plugins/replhost-python.so";
        QTest::newRow("go plugin") << "replhost" << "usr/lib/replhost/plugins/replhost-go.so";
        QTest::newRow("sdk library") << "replhost" << "usr/lib/libreplhost-sdk.so.1";
        QTest::newRow("user unit") << "replhost" << "usr/lib/systemd/user/replhost-server.service";
        QTest::newRow("copyright") << "replhost" << "usr/share/doc/replhost/copyright";
        QTest::newRow("nginx example") << "replhost" << "usr/share/doc/replhost/examples/nginx/replhost.conf";
        QTest::newRow("headers") << "replhost-sdk-dev" << "usr/include/replhost/sdk/session.h";
        QTest::newRow("link library") << "replhost-sdk-dev" << "usr/lib/libreplhost-sdk.so";
        QTest::newRow("cmake package") << "replhost-sdk-dev" << "usr/lib/cmake/ReplHostSdk/ReplHostSdkConfig.cmake";
        QTest::newRow("template") << "replhost-sdk-dev" << "usr/share/replhost/sdk/template/luahandler.cpp";
        QTest::newRow("sdk copyright") << "replhost-sdk-dev" << "usr/share/doc/replhost-sdk-dev/copyright";
    }

    void packagesHoldTheirFiles()
    {
        QFETCH(QString, package);
        QFETCH(QString, file);
        const CommandRun contents = CommandRun::run(QStringLiteral("dpkg-deb"), {QStringLiteral("--contents"), m_debs.value(package)});
        QVERIFY2(contents.succeeded(), qPrintable(contents.describe()));
        const QByteArray entry = " ./" + file.toUtf8();
        QVERIFY2(contents.out.contains(entry + '\n') || contents.out.contains(entry + " -> "),
                 contents.out.constData());
    }

    void lintianReportsNoErrors_data()
    {
        QTest::addColumn<QString>("package");
        QTest::newRow("replhost") << "replhost";
        QTest::newRow("replhost-sdk-dev") << "replhost-sdk-dev";
    }

    void lintianReportsNoErrors()
    {
        QFETCH(QString, package);
        // lintian exits non-zero for errors only; warnings are printed for people to read.
        const CommandRun lintian = CommandRun::run(QStringLiteral("lintian"),
                                                   {QStringLiteral("--tag-display-limit"), QStringLiteral("0"), m_debs.value(package)});
        const QByteArray report = lintian.out + lintian.err;
        QVERIFY2(!report.contains("\nE: ") && !report.startsWith("E: "), report.constData());
        QVERIFY2(lintian.succeeded(), qPrintable(lintian.describe()));
        if (!report.trimmed().isEmpty())
            qInfo("%s", report.constData());
    }

    void unpackedServerReportsItsVersion()
    {
        const QString failure = InstalledApp(m_unpacked + QStringLiteral("/usr")).checkServerVersion();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void unpackedServerRunsPythonAndBash()
    {
        const QString failure = InstalledApp(m_unpacked + QStringLiteral("/usr")).checkServerRunsPythonAndBash(m_scratch.path());
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void unpackedWorkbenchShowsItsHelp()
    {
        const QString failure = InstalledApp(m_unpacked + QStringLiteral("/usr")).checkWorkbenchHelp();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    // A real dpkg installation into a throw-away root (dpkg --root): dpkg records the packages,
    // puts their files in place, runs their maintainer scripts chrooted into the root (so the
    // root gets a shell, the C library and ldconfig), and removes everything again. The root
    // holds no Qt, so the packages' dependencies cannot be met there and are deliberately not
    // checked; the installed server runs with this machine's libraries.
    void dpkgInstallsAndRemovesThePackages()
    {
        if (::geteuid() != 0)
            QSKIP("dpkg runs maintainer scripts in a chroot, which needs root (CI runs as root)");
        const QString root = m_scratch.filePath(QStringLiteral("root"));
        for (const char *dir : {"var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log", "etc", "tmp"})
            QVERIFY(QDir().mkpath(QDir(root).filePath(QLatin1String(dir))));
        for (const char *file : {"var/lib/dpkg/status", "var/lib/dpkg/available", "etc/ld.so.conf"}) {
            QFile empty(QDir(root).filePath(QLatin1String(file)));
            QVERIFY(empty.open(QIODevice::WriteOnly));
        }
        const QString shell = QFileInfo(QStringLiteral("/bin/sh")).canonicalFilePath();
        QMap<QString, QString> copies{{shell, QStringLiteral("/bin/sh")},
                                      {QStringLiteral("/sbin/ldconfig"), QStringLiteral("/sbin/ldconfig")}};
        const CommandRun ldd = CommandRun::run(QStringLiteral("ldd"), {shell});
        QVERIFY2(ldd.succeeded(), qPrintable(ldd.describe()));
        for (const QByteArray &line : ldd.out.split('\n')) {
            const qsizetype slash = line.lastIndexOf(" /") + 1;
            if (slash > 0 || line.trimmed().startsWith('/')) {
                const QString library = QString::fromUtf8(line.mid(slash).trimmed().split(' ').first());
                copies.insert(QFileInfo(library).canonicalFilePath(), library);
            }
        }
        for (auto it = copies.begin(); it != copies.end(); ++it) {
            const QString target = root + it.value();
            QVERIFY(QDir().mkpath(QFileInfo(target).absolutePath()));
            QVERIFY2(QFile::copy(it.key(), target), qPrintable(it.key()));
        }
        const QStringList dpkg{QStringLiteral("--root=") + root, QStringLiteral("--force-depends"),
                               QStringLiteral("--log=") + QDir(root).filePath(QStringLiteral("var/log/dpkg.log"))};

        const CommandRun install = CommandRun::run(QStringLiteral("dpkg"),
                                                   dpkg + QStringList{QStringLiteral("--install")} + m_debs.values());
        QVERIFY2(install.succeeded(), qPrintable(install.describe()));
        for (const QString &package : m_debs.keys()) {
            const CommandRun status = CommandRun::run(
                    QStringLiteral("dpkg-query"), {QStringLiteral("--admindir=") + root + QStringLiteral("/var/lib/dpkg"),
                                                   QStringLiteral("--show"), QStringLiteral("--showformat=${Status}"), package});
            QCOMPARE(QString::fromUtf8(status.out), QStringLiteral("install ok installed"));
        }
        const QString failure = InstalledApp(root + QStringLiteral("/usr")).checkServerVersion();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        // The postinst ran ldconfig inside the root: its cache now knows the SDK library.
        const CommandRun cache = CommandRun::run(QStringLiteral("/sbin/ldconfig"),
                                                 {QStringLiteral("-r"), root, QStringLiteral("-p")});
        QVERIFY2(cache.out.contains("libreplhost-sdk.so.1"), qPrintable(cache.describe()));

        const CommandRun purge = CommandRun::run(QStringLiteral("dpkg"),
                                                 dpkg + QStringList{QStringLiteral("--purge")} + m_debs.keys());
        QVERIFY2(purge.succeeded(), qPrintable(purge.describe()));
        QVERIFY(!QFileInfo::exists(root + QStringLiteral("/usr/bin/replhost-server")));
        QVERIFY(!QFileInfo::exists(root + QStringLiteral("/usr/include/replhost")));
    }
};

QTEST_GUILESS_MAIN(DebPackageTest)
#include "tst_debpackage.moc"
