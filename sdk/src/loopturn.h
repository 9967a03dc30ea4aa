// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>

#include <vector>

class QAbstractEventDispatcher;

namespace replhost::sdk {

// Calls its clients back at the next turn of a thread's event loop: when the loop is about to
// wait for events (the dispatcher's aboutToBlock; the glib dispatcher emits it at the start of
// every pass that may wait) or, in a loop that does not wait (processEvents() without
// WaitForMoreEvents, as QTest::qWait() spins), when it wakes (awake). Never from inside
// schedule(): a caller's work goes out after the code that asked for it has returned to the loop.
//
// One per thread, connected to the dispatcher once, so that asking costs an append to a list:
// neither a posted event (a wake-up of the loop and an extra pass), nor a timer (on a virtual
// machine, arming and cancelling one reprograms the timer device, an exit to the hypervisor),
// nor a signal connection made and dropped per request.
//
// Threading: a LoopTurn and its clients belong to one thread. Ownership: the dispatcher owns it.
class LoopTurn : public QObject {
    Q_OBJECT
public:
    class Client {
    public:
        virtual void onLoopTurn() = 0;

    protected:
        ~Client() = default;
    };

    // The calling thread's; null when the thread has no event dispatcher.
    static LoopTurn *current();

    // `client` is called once, at the next turn, unless cancelled first. Scheduling a client that
    // is already waiting does nothing. A client must be cancelled before it is destroyed.
    void schedule(Client *client);
    void cancel(Client *client);

private:
    explicit LoopTurn(QAbstractEventDispatcher *dispatcher);
    void run();

    std::vector<Client *> m_waiting;
    std::vector<Client *> m_running;  // those of the turn being run; cancelled ones are nulled
};

} // namespace replhost::sdk
