// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "sandboxsupport.h"
#include "workspacesettings.h"

#include <replhost/sdk/session.h>

#include <QJsonObject>
#include <QString>

#include <memory>

namespace replhost::core {

class CgroupManager;
struct PluginEntry;

// Builds SessionOptions::settings["confinement"] (the SDK contract in
// replhost/sdk/session.h) from a workspace's settings: what the worker's launcher applies before
// it execs the worker. An empty object means the worker runs unconfined, as without settings.
//
// Limits are asked for as rlimits (cpu_seconds, file_size_bytes, and memory_bytes, processes);
// createSession() then moves memory and processes into the worker's own cgroups where this
// server can make them (CgroupManager), because there they hold for the worker and all its
// children together, and RLIMIT_AS breaks runtimes that reserve more address space than they use
// (the JVM, Go) while RLIMIT_NPROC counts all of a user's processes and none of root's.
// enforcement() says which mechanism holds each limit on this machine.
//
// Functions that make cgroups: engine thread. The others: any thread.
class WorkerConfinement {
public:
    // The confinement of a worker of `contextId` (empty for a worker started before it has a
    // context, such as a pooled one) in the workspace at `workspaceDir`: the launcher and the
    // workspace's non-zero worker limits, or {} when it has none and no sandbox.
    static QJsonObject forWorkspace(const WorkspaceSettings &settings, const QString &workspaceDir,
                                    const QString &contextId);

    // Where the replhost-confine launcher is: beside the executable's directory, in
    // ../libexec/replhost (the same in the build tree and in an installed tree). The path is
    // given even when no file is there, so a worker that needs it fails to start saying so.
    static QString launcher();

    // plugin.handler->createSession() for `options`, with the worker placed in cgroups of its
    // own where `cgroups` can hold its memory and process limits (those limits then leave the
    // confinement's rlimits). The cgroups belong to the returned session (as a QObject child)
    // and are removed, with anything left in them, when it is deleted. When the cgroups cannot
    // be made, the limits stay rlimits and a warning is logged. Engine thread.
    static std::unique_ptr<sdk::Session> createSession(const PluginEntry &plugin,
                                                       sdk::SessionOptions options);
    static std::unique_ptr<sdk::Session> createSession(const PluginEntry &plugin,
                                                       sdk::SessionOptions options,
                                                       CgroupManager &cgroups);

    // How each worker limit is enforced here, for GET /v1/info:
    //   {"memory_bytes": {"mechanism": "cgroup v1", "note": ...}, "cpu_seconds": ..., ...}
    // mechanism: "cgroup v2", "cgroup v1", "rlimit" or "not enforced"; note: what to know about
    // it (absent when nothing). Engine thread.
    static QJsonObject enforcement();
    static QJsonObject enforcement(const CgroupManager &cgroups);

    // The `sandbox` member of the confinement for a workspace whose isolation is "sandbox"
    // (empty for "none"): bwrap as `support` found it, the workspace directory as the only
    // writable place, the workspace's network setting and the paths `support` hides. It is made even when `support` says
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
