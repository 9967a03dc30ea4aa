// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "confinement.h"

#include <QString>

#include <optional>
#include <vector>

namespace replhost::sdk {

// Tells which limit of a Confinement a worker ran into, so the error a run ends with can name
// the limit and its value instead of a bare signal number.
//
// Signals name CPU time (SIGXCPU) and file size (SIGXFSZ). A memory limit held by a cgroup ends
// the worker with SIGKILL, like any other kill, so the cgroup's own counter tells them apart:
// "oom_kill" in memory.events (v2) or memory.oom_control (v1) went up. Refused process creation
// leaves the worker alive (fork fails with EAGAIN, which the program reports itself); the "max"
// counter of pids.events (v1 and v2) says it happened.
//
// Counter files are opened once, when the monitor is made (right after the worker joined its
// cgroups), and read with pread(): one system call per look. Files that are missing (no such
// controller in that cgroup) are skipped. Not copyable; engine thread only, like WorkerProcess.
class LimitMonitor {
public:
    LimitMonitor() = default;
    explicit LimitMonitor(const Confinement &confinement);
    ~LimitMonitor();
    LimitMonitor(LimitMonitor &&other) noexcept;
    LimitMonitor &operator=(LimitMonitor &&other) noexcept;
    LimitMonitor(const LimitMonitor &) = delete;
    LimitMonitor &operator=(const LimitMonitor &) = delete;

    struct Hit {
        QString limit;   // the limit's key in confinement.limits: "cpu_seconds", ...
        qint64 value = 0;
        QString message; // "CPU time limit of 2 s reached"
    };
    // The limit behind a worker's death by `signal` (0: it exited), if any.
    std::optional<Hit> explainDeath(int signal);

    // Process creations the cgroup refused since the last call; 0 without a pids cgroup.
    qint64 takeProcessLimitHits();
    // The note a run carries after `refused` refusals: it names the limit and its value.
    QString processLimitNote(qint64 refused) const;

private:
    struct Counter {
        int fd = -1;
        QByteArray key; // the line's name in the file: "oom_kill" or "max"
        qint64 seen = 0;
    };
    static qint64 readCounter(const Counter &counter);
    void closeAll();

    Confinement::Limits m_limits;
    qint64 m_processLimit = 0;  // pids.max the host set (the processes limit)
    qint64 m_memoryLimit = 0;   // memory.max / memory.limit_in_bytes the host set
    std::vector<Counter> m_oomKills;
    std::vector<Counter> m_pidsRefused;
};

} // namespace replhost::sdk
