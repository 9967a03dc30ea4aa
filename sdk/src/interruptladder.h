// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QTimer>

#include <functional>

class QObject;

namespace replhost::sdk {

// The signal half of the interrupt ladder (docs/worker-protocol.md §7): a SIGINT at once, more
// `repeatMs` apart up to `repeats` in all while the run goes on, and the kill `killMs` after the
// first, unless stop() comes first (the run's done arrived, or the worker ended). A step of 0 or
// less is left out.
//
// Threading: the thread of `context`, which scopes the timers' connections. The callbacks run
// from the event loop; `kill` may destroy the ladder's owner.
class InterruptLadder {
public:
    struct Steps {
        int repeatMs = 0;
        int repeats = 0;
        int killMs = 0;
    };
    // `signal` sends one SIGINT; `running` says whether there is still a run to interrupt (no
    // repeat is sent otherwise); `kill` ends the worker.
    InterruptLadder(QObject *context, Steps steps, std::function<void()> signal,
                    std::function<bool()> running, std::function<void()> kill);

    // Sends the first SIGINT and arms the rest.
    void begin();
    void stop();
    // SIGINTs sent since the last begin().
    int sigintsSent() const { return m_sent; }

private:
    const Steps m_steps;
    std::function<void()> m_signal;
    std::function<bool()> m_running;
    QTimer m_repeatTimer;
    QTimer m_killTimer;
    int m_sent = 0;
};

} // namespace replhost::sdk
