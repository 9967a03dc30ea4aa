// SPDX-License-Identifier: Apache-2.0
// The walls of a workspace whose isolation is "sandbox", attacked from inside through every way
// code gets in: a Python context, a Bash context, a stateless command, and OpenSandbox's
// /command and /code without a context. One real replhost-server for the suite, with a canary
// in its environment, its warm pool on (so unconfined pooled workers exist that must never be
// handed to a sandbox), a real token file and database, and a real listener on the host's
// loopback. Where a probe could be wrong, the same probe first succeeds where it should (an
// unsandboxed workspace), so that a probe that can never succeed cannot pass for a wall.
#include "apiclient.h"
#include "codequoting.h"
#include "sandboxrequirement.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>
#include <QUuid>

#include <unistd.h>

namespace {

constexpr int kRunTimeout = 120000;

const QString kCanaryName = QStringLiteral("SANDBOXWALLS_CANARY");

// How code reaches the workspace. "python context" runs Python; the others run shell.
const QStringList kSurfaces = {QStringLiteral("python context"), QStringLiteral("bash context"),
                               QStringLiteral("command"), QStringLiteral("opensandbox command"),
                               QStringLiteral("opensandbox code")};

using replhost::testing::pythonString;
using replhost::testing::shellWord;

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// The system calls the seccomp filter refuses, with x86-64 numbers and harmless arguments:
// each would succeed, or fail with another error than the one expected, without the filter
// (unshare and clone of a user namespace, ptrace(TRACEME) succeed for anyone).
struct Syscall {
    const char *name;
    int number;
    const char *arguments;  // comma-separated integers, the same for Python and Perl
    int error;              // expected errno
};
const Syscall kRefused[] = {
    {"mount", 165, "0, 0, 0, 0, 0", 1},
    {"umount2", 166, "0, 0", 1},
    {"pivot_root", 155, "0, 0", 1},
    {"open_tree", 428, "-1, 0, 0", 1},
    {"move_mount", 429, "-1, 0, -1, 0, 0", 1},
    {"fsopen", 430, "0, 0", 1},
    {"fsmount", 432, "-1, 0, 0", 1},
    {"kexec_load", 246, "0, 0, 0, 0", 1},
    {"kexec_file_load", 320, "-1, -1, 0, 0, 0", 1},
    {"init_module", 175, "0, 0, 0", 1},
    {"finit_module", 313, "-1, 0, 0", 1},
    {"delete_module", 176, "0, 0", 1},
    {"bpf", 321, "0, 0, 0", 1},
    {"perf_event_open", 298, "0, 0, -1, -1, 0", 1},
    {"keyctl", 250, "0, -3, 0", 1},
    {"add_key", 248, "0, 0, 0, 0, 0", 1},
    {"request_key", 249, "0, 0, 0, 0", 1},
    {"ptrace", 101, "0, 0, 0, 0", 1},
    {"userfaultfd", 323, "0", 1},
    {"setns", 308, "0, 0", 1},
    {"unshare", 272, "268435456", 1},             // CLONE_NEWUSER
    {"clone", 56, "268435473, 0, 0, 0, 0", 1},    // CLONE_NEWUSER | SIGCHLD
    {"clone3", 435, "0, 0", 38},                  // ENOSYS: the C library falls back to clone
    {"ioctl", 16, "0, 21522, 0", 1},              // TIOCSTI on stdin
};

// Prints "<name> <errno>" for each refused call (or "<name> allowed"). A clone that succeeded
// ends its child at once.
QString syscallProbe(bool python)
{
    QString code;
    if (python) {
        code = QStringLiteral("import ctypes, os\n"
                              "libc = ctypes.CDLL(None, use_errno=True)\n"
                              "libc.syscall.restype = ctypes.c_long\n"
                              "def probe(name, number, *args):\n"
                              "    ctypes.set_errno(0)\n"
                              "    r = libc.syscall(number, *[ctypes.c_long(a) for a in args])\n"
                              "    if r == 0 and name == 'clone':\n"
                              "        os._exit(0)\n"
                              "    print(name, ctypes.get_errno() if r < 0 else 'allowed')\n");
        for (const Syscall &call : kRefused)
            code += QStringLiteral("probe('%1', %2, %3)\n")
                        .arg(QLatin1String(call.name))
                        .arg(call.number)
                        .arg(QLatin1String(call.arguments));
        return code;
    }
    code = QStringLiteral("sub probe { my ($name, $n, @a) = @_; $! = 0; my $r = syscall($n, @a);"
                          " POSIX::_exit(0) if $r == 0 && $name eq 'clone';"
                          " print \"$name \", ($r < 0 ? $! + 0 : 'allowed'), \"\\n\"; }"
                          " use POSIX;");
    for (const Syscall &call : kRefused)
        code += QStringLiteral(" probe('%1', %2, %3);")
                    .arg(QLatin1String(call.name))
                    .arg(call.number)
                    .arg(QLatin1String(call.arguments));
    return QStringLiteral("perl -e %1").arg(shellWord(code));
}

void addSurfaceRows()
{
    QTest::addColumn<QString>("surface");
    for (const QString &surface : kSurfaces)
        QTest::newRow(qPrintable(surface)) << surface;
}

} // namespace

class SandboxWallsTest : public QObject {
    Q_OBJECT

    ServerProcess m_server;
    QString m_unavailable;  // why no sandbox can be made here, or empty
    QString m_canary;       // the value of kCanaryName in the server's environment
    QHash<QString, QString> m_contexts;  // workspace + language → context id
    QHash<QString, QString> m_directories;  // workspace → its directory

    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }

    // Creates the workspace with these settings (once); its directory, or empty.
    QString workspace(const QString &name, const QJsonObject &settings)
    {
        if (m_directories.contains(name))
            return m_directories.value(name);
        const auto created = client().post(QStringLiteral("/v1/workspaces"),
                                           {{QStringLiteral("name"), name},
                                            {QStringLiteral("settings"), settings}});
        if (created.status != 201) {
            qWarning() << "create workspace" << name << created.status << created.body;
            return {};
        }
        const QString dir = created.object().value(QLatin1String("directory")).toString();
        m_directories.insert(name, dir);
        return dir;
    }

    QString boxed()
    {
        return workspace(QStringLiteral("boxed"),
                         {{QStringLiteral("isolation"), QStringLiteral("sandbox")}});
    }

    // A sandbox seen at /home/user, as E2B's is.
    QString viewed()
    {
        return workspace(QStringLiteral("viewed"),
                         {{QStringLiteral("isolation"), QStringLiteral("sandbox")},
                          {QStringLiteral("view_path"), QStringLiteral("/home/user")}});
    }

    // The standard output of `python` or `shell` (by surface) run to success in workspace
    // `ws`; a null string and a warning when it did not succeed.
    QString run(const QString &surface, const QString &ws, const QString &python,
                const QString &shell)
    {
        const QString prefix = QStringLiteral("/v1/workspaces/") + ws;
        if (surface.endsWith(QLatin1String(" context"))) {
            const QString language = surface.section(QLatin1Char(' '), 0, 0);
            QString &context = m_contexts[ws + QLatin1Char('/') + language];
            if (context.isEmpty())
                context = client().createContext(language, prefix);
            if (context.isEmpty())
                return {};
            const QJsonObject done = client().runAndWait(
                context, language == QLatin1String("python") ? python : shell, {}, prefix);
            if (done.value(QLatin1String("status")).toString() != QLatin1String("ok")) {
                qWarning() << "run failed:" << done;
                return {};
            }
            return done.value(QLatin1String("stdout")).toString();
        }
        if (surface == QLatin1String("command")) {
            const auto response = client().post(prefix + QStringLiteral("/commands?wait=true"),
                                                {{QStringLiteral("command"), shell}});
            const QJsonObject done = response.object();
            if (response.status != 200
                || done.value(QLatin1String("status")).toString() != QLatin1String("ok")) {
                qWarning() << "command failed:" << response.status << response.body;
                return {};
            }
            return done.value(QLatin1String("stdout")).toString();
        }
        // OpenSandbox's execd: events as JSON objects, each followed by a blank line.
        const bool code = surface == QLatin1String("opensandbox code");
        const auto response = client().request(
            "POST",
            QStringLiteral("/opensandbox/execd/%1/%2").arg(ws, code ? "code" : "command"),
            compact({{code ? QStringLiteral("code") : QStringLiteral("command"), shell}}),
            {{"OPEN-SANDBOX-API-KEY", m_server.token()}}, false);
        if (response.status != 200) {
            qWarning() << "execd failed:" << response.status << response.body;
            return {};
        }
        QString out = QStringLiteral("");
        bool failed = false;
        for (const QByteArray &chunk : response.body.split('\n')) {
            const QJsonObject event = QJsonDocument::fromJson(chunk).object();
            const QString type = event.value(QLatin1String("type")).toString();
            // execd sends output line by line, without the line ends.
            if (type == QLatin1String("stdout"))
                out += event.value(QLatin1String("text")).toString() + QLatin1Char('\n');
            else if (type == QLatin1String("error"))
                failed = true;
        }
        if (failed) {
            qWarning() << "execd run failed:" << response.body;
            return {};
        }
        return out;
    }

    // Lines of output, whatever the surface made of the line ends.
    static QStringList lines(const QString &output)
    {
        return output.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    }

    // Runs the probe, which prints one word per line; those words, or {"<failed>"}.
    QStringList words(const QString &surface, const QString &ws, const QString &python,
                      const QString &shell)
    {
        const QString out = run(surface, ws, python, shell);
        if (out.isNull())
            return {QStringLiteral("<failed>")};
        return lines(out);
    }

private slots:
    void initTestCase()
    {
        m_unavailable = replhost::testing::sandboxUnavailableReason();
        m_canary = QUuid::createUuid().toString(QUuid::Id128);
        QVERIFY2(m_server.start({QStringLiteral("--warm-pool"), QStringLiteral("python=1")},
                                {{kCanaryName, m_canary}}),
                 qPrintable(m_server.error()));
        QVERIFY(!workspace(QStringLiteral("open"), {}).isEmpty());
    }

    void init()
    {
        const QLatin1String test(QTest::currentTestFunction());
        if (test != QLatin1String("limitsThatCannotBeEnforcedAreRefused"))
            REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_unavailable);
    }

    void serverSeesTheSandboxAsAvailable()
    {
        const QJsonObject sandbox = client().get(QStringLiteral("/v1/info")).object()
                                        .value(QLatin1String("sandbox")).toObject();
        QVERIFY2(sandbox.value(QLatin1String("available")).toBool(),
                 qPrintable(sandbox.value(QLatin1String("reason")).toString()));
    }

    void capabilitiesAreZero_data() { addSurfaceRows(); }

    // Also for a server run as root: a user namespace of its own and every capability dropped,
    // no new privileges (so no setuid program gives any back), the seccomp filter in force.
    void capabilitiesAreZero()
    {
        QFETCH(QString, surface);
        QVERIFY(!boxed().isEmpty());
        const QString python = QStringLiteral(
            "for line in open('/proc/self/status'):\n"
            "    if line.split(':')[0] in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', "
            "'NoNewPrivs', 'Seccomp'):\n"
            "        print(line.split()[0] + line.split()[1])");
        const QString shell = QStringLiteral(
            "awk '$1 ~ /^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):$/ { print $1 $2 }' "
            "/proc/self/status");
        const QStringList expected = {"CapInh:0000000000000000", "CapPrm:0000000000000000",
                                      "CapEff:0000000000000000", "CapBnd:0000000000000000",
                                      "CapAmb:0000000000000000", "NoNewPrivs:1", "Seccomp:2"};
        QCOMPARE(words(surface, QStringLiteral("boxed"), python, shell), expected);
        if (::geteuid() == 0) {
            // The probe can tell: unsandboxed, root has capabilities.
            const QStringList open = words(surface, QStringLiteral("open"), python, shell);
            QVERIFY2(!open.join(' ').contains(QLatin1String("CapEff:0000000000000000")),
                     qPrintable(open.join(' ')));
        }
    }

    void nobodyIsRootInside_data() { addSurfaceRows(); }

    void nobodyIsRootInside()
    {
        QFETCH(QString, surface);
        QVERIFY(!boxed().isEmpty());
        const QString expected = ::geteuid() == 0
                                     ? QStringLiteral("65534:65534")
                                     : QStringLiteral("%1:%2").arg(::geteuid()).arg(::getegid());
        QCOMPARE(words(surface, QStringLiteral("boxed"),
                       QStringLiteral("import os\nprint('%d:%d' % (os.getuid(), os.getgid()))"),
                       QStringLiteral("echo \"$(id -u):$(id -g)\"")),
                 QStringList{expected});
    }

    void systemCannotBeRemountedWritable_data() { addSurfaceRows(); }

    // What made /usr writable from a sandbox of a server run as root without a user namespace.
    void systemCannotBeRemountedWritable()
    {
        QFETCH(QString, surface);
        QVERIFY(!boxed().isEmpty());
        const QString probe = QStringLiteral("/usr/replhost-walls-%1")
                                  .arg(QUuid::createUuid().toString(QUuid::Id128));
        const QString python = QStringLiteral(
            "import subprocess\n"
            "r = subprocess.run(['mount', '-o', 'remount,rw,bind', '/usr'], capture_output=True)\n"
            "try:\n"
            "    open(%1, 'w').close()\n"
            "    written = 'written'\n"
            "except OSError:\n"
            "    written = 'refused'\n"
            "print('mount-' + ('ok' if r.returncode == 0 else 'failed'), written)")
                                   .arg(pythonString(probe));
        const QString shell = QStringLiteral(
            "if mount -o remount,rw,bind /usr 2>/dev/null; then m=ok; else m=failed; fi; "
            "if touch %1 2>/dev/null; then w=written; else w=refused; fi; echo mount-$m $w")
                                  .arg(shellWord(probe));
        QCOMPARE(words(surface, QStringLiteral("boxed"), python, shell),
                 QStringList{QStringLiteral("mount-failed refused")});
        QVERIFY(!QFile::exists(probe));
    }

    void systemCallsThatLeadOutAreRefused_data() { addSurfaceRows(); }

    // The seccomp filter: each call fails with EPERM (clone3 with ENOSYS), the program goes on.
    void systemCallsThatLeadOutAreRefused()
    {
        QFETCH(QString, surface);
#if !defined(__x86_64__)
        QSKIP("the probe's system call numbers are x86-64's");
#endif
        QVERIFY(!boxed().isEmpty());
        QStringList expected;
        for (const Syscall &call : kRefused)
            expected.append(QStringLiteral("%1 %2").arg(QLatin1String(call.name)).arg(call.error));
        // Not run unsandboxed for comparison: ptrace(TRACEME) or kexec_load would succeed
        // there, as root, and act. Without the filter the zero arguments would make most of
        // these fail with EFAULT, EINVAL or ENOTTY, not EPERM; userNamespacesCannotBeMadeInside
        // shows a refused call that succeeds unsandboxed.
        QCOMPARE(lines(run(surface, QStringLiteral("boxed"), syscallProbe(true),
                           syscallProbe(false))),
                 expected);
    }

    void userNamespacesCannotBeMadeInside_data() { addSurfaceRows(); }

    // unshare(1) as a user would try it, and Python's os.fork after unshare via ctypes.
    void userNamespacesCannotBeMadeInside()
    {
        QFETCH(QString, surface);
        QVERIFY(!boxed().isEmpty());
        const QString shell = QStringLiteral(
            "if unshare -U -r true 2>/dev/null; then echo made; else echo refused; fi");
        const QString python = QStringLiteral(
            "import subprocess\n"
            "r = subprocess.run(['unshare', '-U', '-r', 'true'], capture_output=True)\n"
            "print('made' if r.returncode == 0 else 'refused')");
        QCOMPARE(words(surface, QStringLiteral("open"), python, shell),
                 QStringList{QStringLiteral("made")});
        QCOMPARE(words(surface, QStringLiteral("boxed"), python, shell),
                 QStringList{QStringLiteral("refused")});
    }

    void hostFilesAreOutOfReach_data() { addSurfaceRows(); }

    // The host's root and the data directory are not writable; the token, the database, the
    // other workspaces and a file in the server's home cannot even be read. (Inside, / and the
    // directories leading to the workspace are bwrap's own tmpfs: a write there stays there.)
    void hostFilesAreOutOfReach()
    {
        QFETCH(QString, surface);
        QVERIFY(!boxed().isEmpty());
        const QString data = m_server.dataDir();
        const QString token = data + QStringLiteral("/token");
        QVERIFY2(QFileInfo::exists(token), qPrintable(token));
        const QString open = workspace(QStringLiteral("open"), {});
        QVERIFY(QFile(open + QStringLiteral("/neighbour.txt")).open(QIODevice::WriteOnly));
        QTemporaryFile home(QDir::homePath() + QStringLiteral("/.replhost-walls-XXXXXX"));
        QVERIFY2(home.open(), qPrintable(home.errorString()));
        const QString unique = QUuid::createUuid().toString(QUuid::Id128);
        const QStringList readable = {token, data + QStringLiteral("/replhost.db"), open,
                                      open + QStringLiteral("/neighbour.txt"), home.fileName(),
                                      QStringLiteral("/proc/%1/root/").arg(m_server.pid())};
        const QStringList writable = {QStringLiteral("/replhost-walls-") + unique,
                                      data + QStringLiteral("/walls-") + unique,
                                      open + QStringLiteral("/walls-") + unique};
        QString python = QStringLiteral("import os\nout = []\n");
        QString shell;
        for (const QString &path : readable) {
            python += QStringLiteral("try:\n"
                                     "    p = %1\n"
                                     "    os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1)\n"
                                     "    out.append('read')\n"
                                     "except OSError:\n"
                                     "    out.append('-')\n")
                          .arg(pythonString(path));
            shell += QStringLiteral("p=%1; if { [ -d \"$p\" ] && ls \"$p\"; } >/dev/null 2>&1 || "
                                    "head -c1 \"$p\" >/dev/null 2>&1; then printf 'read '; else "
                                    "printf -- '- '; fi; ")
                         .arg(shellWord(path));
        }
        for (const QString &path : writable) {
            python += QStringLiteral("try:\n"
                                     "    open(%1, 'w').close()\n"
                                     "except OSError:\n"
                                     "    pass\n")
                          .arg(pythonString(path));
            shell += QStringLiteral("(: > %1) 2>/dev/null; ").arg(shellWord(path));
        }
        python += QStringLiteral("print(' '.join(out))");
        shell += QStringLiteral("echo");
        QCOMPARE(words(surface, QStringLiteral("boxed"), python, shell).value(0).trimmed(),
                 QStringLiteral("- - - - - -"));
        for (const QString &path : writable)
            QVERIFY2(!QFile::exists(path), qPrintable(path));
        // The probe can tell: unsandboxed, the token is readable and the data dir writable.
        QCOMPARE(words(surface, QStringLiteral("open"), python, shell).value(0)
                     .section(QLatin1Char(' '), 0, 0),
                 QStringLiteral("read"));
        QVERIFY(QFile::exists(writable.at(1)));
        for (const QString &path : writable)
            QFile::remove(path);
    }

    void commandTextNamesNoMounts_data()
    {
        QTest::addColumn<QString>("surface");
        for (const QString &surface : kSurfaces)
            if (!surface.endsWith(QLatin1String(" context")))
                QTest::newRow(qPrintable(surface)) << surface;
    }

    // A worker's arguments (its driver, its jars) are mounted for it; a command's text is
    // someone's input, and a path written into it, as a shell assignment's value, is not.
    void commandTextNamesNoMounts()
    {
        QFETCH(QString, surface);
        QVERIFY(!boxed().isEmpty());
        QTemporaryDir host;
        QVERIFY(host.isValid());
        QFile secret(host.filePath(QStringLiteral("secret")));
        QVERIFY(secret.open(QIODevice::WriteOnly));
        secret.write("host-only\n");
        secret.close();
        const QString shell = QStringLiteral("x=%1:$(cat %1 2>/dev/null || echo unreadable)")
                                  .arg(secret.fileName())
                              + QStringLiteral("; echo \"${x#*:}\"");
        QCOMPARE(words(surface, QStringLiteral("open"), {}, shell),
                 QStringList{QStringLiteral("host-only")});
        QCOMPARE(words(surface, QStringLiteral("boxed"), {}, shell),
                 QStringList{QStringLiteral("unreadable")});
    }

    void serverEnvironmentDoesNotLeak_data() { addSurfaceRows(); }

    // Not in the process's environment, nor in any process's of the sandbox; HOME is the
    // workspace, and the workspace's env layer is there.
    void serverEnvironmentDoesNotLeak()
    {
        QFETCH(QString, surface);
        const QString dir = boxed();
        QVERIFY(!dir.isEmpty());
        QCOMPARE(client().patch(QStringLiteral("/v1/workspaces/boxed/env"),
                                {{QStringLiteral("set"),
                                  QJsonObject{{QStringLiteral("WALLS_LAYER"), "from-layer"}}}})
                     .status,
                 200);
        QVERIFY(!workspace(QStringLiteral("open"), {}).isEmpty());
        const QString python = QStringLiteral(
            "import glob, os\n"
            "found = 0\n"
            "for p in glob.glob('/proc/[0-9]*/environ'):\n"
            "    try:\n"
            "        found += open(p, 'rb').read().count(%1.encode())\n"
            "    except OSError:\n"
            "        pass\n"
            "print(os.environ.get(%2, 'absent'), found, os.environ.get('HOME'), "
            "os.environ.get('WALLS_LAYER'))")
                                   .arg(pythonString(m_canary), pythonString(kCanaryName));
        const QString shell = QStringLiteral(
            "n=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c %1); "
            "echo \"${%2-absent}\" \"$n\" \"$HOME\" \"$WALLS_LAYER\"")
                                  .arg(shellWord(m_canary), kCanaryName);
        const QStringList seen = words(surface, QStringLiteral("boxed"), python, shell)
                                     .value(0).split(QLatin1Char(' '));
        QCOMPARE(seen, (QStringList{QStringLiteral("absent"), QStringLiteral("0"), dir,
                                    QStringLiteral("from-layer")}));
        // The probe can tell: unsandboxed, the host's environment is inherited, as documented.
        QCOMPARE(words(surface, QStringLiteral("open"), python, shell).value(0)
                     .section(QLatin1Char(' '), 0, 0),
                 m_canary);
    }

    void loopbackListenersOfTheHostAreUnreachable_data()
    {
        QTest::addColumn<QString>("surface");
        QTest::addColumn<bool>("network");
        for (const QString &surface : kSurfaces)
            for (const bool network : {false, true})
                QTest::newRow(qPrintable(surface + (network ? ", network: true" : ", default")))
                    << surface << network;
    }

    // By default a sandbox has a network namespace with only its own loopback; with
    // "network": true it shares the host's.
    void loopbackListenersOfTheHostAreUnreachable()
    {
        QFETCH(QString, surface);
        QFETCH(bool, network);
        const QString ws = network ? QStringLiteral("netbox") : QStringLiteral("boxed");
        QVERIFY(!workspace(ws, network ? QJsonObject{{QStringLiteral("isolation"), "sandbox"},
                                                     {QStringLiteral("network"), true}}
                                       : QJsonObject{{QStringLiteral("isolation"), "sandbox"}})
                     .isEmpty());
        const QJsonObject shown = client().get(QStringLiteral("/v1/workspaces/") + ws).object();
        QCOMPARE(shown.value(QLatin1String("settings")).toObject()
                     .value(QLatin1String("network")).toBool(!network),
                 network);
        QTcpServer listener;
        QVERIFY(listener.listen(QHostAddress::LocalHost));
        const QString python = QStringLiteral(
            "import socket\n"
            "try:\n"
            "    socket.create_connection(('127.0.0.1', %1), timeout=20).close()\n"
            "    print('connected')\n"
            "except OSError:\n"
            "    print('refused')")
                                   .arg(listener.serverPort());
        const QString shell = QStringLiteral(
            "if timeout 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%1' 2>/dev/null; then "
            "echo connected; else echo refused; fi")
                                  .arg(listener.serverPort());
        QCOMPARE(words(surface, ws, python, shell),
                 QStringList{network ? QStringLiteral("connected") : QStringLiteral("refused")});
        QCOMPARE(listener.hasPendingConnections() || listener.waitForNewConnection(0), network);
    }

    void writesStayInTheWorkspace_data() { addSurfaceRows(); }

    // `touch /tmp/x` reaches the sandbox's private /tmp, not the host's; a file written in the
    // workspace reaches the host, owned by the server's user (the one id a user namespace made
    // without privileges maps).
    void writesStayInTheWorkspace()
    {
        QFETCH(QString, surface);
        const QString dir = boxed();
        QVERIFY(!dir.isEmpty());
        const QString unique = QUuid::createUuid().toString(QUuid::Id128);
        const QString tmp = QStringLiteral("/tmp/replhost-walls-") + unique;
        const QString made = QStringLiteral("made-") + unique;
        const QString python = QStringLiteral("open(%1, 'w').close()\nopen(%2, 'w').write('x')\n"
                                              "print('done')")
                                   .arg(pythonString(tmp), pythonString(made));
        const QString shell = QStringLiteral("touch %1 && printf x > %2 && echo done")
                                  .arg(shellWord(tmp), shellWord(made));
        QCOMPARE(words(surface, QStringLiteral("boxed"), python, shell),
                 QStringList{QStringLiteral("done")});
        QVERIFY(!QFile::exists(tmp));
        const QFileInfo written(dir + QLatin1Char('/') + made);
        QVERIFY(written.exists());
        QCOMPARE(written.ownerId(), ::geteuid());
    }

    void aViewIsTheCodesCwdAndHome_data() { addSurfaceRows(); }

    // In a sandbox with a view, code starts in the view path, which is its HOME too; the host's
    // path of the workspace is nowhere to be seen.
    void aViewIsTheCodesCwdAndHome()
    {
        QFETCH(QString, surface);
        const QString dir = viewed();
        QVERIFY(!dir.isEmpty());
        const QString python = QStringLiteral("import os\nprint(os.getcwd())\nprint(os.environ['HOME'])\n"
                                              "print(os.path.exists(%1))").arg(pythonString(dir));
        const QString shell = QStringLiteral("pwd; echo \"$HOME\"; "
                                             "if [ -e %1 ]; then echo True; else echo False; fi")
                                  .arg(shellWord(dir));
        QCOMPARE(words(surface, QStringLiteral("viewed"), python, shell),
                 (QStringList{QStringLiteral("/home/user"), QStringLiteral("/home/user"),
                              QStringLiteral("False")}));
    }

    void tmpOfAViewIsKeptInTheWorkspace_data() { addSurfaceRows(); }

    // What code writes to /tmp outlives the process that wrote it: it is in the workspace's
    // .tmp on the host, where the file routes read it as /tmp/….
    void tmpOfAViewIsKeptInTheWorkspace()
    {
        QFETCH(QString, surface);
        const QString dir = viewed();
        QVERIFY(!dir.isEmpty());
        const QString name = QStringLiteral("kept-") + QUuid::createUuid().toString(QUuid::Id128);
        const QString python = QStringLiteral("open('/tmp/' + %1, 'w').write('kept')\nprint('done')")
                                   .arg(pythonString(name));
        const QString shell = QStringLiteral("printf kept > /tmp/%1 && echo done").arg(shellWord(name));
        QCOMPARE(words(surface, QStringLiteral("viewed"), python, shell),
                 QStringList{QStringLiteral("done")});
        QFile onHost(dir + QStringLiteral("/.tmp/") + name);
        QVERIFY(onHost.open(QIODevice::ReadOnly));
        QCOMPARE(onHost.readAll(), QByteArray("kept"));
        const auto read = client().get(QStringLiteral("/v1/workspaces/viewed/files/content?path=/tmp/") + name);
        QCOMPARE(read.status, 200);
        QCOMPARE(read.body, QByteArray("kept"));
        // And a later process reads it back.
        const QString readBack = QStringLiteral("print(open('/tmp/' + %1).read())").arg(pythonString(name));
        QCOMPARE(words(surface, QStringLiteral("viewed"), readBack,
                       QStringLiteral("cat /tmp/%1; echo").arg(shellWord(name))),
                 QStringList{QStringLiteral("kept")});
    }

    // The engine keeps host paths, the code sees the view's: a cwd the code moves to is the
    // host's in the execution document and is the view's again for the code.
    void aContextsCwdCrossesTheView()
    {
        const QString dir = viewed();
        QVERIFY(!dir.isEmpty());
        const QString prefix = QStringLiteral("/v1/workspaces/viewed");
        const QString context = client().createContext(QStringLiteral("python"), prefix);
        QVERIFY(!context.isEmpty());
        const QJsonObject moved = client().runAndWait(
                context, QStringLiteral("import os\nos.makedirs('sub', exist_ok=True)\nos.chdir('sub')\n"
                                        "print(os.getcwd())"), {}, prefix);
        QCOMPARE(moved.value(QLatin1String("stdout")).toString(), QStringLiteral("/home/user/sub\n"));
        QCOMPARE(moved.value(QLatin1String("cwd")).toString(), dir + QStringLiteral("/sub"));
        const QJsonObject info = client().get(prefix + QStringLiteral("/contexts/") + context).object();
        QCOMPARE(info.value(QLatin1String("cwd")).toString(), dir + QStringLiteral("/sub"));

        // A context created in a view path starts there.
        const auto created = client().post(prefix + QStringLiteral("/contexts"),
                                           {{QStringLiteral("language"), QStringLiteral("bash")},
                                            {QStringLiteral("cwd"), QStringLiteral("/home/user/sub")}});
        QCOMPARE(created.status, 201);
        const QString bash = created.object().value(QLatin1String("id")).toString();
        QCOMPARE(created.object().value(QLatin1String("cwd")).toString(), dir + QStringLiteral("/sub"));
        QCOMPARE(client().runAndWait(bash, QStringLiteral("pwd"), {}, prefix)
                         .value(QLatin1String("stdout")).toString(),
                 QStringLiteral("/home/user/sub\n"));
    }

    // A pooled worker is started unconfined, as the default workspace's workers are: a
    // sandboxed context never gets it, it starts one under its own confinement.
    void pooledWorkersAreNeverHandedToASandbox()
    {
        const auto pool = [this] {
            return client().get(QStringLiteral("/v1/info")).object()
                .value(QLatin1String("warm_pool")).toObject()
                .value(QLatin1String("python")).toObject();
        };
        QTRY_VERIFY_WITH_TIMEOUT(pool().value(QLatin1String("ready")).toInt() >= 1, kRunTimeout);
        const int hits = pool().value(QLatin1String("hits")).toInt();
        QVERIFY(!workspace(QStringLiteral("pooltest"),
                           {{QStringLiteral("isolation"), QStringLiteral("sandbox")}})
                     .isEmpty());
        const QString context = client().createContext(
            QStringLiteral("python"), QStringLiteral("/v1/workspaces/pooltest"));
        QVERIFY(!context.isEmpty());
        const QJsonObject done = client().runAndWait(
            context,
            QStringLiteral("import os\nprint(os.getpid(), %1 in os.environ)").arg(
                pythonString(kCanaryName)),
            {}, QStringLiteral("/v1/workspaces/pooltest"));
        // pid 2: bwrap's init is 1 in the sandbox's PID namespace.
        QCOMPARE(done.value(QLatin1String("stdout")).toString(), QStringLiteral("2 False\n"));
        QCOMPARE(pool().value(QLatin1String("hits")).toInt(), hits);
    }

    void commandsCanBeInterrupted()
    {
        QVERIFY(!boxed().isEmpty());
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/workspaces/boxed/commands"),
            {{QStringLiteral("command"), QStringLiteral("echo started; sleep 300")}});
        QCOMPARE(stream->status(), 200);
        const std::optional<ApiClient::Event> head = stream->next(kRunTimeout);
        QVERIFY(head && head->type == "execution");
        const QString id = head->json().value(QLatin1String("id")).toString();
        bool started = false;
        while (std::optional<ApiClient::Event> event = stream->next(kRunTimeout)) {
            if (event->type == "stream" && event->data.contains("started")) {
                started = true;
                break;
            }
        }
        QVERIFY(started);
        QVERIFY(!id.isEmpty());
        QCOMPARE(client().post(QStringLiteral("/v1/workspaces/boxed/commands/%1/interrupt").arg(id),
                               {}).status,
                 202);
        QString status;
        while (std::optional<ApiClient::Event> event = stream->next(kRunTimeout)) {
            if (event->type == "done") {
                status = event->json().value(QLatin1String("status")).toString();
                break;
            }
        }
        QCOMPARE(status, QStringLiteral("interrupted"));
    }

    void commandsHaveTheWorkersLimits_data()
    {
        QTest::addColumn<QString>("isolation");
        QTest::newRow("sandbox") << QStringLiteral("sandbox");
        QTest::newRow("none") << QStringLiteral("none");
    }

    // A command writes no file beyond limits.file_size_bytes, as a worker does not.
    void commandsHaveTheWorkersLimits()
    {
        QFETCH(QString, isolation);
        const QString ws = QStringLiteral("limited-") + isolation;
        const QString dir = workspace(
            ws, {{QStringLiteral("isolation"), isolation},
                 {QStringLiteral("limits"),
                  QJsonObject{{QStringLiteral("file_size_bytes"), 1048576}}}});
        QVERIFY(!dir.isEmpty());
        const auto response = client().post(
            QStringLiteral("/v1/workspaces/%1/commands?wait=true").arg(ws),
            {{QStringLiteral("command"),
              QStringLiteral("head -c 2097152 /dev/zero > big 2>/dev/null; echo $?")}});
        QCOMPARE(response.status, 200);
        QVERIFY2(response.object().value(QLatin1String("stdout")).toString() != "0\n",
                 response.body.constData());
        QCOMPARE(QFileInfo(dir + QStringLiteral("/big")).size(), qint64(1048576));
    }

    void limitsThatCannotBeEnforcedAreRefused_data()
    {
        QTest::addColumn<QString>("limit");
        QTest::addColumn<qint64>("value");
        QTest::newRow("memory_bytes") << "memory_bytes" << (qint64(1) << 30);
        QTest::newRow("processes") << "processes" << qint64(64);
        QTest::newRow("cpu_seconds") << "cpu_seconds" << qint64(60);
        QTest::newRow("file_size_bytes") << "file_size_bytes" << qint64(1048576);
    }

    // Whatever GET /v1/info says of a limit on this machine decides: enforced, a workspace
    // that asks for it is made; not enforced, it is refused with the reason, and so is a
    // change that asks for it.
    void limitsThatCannotBeEnforcedAreRefused()
    {
        QFETCH(QString, limit);
        QFETCH(qint64, value);
        const QJsonObject how = client().get(QStringLiteral("/v1/info")).object()
                                    .value(QLatin1String("worker_limits")).toObject()
                                    .value(limit).toObject();
        const bool enforced = how.value(QLatin1String("mechanism")) != QLatin1String("not enforced");
        const QString name = QStringLiteral("asks-") + limit;
        const QJsonObject limits{{limit, double(value)}};
        const auto created = client().post(
            QStringLiteral("/v1/workspaces"),
            {{QStringLiteral("name"), name},
             {QStringLiteral("settings"), QJsonObject{{QStringLiteral("limits"), limits}}}});
        if (enforced) {
            QCOMPARE(created.status, 201);
            return;
        }
        QCOMPARE(created.status, 501);
        QVERIFY2(created.body.contains(limit.toUtf8()), created.body.constData());
        QCOMPARE(client().get(QStringLiteral("/v1/workspaces/") + name).status, 404);
        const auto changed = client().patch(
            QStringLiteral("/v1/workspaces/open"),
            {{QStringLiteral("settings"), QJsonObject{{QStringLiteral("limits"), limits}}}});
        QCOMPARE(changed.status, 501);
    }
};

QTEST_GUILESS_MAIN(SandboxWallsTest)
#include "tst_sandboxwalls.moc"
