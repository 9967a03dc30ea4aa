// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <thread>

#include <signal.h>

namespace replhost::cli {

// Turns Ctrl-C (SIGINT) into calls on a thread of its own, so the client can send an interrupt
// request while its main thread is blocked reading the run's stream. The signal handler only
// writes a record to a pipe (async-signal-safe); the thread reads it and calls `onInterrupt` with
// how many interrupts the user has asked for so far (1, 2, ...).
//
// One request can arrive as two SIGINTs: `timeout -s INT` (and `kill` scripts like it) signals
// the command and then its whole process group, which holds the command too, and on a busy
// machine the two may be any time apart. So a SIGINT sent by kill() from the same process as the
// one counted last is the same request and not counted. That needs no clock and waits for
// nothing that does not end: an interrupted run ends (the server kills an interpreter that
// ignores the interrupt after its grace period). A terminal's Ctrl-C comes from the kernel, once
// per press, and every one counts, as does a SIGINT from any other process.
//
// One instance at a time per process. While it lives, SIGINT no longer ends the process and is
// blocked in the creating thread; the destructor restores the previous disposition and mask and
// joins the thread (waiting for a call in progress). Threading: create and destroy on the same thread; `onInterrupt` runs on the
// watcher's thread.
class InterruptWatcher {
public:
    explicit InterruptWatcher(std::function<void(int count)> onInterrupt);
    ~InterruptWatcher();
    InterruptWatcher(const InterruptWatcher &) = delete;
    InterruptWatcher &operator=(const InterruptWatcher &) = delete;

    // False when the pipe or the handler could not be set up: SIGINT then ends the process as usual.
    bool isValid() const { return m_thread.joinable(); }

private:
    void watch();

    std::function<void(int)> m_onInterrupt;
    int m_readFd = -1;
    int m_writeFd = -1;
    struct sigaction m_previous {};
    sigset_t m_previousMask {};
    std::thread m_thread;
};

} // namespace replhost::cli
