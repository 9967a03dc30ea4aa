// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <thread>

#include <signal.h>

namespace replhost::cli {

// Turns Ctrl-C (SIGINT) into calls on a thread of its own, so the client can send an interrupt
// request while its main thread is blocked reading the run's stream. The signal handler only
// writes a byte to a pipe (async-signal-safe); the thread reads it and calls `onInterrupt` with
// how many SIGINTs have arrived so far (1, 2, ...).
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
