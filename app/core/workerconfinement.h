// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "envlayers.h"
#include "sandboxsupport.h"
#include "workspacesettings.h"

#include <replhost/sdk/session.h>

#include <QJsonObject>
#include <QString>

#include <memory>

namespace replhost::core {

class CgroupManager;
class WorkerCgroup;
struct PluginEntry;

// Builds SessionOptions::settings["confinement"] (the SDK contract in
// replhost/sdk/session.h) from a workspace's settings: what the worker's launcher applies before
// it execs the worker. An empty object means the worker runs unconfined, as without settings.
//
// Limits are asked for as rlimits (cpu_seconds, file_size_bytes, and memory_bytes, processes)
// and a CPU rate (cpu_millicores, which only a cgroup holds: a worker whose rate no cgroup
// took refuses to start); createSession() moves memory, processes and the rate into the
// worker's own cgroups where this
// server can make them (CgroupManager), because there they hold for the worker and all its
// children together, and RLIMIT_AS breaks runtimes that reserve more address space than they use
// (the JVM, Go) while RLIMIT_NPROC counts all of a user's processes and none of root's.
// enforcement() says which mechanism holds each limit on this machine.
//
// Functions that make cgroups: engine thread. The others: any thread.
class WorkerConfinement {
public:
    // The confinement of every process the workspace at `workspaceDir` starts: context workers,
    // pooled workers started as its workers would be, and stateless commands (CommandRunner,
    // through sdk::confinedCommand). The launcher and the workspace's non-zero worker limits,
    // and for isolation "sandbox" the `sandbox` member (sandbox()); {} when it has neither.
    static QJsonObject forWorkspace(const WorkspaceSettings &settings, const QString &workspaceDir,
                                    const SandboxSupport &support);

    // The environment a process under `confinement` (as forWorkspace() made it) starts from,
    // before the env layers go on top. Unsandboxed, the host's (EnvLayers::base()). In a
    // sandbox, never the server's own environment, which holds what the server's user exported
    // (credentials, tokens, paths of the host): only PATH, LANG, LANGUAGE, LC_*, TZ and TERM are
    // taken from it, and HOME is the sandbox's root (its workspace, where the sandbox sees it:
    // its view path when it has one), TMPDIR its /tmp.
    static Environment baseEnvironment(const QJsonObject &confinement);

    // Where the replhost-confine launcher is: beside the executable's directory, in
    // ../libexec/replhost (the same in the build tree and in an installed tree). The path is
    // given even when no file is there, so a worker that needs it fails to start saying so.
    static QString launcher();

    // plugin.handler->createSession() for `options`, with the worker placed in cgroups of its
    // own where `cgroups` can hold its memory and process limits (placeInCgroups()). The
    // cgroups belong to the returned session (as a QObject child) and are removed, with
    // anything left in them, when it is deleted. Engine thread.
    static std::unique_ptr<sdk::Session> createSession(const PluginEntry &plugin,
                                                       sdk::SessionOptions options);
    static std::unique_ptr<sdk::Session> createSession(const PluginEntry &plugin,
                                                       sdk::SessionOptions options,
                                                       CgroupManager &cgroups);

    // Makes the cgroups that hold the memory and process limits of `confinement` (a
    // forWorkspace() object) where `cgroups` can, moves those limits out of its rlimits and
    // adds the cgroups' procs files to it. The caller owns the cgroups and deletes them after
    // the process (and everything it started) has ended; null when no cgroup was made (no such
    // limit, or none can be made here: the limits stay rlimits and a warning is logged).
    // Engine thread.
    static std::unique_ptr<WorkerCgroup> placeInCgroups(QJsonObject &confinement,
                                                        CgroupManager &cgroups);

    // How each worker limit is enforced here, for GET /v1/info:
    //   {"memory_bytes": {"mechanism": "cgroup v1", "note": ...}, "cpu_seconds": ..., ...}
    // mechanism: "cgroup v2", "cgroup v1", "rlimit" or "not enforced"; note: what to know about
    // it (absent when nothing). Engine thread.
    static QJsonObject enforcement();
    static QJsonObject enforcement(const CgroupManager &cgroups);

    // Error "unavailable" naming the limit and what is missing when `limits` (the limits a
    // workspace asks for itself: its own settings or a change to them, as JSON) holds a
    // non-zero worker limit that enforcement() says is not enforced on this machine, such as
    // processes for a server run as root without a pids cgroup. A workspace that asks for a
    // limit gets it, or is not made: a limit recorded and not enforced would be a false
    // promise. Engine thread.
    static Result<void> checkEnforceable(const QJsonObject &limits);

    // The `sandbox` member of the confinement for a workspace whose isolation is "sandbox"
    // (empty for "none"): bwrap as `support` found it, the workspace directory as the only
    // writable place, the workspace's network setting and the paths `support` hides, and with a
    // view_path the view and the kept /tmp (WorkspaceSettings::viewPath). It is
    // made even when `support` says
    // sandboxes are unavailable, naming bwrap as configured or just "bwrap", so that the SDK
    // refuses to start such a worker rather than run it unsandboxed; a context checks
    // sandboxRefusal() first to fail with the reason.
    static QJsonObject sandbox(const WorkspaceSettings &settings, const QString &workspaceDir,
                               const SandboxSupport &support);
    // Why a worker of a workspace with these settings cannot start: error "unavailable" naming
    // what is missing and what to install when the workspace asks for a sandbox this machine
    // cannot make; success otherwise.
    static Result<void> sandboxRefusal(const WorkspaceSettings &settings,
                                       const SandboxSupport &support);
};

} // namespace replhost::core
