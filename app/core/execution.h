// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/event.h>
#include <replhost/sdk/result.h>

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>

namespace replhost::core {

// Reads events [from, to) of one execution back from where they were persisted, in order.
// Errors are values ("storage", "unavailable").
using EventArchive =
        std::function<Result<QList<sdk::Event>>(const QString &executionId, int from, int to)>;

// One run of code in a context, as the faces see it: its events so far and a signal for each new
// one. Events are numbered from 0 in arrival order; the last one is always a Done event.
//
// Memory: by default every event stays in memory (bounded by the output cap of whoever adds
// them). Once keepRecentOnly() gave it an archive, only a window of the most recent events is
// kept, about `windowBytes` of them, and older ones are read back from the archive on demand,
// so a run that prints 200 MiB does not hold 200 MiB while it is kept for late subscribers.
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
    // Whether a restore of the context may run it again (RunRequest::replay).
    bool isReplayable() const { return m_replayable; }
    // Whether its client can answer its questions (RunRequest::input): the code may then wait
    // for input, otherwise reading input finds its end at once.
    bool acceptsInput() const { return m_acceptsInput; }
    // The run waits for an answer to its last input_request event (until an input_reply event,
    // or its end).
    bool isWaitingForInput() const { return m_waitingForInput; }
    // Whether the question it waits for (or asked last) is for a password.
    bool inputIsPassword() const { return m_inputPassword; }
    // The answers its questions were given so far, in order, as their input_reply events say
    // ({value}, {eof: true} or, for a password, {password: true} alone), as a compact JSON array;
    // empty when there were none. What the history keeps for a restore (Replay).
    QString inputsJson() const;

    // "queued", "running", then one of "ok", "error", "interrupted", "aborted", "timeout".
    QString status() const { return m_status; }
    bool isFinished() const { return m_finished; }
    qint64 durationMs() const { return m_durationMs; }

    // How many events there have been; the next one gets this index.
    int eventCount() const { return m_firstRecent + int(m_recent.size()); }
    // The events held in memory: indices firstRecentIndex() .. eventCount() - 1. That is every
    // event (firstRecentIndex() is 0) unless the execution has an archive and its events went
    // past the window; eventRange() reads any of them.
    int firstRecentIndex() const { return m_firstRecent; }
    const QList<sdk::Event> &events() const { return m_recent; }
    // Events from index `from` on, at most `maxCount` of them (< 0: no limit), from memory or,
    // for those that left it, from the archive. When fewer are returned than asked for (and
    // `from` is below eventCount()), at least one is: call again from where it ended. Errors
    // are the archive's; "bad_request" for a negative `from`.
    Result<QList<sdk::Event>> eventRange(int from = 0, int maxCount = -1) const;
    // Output produced so far, in bytes: stream text as UTF-8, display and result bundles as
    // compact JSON (what the metrics count).
    qint64 outputBytes() const { return m_outputBytes; }
    // Roughly what an event holds in memory (its strings are UTF-16), in bytes.
    static qint64 memoryEstimate(const sdk::Event &event);
    // The deleter of an ExecutionPtr: deletes `execution` at once, or with deleteLater() when it
    // is on another thread or the last reference went inside one of its own signal emissions
    // (a slot of eventAdded or finished), where deleting it would pull it from under Qt.
    // Deleting at once spares the event loop a wake-up and a pass per execution.
    static void dispose(Execution *execution);

    // Used by the engine only.
    void setExecutionCount(int count) { m_executionCount = count; }
    void setReplayable(bool replayable) { m_replayable = replayable; }
    void setAcceptsInput(bool accepts) { m_acceptsInput = accepts; }
    void markRunning();
    // Keeps about `windowBytes` of recent events in memory from now on (at least the newest
    // one), reading older ones through `archive`, which must hold every event added from here on
    // by the time a reader asks for it.
    void keepRecentOnly(EventArchive archive, qint64 windowBytes);
    // A Done event finishes the execution; its duration is `durationMs` when >= 0 (what was
    // recorded in the history when the done came), else the time from start until now.
    void addEvent(const sdk::Event &event, qint64 durationMs = -1);
    // Makes this a finished execution read back from the history: its status, timing and the
    // events that were kept. It emits nothing, and nothing can be added afterwards.
    void restore(const QString &status, int executionCount, const QDateTime &startedAt,
                 qint64 durationMs, const QList<sdk::Event> &events);

signals:
    void eventAdded(const replhost::sdk::Event &event, int index);
    void finished();

private:
    void trimWindow();

    QString m_id, m_workspace, m_contextId, m_language, m_code;
    int m_executionCount = 0;
    bool m_replayable = true;
    bool m_acceptsInput = false;
    bool m_waitingForInput = false;
    bool m_inputPassword = false;
    QJsonArray m_inputs;
    QDateTime m_startedAt;
    QString m_status = QStringLiteral("queued");
    bool m_finished = false;
    qint64 m_durationMs = -1;
    // m_recent holds events m_firstRecent.. in order; m_recentBytes estimates their memory.
    QList<sdk::Event> m_recent;
    int m_firstRecent = 0;
    qint64 m_recentBytes = 0;
    qint64 m_windowBytes = -1;  // < 0: keep everything
    EventArchive m_archive;
    qint64 m_outputBytes = 0;
    int m_emitting = 0;  // depth of this object's own signal emissions (see dispose())
};

} // namespace replhost::core
