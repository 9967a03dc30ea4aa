// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workercgroup.h"

#include <replhost/sdk/result.h>

#include <QString>

#include <memory>

namespace replhost::core {

// Makes one cgroup per worker, under a directory of this server's own, so that a worker's memory,
// process and CPU rate limits are held by the kernel for everything the worker starts — the only way a
// fork bomb is stopped when the server runs as root, since RLIMIT_NPROC does not apply to root.
//
// Where the server's directory goes, per controller:
//   - cgroup v2 (memory or pids enabled there): beside the server's own cgroup, in its parent
//     (the "no internal processes" rule forbids enabling controllers below a cgroup that holds
//     the server itself); the parent's cgroup.subtree_control gets the controller if it lacks it.
//     In the root cgroup, directly below it.
//   - else cgroup v1: below the server's own cgroup of the memory and pids hierarchies, so that
//     any limit the server is under still applies to its workers.
// Neither writable (no cgroup file system, not permitted, a bare /sys in a chroot): that
// controller is unavailable, with the reason, and callers fall back to rlimits.
//
// The directory is named after the server (forThisProcess(): "replhost-<pid>"). A server that
// died without cleaning up leaves its directory behind: the next manager kills what is left in
// every such directory whose process is gone, and removes it. The destructor removes this
// manager's tree, killing what is still in it.
//
// Threading: engine thread (construction may happen on first use from any one thread).
class CgroupManager {
public:
    enum class Version { None, V1, V2 };

    // How one controller can be used: the version, the server's directory for it, and why not
    // when Version::None.
    struct Controller {
        Version version = Version::None;
        QString directory;
        QString reason;
    };

    // Probes the cgroup file systems this process sees (/proc/self/mountinfo, /proc/self/cgroup)
    // and makes the server's directories. Never fails: what cannot be used says why.
    explicit CgroupManager(const QString &name);
    ~CgroupManager();
    CgroupManager(const CgroupManager &) = delete;
    CgroupManager &operator=(const CgroupManager &) = delete;

    // The manager of this server process, made on first use, removed at exit.
    static CgroupManager &forThisProcess();

    const Controller &memory() const { return m_memory; }
    const Controller &pids() const { return m_pids; }
    const Controller &cpu() const { return m_cpu; }
    static QString versionName(Version version);

    // A worker's cgroups, with the limits set (memory.max / memory.limit_in_bytes, pids.max,
    // cpu.max / cpu.cfs_quota_us: `cpuMillicores` thousandths of a CPU per 100 ms period).
    // A limit of 0 is not placed in a cgroup; none placed: nullptr. `memoryPlaced`,
    // `processesPlaced` and `cpuPlaced` say which limits the cgroups now hold. Errors
    // ("unavailable") when a directory or a limit cannot be written; nothing is left behind.
    struct Placement {
        std::unique_ptr<WorkerCgroup> cgroup;
        bool memoryPlaced = false;
        bool processesPlaced = false;
        bool cpuPlaced = false;
    };
    Result<Placement> create(qint64 memoryBytes, qint64 processes, qint64 cpuMillicores = 0);

private:
    void probe();
    void sweepStale(const QString &parent) const;

    const QString m_name;
    Controller m_memory;
    Controller m_pids;
    Controller m_cpu;
    quint64 m_made = 0;
};

} // namespace replhost::core
