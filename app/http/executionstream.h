// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "httpresponse.h"
#include "streamlimiter.h"

#include "core/contextmanager.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <memory>

class QTcpSocket;

namespace replhost::http {

class HttpExchange;

// One execution streamed to one client over chunked HTTP, whatever the format: the events that
// happened before the stream began are replayed from `firstIndex`, live ones follow, a
// keep-alive is written whenever nothing was for `keepAliveMs` (which also finds clients that
// have gone), and the stream ends after the execution's done event. A subclass says what the
// bytes are (SseStream: Server-Sent Events; E2bExecutionStream: E2B's NDJSON) and what a client
// that leaves early means.
//
// The socket is held in a QPointer and checked before every write: it is deleted when the
// client goes, and writing through a stale pointer would crash the server.
//
// Back-pressure: the stream is a cursor over the execution's events, not a queue. While the
// socket holds more than kHighWaterBytes unsent, nothing more is written; the stream resumes
// from its cursor as the socket drains, reading events that left the execution's memory back
// from the history (Execution::eventRange). A slow client therefore costs the server the
// socket's buffer, not the execution's output. Should the history fail, the connection is
// aborted, so the client sees a cut stream and can resume with Last-Event-ID.
//
// Ownership: deletes itself when the stream ends or the client goes; keeps the exchange and the
// execution alive until then. Threading: the engine thread (which serves HTTP too).
class ExecutionStream : public QObject {
    Q_OBJECT
public:
    ~ExecutionStream() override;

protected:
    ExecutionStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                    int keepAliveMs, StreamLimiter::Lease lease, int firstIndex = 0);

    // Answers 200 with `headers`, writes preamble(), then the events. Call once, right after
    // construction (not from the constructor: the subclass must be complete).
    void begin(const HeaderList &headers);

    // Written after the head, before the first event; empty: nothing.
    virtual QByteArray preamble() { return {}; }
    // The bytes for one event; empty: nothing is written for it.
    virtual QByteArray translate(const sdk::Event &event, int index) = 0;
    // Written when the execution finished without its done event reaching the stream.
    virtual QByteArray epilogue() { return {}; }
    virtual QByteArray keepAlive() = 0;
    // The client left before the end. By default the execution runs on.
    virtual void clientLeft() {}

    // Output that a translation holds back for want of a line end (WholeLines) is released
    // once it has been held for kHoldMs while the stream is caught up with the execution, so a
    // prompt without one is not held for long, and a line whose end is already among the
    // events not yet written (a slow client) is never cut. Asked after every event.
    static constexpr int kHoldMs = 50;
    virtual bool holdsOutput() const { return false; }
    virtual QByteArray releaseHeld() { return {}; }

    // Writes one chunk. False when the client is gone (the stream has then stopped).
    bool send(const QByteArray &bytes);
    const core::ExecutionPtr &execution() const { return m_execution; }

private:
    void onEvent(const sdk::Event &event, int index);
    // Writes events from the cursor on while the socket takes them, and ends the stream after
    // the last one of a finished execution.
    void pump();
    void write(const sdk::Event &event, int index);
    bool congested() const;
    void lost();
    void finish();
    void stop();

    std::shared_ptr<HttpExchange> m_exchange;
    core::ExecutionPtr m_execution;
    QPointer<QTcpSocket> m_socket;
    StreamLimiter::Lease m_lease;
    QTimer m_keepAlive;
    QTimer m_hold;  // runs while output is held back (holdsOutput())
    int m_nextIndex = 0;  // the cursor: the next event to write
    bool m_stopped = false;
    bool m_pumping = false;
    bool m_doneWritten = false;  // the done event is being written: it ends the stream itself
};

} // namespace replhost::http
