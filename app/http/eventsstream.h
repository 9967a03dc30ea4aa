// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "streamlimiter.h"

#include "core/backgroundoutput.h"
#include "core/contextmanager.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <memory>

class QTcpSocket;

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;

// GET /v1/events: what happens in the engine, pushed to one client as Server-Sent Events, so a
// client that shows the engine (the attached workbench) follows what other clients do without
// polling. The events are the engine's own announcements (ContextManager and WorkspaceManager
// signals), for every workspace or the one `workspace` names:
//
//   ready                 first, once: {"workspace": name or null}; what the client read before
//                         may be out of date, so it reads its state again now
//   context_added         the Context document (GET /v1/contexts/{id})
//   context_changed       the Context document
//   context_removed       {"workspace", "id"}
//   execution_started     the run's summary (executionSummary)
//   execution_finished    the summary with "duration_ms", "output_bytes" and its "done" event
//                         instead of the code
//   background_output     {"workspace", "context_id", "seq", "at", "after_execution_id", "event"}
//   workspace_added       {"name"}
//   workspace_removed     {"name"}
//   resync                {"reason": "lagged", "dropped": N}: N events were dropped for a client
//                         that did not keep up; it reads its state again, as after ready
//
// A run's own events are not here: GET /v1/executions/{id}/events follows one run, with its
// back-pressure (a cursor over the execution) and Last-Event-ID. So this stream carries a few
// small events per run, whatever the run prints.
//
// The events have no id: a client that reconnects gets ready again and reads its state again,
// which is also what it would have to do after a gap it cannot replay.
//
// Back-pressure: while the socket holds more than kHighWaterBytes unsent, events wait in a
// queue; once the queue holds more than kMaxQueuedBytes it is dropped whole and a resync takes
// its place. A client that stops reading costs the server the socket's buffer and the queue's
// bound, never more. A ": keep-alive" comment goes out after keepAliveMs of silence.
//
// Ownership: deletes itself when the client goes; keeps the exchange alive until then.
// Threading: the engine thread (which serves HTTP too).
class EventsStream : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 kHighWaterBytes = 256 * 1024;
    static constexpr qint64 kMaxQueuedBytes = 256 * 1024;

    // `workspace`: the name of the workspace whose events are sent; empty: every workspace's.
    static void start(std::shared_ptr<HttpExchange> exchange, core::Engine &engine,
                      const QString &workspace, int keepAliveMs, StreamLimiter::Lease lease);

    // An execution as the stream announces it: id, context_id, workspace, language, status,
    // execution_count, started_at, replay, input; and its code while it runs, or, once it has
    // finished, duration_ms, output_bytes and done (its done event).
    static QJsonObject executionSummary(const core::Execution &execution);
    // One entry of a context's background output, as GET …/background-output lists it.
    static QJsonObject backgroundEntryJson(const core::BackgroundOutput::Entry &entry);

private:
    EventsStream(std::shared_ptr<HttpExchange> exchange, QString workspace, int keepAliveMs,
                 StreamLimiter::Lease lease);
    void begin(core::Engine &engine);
    bool wanted(const QString &workspace) const;
    void post(const QByteArray &type, const QJsonObject &data);
    // Writes what waits while the socket takes it.
    void pump();
    bool congested() const;
    bool send(const QByteArray &bytes);
    void stop();

    std::shared_ptr<HttpExchange> m_exchange;
    QPointer<QTcpSocket> m_socket;
    QString m_workspace;
    StreamLimiter::Lease m_lease;
    QTimer m_keepAlive;
    std::deque<QByteArray> m_queue;
    qint64 m_queuedBytes = 0;
    qint64 m_dropped = 0;  // events dropped since the last resync was written; > 0: one is due
    bool m_stopped = false;
};

} // namespace replhost::http
