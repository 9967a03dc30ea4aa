// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/result.h"
#include "replhost/sdk/sdk_export.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <sys/types.h>

// The confinement of SessionOptions::settings["confinement"] (session.h) applied to a process
// that is not a worker: what a host starts besides its workers (replhost's stateless shell
// commands) runs under exactly the confinement its workers get, built by the same code that
// WorkerProcess uses, so the two cannot drift apart.
namespace replhost::sdk {

struct ConfinedCommand {
    QStringList argv;        // the program first: the launcher, or `program` when unconfined
    bool sandboxed = false;  // inside bubblewrap: see sandboxedProgramGroup()
};

// The command line that runs `program` (absolute) with `arguments` under
// `settings["confinement"]` (absent or {}: `program` and `arguments` unchanged), starting in
// `workingDirectory`. The caller spawns it in a process group of its own, with the environment
// it wants the program to have (a sandbox passes it on as it is), stdin on /dev/null and no
// descriptor above 4 open. A launcher failure is exit status 127 with one line on stderr.
// A sandbox mounts what `program` needs, never a path named in `arguments`: they may be anyone's
// text (a shell command), and a path there must not become visible inside.
// Errors: "bad_request" for a malformed confinement (the field named), "unavailable" when the
// sandbox cannot be built (bwrap missing, the workspace gone). Thread-safe; reads the file
// system to lay out a sandbox's mounts.
REPLHOST_SDK_EXPORT Result<ConfinedCommand> confinedCommand(const QJsonObject &settings,
                                                            const QString &program,
                                                            const QStringList &arguments,
                                                            const QString &workingDirectory);

// For a sandboxed process whose group the host made (`bwrapPid`, bwrap's pid and group): the
// process group of the program bwrap runs, which has a session of its own inside the sandbox
// and so does not get what is sent to bwrap's group; 0 when there is none (not started yet, or
// ended). Send an interrupt to both. Found through /proc at the moment asked. Thread-safe.
REPLHOST_SDK_EXPORT pid_t sandboxedProgramGroup(pid_t bwrapPid);

} // namespace replhost::sdk
