// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>

class QSocketNotifier;

namespace replhost::app {

// Turns SIGINT and SIGTERM into a Qt signal in the main thread. The handler only writes the
// signal number to a pipe (the one async-signal-safe thing to do); a QSocketNotifier reads it in
// the event loop. After the first signal the default dispositions are restored, so a second
// Ctrl-C during a slow shutdown ends the process at once.
//
// One instance per process. Threading: create in the main thread, before the event loop.
class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

    bool isValid() const { return m_notifier != nullptr; }

signals:
    void terminationRequested(int signalNumber);

private:
    void onReadable();

    QSocketNotifier *m_notifier = nullptr;
};

} // namespace replhost::app
