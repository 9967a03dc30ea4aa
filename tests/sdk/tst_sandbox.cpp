// SPDX-License-Identifier: Apache-2.0
// The bwrap command line built from a `confinement.sandbox` object: validation of the object, the
// mounts it asks for, and one real run of the command it builds.
#include "sandbox.h"
#include "sandboxrequirement.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace replhost;

namespace {

bool writeFile(const QString &path, const QByteArray &content, bool executable = false)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(content);
    file.close();
    if (executable)
        file.setPermissions(file.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeGroup
                            | QFileDevice::ExeOther);
    return true;
}

// The pairs that follow each occurrence of `option` (--ro-bind SRC DEST gives SRC).
QStringList valuesOf(const QStringList &command, const QString &option)
{
    QStringList values;
    const qsizetype end = command.indexOf(QStringLiteral("--"));
    for (qsizetype i = 0; i + 1 < end; ++i)
        if (command[i] == option)
            values.append(command[i + 1]);
    return values;
}

} // namespace

class SandboxTest : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_root;
    QString m_bwrap;
    QString m_launcher;

    sdk::SandboxPolicy policy(bool network = false) const
    {
        return {m_bwrap, m_root, network, {}, {}, {}, {}, {}};
    }

    // What a confinement runs inside bwrap.
    QStringList confined(const QString &program, const QStringList &arguments) const
    {
        return QStringList{m_launcher, QStringLiteral("--default-signals"), QStringLiteral("--"),
                           program}
               + arguments;
    }

    QStringList build(const sdk::SandboxPolicy &p, const QString &program,
                      const QStringList &arguments = {}, const QString &cwd = {})
    {
        const QStringList inner = confined(program, arguments);
        const auto bwrap = sdk::bwrapCommand(p, inner, cwd.isEmpty() ? m_root : cwd);
        if (!bwrap)
            qWarning("%s", qPrintable(bwrap.error().message));
        return bwrap ? *bwrap + QStringList{QStringLiteral("--")} + inner : QStringList();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_root = m_dir.filePath(QStringLiteral("workspace"));
        QVERIFY(QDir().mkpath(m_root));
        // An executable standing in for bwrap where only the command line is looked at.
        m_bwrap = m_dir.filePath(QStringLiteral("fake-bwrap"));
        QVERIFY(writeFile(m_bwrap, "#!/bin/sh\n", true));
        // The launcher contract inside the sandbox: `launcher --default-signals -- program args`.
        m_launcher = m_dir.filePath(QStringLiteral("libexec/launcher"));
        QVERIFY(writeFile(m_launcher, "#!/bin/sh\nshift 2\nexec \"$@\"\n", true));
    }

    void policyIsParsed()
    {
        const auto parsed = sdk::parseSandboxPolicy(
            {{QStringLiteral("bwrap"), QStringLiteral("/usr/bin/bwrap")},
             {QStringLiteral("root"), QStringLiteral("/srv/ws/a/")},
             {QStringLiteral("network"), true},
             {QStringLiteral("read_only"), QJsonArray{QStringLiteral("/opt/data")}},
             {QStringLiteral("hidden"), QJsonArray{QStringLiteral("/srv/data/")}}});
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().message));
        QCOMPARE(parsed->bwrap, QStringLiteral("/usr/bin/bwrap"));
        QCOMPARE(parsed->root, QStringLiteral("/srv/ws/a"));
        QCOMPARE(parsed->network, true);
        QCOMPARE(parsed->readOnly, QStringList{QStringLiteral("/opt/data")});
        QCOMPARE(parsed->hidden, QStringList{QStringLiteral("/srv/data")});
    }

    void networkIsOffUnlessSaid()
    {
        const auto parsed = sdk::parseSandboxPolicy(
            {{QStringLiteral("bwrap"), QStringLiteral("/usr/bin/bwrap")},
             {QStringLiteral("root"), QStringLiteral("/srv/ws/a")}});
        QVERIFY(parsed);
        QCOMPARE(parsed->network, false);
        QVERIFY(parsed->readOnly.isEmpty());
    }

    void badPolicyNamesTheField_data()
    {
        QTest::addColumn<QJsonObject>("sandbox");
        QTest::addColumn<QString>("field");
        const QJsonValue bwrap = QStringLiteral("/usr/bin/bwrap");
        const QJsonValue root = QStringLiteral("/srv/ws/a");
        QTest::newRow("no bwrap") << QJsonObject{{"root", root}} << "sandbox.bwrap";
        QTest::newRow("relative bwrap")
            << QJsonObject{{"bwrap", "bwrap"}, {"root", root}} << "sandbox.bwrap";
        QTest::newRow("no root") << QJsonObject{{"bwrap", bwrap}} << "sandbox.root";
        QTest::newRow("root not a string")
            << QJsonObject{{"bwrap", bwrap}, {"root", 3}} << "sandbox.root";
        QTest::newRow("relative root")
            << QJsonObject{{"bwrap", bwrap}, {"root", "ws/a"}} << "sandbox.root";
        QTest::newRow("network not a boolean")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"network", "yes"}}
            << "sandbox.network";
        QTest::newRow("read_only not an array")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"read_only", "/opt"}}
            << "sandbox.read_only";
        QTest::newRow("read_only relative entry")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"read_only", QJsonArray{"opt"}}}
            << "sandbox.read_only";
        QTest::newRow("hidden not an array")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"hidden", "/srv"}}
            << "sandbox.hidden";
        QTest::newRow("hidden entry not a string")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"hidden", QJsonArray{1}}}
            << "sandbox.hidden";
        QTest::newRow("relative view")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"view", "home/user"}} << "sandbox.view";
        QTest::newRow("view in the system")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"view", "/usr/share/w"}} << "sandbox.view";
        QTest::newRow("view in /tmp")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"view", "/tmp/w"}} << "sandbox.view";
        QTest::newRow("view at /")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"view", "/"}} << "sandbox.view";
        QTest::newRow("absolute tmp")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"tmp", "/tmp"}} << "sandbox.tmp";
        QTest::newRow("climbing tmp")
            << QJsonObject{{"bwrap", bwrap}, {"root", root}, {"tmp", "../x"}} << "sandbox.tmp";
    }

    void badPolicyNamesTheField()
    {
        QFETCH(QJsonObject, sandbox);
        QFETCH(QString, field);
        const auto parsed = sdk::parseSandboxPolicy(sandbox);
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, QStringLiteral("bad_request"));
        QVERIFY2(parsed.error().message.contains(field), qPrintable(parsed.error().message));
    }

    void commandIsBwrapWithOptionsOnly()
    {
        const auto command = sdk::bwrapCommand(
            policy(), confined(QStringLiteral("/usr/bin/python3"), {QStringLiteral("x.py")}),
            m_root);
        QVERIFY(command);
        QCOMPARE(command->first(), m_bwrap);
        QVERIFY(!command->contains(QStringLiteral("--")));
        QVERIFY(!command->contains(QStringLiteral("x.py")));
    }

    void namespacesAndLifetime_data()
    {
        QTest::addColumn<bool>("network");
        QTest::newRow("network off") << false;
        QTest::newRow("network on") << true;
    }

    void namespacesAndLifetime()
    {
        QFETCH(bool, network);
        const QStringList command = build(policy(network), QStringLiteral("/usr/bin/bash"));
        const QStringList options = command.mid(0, command.indexOf(QStringLiteral("--")));
        for (const char *option : {"--unshare-user", "--disable-userns", "--unshare-pid",
                                   "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                                   "--die-with-parent", "--new-session"})
            QVERIFY2(options.contains(QLatin1String(option)), option);
        QCOMPARE(options.contains(QStringLiteral("--unshare-net")), !network);
        QCOMPARE(valuesOf(command, QStringLiteral("--cap-drop")), QStringList{"ALL"});
        // Never root inside, even for a server run as root.
        const QString uid = valuesOf(command, QStringLiteral("--uid")).value(0);
        QCOMPARE(uid, QString::number(::geteuid() == 0 ? 65534 : ::geteuid()));
        QCOMPARE(valuesOf(command, QStringLiteral("--gid")).value(0),
                 QString::number(::geteuid() == 0 ? 65534 : ::getegid()));
        // Only when asked for, with the descriptor the launcher writes the filter to.
        QVERIFY(!options.contains(QStringLiteral("--seccomp")));
        const auto filtered = sdk::bwrapCommand(policy(network),
                                                confined(QStringLiteral("/usr/bin/bash"), {}),
                                                m_root, 5);
        QVERIFY(filtered);
        QCOMPARE(valuesOf(*filtered + QStringList{"--"}, QStringLiteral("--seccomp")),
                 QStringList{"5"});
        QCOMPARE(valuesOf(command, QStringLiteral("--proc")), QStringList{"/proc"});
        QCOMPARE(valuesOf(command, QStringLiteral("--dev")), QStringList{"/dev"});
        QCOMPARE(valuesOf(command, QStringLiteral("--tmpfs")), QStringList{"/tmp"});
        QCOMPARE(valuesOf(command, QStringLiteral("--bind")), QStringList{m_root});
        QVERIFY(valuesOf(command, QStringLiteral("--ro-bind")).contains(QStringLiteral("/usr")));
        QVERIFY(valuesOf(command, QStringLiteral("--ro-bind")).contains(QStringLiteral("/etc")));
    }

    void workingDirectoryOutsideRootFallsBackToRoot_data()
    {
        QTest::addColumn<QString>("cwd");
        QTest::addColumn<bool>("kept");
        QTest::newRow("root") << QString() << true;
        QTest::newRow("inside") << QStringLiteral("sub/dir") << true;
        QTest::newRow("outside") << QStringLiteral("/var") << false;
        QTest::newRow("sibling with the root as prefix") << QStringLiteral("../workspace2") << false;
    }

    void workingDirectoryOutsideRootFallsBackToRoot()
    {
        QFETCH(QString, cwd);
        QFETCH(bool, kept);
        const QString path = QDir::cleanPath(QDir(m_root).absoluteFilePath(cwd));
        const QStringList command = build(policy(), QStringLiteral("/usr/bin/bash"), {}, path);
        QCOMPARE(valuesOf(command, QStringLiteral("--chdir")),
                 QStringList{kept ? path : m_root});
    }

    sdk::SandboxPolicy viewed() const
    {
        sdk::SandboxPolicy p = policy();
        p.view = QStringLiteral("/home/user");
        p.tmp = QStringLiteral(".tmp");
        return p;
    }

    // The workspace is bound at the view, HOME and the cwd are there, and /tmp is a link into
    // the workspace rather than a tmpfs.
    void aViewBindsTheWorkspaceThereAndKeepsTmpInIt()
    {
        const QString sub = m_root + QStringLiteral("/sub");
        const auto bwrap = sdk::bwrapCommand(viewed(), {QStringLiteral("/usr/bin/bash")}, sub);
        QVERIFY2(bwrap, qPrintable(bwrap ? QString() : bwrap.error().message));
        const QStringList command = *bwrap + QStringList{QStringLiteral("--")};
        const qsizetype bind = command.indexOf(QStringLiteral("--bind"));
        QVERIFY(bind > 0);
        QCOMPARE(command.mid(bind + 1, 2), (QStringList{m_root, QStringLiteral("/home/user")}));
        const qsizetype link = command.indexOf(QStringLiteral("/tmp"));
        QCOMPARE(command.mid(link - 2, 3),
                 (QStringList{QStringLiteral("--symlink"), QStringLiteral("/home/user/.tmp"),
                              QStringLiteral("/tmp")}));
        QVERIFY(valuesOf(command, QStringLiteral("--tmpfs")).isEmpty());
        QCOMPARE(valuesOf(command, QStringLiteral("--chdir")), QStringList{QStringLiteral("/home/user/sub")});
        const qsizetype home = command.indexOf(QStringLiteral("HOME"));
        QCOMPARE(command.mid(home - 1, 3),
                 (QStringList{QStringLiteral("--setenv"), QStringLiteral("HOME"), QStringLiteral("/home/user")}));
        QVERIFY(QFileInfo(m_root + QStringLiteral("/.tmp")).isDir());
        const auto outside = sdk::bwrapCommand(viewed(), {QStringLiteral("/usr/bin/bash")}, QStringLiteral("/var"));
        QVERIFY(outside);
        QCOMPARE(valuesOf(*outside + QStringList{QStringLiteral("--")}, QStringLiteral("--chdir")),
                 QStringList{QStringLiteral("/home/user")});
    }

    void pathsCrossTheViewBothWays_data()
    {
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("inside");
        QTest::newRow("root") << "ROOT" << "/home/user";
        QTest::newRow("inside") << "ROOT/a/b" << "/home/user/a/b";
        QTest::newRow("the system") << "/usr/bin" << "/usr/bin";
        QTest::newRow("a sibling with the root as prefix") << "ROOT2/x" << "ROOT2/x";
    }

    void pathsCrossTheViewBothWays()
    {
        QFETCH(QString, host);
        QFETCH(QString, inside);
        host.replace(QStringLiteral("ROOT"), m_root);
        inside.replace(QStringLiteral("ROOT"), m_root);
        QCOMPARE(sdk::sandboxPathOf(viewed(), host), inside);
        if (inside.startsWith(QLatin1String("/home/user")))
            QCOMPARE(sdk::hostPathOf(viewed(), inside), host);
        // Without a view nothing moves.
        QCOMPARE(sdk::sandboxPathOf(policy(), host), host);
        QVERIFY(!sdk::hasOwnView(policy()));
        QVERIFY(sdk::hasOwnView(viewed()));
    }

    void theKeptTmpIsFoundOnTheHost()
    {
        QCOMPARE(sdk::hostPathOf(viewed(), QStringLiteral("/tmp")), m_root + QStringLiteral("/.tmp"));
        QCOMPARE(sdk::hostPathOf(viewed(), QStringLiteral("/tmp/x")), m_root + QStringLiteral("/.tmp/x"));
        QCOMPARE(sdk::hostPathOf(viewed(), QStringLiteral("/tmpx")), QStringLiteral("/tmpx"));
        QCOMPARE(sdk::hostPathOf(policy(), QStringLiteral("/tmp/x")), QStringLiteral("/tmp/x"));
    }

    void aReadOnlyPathUnderAKeptTmpIsRefused()
    {
        sdk::SandboxPolicy p = viewed();
        p.readOnly = {QStringLiteral("/tmp")};
        const auto command = sdk::bwrapCommand(p, {QStringLiteral("/usr/bin/bash")}, m_root);
        QVERIFY(!command);
        QCOMPARE(command.error().code, QStringLiteral("unavailable"));
        QVERIFY2(command.error().message.contains(QLatin1String("under /tmp")), qPrintable(command.error().message));
    }

    void installationPrefixOfTheProgramIsMounted()
    {
        // A runtime under a version manager: <prefix>/bin/tool beside <prefix>/lib, reached
        // through a link from elsewhere, as a virtual environment's interpreter is.
        const QString prefix = m_dir.filePath(QStringLiteral("versions/1.0"));
        QVERIFY(writeFile(prefix + "/bin/tool", "#!/bin/sh\n", true));
        QVERIFY(QDir().mkpath(prefix + "/lib"));
        const QString venv = m_dir.filePath(QStringLiteral("venv"));
        QVERIFY(QDir().mkpath(venv + "/bin"));
        QVERIFY(QDir().mkpath(venv + "/lib"));
        QVERIFY(QFile::link(prefix + "/bin/tool", venv + "/bin/tool"));

        const QStringList readOnly = valuesOf(build(policy(), venv + "/bin/tool"),
                                              QStringLiteral("--ro-bind"));
        QVERIFY2(readOnly.contains(venv), qPrintable(readOnly.join(' ')));
        QVERIFY2(readOnly.contains(prefix), qPrintable(readOnly.join(' ')));
        // The launcher is not in a bin/ directory: only the file itself.
        QVERIFY2(readOnly.contains(m_launcher), qPrintable(readOnly.join(' ')));
        QVERIFY(!readOnly.contains(QFileInfo(m_launcher).absolutePath()));
    }

    void absolutePathsAmongArgumentsAreMounted()
    {
        const QString driver = m_dir.filePath(QStringLiteral("cache/driver.py"));
        const QString jar = m_dir.filePath(QStringLiteral("cache/driver.jar"));
        const QString native = m_dir.filePath(QStringLiteral("cache/libnative.so"));
        for (const QString &file : {driver, jar, native})
            QVERIFY(writeFile(file, "x"));
        const QStringList readOnly = valuesOf(
            build(policy(), QStringLiteral("/usr/bin/java"),
                  {QStringLiteral("-Dnative=") + native, QStringLiteral("-cp"),
                   jar + ":/usr/share/java/x.jar", driver,
                   m_dir.filePath(QStringLiteral("missing.py"))}),
            QStringLiteral("--ro-bind"));
        for (const QString &file : {driver, jar, native})
            QVERIFY2(readOnly.contains(file), qPrintable(file));
        QVERIFY(!readOnly.contains(m_dir.filePath(QStringLiteral("missing.py"))));
        QVERIFY(!readOnly.contains(QStringLiteral("/usr/share/java/x.jar")));  // under /usr
    }

    void argumentsNeverExposeMoreThanTheirFile_data()
    {
        QTest::addColumn<QString>("argument");
        QTest::newRow("the root of the file system") << QStringLiteral("/");
        QTest::newRow("a parent of the workspace") << QStringLiteral("..");
        QTest::newRow("the home directory") << QDir::homePath();
        QTest::newRow("inside the workspace (already writable)") << QStringLiteral("inner");
    }

    void argumentsNeverExposeMoreThanTheirFile()
    {
        QFETCH(QString, argument);
        QVERIFY(QDir().mkpath(m_root + "/inner"));
        const QString path = QDir::cleanPath(QDir(m_root).absoluteFilePath(argument));
        const QStringList readOnly = valuesOf(build(policy(), QStringLiteral("/usr/bin/bash"),
                                                    {path}),
                                              QStringLiteral("--ro-bind"));
        QVERIFY2(!readOnly.contains(path), qPrintable(readOnly.join(' ')));
    }

    // A runtime whose installation prefix holds the host's data directory (a python in
    // ~/.local/bin beside ~/.local/share/replhost) gets only its executable, and nothing inside
    // the data directory is mounted for an argument.
    void hiddenPathsNarrowTheMounts()
    {
        const QString local = m_dir.filePath(QStringLiteral("local"));
        QVERIFY(writeFile(local + "/bin/tool", "#!/bin/sh\n", true));
        QVERIFY(QDir().mkpath(local + "/lib"));
        const QString data = local + "/share/replhost";
        QVERIFY(writeFile(data + "/token", "secret"));
        sdk::SandboxPolicy p = policy();
        p.hidden = {data};
        const QStringList readOnly = valuesOf(build(p, local + "/bin/tool", {data + "/token"}),
                                              QStringLiteral("--ro-bind"));
        QVERIFY2(readOnly.contains(local + "/bin/tool"), qPrintable(readOnly.join(' ')));
        QVERIFY2(!readOnly.contains(local), qPrintable(readOnly.join(' ')));
        QVERIFY2(!readOnly.contains(data + "/token"), qPrintable(readOnly.join(' ')));
        // Without the hidden path the whole prefix would have been mounted.
        QVERIFY(valuesOf(build(policy(), local + "/bin/tool"), QStringLiteral("--ro-bind"))
                    .contains(local));
    }

    void explicitReadOnlyPathsComeAfterTheWorkspace()
    {
        QVERIFY(QDir().mkpath(m_root + "/reference"));
        sdk::SandboxPolicy p = policy();
        p.readOnly = {m_root + "/reference"};
        const QStringList command = build(p, QStringLiteral("/usr/bin/bash"));
        const qsizetype bind = command.indexOf(QStringLiteral("--bind"));
        const qsizetype readOnly = command.lastIndexOf(QStringLiteral("--ro-bind"));
        QVERIFY(bind >= 0);
        QVERIFY(readOnly > bind);
        QCOMPARE(command[readOnly + 1], m_root + "/reference");
    }

    void unusableInputIsRefused_data()
    {
        QTest::addColumn<QString>("bwrap");
        QTest::addColumn<QString>("root");
        QTest::addColumn<QString>("readOnly");
        QTest::addColumn<QString>("named");
        QTest::newRow("bwrap missing") << "/nonexistent/bwrap" << QString() << QString()
                                       << "/nonexistent/bwrap";
        QTest::newRow("root missing") << QString() << "/nonexistent/ws" << QString()
                                      << "/nonexistent/ws";
        QTest::newRow("read-only path missing") << QString() << QString() << "/nonexistent/ro"
                                                << "/nonexistent/ro";
    }

    void unusableInputIsRefused()
    {
        QFETCH(QString, bwrap);
        QFETCH(QString, root);
        QFETCH(QString, readOnly);
        QFETCH(QString, named);
        sdk::SandboxPolicy p = policy();
        if (!bwrap.isEmpty())
            p.bwrap = bwrap;
        if (!root.isEmpty())
            p.root = root;
        if (!readOnly.isEmpty())
            p.readOnly = {readOnly};
        const auto command =
            sdk::bwrapCommand(p, confined(QStringLiteral("/usr/bin/bash"), {}), m_root);
        QVERIFY(!command);
        QCOMPARE(command.error().code, QStringLiteral("unavailable"));
        QVERIFY2(command.error().message.contains(named), qPrintable(command.error().message));
    }

    // The command really runs under bwrap: system and program visible, the workspace writable,
    // what lies beside it invisible, fd 3 handed through.
    void builtCommandRunsUnderBwrap()
    {
        REPLHOST_REQUIRE_SANDBOX_OR_SKIP(replhost::testing::sandboxUnavailableReason());
        const QString bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
        QVERIFY(writeFile(m_dir.filePath(QStringLiteral("secret")), "host only"));
        const QString script = QStringLiteral(
            "cat %1 2>/dev/null && echo secret-visible; "
            "echo written > out.txt; echo \"cwd=$PWD home=$HOME\"; "
            "[ -e /proc/self/fd/3 ] && echo fd3-open")
                                   .arg(m_dir.filePath(QStringLiteral("secret")));
        sdk::SandboxPolicy p = policy();
        p.bwrap = bwrap;
        const QStringList command = build(p, QStringLiteral("/usr/bin/bash"),
                                          {QStringLiteral("-c"), script});
        QVERIFY(!command.isEmpty());
        QProcess process;
        process.setProgram(command.first());
        process.setArguments(command.mid(1));
        process.setWorkingDirectory(m_root);
        process.setChildProcessModifier([] { ::dup2(0, 3); });
        process.start();
        QVERIFY(process.waitForFinished(30000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        QVERIFY2(process.exitCode() == 0, qPrintable(process.readAllStandardError()));
        QVERIFY2(!out.contains(QLatin1String("secret-visible")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("cwd=%1 home=%1").arg(m_root)), qPrintable(out));
        QVERIFY2(out.contains(QLatin1String("fd3-open")), qPrintable(out));
        QFile written(m_root + "/out.txt");
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(written.readAll(), QByteArray("written\n"));
    }

    // Under a view the command sees the workspace at /home/user, as HOME and cwd, and what it
    // writes to /tmp is in the workspace's .tmp on the host.
    void aViewIsWhatTheCommandSees()
    {
        REPLHOST_REQUIRE_SANDBOX_OR_SKIP(replhost::testing::sandboxUnavailableReason());
        sdk::SandboxPolicy p = viewed();
        p.bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
        const QStringList inner{QStringLiteral("/usr/bin/bash"), QStringLiteral("-c"),
                                QStringLiteral("echo \"cwd=$(pwd -P) home=$HOME\"; "
                                               "echo kept > /tmp/kept.txt; ls /home/user")};
        const auto bwrap = sdk::bwrapCommand(p, inner, m_root);
        QVERIFY2(bwrap, qPrintable(bwrap ? QString() : bwrap.error().message));
        QProcess process;
        process.setProgram(bwrap->first());
        process.setArguments(bwrap->mid(1) + QStringList{QStringLiteral("--")} + inner);
        process.start();
        QVERIFY(process.waitForFinished(30000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        QVERIFY2(process.exitCode() == 0, qPrintable(process.readAllStandardError()));
        QVERIFY2(out.startsWith(QLatin1String("cwd=/home/user home=/home/user\n")), qPrintable(out));
        QFile kept(m_root + "/.tmp/kept.txt");
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("kept\n"));
    }
};

QTEST_GUILESS_MAIN(SandboxTest)
#include "tst_sandbox.moc"
