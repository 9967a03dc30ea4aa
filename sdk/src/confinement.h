// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/result.h"
#include "sandbox.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace replhost::sdk {

// The "confinement" member of SessionOptions::settings (contract in session.h), parsed and
// checked, and the command line that applies it: the replhost-confine launcher with one option
// per limit and cgroup, then the worker's own program and arguments. The launcher applies
// everything before it execs the worker, so the worker never runs unconfined.
//
// A value type; only command() reads the file system (for a sandbox's mounts). Private to the
// SDK library.
class Confinement {
public:
    // Resource limits; 0 = none.
    struct Limits {
        qint64 memoryBytes = 0;    // --rlimit-as (the host puts memory in a cgroup when it can,
                                   // and then leaves this at 0)
        qint64 cpuSeconds = 0;     // --rlimit-cpu: CPU time of each process over its life
        qint64 processes = 0;      // --rlimit-nproc (per user; not enforced for root)
        qint64 fileSizeBytes = 0;  // --rlimit-fsize: largest file a process may write
        // A CPU rate, in thousandths of a CPU: held only by a cgroup's quota, which the host
        // sets and then leaves this at 0. Still set, command() refuses to start the worker
        // rather than run it without its limit.
        qint64 cpuMillicores = 0;
    };

    // Reads settings["confinement"]. Absent, null or {}: an empty confinement, under which the
    // worker runs exactly as without one. Errors ("bad_request") name the offending field:
    // unknown keys, a missing or relative launcher, limits that are not whole numbers >= 0,
    // cgroup entries that are not absolute paths.
    static Result<Confinement> fromSettings(const QJsonObject &settings);

    bool isEmpty() const { return m_launcher.isEmpty(); }
    const Limits &limits() const { return m_limits; }
    // The cgroup.procs files the launcher writes the worker's pid to, in order.
    const QStringList &cgroupProcsFiles() const { return m_cgroups; }
    // Whether the worker runs inside bubblewrap (its exit status then stands for its signals).
    bool sandboxed() const { return !m_sandbox.isEmpty(); }
    // The sandbox's policy (checked by fromSettings), when sandboxed.
    std::optional<SandboxPolicy> sandboxPolicy() const;

    // The argv (program first) that runs `program` with `arguments` under this confinement:
    //   launcher [limit and cgroup options] -- program arguments...
    // or, sandboxed:
    //   launcher [options] --seccomp-fd 5 --ignore-signals INT,QUIT -- bwrap <args>
    //       --seccomp 5 -- launcher --default-signals -- program arguments...
    // The sandbox's monitor process shares the worker's process group and would die of the
    // SIGINT an interrupt sends to the group, taking the worker with it; so it ignores INT and
    // QUIT, and the inner launcher gives the worker default dispositions again.
    // For an empty confinement: program and arguments unchanged.
    // `workingDirectory` is where the worker starts (the sandbox starts it in its root when that
    // lies outside). The sandbox mounts what the program needs (bwrapCommand), found from the
    // program and, for a worker (ArgumentPaths::Mounted), the absolute paths among its
    // arguments (its driver, jars); arguments that carry someone else's text (a command line)
    // are ArgumentPaths::Ignored, or a path in it would be mounted into the sandbox.
    // Errors: the sandbox segment cannot be built (sandbox.h); "unavailable" when a CPU rate is
    // still among the limits (no cgroup holds it).
    enum class ArgumentPaths { Mounted, Ignored };
    Result<QStringList> command(const QString &program, const QStringList &arguments,
                                const QString &workingDirectory = QString(),
                                ArgumentPaths argumentPaths = ArgumentPaths::Mounted) const;

private:
    QString m_launcher;
    Limits m_limits;
    QStringList m_cgroups;
    QJsonObject m_sandbox;
};

} // namespace replhost::sdk
