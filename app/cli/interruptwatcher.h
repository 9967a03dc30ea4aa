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
// the command and then its whole process group, which holds the command too. So a SIGINT sent by
// kill() from the same process as the one that was counted last, arriving before
// interruptDelivered() (the interrupt it asked for has reached the server), is the same request
// and not counted. That needs no clock: the handler notes, as the signal arrives, whether the
// interrupt was delivered yet. A terminal's Ctrl-C comes from the kernel, once per press, and
// every one counts.
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

    // The interrupt asked for by the last counted SIGINT has been sent and answered (or will not
    // be sent): a SIGINT from now on is a new request, whoever sends it. Any thread.
    void interruptDelivered();

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
