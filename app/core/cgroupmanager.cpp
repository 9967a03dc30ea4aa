// SPDX-License-Identifier: Apache-2.0
#include "cgroupmanager.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QLoggingCategory>
#include <QRegularExpression>

#include <cerrno>
#include <cstring>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::core {

Q_LOGGING_CATEGORY(lcCgroups, "replhost.cgroup")

namespace {

struct Mount {
    QString root;       // the hierarchy's path that is mounted
    QString mountPoint;
};

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Writes in one write() (cgroup files take one value per write); the error text on failure.
QString writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered))
        return QStringLiteral("cannot open %1: %2").arg(path, file.errorString());
    if (file.write(text) != text.size())
        return QStringLiteral("cannot write \"%1\" to %2: %3")
                .arg(QString::fromLatin1(text.trimmed()), path, file.errorString());
    return {};
}

QString makeDirectory(const QString &path)
{
    if (::mkdir(QFile::encodeName(path).constData(), 0755) == 0 || errno == EEXIST)
        return {};
    return QStringLiteral("cannot create %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno)));
}

// mountinfo escapes blanks in paths as octal (\040).
QString unescapeMountPath(const QByteArray &field)
{
    QByteArray out;
    for (qsizetype i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            out.append(char(field.mid(i + 1, 3).toInt(nullptr, 8)));
            i += 3;
        } else {
            out.append(field[i]);
        }
    }
    return QFile::decodeName(out);
}

// The mounted cgroup hierarchies: "2" for cgroup2, a v1 controller name otherwise.
QHash<QString, Mount> cgroupMounts()
{
    QHash<QString, Mount> mounts;
    for (const QByteArray &line : readFile(QStringLiteral("/proc/self/mountinfo")).split('\n')) {
        const qsizetype dash = line.indexOf(" - ");
        if (dash < 0)
            continue;
        const QList<QByteArray> left = line.left(dash).split(' ');
        const QList<QByteArray> right = line.mid(dash + 3).split(' ');
        if (left.size() < 5 || right.size() < 3)
            continue;
        const Mount mount{unescapeMountPath(left[3]), unescapeMountPath(left[4])};
        if (right[0] == "cgroup2") {
            mounts.insert(QStringLiteral("2"), mount);
        } else if (right[0] == "cgroup") {
            for (const QByteArray &option : right[2].split(','))
                if (option == "memory" || option == "pids" || option == "cpu")
                    mounts.insert(QString::fromLatin1(option), mount);
        }
    }
    return mounts;
}

// This process's cgroup per hierarchy, keyed like cgroupMounts().
QHash<QString, QString> ownCgroups()
{
    QHash<QString, QString> own;
    for (const QByteArray &line : readFile(QStringLiteral("/proc/self/cgroup")).split('\n')) {
        const QList<QByteArray> fields = line.split(':');
        if (fields.size() < 3)
            continue;
        const QString path = QString::fromUtf8(line.mid(fields[0].size() + fields[1].size() + 2));
        if (fields[0] == "0" && fields[1].isEmpty())
            own.insert(QStringLiteral("2"), path);
        for (const QByteArray &controller : fields[1].split(','))
            if (controller == "memory" || controller == "pids" || controller == "cpu")
                own.insert(QString::fromLatin1(controller), path);
    }
    return own;
}

// Where a cgroup path of a hierarchy is in this mount namespace; empty when not visible.
QString visiblePath(const Mount &mount, const QString &cgroup)
{
    if (mount.root == QLatin1String("/"))
        return QDir::cleanPath(mount.mountPoint + cgroup);
    if (cgroup != mount.root && !cgroup.startsWith(mount.root + QLatin1Char('/')))
        return {};
    return QDir::cleanPath(mount.mountPoint + cgroup.mid(mount.root.size()));
}

bool processAlive(qint64 pid)
{
    return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

} // namespace

CgroupManager::CgroupManager(const QString &name) : m_name(name)
{
    probe();
}

CgroupManager::~CgroupManager()
{
    QStringList directories;
    for (const Controller *c : {&m_memory, &m_pids, &m_cpu})
        if (c->version != Version::None && !directories.contains(c->directory))
            directories.append(c->directory);
    for (const QString &directory : directories) {
        const QStringList workers = QDir(directory).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        for (const QString &worker : workers)
            WorkerCgroup::removeDirectory(directory + QLatin1Char('/') + worker);
        WorkerCgroup::removeDirectory(directory);
    }
}

CgroupManager &CgroupManager::forThisProcess()
{
    static CgroupManager manager(QStringLiteral("replhost-%1").arg(::getpid()));
    return manager;
}

QString CgroupManager::versionName(Version version)
{
    switch (version) {
    case Version::V1:
        return QStringLiteral("cgroup v1");
    case Version::V2:
        return QStringLiteral("cgroup v2");
    case Version::None:
        break;
    }
    return QStringLiteral("none");
}

void CgroupManager::probe()
{
    const QHash<QString, Mount> mounts = cgroupMounts();
    const QHash<QString, QString> own = ownCgroups();
    const QString noCgroups = QStringLiteral("no cgroup file system with this controller is "
                                             "mounted");
    m_memory.reason = m_pids.reason = m_cpu.reason = noCgroups;

    // cgroup v2 first: a controller is there if the parent of our cgroup offers it.
    if (mounts.contains(QStringLiteral("2")) && own.contains(QStringLiteral("2"))) {
        const QString self = visiblePath(mounts[QStringLiteral("2")], own[QStringLiteral("2")]);
        const bool atRoot = own[QStringLiteral("2")] == QLatin1String("/");
        const QString base = atRoot ? self : QFileInfo(self).path();
        const QList<QByteArray> offered =
                readFile(base + QStringLiteral("/cgroup.controllers")).trimmed().split(' ');
        const QList<QByteArray> enabled =
                readFile(base + QStringLiteral("/cgroup.subtree_control")).trimmed().split(' ');
        const QString directory = base + QLatin1Char('/') + m_name;
        QString failure;
        QByteArray wanted;
        for (const char *controller : {"memory", "pids"}) {
            if (!offered.contains(controller))
                continue;
            if (!enabled.contains(controller))
                failure = writeFile(base + QStringLiteral("/cgroup.subtree_control"),
                                    QByteArray("+") + controller);
            if (failure.isEmpty())
                wanted += (wanted.isEmpty() ? "+" : " +") + QByteArray(controller);
        }
        // The cpu controller can be refused where memory and pids are not (the kernel will not
        // enable it while a real-time process is in the subtree): without it only the CPU rate
        // is unavailable.
        if (offered.contains("cpu")) {
            const QString refused = enabled.contains("cpu")
                                            ? QString()
                                            : writeFile(base + QStringLiteral("/cgroup.subtree_control"), "+cpu");
            if (refused.isEmpty())
                wanted += wanted.isEmpty() ? "+cpu" : " +cpu";
            else
                m_cpu.reason = refused;
        }
        if (!wanted.isEmpty() && failure.isEmpty()) {
            sweepStale(base);
            failure = makeDirectory(directory);
            if (failure.isEmpty())
                failure = writeFile(directory + QStringLiteral("/cgroup.subtree_control"), wanted);
        }
        for (auto [controller, target] :
             {std::pair{"memory", &m_memory}, {"pids", &m_pids}, {"cpu", &m_cpu}}) {
            if (!wanted.contains(QByteArray("+") + controller))
                continue;
            if (failure.isEmpty())
                *target = {Version::V2, directory, {}};
            else
                target->reason = failure;
        }
        if (!failure.isEmpty())
            ::rmdir(QFile::encodeName(directory).constData());
    }

    // cgroup v1 for what v2 does not hold: one hierarchy per controller.
    for (auto [controller, target] :
         {std::pair{"memory", &m_memory}, {"pids", &m_pids}, {"cpu", &m_cpu}}) {
        const QString key = QLatin1String(controller);
        if (target->version != Version::None || !mounts.contains(key) || !own.contains(key))
            continue;
        const QString self = visiblePath(mounts[key], own[key]);
        if (self.isEmpty()) {
            target->reason = QStringLiteral("this process's %1 cgroup is outside the mounted "
                                            "hierarchy")
                                     .arg(key);
            continue;
        }
        sweepStale(self);
        const QString directory = self + QLatin1Char('/') + m_name;
        if (const QString failure = makeDirectory(directory); !failure.isEmpty()) {
            target->reason = failure;
            continue;
        }
        *target = {Version::V1, directory, {}};
    }
    qCDebug(lcCgroups) << "memory:" << versionName(m_memory.version) << m_memory.directory
                       << m_memory.reason << "pids:" << versionName(m_pids.version)
                       << m_pids.directory << m_pids.reason << "cpu:" << versionName(m_cpu.version)
                       << m_cpu.directory << m_cpu.reason;
}

void CgroupManager::sweepStale(const QString &parent) const
{
    static const QRegularExpression pattern(QStringLiteral("^replhost-(\\d+)$"));
    const QStringList entries = QDir(parent).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        const QRegularExpressionMatch match = pattern.match(entry);
        if (!match.hasMatch() || entry == m_name || processAlive(match.captured(1).toLongLong()))
            continue;
        const QString directory = parent + QLatin1Char('/') + entry;
        const QStringList workers = QDir(directory).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        for (const QString &worker : workers)
            WorkerCgroup::removeDirectory(directory + QLatin1Char('/') + worker);
        WorkerCgroup::removeDirectory(directory);
    }
}

Result<CgroupManager::Placement> CgroupManager::create(qint64 memoryBytes, qint64 processes,
                                                      qint64 cpuMillicores)
{
    const bool memory = memoryBytes > 0 && m_memory.version != Version::None;
    const bool pids = processes > 0 && m_pids.version != Version::None;
    const bool cpu = cpuMillicores > 0 && m_cpu.version != Version::None;
    Placement placement;
    if (!memory && !pids && !cpu)
        return placement;
    const QString worker = QStringLiteral("/worker-%1").arg(++m_made);
    // Directory → the limit files to write in it, in order.
    QList<std::pair<QString, QList<std::pair<QString, QByteArray>>>> plan;
    auto directoryFor = [&](const Controller &c) -> QList<std::pair<QString, QByteArray>> & {
        const QString path = c.directory + worker;
        for (auto &entry : plan)
            if (entry.first == path)
                return entry.second;
        plan.append({path, {}});
        return plan.last().second;
    };
    if (memory) {
        const QByteArray value = QByteArray::number(memoryBytes);
        if (m_memory.version == Version::V2) {
            directoryFor(m_memory).append({QStringLiteral("memory.max"), value});
        } else {
            directoryFor(m_memory).append({QStringLiteral("memory.limit_in_bytes"), value});
        }
    }
    if (pids)
        directoryFor(m_pids).append({QStringLiteral("pids.max"), QByteArray::number(processes)});
    if (cpu) {
        // A thousandth of a CPU is 100 µs of each 100 ms period.
        const QByteArray quota = QByteArray::number(cpuMillicores * 100);
        if (m_cpu.version == Version::V2) {
            directoryFor(m_cpu).append({QStringLiteral("cpu.max"), quota + " 100000"});
        } else {
            directoryFor(m_cpu).append({QStringLiteral("cpu.cfs_period_us"), "100000"});
            directoryFor(m_cpu).append({QStringLiteral("cpu.cfs_quota_us"), quota});
        }
    }

    QStringList made;
    for (const auto &[directory, files] : plan) {
        QString failure = makeDirectory(directory);
        if (failure.isEmpty())
            made.append(directory);
        for (const auto &[file, value] : files) {
            if (!failure.isEmpty())
                break;
            failure = writeFile(directory + QLatin1Char('/') + file, value);
        }
        if (!failure.isEmpty()) {
            for (const QString &path : std::as_const(made))
                WorkerCgroup::removeDirectory(path);
            return makeError(QStringLiteral("unavailable"), failure);
        }
        // Swap counts against the limit too, where the kernel accounts it (best effort: not
        // every kernel has swap accounting).
        if (memory && directory == m_memory.directory + worker) {
            if (m_memory.version == Version::V2)
                writeFile(directory + QStringLiteral("/memory.swap.max"), "0");
            else
                writeFile(directory + QStringLiteral("/memory.memsw.limit_in_bytes"),
                          QByteArray::number(memoryBytes));
        }
    }
    placement.cgroup = std::make_unique<WorkerCgroup>(made);
    placement.memoryPlaced = memory;
    placement.processesPlaced = pids;
    placement.cpuPlaced = cpu;
    return placement;
}

} // namespace replhost::core
