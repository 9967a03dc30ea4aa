// SPDX-License-Identifier: Apache-2.0
// `cmake --install` of the build tree into a temporary prefix, then the tree moved elsewhere:
// every part of the layout is there, the desktop files validate, and the moved tree still runs
// code, finding its plugins relative to its own executable. The systemd user unit's command
// line, run for two users at once, gives each a port of its own and keeps the token out of what
// it prints (the journal).
#include "commandrun.h"
#include "installedapp.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QString kAppId = QStringLiteral("org.replhost.replhost");
}

class InstallTreeTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_scratch;
    QString m_installPrefix;  // where cmake --install put it
    QString m_tree;           // where it was moved to

    QString path(const QString &relative) const { return QDir(m_tree).filePath(relative); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_scratch.isValid());
        m_installPrefix = m_scratch.filePath(QStringLiteral("installed/replhost"));
        const CommandRun install = InstalledApp::installBuildTree(m_installPrefix);
        QVERIFY2(install.succeeded(), qPrintable(install.describe()));
        // A relocatable tree works wherever it is unpacked.
        m_tree = m_scratch.filePath(QStringLiteral("moved/elsewhere/replhost"));
        QVERIFY(QDir().mkpath(QFileInfo(m_tree).absolutePath()));
        QVERIFY(QDir().rename(m_installPrefix, m_tree));
    }

    void layoutHasEveryPart_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *binary : {"replhost", "replhost-server", "replhost-cli", "replhost-kernel"})
            QTest::newRow(binary) << QStringLiteral("bin/") + QLatin1String(binary);
        for (const char *language : {"python", "bash", "javascript", "typescript", "perl", "java", "go"})
            QTest::newRow(qPrintable(QStringLiteral("%1 kernelspec").arg(QLatin1String(language))))
                    << QStringLiteral("share/jupyter/kernels/replhost-%1/kernel.json").arg(QLatin1String(language));
        for (const char *language : {"python", "bash", "javascript", "typescript", "perl", "java", "go"})
            QTest::newRow(language) << QStringLiteral(REPLHOST_INSTALL_LIBDIR "/replhost/plugins/replhost-%1.so").arg(QLatin1String(language));
        QTest::newRow("go worker beside the plugins") << REPLHOST_INSTALL_LIBDIR "/replhost/plugins/replhost-go-worker";
        QTest::newRow("confinement launcher") << "libexec/replhost/replhost-confine";
        QTest::newRow("sdk library") << REPLHOST_INSTALL_LIBDIR "/libreplhost-sdk.so.1";
        QTest::newRow("sdk header") << "include/replhost/sdk/languagehandler.h";
        QTest::newRow("sdk cmake package") << REPLHOST_INSTALL_LIBDIR "/cmake/ReplHostSdk/ReplHostSdkConfig.cmake";
        QTest::newRow("sdk cmake function") << REPLHOST_INSTALL_LIBDIR "/cmake/ReplHostSdk/ReplHostSdkPlugin.cmake";
        QTest::newRow("plugin template") << "share/replhost/sdk/template/CMakeLists.txt";
        QTest::newRow("template driver") << "share/replhost/sdk/template/driver.lua";
        QTest::newRow("desktop entry") << "share/applications/" + kAppId + ".desktop";
        QTest::newRow("metainfo") << "share/metainfo/" + kAppId + ".metainfo.xml";
        QTest::newRow("scalable icon") << "share/icons/hicolor/scalable/apps/" + kAppId + ".svg";
        QTest::newRow("systemd user unit") << "lib/systemd/user/replhost-server.service";
        for (const char *page : {"replhost", "replhost-server", "replhost-cli", "replhost-kernel"})
            QTest::newRow(qPrintable(QStringLiteral("man page %1").arg(QLatin1String(page))))
                    << QStringLiteral("share/man/man1/%1.1.gz").arg(QLatin1String(page));
        // Every package's copyright and changelog; documents compressed, as policy 12.3 asks.
        for (const char *package : {"libreplhost-sdk1", "replhost-server", "replhost", "replhost-sdk-dev"}) {
            QTest::newRow(qPrintable(QStringLiteral("%1 copyright").arg(QLatin1String(package))))
                    << QStringLiteral("share/doc/%1/copyright").arg(QLatin1String(package));
            QTest::newRow(qPrintable(QStringLiteral("%1 changelog").arg(QLatin1String(package))))
                    << QStringLiteral("share/doc/%1/changelog.gz").arg(QLatin1String(package));
        }
        QTest::newRow("readme") << "share/doc/replhost-server/README.md.gz";
        QTest::newRow("http api") << "share/doc/replhost-server/http-api.md.gz";
        QTest::newRow("mcp guide") << "share/doc/replhost-server/mcp.md.gz";
        QTest::newRow("plugin guide") << "share/doc/replhost-sdk-dev/plugin-sdk.md.gz";
        QTest::newRow("nginx example") << "share/doc/replhost-server/examples/nginx/replhost.conf";
        QTest::newRow("kubernetes example") << "share/doc/replhost-server/examples/kubernetes/kustomization.yaml";
        QTest::newRow("rebalance example") << "share/doc/replhost-server/examples/kubernetes/rebalance";
    }

    void layoutHasEveryPart()
    {
        QFETCH(QString, file);
        QVERIFY2(QFileInfo::exists(path(file)), qPrintable(file + QStringLiteral(" is not installed")));
    }

    void pngIconsAreRenderedAtTheirSize_data()
    {
        QTest::addColumn<int>("size");
        for (int size : {16, 32, 48, 64, 128, 256})
            QTest::newRow(qPrintable(QString::number(size))) << size;
    }

    void pngIconsAreRenderedAtTheirSize()
    {
        QFETCH(int, size);
        const QImage icon(path(QStringLiteral("share/icons/hicolor/%1x%1/apps/%2.png").arg(size).arg(kAppId)));
        QVERIFY(!icon.isNull());
        QCOMPARE(icon.size(), QSize(size, size));
        // Not blank: the middle of the icon is painted and opaque.
        QCOMPARE(qAlpha(icon.pixel(size / 2, size * 3 / 4)), 255);
    }

    void desktopFilesValidate_data()
    {
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QStringList>("arguments");
        QTest::newRow("desktop entry") << "desktop-file-validate"
                                       << QStringList{path("share/applications/" + kAppId + ".desktop")};
        QTest::newRow("metainfo") << "appstreamcli"
                                  << QStringList{QStringLiteral("validate"), QStringLiteral("--no-net"),
                                                 path("share/metainfo/" + kAppId + ".metainfo.xml")};
    }

    void desktopFilesValidate()
    {
        QFETCH(QString, tool);
        QFETCH(QStringList, arguments);
        QVERIFY2(!QStandardPaths::findExecutable(tool).isEmpty(),
                 qPrintable(tool + QStringLiteral(" is missing; scripts/setup installs it")));
        const CommandRun validate = CommandRun::run(tool, arguments);
        QVERIFY2(validate.succeeded(), qPrintable(validate.describe()));
    }

    void manPagesRenderWithoutWarnings_data()
    {
        QTest::addColumn<QString>("page");
        for (const char *page : {"replhost", "replhost-server", "replhost-cli", "replhost-kernel"})
            QTest::newRow(page) << QString::fromLatin1(page);
    }

    void manPagesRenderWithoutWarnings()
    {
        QFETCH(QString, page);
        const CommandRun man = CommandRun::run(
                QStringLiteral("man"), {QStringLiteral("--warnings"), QStringLiteral("-l"),
                                        path(QStringLiteral("share/man/man1/%1.1.gz").arg(page))},
                {{QStringLiteral("MANWIDTH"), QStringLiteral("80")}, {QStringLiteral("MAN_KEEP_FORMATTING"), QString()}});
        QVERIFY2(man.succeeded(), qPrintable(man.describe()));
        QVERIFY2(man.err.trimmed().isEmpty(), man.err.constData());
        QVERIFY2(man.out.contains(page.toUpper().toUtf8()), man.out.constData());
        QVERIFY2(man.out.contains(REPLHOST_VERSION), man.out.constData());
    }

    void systemdUnitStartsTheInstalledServer()
    {
        QFile unit(path(QStringLiteral("lib/systemd/user/replhost-server.service")));
        QVERIFY(unit.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(unit.readAll());
        // A unit needs an absolute path: the one the tree was installed to.
        QVERIFY2(text.contains(QStringLiteral("\nExecStart=%1/bin/replhost-server --port auto\n").arg(m_installPrefix)),
                 qPrintable(text));
        QVERIFY(text.contains(QLatin1String("WantedBy=default.target")));

        // systemd's own check, on a copy that names the tree where it is now.
        QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("systemd-analyze")).isEmpty(),
                 "systemd-analyze is missing; scripts/setup installs it");
        QFile moved(m_scratch.filePath(QStringLiteral("replhost-server.service")));
        QVERIFY(moved.open(QIODevice::WriteOnly));
        moved.write(QString(text).replace(m_installPrefix, m_tree).toUtf8());
        moved.close();
        const CommandRun verify = CommandRun::run(QStringLiteral("systemd-analyze"),
                                                  {QStringLiteral("verify"), QStringLiteral("--man=no"), moved.fileName()});
        QVERIFY2(verify.succeeded() && verify.err.trimmed().isEmpty(), qPrintable(verify.describe()));
    }

    void unitsCommandLineGivesEachUserAPortAndKeepsTheTokenOutOfTheJournal()
    {
        const QString failure = InstalledApp(m_tree).checkUserUnitGivesEachUserAPort(m_installPrefix, m_scratch.path());
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void workbenchAttachesToTheUnitsServer()
    {
        const QString failure = InstalledApp(m_tree).checkWorkbenchAttachesToTheUnitsServer(
                m_installPrefix, QDir(m_scratch.path()).filePath(QStringLiteral("desktop-user")));
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void movedTreeReportsItsVersion()
    {
        const QString failure = InstalledApp(m_tree).checkServerVersion();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void movedTreeRunsPythonAndBashWithItsOwnPlugins()
    {
        const QString failure = InstalledApp(m_tree).checkServerRunsPythonAndBash(m_scratch.path());
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void movedWorkbenchShowsItsHelp()
    {
        const QString failure = InstalledApp(m_tree).checkWorkbenchHelp();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
};

QTEST_GUILESS_MAIN(InstallTreeTest)
#include "tst_installtree.moc"
