// SPDX-License-Identifier: Apache-2.0
#include "workerconfinement.h"

#include "cgroupmanager.h"
#include "pluginregistry.h"

#include <replhost/sdk/languagehandler.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QProcessEnvironment>

#include <unistd.h>

namespace replhost::core {

Q_LOGGING_CATEGORY(lcConfinement, "replhost.confinement")

namespace {

const QString kLimits = QStringLiteral("limits");
const QString kMemory = QStringLiteral("memory_bytes");
const QString kProcesses = QStringLiteral("processes");
const QString kCpuRate = QStringLiteral("cpu_millicores");
const QString kConfinement = QStringLiteral("confinement");
const QString kSandbox = QStringLiteral("sandbox");

QJsonObject mechanism(const QString &name, const QString &note = {})
{
    QJsonObject entry{{QStringLiteral("mechanism"), name}};
    if (!note.isEmpty())
        entry.insert(QStringLiteral("note"), note);
    return entry;
}

} // namespace

QJsonObject WorkerConfinement::forWorkspace(const WorkspaceSettings &settings,
                                            const QString &workspaceDir,
                                            const SandboxSupport &support)
{
    const WorkspaceSettings::Limits &l = settings.limits;
    QJsonObject limits;
    const std::pair<QString, qint64> values[] = {
            {kMemory, l.memoryBytes},
            {QStringLiteral("cpu_seconds"), l.cpuSeconds},
            {kProcesses, l.processes},
            {QStringLiteral("file_size_bytes"), l.fileSizeBytes},
            {kCpuRate, l.cpuMillicores}};
    for (const auto &[key, value] : values)
        if (value > 0)
            limits.insert(key, value);
    const QJsonObject box = sandbox(settings, workspaceDir, support);
    if (limits.isEmpty() && box.isEmpty())
        return {};
    QJsonObject confinement{{QStringLiteral("launcher"), launcher()}};
    if (!limits.isEmpty())
        confinement.insert(kLimits, limits);
    if (!box.isEmpty())
        confinement.insert(kSandbox, box);
    return confinement;
}

Environment WorkerConfinement::baseEnvironment(const QJsonObject &confinement)
{
    const QJsonObject box = confinement.value(kSandbox).toObject();
    if (box.isEmpty())
        return EnvLayers::base();
    static const QStringList names = {QStringLiteral("PATH"), QStringLiteral("LANG"),
                                      QStringLiteral("LANGUAGE"), QStringLiteral("TZ"),
                                      QStringLiteral("TERM")};
    Environment env;
    const QProcessEnvironment host = QProcessEnvironment::systemEnvironment();
    for (const QString &key : host.keys())
        if (names.contains(key) || key.startsWith(QLatin1String("LC_")))
            env.insert(key, host.value(key));
    if (!env.contains(QStringLiteral("PATH")))
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/local/bin:/usr/bin:/bin"));
    // What bwrap sets as well (sdk/src/sandbox.h), here so the env layers see it.
    env.insert(QStringLiteral("HOME"), box.contains(QLatin1String("view"))
                                               ? box.value(QLatin1String("view")).toString()
                                               : box.value(QLatin1String("root")).toString());
    env.insert(QStringLiteral("TMPDIR"), QStringLiteral("/tmp"));
    return env;
}

QString WorkerConfinement::launcher()
{
    static const QString path = QDir::cleanPath(QCoreApplication::applicationDirPath()
                                                + QStringLiteral("/../libexec/replhost/"
                                                                 "replhost-confine"));
    return path;
}

std::unique_ptr<sdk::Session> WorkerConfinement::createSession(const PluginEntry &plugin,
                                                               sdk::SessionOptions options)
{
    return createSession(plugin, std::move(options), CgroupManager::forThisProcess());
}

std::unique_ptr<sdk::Session> WorkerConfinement::createSession(const PluginEntry &plugin,
                                                               sdk::SessionOptions options,
                                                               CgroupManager &cgroups)
{
    QJsonObject confinement = options.settings.value(kConfinement).toObject();
    std::unique_ptr<WorkerCgroup> cgroup = placeInCgroups(confinement, cgroups);
    if (cgroup)
        options.settings.insert(kConfinement, confinement);
    std::unique_ptr<sdk::Session> session = plugin.handler->createSession(plugin.runtime, options);
    // Deleted with the session, after the session has killed and reaped its worker.
    if (cgroup)
        cgroup.release()->setParent(session.get());
    return session;
}

std::unique_ptr<WorkerCgroup> WorkerConfinement::placeInCgroups(QJsonObject &confinement,
                                                                CgroupManager &cgroups)
{
    QJsonObject limits = confinement.value(kLimits).toObject();
    const qint64 memory = limits.value(kMemory).toInteger();
    const qint64 processes = limits.value(kProcesses).toInteger();
    const qint64 cpu = limits.value(kCpuRate).toInteger();
    if (memory <= 0 && processes <= 0 && cpu <= 0)
        return nullptr;
    auto placed = cgroups.create(memory, processes, cpu);
    if (!placed) {
        // A CPU rate stays among the limits, where the launcher's command refuses it.
        qCWarning(lcConfinement) << "worker limits stay rlimits:" << placed.error().message;
        return nullptr;
    }
    if (!placed->cgroup)
        return nullptr;
    if (placed->memoryPlaced)
        limits.remove(kMemory);
    if (placed->processesPlaced)
        limits.remove(kProcesses);
    if (placed->cpuPlaced)
        limits.remove(kCpuRate);
    confinement.insert(kLimits, limits);
    QJsonArray procs = confinement.value(QStringLiteral("cgroups")).toArray();
    for (const QString &file : placed->cgroup->procsFiles())
        procs.append(file);
    confinement.insert(QStringLiteral("cgroups"), procs);
    return std::move(placed->cgroup);
}

QJsonObject WorkerConfinement::enforcement()
{
    return enforcement(CgroupManager::forThisProcess());
}

QJsonObject WorkerConfinement::enforcement(const CgroupManager &cgroups)
{
    if (!QFileInfo(launcher()).isExecutable()) {
        const QJsonObject missing = mechanism(
                QStringLiteral("not enforced"),
                QStringLiteral("%1 is missing: workers with limits fail to start; reinstall "
                               "replhost")
                        .arg(launcher()));
        return {{kMemory, missing}, {QStringLiteral("cpu_seconds"), missing},
                {kProcesses, missing}, {QStringLiteral("file_size_bytes"), missing},
                {kCpuRate, missing}};
    }
    QJsonObject result;
    const CgroupManager::Controller &memory = cgroups.memory();
    result.insert(kMemory,
                  memory.version != CgroupManager::Version::None
                          ? mechanism(CgroupManager::versionName(memory.version),
                                      QStringLiteral("one cgroup per worker: the worker and "
                                                     "everything it starts, together"))
                          : mechanism(QStringLiteral("rlimit"),
                                      QStringLiteral("address space of each process "
                                                     "(RLIMIT_AS), since no memory cgroup can "
                                                     "be made: %1. The JVM and Go reserve far "
                                                     "more than they use and fail to start "
                                                     "under a low value")
                                              .arg(memory.reason)));
    const CgroupManager::Controller &pids = cgroups.pids();
    if (pids.version != CgroupManager::Version::None)
        result.insert(kProcesses, mechanism(CgroupManager::versionName(pids.version),
                                            QStringLiteral("one cgroup per worker; threads "
                                                           "count as processes")));
    else if (::geteuid() == 0)
        result.insert(kProcesses,
                      mechanism(QStringLiteral("not enforced"),
                                QStringLiteral("the server runs as root, which RLIMIT_NPROC "
                                               "does not limit, and no pids cgroup can be "
                                               "made: %1")
                                        .arg(pids.reason)));
    else
        result.insert(kProcesses,
                      mechanism(QStringLiteral("rlimit"),
                                QStringLiteral("RLIMIT_NPROC counts every process and thread "
                                               "of the user, not of the worker, since no pids "
                                               "cgroup can be made: %1")
                                        .arg(pids.reason)));
    const CgroupManager::Controller &cpu = cgroups.cpu();
    result.insert(kCpuRate,
                  cpu.version != CgroupManager::Version::None
                          ? mechanism(CgroupManager::versionName(cpu.version),
                                      QStringLiteral("a CPU quota per 100 ms period, one cgroup "
                                                     "per worker: the worker and everything it "
                                                     "starts share it"))
                          : mechanism(QStringLiteral("not enforced"),
                                      QStringLiteral("no cpu cgroup can be made: %1, and no "
                                                     "rlimit holds a rate")
                                              .arg(cpu.reason)));
    result.insert(QStringLiteral("cpu_seconds"),
                  mechanism(QStringLiteral("rlimit"),
                            QStringLiteral("CPU time of each process over its life "
                                           "(RLIMIT_CPU), not per execution")));
    result.insert(QStringLiteral("file_size_bytes"),
                  mechanism(QStringLiteral("rlimit"),
                            QStringLiteral("largest file each process may write "
                                           "(RLIMIT_FSIZE)")));
    return result;
}

Result<void> WorkerConfinement::checkEnforceable(const QJsonObject &limits)
{
    QJsonObject enforced;
    for (const QString &key : {kMemory, QStringLiteral("cpu_seconds"), kProcesses,
                               QStringLiteral("file_size_bytes"), kCpuRate}) {
        if (limits.value(key).toInteger() <= 0)
            continue;
        if (enforced.isEmpty())
            enforced = enforcement();
        const QJsonObject how = enforced.value(key).toObject();
        if (how.value(QLatin1String("mechanism")) == QLatin1String("not enforced"))
            return makeError(QStringLiteral("unsupported"),
                             QStringLiteral("limits.%1 cannot be enforced on this machine: %2; "
                                            "set it to 0 (no limit) or run the server where "
                                            "it can be enforced")
                                 .arg(key, how.value(QLatin1String("note")).toString()));
    }
    return {};
}

QJsonObject WorkerConfinement::sandbox(const WorkspaceSettings &settings,
                                       const QString &workspaceDir, const SandboxSupport &support)
{
    if (settings.isolation != WorkspaceSettings::Isolation::Sandbox)
        return {};
    QJsonObject box{{QStringLiteral("bwrap"),
                     support.bwrap().isEmpty() ? QStringLiteral("bwrap") : support.bwrap()},
                    {QStringLiteral("root"), workspaceDir},
                    {QStringLiteral("network"), settings.network},
                    {QStringLiteral("hidden"), QJsonArray::fromStringList(support.hidden())},
                    {QStringLiteral("volumes"), settings.volumesJson()}};
    if (!settings.viewPath.isEmpty()) {
        box.insert(QStringLiteral("view"), settings.viewPath);
        box.insert(QStringLiteral("tmp"), QLatin1String(WorkspaceSettings::kKeptTmpDirectory));
    }
    return box;
}

Result<void> WorkerConfinement::sandboxRefusal(const WorkspaceSettings &settings,
                                               const SandboxSupport &support)
{
    if (settings.isolation != WorkspaceSettings::Isolation::Sandbox || support.available())
        return {};
    return makeError(QStringLiteral("unavailable"),
                     QStringLiteral("this workspace runs its contexts in a sandbox, and sandboxes "
                                    "are unavailable: %1")
                         .arg(support.reason()));
}

} // namespace replhost::core
