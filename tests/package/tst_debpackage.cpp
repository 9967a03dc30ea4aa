// SPDX-License-Identifier: Apache-2.0
// The Debian packages made by CPack from the build tree: their control fields, their files,
// the library's symbols file and the check behind it, lintian's verdict, the unpacked packages
// running code, and a real dpkg installation into a throw-away root, whose user unit serves two
// users at once. Four packages, split by use (packaging/README.md): the SDK library, the
// headless server and client, the workbench, the SDK's development files.
#include "commandrun.h"
#include "installedapp.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

class DebPackageTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_scratch;
    QMap<QString, QString> m_debs;    // package name → .deb file
    QMap<QString, QString> m_dbgsym;  // package name → its -dbgsym .ddeb
    QString m_unpacked;               // every package unpacked with dpkg-deb -x
    QString m_installedRoot;          // the root dpkg installed the packages into, once it did

    QString field(const QString &package, const QString &name)
    {
        const CommandRun run = CommandRun::run(QStringLiteral("dpkg-deb"),
                                               {QStringLiteral("--field"), m_debs.value(package), name});
        return QString::fromUtf8(run.out).simplified();
    }

    // The package's control area (control, scripts, triggers, shlibs, symbols), extracted with
    // dpkg-deb --control; empty when that fails.
    QString controlArea(const QString &package)
    {
        const QString control = m_scratch.filePath(QStringLiteral("control-") + package);
        if (!QFileInfo::exists(control)) {
            const CommandRun extract = CommandRun::run(QStringLiteral("dpkg-deb"),
                                                       {QStringLiteral("--control"), m_debs.value(package), control});
            if (!extract.succeeded()) {
                qWarning().noquote() << extract.describe();
                return {};
            }
        }
        return control;
    }

    QString unpackedLibrary() const
    {
        return QDir(m_unpacked).filePath(QStringLiteral("usr/" REPLHOST_INSTALL_LIBDIR "/libreplhost-sdk.so.1"));
    }

    // The names in the library's dynamic symbol table that it defines, mangled or (with
    // `demangled`) as C++ spells them.
    QStringList exportedSymbols(bool demangled) const
    {
        QStringList arguments{QStringLiteral("--dynamic"), QStringLiteral("--defined-only"), QStringLiteral("--format=posix")};
        if (demangled)
            arguments << QStringLiteral("--demangle");
        const CommandRun nm = CommandRun::run(QStringLiteral("nm"), arguments + QStringList{unpackedLibrary()});
        if (!nm.succeeded())
            qWarning().noquote() << nm.describe();
        QStringList names;
        // "<name> <type> <value> [<size>]"; a demangled name has spaces of its own.
        static const QRegularExpression line(QStringLiteral("^(.+) [A-Za-z] [0-9a-f]+( [0-9a-f]+)?$"));
        for (const QString &entry : QString::fromUtf8(nm.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            if (const QRegularExpressionMatch match = line.match(entry); match.hasMatch())
                names.append(match.captured(1));
        }
        return names;
    }

    // Runs packaging/debian/gensymbols.cmake, as building the package does, on the unpacked
    // library with `symbolsTemplate` as the package's version `version`.
    CommandRun checkSymbols(const QString &symbolsTemplate, const QString &version)
    {
        return CommandRun::run(QStringLiteral("cmake"),
                               {QStringLiteral("-DLIBRARY=") + unpackedLibrary(), QStringLiteral("-DTEMPLATE=") + symbolsTemplate,
                                QStringLiteral("-DVERSION=") + version,
                                QStringLiteral("-DOUTPUT=") + m_scratch.filePath(QStringLiteral("checked.symbols")),
                                QStringLiteral("-P"), QStringLiteral(REPLHOST_SOURCE_DIR "/packaging/debian/gensymbols.cmake")});
    }

    static QStringList dpkgOptions(const QString &root)
    {
        return {QStringLiteral("--root=") + root, QStringLiteral("--force-depends"),
                QStringLiteral("--log=") + QDir(root).filePath(QStringLiteral("var/log/dpkg.log"))};
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
        for (const QFileInfo &ddeb : QDir(out).entryInfoList({QStringLiteral("*.ddeb")}, QDir::Files))
            m_dbgsym.insert(ddeb.fileName().section(QLatin1Char('_'), 0, 0).chopped(7), ddeb.absoluteFilePath());
        QCOMPARE(m_debs.keys(), (QStringList{QStringLiteral("libreplhost-sdk1"), QStringLiteral("replhost"),
                                             QStringLiteral("replhost-sdk-dev"), QStringLiteral("replhost-server")}));

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
        QTest::newRow("library: Qt Core") << "libreplhost-sdk1" << "Depends" << "libqt6core6";
        QTest::newRow("server: Qt Core") << "replhost-server" << "Depends" << "libqt6core6";
        QTest::newRow("server: Qt Network") << "replhost-server" << "Depends" << "libqt6network6";
        QTest::newRow("server: SQLite") << "replhost-server" << "Depends" << "libsqlite3-0";
        QTest::newRow("server: Poco") << "replhost-server" << "Depends" << "libpoconet";
        QTest::newRow("server: xeus") << "replhost-server" << "Depends" << "libxeus6";
        QTest::newRow("server: C library") << "replhost-server" << "Depends" << "libc6";
        QTest::newRow("workbench: Qt Widgets") << "replhost" << "Depends" << "libqt6widgets6";
        QTest::newRow("workbench: QScintilla") << "replhost" << "Depends" << "libqscintilla2-qt6";
        // One source, one version: the packages need each other at exactly it.
        const QString sameVersion = QStringLiteral("(= " REPLHOST_VERSION ")");
        QTest::newRow("server needs its library") << "replhost-server" << "Depends" << "libreplhost-sdk1 " + sameVersion;
        QTest::newRow("workbench needs the server") << "replhost" << "Depends" << "replhost-server " + sameVersion;
        QTest::newRow("sdk needs the library") << "replhost-sdk-dev" << "Depends" << "libreplhost-sdk1 " + sameVersion;
        QTest::newRow("sdk needs Qt's headers") << "replhost-sdk-dev" << "Depends" << "qt6-base-dev";
        // A language's runtime is only needed to use that language.
        QTest::newRow("Python") << "replhost-server" << "Recommends" << "python3";
        QTest::newRow("Node") << "replhost-server" << "Recommends" << "nodejs (>= 18)";
        QTest::newRow("Perl") << "replhost-server" << "Recommends" << "perl";
        QTest::newRow("JDK") << "replhost-server" << "Suggests" << "openjdk-17-jdk-headless";
        QTest::newRow("headless JDK") << "replhost-server" << "Suggests" << "java-sdk-headless (>= 17)";
        QTest::newRow("template's runtime") << "replhost-sdk-dev" << "Suggests" << "lua5.3";
        QTest::newRow("plugin build tools") << "replhost-sdk-dev" << "Recommends" << "cmake (>= 3.22)";
        // What a Debian archive needs to place and build them.
        QTest::newRow("library section") << "libreplhost-sdk1" << "Section" << "libs";
        QTest::newRow("server section") << "replhost-server" << "Section" << "devel";
        QTest::newRow("workbench section") << "replhost" << "Section" << "utils";
        QTest::newRow("sdk section") << "replhost-sdk-dev" << "Section" << "libdevel";
        QTest::newRow("library coexists across architectures") << "libreplhost-sdk1" << "Multi-Arch" << "same";
        QTest::newRow("one source") << "replhost" << "Source" << "replhost";
        QTest::newRow("Go worker's sources: yaegi") << "replhost-server" << "Built-Using" << "golang-github-traefik-yaegi (=";
        QTest::newRow("Go worker's sources: Go") << "replhost-server" << "Built-Using" << "golang-1.";
    }

    void controlFieldsSayWhatIsNeeded()
    {
        QFETCH(QString, package);
        QFETCH(QString, field);
        QFETCH(QString, mentions);
        const QString value = this->field(package, field);
        QVERIFY2(value.contains(mentions), qPrintable(QStringLiteral("%1: %2").arg(field, value)));
    }

    void headlessPackagesNeedNoGui_data()
    {
        QTest::addColumn<QString>("package");
        QTest::newRow("libreplhost-sdk1") << "libreplhost-sdk1";
        QTest::newRow("replhost-server") << "replhost-server";
        QTest::newRow("replhost-sdk-dev") << "replhost-sdk-dev";
    }

    void headlessPackagesNeedNoGui()
    {
        QFETCH(QString, package);
        const QString depends = field(package, QStringLiteral("Depends"));
        for (const char *gui : {"libqt6widgets", "libqt6gui", "libqscintilla", "libx11", "libgl"})
            QVERIFY2(!depends.contains(QLatin1String(gui)), qPrintable(depends));
    }

    void packagesHoldTheirFiles_data()
    {
        QTest::addColumn<QString>("package");
        QTest::addColumn<QString>("file");
        const QString libdir = QStringLiteral("usr/" REPLHOST_INSTALL_LIBDIR);
        QTest::newRow("sdk library") << "libreplhost-sdk1" << libdir + "/libreplhost-sdk.so.1";
        for (const char *binary : {"replhost-server", "replhost-cli", "replhost-kernel"})
            QTest::newRow(binary) << "replhost-server" << QStringLiteral("usr/bin/") + QLatin1String(binary);
        QTest::newRow("python kernelspec") << "replhost-server" << "usr/share/jupyter/kernels/replhost-python/kernel.json";
        QTest::newRow("bash kernelspec") << "replhost-server" << "usr/share/jupyter/kernels/replhost-bash/kernel.json";
        QTest::newRow("python plugin") << "replhost-server" << libdir + "/replhost/plugins/replhost-python.so";
        QTest::newRow("go plugin") << "replhost-server" << libdir + "/replhost/plugins/replhost-go.so";
        QTest::newRow("user unit") << "replhost-server" << "usr/lib/systemd/user/replhost-server.service";
        QTest::newRow("nginx example") << "replhost-server" << "usr/share/doc/replhost-server/examples/nginx/replhost.conf";
        QTest::newRow("readme") << "replhost-server" << "usr/share/doc/replhost-server/README.md.gz";
        QTest::newRow("workbench") << "replhost" << "usr/bin/replhost";
        QTest::newRow("desktop entry") << "replhost" << "usr/share/applications/org.replhost.replhost.desktop";
        QTest::newRow("workbench man page") << "replhost" << "usr/share/man/man1/replhost.1.gz";
        QTest::newRow("headers") << "replhost-sdk-dev" << "usr/include/replhost/sdk/session.h";
        QTest::newRow("link library") << "replhost-sdk-dev" << libdir + "/libreplhost-sdk.so";
        QTest::newRow("cmake package") << "replhost-sdk-dev" << libdir + "/cmake/ReplHostSdk/ReplHostSdkConfig.cmake";
        QTest::newRow("template") << "replhost-sdk-dev" << "usr/share/replhost/sdk/template/luahandler.cpp";
        for (const char *package : {"libreplhost-sdk1", "replhost-server", "replhost", "replhost-sdk-dev"})
            QTest::newRow(qPrintable(QStringLiteral("%1 copyright").arg(QLatin1String(package))))
                    << package << QStringLiteral("usr/share/doc/%1/copyright").arg(QLatin1String(package));
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

    // Debug information is split off into -dbgsym packages, found by the binaries' build ids.
    void debugInformationIsInDbgsymPackages_data()
    {
        QTest::addColumn<QString>("package");
        QTest::newRow("libreplhost-sdk1") << "libreplhost-sdk1";
        QTest::newRow("replhost-server") << "replhost-server";
        QTest::newRow("replhost") << "replhost";
    }

    void debugInformationIsInDbgsymPackages()
    {
        QFETCH(QString, package);
        const QString ddeb = m_dbgsym.value(package);
        QVERIFY2(!ddeb.isEmpty(), qPrintable(QStringList(m_dbgsym.keys()).join(QLatin1Char(' '))));
        const CommandRun contents = CommandRun::run(QStringLiteral("dpkg-deb"), {QStringLiteral("--contents"), ddeb});
        QVERIFY2(contents.succeeded(), qPrintable(contents.describe()));
        QVERIFY2(contents.out.contains("./usr/lib/debug/.build-id/"), contents.out.constData());
    }

    // dpkg's ldconfig trigger refreshes the linker cache: no maintainer script calls ldconfig.
    void noMaintainerScriptCallsLdconfig_data()
    {
        QTest::addColumn<QString>("package");
        for (const char *package : {"libreplhost-sdk1", "replhost-server", "replhost", "replhost-sdk-dev"})
            QTest::newRow(package) << package;
    }

    void noMaintainerScriptCallsLdconfig()
    {
        QFETCH(QString, package);
        const QString control = controlArea(package);
        QVERIFY(!control.isEmpty());
        for (const char *script : {"preinst", "postinst", "prerm", "postrm"}) {
            QFile file(QDir(control).filePath(QLatin1String(script)));
            if (file.open(QIODevice::ReadOnly))
                QVERIFY2(!file.readAll().contains("ldconfig"), script);
        }
        if (package == QLatin1String("libreplhost-sdk1")) {
            QFile triggers(QDir(control).filePath(QStringLiteral("triggers")));
            QVERIFY(triggers.open(QIODevice::ReadOnly));
            QVERIFY(triggers.readAll().contains("activate-noawait ldconfig"));
        }
    }

    // The library's ABI is declared (packaging/debian/libreplhost-sdk1.symbols): the package
    // ships a symbols file that lists exactly what the library exports, so that a plugin
    // depends on the version that has every symbol it uses. CPack's shlibs file stays beside it
    // for tools that read only that.
    void libraryShipsASymbolsFileOfWhatItExports()
    {
        const QString control = controlArea(QStringLiteral("libreplhost-sdk1"));
        QVERIFY(!control.isEmpty());
        QVERIFY(QFileInfo::exists(QDir(control).filePath(QStringLiteral("shlibs"))));
        QFile file(QDir(control).filePath(QStringLiteral("symbols")));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(lines.size() > 2);
        QCOMPARE(lines.takeFirst(), QStringLiteral("libreplhost-sdk.so.1 libreplhost-sdk1 #MINVER#"));
        QCOMPARE(lines.takeFirst(), QStringLiteral("* Build-Depends-Package: replhost-sdk-dev"));
        QStringList declared;
        static const QRegularExpression entry(QStringLiteral("^ (\\S+)@Base (\\S+)$"));
        for (const QString &line : std::as_const(lines)) {
            const QRegularExpressionMatch match = entry.match(line);
            QVERIFY2(match.hasMatch(), qPrintable(line));
            const CommandRun compare = CommandRun::run(QStringLiteral("dpkg"),
                    {QStringLiteral("--compare-versions"), match.captured(2), QStringLiteral("le"), QStringLiteral(REPLHOST_VERSION)});
            QVERIFY2(compare.succeeded(), qPrintable(line));
            declared.append(match.captured(1));
        }
        QStringList exported = exportedSymbols(false);
        QVERIFY(!exported.isEmpty());
        declared.sort();
        exported.sort();
        QCOMPARE(declared, exported);
    }

    // Only replhost's own names are ABI: none of the standard library's template
    // instantiations, which each compiler spells differently (sdk/replhost-sdk.map).
    void libraryExportsOnlyReplhostNames()
    {
        const QStringList exported = exportedSymbols(true);
        QVERIFY(exported.size() > 10);
        static const QRegularExpression ours(
                QStringLiteral("^((typeinfo for|typeinfo name for|vtable for) )?replhost::"));
        for (const QString &name : exported)
            QVERIFY2(ours.match(name).hasMatch(), qPrintable(name));
    }

    // The check that building the package makes: what the library exports against the
    // committed symbols file, every difference an error except a symbol of the version being
    // built going again (no release had it; dpkg-gensymbols' rule).
    void symbolsCheckFailsWhenTheAbiChanges_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("version");
        QTest::addColumn<QString>("failure");  // what the check says; empty: it passes
        const QString current = QStringLiteral(REPLHOST_VERSION);
        const QString next = current + QStringLiteral("+1");
        QTest::newRow("as committed") << "" << current << "";
        QTest::newRow("as committed, next version") << "" << next << "";
        QTest::newRow("exported but not declared") << "undeclare answerInput" << current << "new symbols appeared";
        QTest::newRow("declared earlier, now gone") << "declare gone" << next << "symbols or patterns disappeared";
        QTest::newRow("declared in this version, gone again") << "declare gone" << current << "";
    }

    void symbolsCheckFailsWhenTheAbiChanges()
    {
        QFETCH(QString, change);
        QFETCH(QString, version);
        QFETCH(QString, failure);
        QFile committed(QStringLiteral(REPLHOST_SOURCE_DIR "/packaging/debian/libreplhost-sdk1.symbols"));
        QVERIFY(committed.open(QIODevice::ReadOnly));
        QStringList lines = QString::fromUtf8(committed.readAll()).split(QLatin1Char('\n'));
        if (change == QLatin1String("undeclare answerInput")) {
            const qsizetype before = lines.size();
            lines.removeIf([](const QString &line) { return line.contains(QLatin1String("::answerInput(")); });
            QCOMPARE(lines.size(), before - 1);
        } else if (change == QLatin1String("declare gone")) {
            lines.insert(lines.size() - 1,
                         QStringLiteral(" (c++)\"replhost::sdk::Event::gone(QString const&)@Base\" " REPLHOST_VERSION));
        }
        QFile changed(m_scratch.filePath(QStringLiteral("changed.symbols")));
        QVERIFY(changed.open(QIODevice::WriteOnly | QIODevice::Truncate));
        changed.write(lines.join(QLatin1Char('\n')).toUtf8());
        changed.close();

        const CommandRun check = checkSymbols(changed.fileName(), version);
        if (failure.isEmpty()) {
            QVERIFY2(check.succeeded(), qPrintable(check.describe()));
        } else {
            QVERIFY2(!check.succeeded(), qPrintable(check.describe()));
            QVERIFY2(QString::fromUtf8(check.err).contains(failure), check.err.constData());
        }
    }

    // lintian with every tag shown (-I -E --pedantic): no error and no warning, and each other
    // tag it reports is one that packaging/README.md explains.
    void lintianFindsNothingUnexplained_data()
    {
        QTest::addColumn<QString>("package");
        for (const char *package : {"libreplhost-sdk1", "replhost-server", "replhost", "replhost-sdk-dev"})
            QTest::newRow(package) << package;
    }

    void lintianFindsNothingUnexplained()
    {
        QFETCH(QString, package);
        const CommandRun lintian = CommandRun::run(
                QStringLiteral("lintian"), {QStringLiteral("-I"), QStringLiteral("-E"), QStringLiteral("--pedantic"),
                                            QStringLiteral("--tag-display-limit"), QStringLiteral("0"), m_debs.value(package)});
        QVERIFY2(lintian.succeeded(), qPrintable(lintian.describe()));
        QFile readme(QStringLiteral(REPLHOST_SOURCE_DIR "/packaging/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QByteArray explained = readme.readAll();
        QStringList unexplained;
        for (const QByteArray &line : (lintian.out + lintian.err).split('\n')) {
            // "<severity>: <package>[ <type>]: <tag> [<context>]"
            const QList<QByteArray> parts = line.split(':');
            if (parts.size() < 3 || parts.first().size() != 1)
                continue;
            const QByteArray tag = parts.at(2).trimmed().split(' ').first();
            if (parts.first() == "E" || parts.first() == "W" || !explained.contains("`" + tag + "`"))
                unexplained.append(QString::fromUtf8(line));
        }
        QVERIFY2(unexplained.isEmpty(), qPrintable(unexplained.join(QLatin1Char('\n'))));
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
    // root gets a shell, the C library and ldconfig). The root holds no Qt, so the packages'
    // dependencies cannot be met there and are deliberately not checked; the installed server
    // runs with this machine's libraries. The slots after this one use the installation, and
    // the last removes it.
    void dpkgInstallsThePackages()
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

        const CommandRun install = CommandRun::run(QStringLiteral("dpkg"),
                                                   dpkgOptions(root) + QStringList{QStringLiteral("--install")} + m_debs.values());
        QVERIFY2(install.succeeded(), qPrintable(install.describe()));
        for (const QString &package : m_debs.keys()) {
            const CommandRun status = CommandRun::run(
                    QStringLiteral("dpkg-query"), {QStringLiteral("--admindir=") + root + QStringLiteral("/var/lib/dpkg"),
                                                   QStringLiteral("--show"), QStringLiteral("--showformat=${Status}"), package});
            QCOMPARE(QString::fromUtf8(status.out), QStringLiteral("install ok installed"));
        }
        m_installedRoot = root;
        const QString failure = InstalledApp(root + QStringLiteral("/usr")).checkServerVersion();
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        // The library lies where ldconfig looks without any configuration: what libc-bin's
        // ldconfig trigger runs (the root has no libc-bin to run it) puts it in the cache.
        const CommandRun refresh = CommandRun::run(QStringLiteral("/sbin/ldconfig"), {QStringLiteral("-r"), root});
        QVERIFY2(refresh.succeeded(), qPrintable(refresh.describe()));
        const CommandRun cache = CommandRun::run(QStringLiteral("/sbin/ldconfig"),
                                                 {QStringLiteral("-r"), root, QStringLiteral("-p")});
        QVERIFY2(cache.out.contains("libreplhost-sdk.so.1"), qPrintable(cache.describe()));
    }

    // The user unit dpkg installed, run as each user's systemd runs it, for two users at once.
    void installedUserUnitGivesEachUserAPort()
    {
        if (m_installedRoot.isEmpty())
            QSKIP("needs the dpkg installation (dpkgInstallsThePackages)");
        const QString failure = InstalledApp(m_installedRoot + QStringLiteral("/usr"))
                                        .checkUserUnitGivesEachUserAPort(QStringLiteral("/usr"), m_scratch.filePath(QStringLiteral("users")));
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }

    void dpkgRemovesThePackages()
    {
        if (m_installedRoot.isEmpty())
            QSKIP("needs the dpkg installation (dpkgInstallsThePackages)");
        const CommandRun purge = CommandRun::run(QStringLiteral("dpkg"),
                                                 dpkgOptions(m_installedRoot) + QStringList{QStringLiteral("--purge")} + m_debs.keys());
        QVERIFY2(purge.succeeded(), qPrintable(purge.describe()));
        QVERIFY(!QFileInfo::exists(m_installedRoot + QStringLiteral("/usr/bin/replhost-server")));
        QVERIFY(!QFileInfo::exists(m_installedRoot + QStringLiteral("/usr/include/replhost")));
        QVERIFY(!QFileInfo::exists(m_installedRoot + QStringLiteral("/usr/" REPLHOST_INSTALL_LIBDIR "/libreplhost-sdk.so.1")));
    }
};

QTEST_GUILESS_MAIN(DebPackageTest)
#include "tst_debpackage.moc"
