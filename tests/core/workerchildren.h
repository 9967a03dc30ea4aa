// SPDX-License-Identifier: Apache-2.0
#pragma once
// The workers an engine suite has running, found in /proc: every process whose parent is the
// test itself, but the worker guard (workers are spawned by the engine in the test's process).

#include "processtable.h"

#include <QList>

#include <unistd.h>

namespace replhost::core::testing {

// Running processes whose parent is this test, other than the worker guard.
inline QList<qint64> workerChildren()
{
    QList<qint64> found;
    for (const replhost::testing::ProcessEntry &process : replhost::testing::runningProcesses()) {
        if (process.parent == qint64(::getpid()) && process.name != "replhost-guard")
            found.append(process.pid);
    }
    return found;
}

} // namespace replhost::core::testing
