// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace replhost::cli {

// What replhost-cli's exit status says. docs/cli.md lists the same table; scripts depend on it,
// so a number never changes meaning.
enum class ExitStatus : int {
    Ok = 0,             // the command did what it was asked; a run ended with status "ok"
    Failed = 1,         // a run ended with "error" or "aborted"; a local file could not be read or written
    Usage = 2,          // the command line is wrong (nothing was sent to the server)
    Unreachable = 3,    // no server found, a stale URL file, connection refused or lost
    Unauthorized = 4,   // no token, or the server refused it (401)
    Refused = 5,        // the server refused the request (unknown context, bad field, runtime missing...)
    TimedOut = 124,     // a run hit its --timeout (as timeout(1) does)
    Interrupted = 130,  // a run was interrupted (Ctrl-C, or an interrupt from elsewhere): 128 + SIGINT
};

inline int toExitCode(ExitStatus status)
{
    return static_cast<int>(status);
}

} // namespace replhost::cli
