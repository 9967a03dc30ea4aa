// SPDX-License-Identifier: Apache-2.0
#include "sandbox.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>

#include <algorithm>

#include <unistd.h>

namespace replhost::sdk {

namespace {

// Mounted read-only when they exist. On a merged-/usr system the top-level ones are symbolic
// links into /usr and are recreated as the same links (bwrap's own advice), not bound.
const char *const kSystemPaths[] = {"/usr", "/etc", "/opt", "/bin", "/sbin",
                                    "/lib", "/lib32", "/lib64", "/libx32"};

// The overflow user and group of Linux (and Debian's nobody and nogroup).
constexpr uid_t kNobody = 65534;

Error invalid(const QString &message)
{
    return makeError(QStringLiteral("bad_request"), message);
}

Result<QString> absolutePathField(const QJsonObject &object, const QString &name)
{
    const QJsonValue value = object.value(name);
    if (!value.isString() || value.toString().isEmpty())
        return invalid(QStringLiteral("confinement.sandbox.%1 must be a path").arg(name));
    const QString path = value.toString();
    if (!QDir::isAbsolutePath(path))
        return invalid(QStringLiteral("confinement.sandbox.%1 must be an absolute path, not %2")
                           .arg(name, path));
    return QDir::cleanPath(path);
}

Result<QStringList> absolutePathList(const QJsonObject &object, const QString &name)
{
    const QJsonValue value = object.value(name);
    if (!value.isUndefined() && !value.isArray())
        return invalid(QStringLiteral("confinement.sandbox.%1 must be an array of absolute paths")
                           .arg(name));
    QStringList paths;
    for (const QJsonValue &entry : value.toArray()) {
        const QString path = entry.toString();
        if (!entry.isString() || !QDir::isAbsolutePath(path))
            return invalid(QStringLiteral("confinement.sandbox.%1 must hold absolute paths only, "
                                          "not %2")
                               .arg(name, entry.isString() ? path : QStringLiteral("a non-string")));
        paths.append(QDir::cleanPath(path));
    }
    return paths;
}

bool isSameOrInside(const QString &path, const QString &dir)
{
    return path == dir || dir == QLatin1String("/")
           || path.startsWith(dir + QLatin1Char('/'));
}

bool isSystemPath(const QString &path)
{
    for (const char *system : kSystemPaths)
        if (isSameOrInside(path, QLatin1String(system)))
            return true;
    return false;
}

// Collects the read-only mounts an executable or an argument needs, without duplicates, and
// never a path that would expose more than it should: "/", the system (already there), the
// workspace (already writable), anything that contains the workspace or the home directory, and
// anything inside or around a hidden path.
class ReadOnlyMounts {
public:
    ReadOnlyMounts(QString root, QString view, QStringList hidden)
        : m_root(std::move(root)), m_view(std::move(view)), m_hidden(std::move(hidden))
    {
    }

    // An executable: its installation prefix (the parent of the bin/ it is in, when that prefix
    // has a lib/ beside bin/, as a version manager's or a virtual environment's has), else the
    // file. Both the path as given and with symlinks resolved, since a virtual environment's
    // python is a link to the base interpreter and needs both.
    void addExecutable(const QString &path)
    {
        for (const QString &p : {QDir::cleanPath(path), QFileInfo(path).canonicalFilePath()}) {
            if (p.isEmpty() || isSystemPath(p))
                continue;
            const QFileInfo dir(QFileInfo(p).absolutePath());
            const QString prefix = dir.absolutePath();
            if (dir.fileName() == QLatin1String("bin") && QFileInfo(prefix + "/lib").isDir()
                && acceptable(prefix))
                add(prefix);
            else if (acceptable(p))
                add(p);
        }
    }

    // An existing file or directory named by an argument, as given and resolved.
    void addPath(const QString &path)
    {
        const QFileInfo info(path);
        if (!info.exists())
            return;
        for (const QString &p : {QDir::cleanPath(path), info.canonicalFilePath()})
            if (!p.isEmpty() && !isSystemPath(p) && acceptable(p))
                add(p);
    }

    const QStringList &paths() const { return m_paths; }

private:
    bool acceptable(const QString &path) const
    {
        if (path == QLatin1String("/") || isSameOrInside(m_root, path)
            || isSameOrInside(m_view, path) || isSameOrInside(path, m_view)
            || isSameOrInside(QDir::homePath(), path))
            return false;
        return std::none_of(m_hidden.cbegin(), m_hidden.cend(), [&](const QString &hidden) {
            return isSameOrInside(hidden, path) || isSameOrInside(path, hidden);
        });
    }
    void add(const QString &path)
    {
        if (isSameOrInside(path, m_root) || m_paths.contains(path))
            return;
        m_paths.append(path);
    }

    QString m_root;
    QString m_view;
    QStringList m_hidden;
    QStringList m_paths;
};

// Absolute paths inside an argument: the argument itself, the value of `-Dname=/path`, and each
// entry of a `:`-separated list such as a class path.
QStringList pathsInArgument(const QString &argument)
{
    QString value = argument;
    if (!value.startsWith(QLatin1Char('/'))) {
        const qsizetype eq = value.indexOf(QLatin1Char('='));
        if (eq < 0)
            return {};
        value = value.mid(eq + 1);
    }
    QStringList paths;
    for (const QString &part : value.split(QLatin1Char(':'), Qt::SkipEmptyParts))
        if (part.startsWith(QLatin1Char('/')))
            paths.append(part);
    return paths;
}

void addSystemMounts(QStringList &args)
{
    for (const char *system : kSystemPaths) {
        const QString path = QLatin1String(system);
        const QFileInfo info(path);
        if (info.isSymLink()) {
            // The link's own text (usually relative, "usr/bin"), not QFileInfo's absolute form.
            const QByteArray name = QFile::encodeName(path);
            char target[4096];
            const ssize_t n = ::readlink(name.constData(), target, sizeof target);
            if (n > 0)
                args << QStringLiteral("--symlink") << QFile::decodeName(QByteArray(target, n))
                     << path;
        } else if (info.isDir()) {
            args << QStringLiteral("--ro-bind") << path << path;
        }
    }
}

// Where the view may not be: bwrap would make its mount point inside a read-only system
// directory, or over what the sandbox needs of its own.
bool isForbiddenView(const QString &view)
{
    if (view == QLatin1String("/") || isSystemPath(view))
        return true;
    for (const char *own : {"/tmp", "/proc", "/dev"})
        if (isSameOrInside(view, QLatin1String(own)))
            return true;
    return false;
}

const QString kTmp = QStringLiteral("/tmp");

QString viewOf(const SandboxPolicy &policy)
{
    return policy.view.isEmpty() ? policy.root : policy.view;
}

} // namespace

Result<SandboxPolicy> parseSandboxPolicy(const QJsonObject &sandbox)
{
    SandboxPolicy policy;
    const Result<QString> bwrap = absolutePathField(sandbox, QStringLiteral("bwrap"));
    if (!bwrap)
        return bwrap.error();
    policy.bwrap = *bwrap;
    const Result<QString> root = absolutePathField(sandbox, QStringLiteral("root"));
    if (!root)
        return root.error();
    policy.root = *root;
    if (sandbox.contains(QLatin1String("view"))) {
        const Result<QString> view = absolutePathField(sandbox, QStringLiteral("view"));
        if (!view)
            return view.error();
        if (isForbiddenView(*view))
            return invalid(QStringLiteral("confinement.sandbox.view %1 is \"/\", a system "
                                          "directory or inside /tmp, /proc or /dev").arg(*view));
        policy.view = *view;
    }
    const QJsonValue tmp = sandbox.value(QLatin1String("tmp"));
    if (!tmp.isUndefined()) {
        const QString name = tmp.toString();
        if (!tmp.isString() || name.isEmpty() || QDir::isAbsolutePath(name)
            || name.split(QLatin1Char('/')).contains(QStringLiteral(".."))
            || QDir::cleanPath(name) == QLatin1String("."))
            return invalid(QStringLiteral("confinement.sandbox.tmp must be a directory inside "
                                          "root, as a relative path without \"..\""));
        policy.tmp = QDir::cleanPath(name);
    }
    const QJsonValue network = sandbox.value(QLatin1String("network"));
    if (!network.isUndefined() && !network.isBool())
        return invalid(QStringLiteral("confinement.sandbox.network must be true or false"));
    policy.network = network.toBool(false);
    for (const auto &[name, list] : {std::pair{QStringLiteral("read_only"), &policy.readOnly},
                                     std::pair{QStringLiteral("hidden"), &policy.hidden}}) {
        const Result<QStringList> paths = absolutePathList(sandbox, name);
        if (!paths)
            return paths.error();
        *list = *paths;
    }
    for (const QJsonValue &item : sandbox.value(QLatin1String("volumes")).toArray()) {
        const QJsonObject volume = item.toObject();
        const QString host = volume.value(QLatin1String("host_path")).toString();
        const QString mount = volume.value(QLatin1String("mount_path")).toString();
        if (!QDir::isAbsolutePath(host) || !QDir::isAbsolutePath(mount))
            return invalid(QStringLiteral("confinement.sandbox.volumes[] must have absolute "
                                          "host_path and mount_path"));
        policy.volumes.append({QDir::cleanPath(host), QDir::cleanPath(mount),
                               volume.value(QLatin1String("read_only")).toBool(true)});
    }
    return policy;
}

SandboxIdentity sandboxIdentity()
{
    const uid_t uid = ::geteuid();
    if (uid == 0)
        return {kNobody, kNobody};
    return {uid, ::getegid()};
}

QString sandboxPathOf(const SandboxPolicy &policy, const QString &hostPath)
{
    const QString view = viewOf(policy);
    if (view == policy.root || !isSameOrInside(hostPath, policy.root))
        return hostPath;
    return view + hostPath.mid(policy.root.size());
}

QString hostPathOf(const SandboxPolicy &policy, const QString &sandboxPath)
{
    const QString view = viewOf(policy);
    if (isSameOrInside(sandboxPath, view))
        return policy.root + sandboxPath.mid(view.size());
    if (!policy.tmp.isEmpty() && isSameOrInside(sandboxPath, kTmp))
        return policy.root + QLatin1Char('/') + policy.tmp + sandboxPath.mid(kTmp.size());
    return sandboxPath;
}

bool hasOwnView(const SandboxPolicy &policy)
{
    return viewOf(policy) != policy.root || !policy.tmp.isEmpty();
}

Result<QStringList> bwrapCommand(const SandboxPolicy &policy, const QStringList &command,
                                 const QString &workingDirectory, int seccompFd)
{
    const QFileInfo bwrap(policy.bwrap);
    if (!bwrap.isFile() || !bwrap.isExecutable())
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("cannot start the worker in its sandbox: %1 is not an "
                                        "executable file (install bubblewrap)")
                             .arg(policy.bwrap));
    if (!QFileInfo(policy.root).isDir())
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("cannot start the worker in its sandbox: the workspace "
                                        "directory %1 does not exist")
                             .arg(policy.root));
    for (const QString &path : policy.readOnly)
        if (!QFileInfo::exists(path))
            return makeError(QStringLiteral("unavailable"),
                             QStringLiteral("cannot start the worker in its sandbox: the "
                                            "read-only path %1 does not exist")
                                 .arg(path));

    for (const SandboxPolicy::Volume &volume : policy.volumes) {
        if (!QFileInfo(volume.hostPath).isDir())
            return makeError(QStringLiteral("unavailable"),
                             QStringLiteral("cannot start the worker in its sandbox: the volume "
                                            "%1 is not a directory").arg(volume.hostPath));
        // Nothing hidden is shown through a volume either (the data directory among them).
        for (const QString &hidden : policy.hidden)
            if (isSameOrInside(hidden, volume.hostPath) || isSameOrInside(volume.hostPath, hidden))
                return makeError(QStringLiteral("unavailable"),
                                 QStringLiteral("cannot start the worker in its sandbox: the "
                                                "volume %1 would show %2").arg(volume.hostPath, hidden));
    }

    const QString view = viewOf(policy);
    ReadOnlyMounts mounts(policy.root, view, policy.hidden);
    for (const QString &part : command)
        for (const QString &path : pathsInArgument(part)) {
            const QFileInfo info(path);
            if (info.isFile() && info.isExecutable())
                mounts.addExecutable(path);
            else
                mounts.addPath(path);
        }

    QStringList readOnly = mounts.paths();
    std::sort(readOnly.begin(), readOnly.end());  // a parent before what is inside it
    if (!policy.tmp.isEmpty()) {
        for (const QString &path : readOnly + policy.readOnly)
            if (isSameOrInside(path, kTmp))
                return makeError(QStringLiteral("unavailable"),
                                 QStringLiteral("cannot start the worker in its sandbox: %1 is "
                                                "under /tmp, which this sandbox keeps in its "
                                                "workspace; install the runtime elsewhere")
                                     .arg(path));
        // Made by name: root is the server's, and mkdir never follows a link at its last step.
        QDir().mkdir(policy.root + QLatin1Char('/') + policy.tmp);
    }

    QStringList args;
    addSystemMounts(args);
    // The private file systems first: a workspace or a runtime under /tmp is mounted over them.
    args << QStringLiteral("--proc") << QStringLiteral("/proc") << QStringLiteral("--dev")
         << QStringLiteral("/dev");
    if (policy.tmp.isEmpty())
        args << QStringLiteral("--tmpfs") << kTmp;
    else
        args << QStringLiteral("--symlink") << view + QLatin1Char('/') + policy.tmp << kTmp;
    if (policy.network) {
        // Name resolution: /etc is there, but resolv.conf is often a link into /run.
        const QString resolv = QFileInfo(QStringLiteral("/etc/resolv.conf")).canonicalFilePath();
        if (!resolv.isEmpty() && !isSystemPath(resolv))
            args << QStringLiteral("--ro-bind") << resolv << resolv;
    }
    for (const QString &path : readOnly)
        args << QStringLiteral("--ro-bind") << path << path;
    args << QStringLiteral("--bind") << policy.root << view;
    // After root, so that an explicit read-only path inside the workspace stays read-only.
    for (const QString &path : policy.readOnly)
        args << QStringLiteral("--ro-bind") << path << sandboxPathOf(policy, path);
    for (const SandboxPolicy::Volume &volume : policy.volumes)
        args << (volume.readOnly ? QStringLiteral("--ro-bind") : QStringLiteral("--bind"))
             << volume.hostPath << volume.mountPath;

    const QString cwd = QDir::cleanPath(workingDirectory);
    args << QStringLiteral("--chdir")
         << (!workingDirectory.isEmpty() && isSameOrInside(cwd, policy.root)
                     ? sandboxPathOf(policy, cwd)
                     : view);
    // A user namespace of its own, also (above all) for a server run as root: without one,
    // bwrap keeps root's capabilities, and a remount makes the system writable again. Inside,
    // the sandbox is an ordinary user with no capabilities and cannot make user namespaces of
    // its own (--disable-userns, and the seccomp filter refuses CLONE_NEWUSER).
    const SandboxIdentity identity = sandboxIdentity();
    args << QStringLiteral("--unshare-user") << QStringLiteral("--disable-userns")
         << QStringLiteral("--uid") << QString::number(identity.uid) << QStringLiteral("--gid")
         << QString::number(identity.gid) << QStringLiteral("--cap-drop") << QStringLiteral("ALL");
    args << QStringLiteral("--unshare-pid") << QStringLiteral("--unshare-ipc")
         << QStringLiteral("--unshare-uts") << QStringLiteral("--unshare-cgroup-try");
    if (!policy.network)
        args << QStringLiteral("--unshare-net");
    args << QStringLiteral("--die-with-parent") << QStringLiteral("--new-session");
    if (seccompFd >= 0)
        args << QStringLiteral("--seccomp") << QString::number(seccompFd);
    for (const auto &[key, value] : sandboxEnvironment(policy)) {
        if (value)
            args << QStringLiteral("--setenv") << key << *value;
        else
            args << QStringLiteral("--unsetenv") << key;
    }
    return QStringList{policy.bwrap} + args;
}

QList<std::pair<QString, std::optional<QString>>> sandboxEnvironment(const SandboxPolicy &policy)
{
    return {{QStringLiteral("HOME"), viewOf(policy)},
            {QStringLiteral("TMPDIR"), QStringLiteral("/tmp")},
            {QStringLiteral("XDG_RUNTIME_DIR"), std::nullopt}};
}

pid_t sandboxedProgramGroup(pid_t bwrapPid)
{
    // bwrap forks the namespace's init (pid 1 inside), which forks the program (pid 2).
    pid_t pid = bwrapPid;
    for (int generation = 0; generation < 2 && pid > 0; ++generation) {
        QFile children(QStringLiteral("/proc/%1/task/%1/children").arg(pid));
        if (!children.open(QIODevice::ReadOnly))
            return 0;
        pid = pid_t(children.readAll().split(' ').value(0).trimmed().toLongLong());
    }
    if (pid <= 0)
        return 0;
    const pid_t group = ::getpgid(pid);
    return group > 0 && group != ::getpgid(bwrapPid) ? group : 0;
}

} // namespace replhost::sdk
