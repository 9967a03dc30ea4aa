// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/result.h"

#include <QByteArrayList>
#include <QString>
#include <QStringList>

#include <sys/types.h>

namespace replhost::sdk {

// A started worker process and the host's ends of its four pipes. The host's read ends are
// O_NONBLOCK; all host ends are O_CLOEXEC. The caller owns every descriptor.
struct SpawnedProcess {
    pid_t pid = 0;
    int pidfd = -1;     // -1 when the kernel has no pidfd_open; then poll with waitpid()
    int stdoutFd = -1;  // read end of the worker's fd 1
    int stderrFd = -1;  // read end of the worker's fd 2
    int requestFd = -1; // write end of the worker's fd 3
    int eventFd = -1;   // read end of the worker's fd 4
};

// Starts `program` with the process contract of docs/worker-protocol.md §1: a new session and
// process group, every signal disposition at its default and an empty signal mask, fd 0 on
// /dev/null, fds 1-4 on fresh pipes, every fd from 5 up closed, `environment` ("KEY=value"
// entries) as its whole environment and `workingDirectory` (if not empty) as its cwd.
//
// Uses posix_spawn (a vfork-style clone), so it is cheap even from a large host process and
// safe with other threads running. Fails with a message naming the program and the reason.
// The new process group is handed to the WorkerGuard, which kills it if the host dies first;
// whoever reaps the worker calls WorkerGuard::forget() after killing its group.
Result<SpawnedProcess> spawnProcess(const QString &program, const QStringList &arguments,
                                    const QByteArrayList &environment,
                                    const QString &workingDirectory);

} // namespace replhost::sdk
