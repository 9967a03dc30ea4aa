// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

#include <signal.h>

namespace replhost::sdk {

// How a worker ended: the signal that killed it (0 if none) and its exit code otherwise.
// Inside a sandbox the worker is bwrap's child, and bwrap exits with 128 + N when it is killed
// by signal N, so such a code stands for the signal.
struct ExitCause {
    int signal = 0;
    int code = 0;
    bool viaSandbox = false;
};

// The cause in the waitid() result of a reaped worker.
ExitCause exitCause(const siginfo_t &info, bool sandboxed);

// "exited with code 3", "killed by signal 9 (SIGKILL)", "... inside the sandbox".
QString describeExit(const ExitCause &cause);

} // namespace replhost::sdk
