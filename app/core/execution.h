// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/event.h>

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

namespace replhost::core {

// One run of code in a context, as the faces see it: its events so far and a signal for each new
// one. Events are numbered from 0 in arrival order; the last one is always a Done event.
//
// Threading: lives in the engine thread. Ownership: shared (ExecutionPtr); the engine keeps
// running executions and the most recent finished ones alive.
class Execution : public QObject {
    Q_OBJECT
public:
    Execution(QString id, QString workspace, QString contextId, QString language, QString code,
              QObject *parent = nullptr);

    QString id() const { return m_id; }
    QString workspace() const { return m_workspace; }
    QString contextId() const { return m_contextId; }
    QString language() const { return m_language; }
    QString code() const { return m_code; }
    int executionCount() const { return m_executionCount; }
    QDateTime startedAt() const { return m_startedAt; }

    // "queued", "running", then one of "ok", "error", "interrupted", "aborted", "timeout".
    QString status() const { return m_status; }
    bool isFinished() const { return m_finished; }
    qint64 durationMs() const { return m_durationMs; }

    const QList<sdk::Event> &events() const { return m_events; }

    // A summary for a client that wants one JSON document: status, the result's MIME bundle,
    // stdout and stderr joined, the error, display outputs, and every event.
    QJsonObject toJson(bool withEvents = true) const;

    // Used by the engine only.
    void setExecutionCount(int count) { m_executionCount = count; }
    void markRunning();
    void addEvent(const sdk::Event &event);  // a Done event finishes the execution
    // Makes this a finished execution read back from the history: its status, timing and the
    // events that were kept. It emits nothing, and nothing can be added afterwards.
    void restore(const QString &status, int executionCount, const QDateTime &startedAt,
                 qint64 durationMs, const QList<sdk::Event> &events);

signals:
    void eventAdded(const replhost::sdk::Event &event, int index);
    void finished();

private:
    QString m_id, m_workspace, m_contextId, m_language, m_code;
    int m_executionCount = 0;
    QDateTime m_startedAt;
    QString m_status = QStringLiteral("queued");
    bool m_finished = false;
    qint64 m_durationMs = -1;
    QList<sdk::Event> m_events;
};

} // namespace replhost::core
