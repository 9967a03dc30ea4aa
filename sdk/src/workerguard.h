// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <mutex>

#include <sys/types.h>

namespace replhost::sdk {

// Makes sure no worker outlives its host, however the host ends (SIGKILL included).
//
// The first watch() forks a small guard process that holds the read end of a pipe whose write
// end only the host holds, and keeps the list of process groups it is told to watch. When the
// host is gone the kernel closes the write end; the guard reads end-of-file, sends SIGKILL to
// every group still listed and exits. A group is the whole worker: the interpreter and whatever
// it started. (PR_SET_PDEATHSIG would reach the interpreter only, it follows the spawning thread
// rather than the process, and posix_spawn runs none of our code in the child to set it.)
//
// The guard runs in a session of its own, so a signal to the host's process group or terminal
// does not take it along; it has fds 0-2 on /dev/null and no other descriptor of the host, and
// it is named "replhost-guard". It runs nothing but system calls (it is a fork of a threaded
// process) and exits when its pipe closes, which a normal exit of the host does too.
//
// Threading: any thread. Errors are not fatal: without a guard (fork failed) workers are still
// ended by their host whenever it exits normally; a warning says so once. The guard lists up to
// 65536 groups; beyond that a group is not watched.
class WorkerGuard {
public:
    static WorkerGuard &instance();

    // Call right after spawning a worker in group `processGroup`.
    void watch(pid_t processGroup);
    // Call once the group is gone (killed and its leader reaped), so that the guard never kills
    // a group id that has been reused.
    void forget(pid_t processGroup);

    // The guard's pid; 0 when there is none.
    pid_t pid();

    WorkerGuard(const WorkerGuard &) = delete;
    WorkerGuard &operator=(const WorkerGuard &) = delete;

private:
    WorkerGuard();
    ~WorkerGuard();
    void send(int op, pid_t processGroup);

    std::mutex m_mutex;  // guards m_fd and m_pid after construction
    int m_fd = -1;       // write end; O_CLOEXEC, O_NONBLOCK
    pid_t m_pid = 0;
};

} // namespace replhost::sdk
