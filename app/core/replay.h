// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/records.h"
#include "workspacesettings.h"

#include <replhost/sdk/event.h>
#include <replhost/sdk/session.h>

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QStringList>
#include <QString>

#include <optional>

namespace replhost::core {

// How a restore went, told to the next run of the context as a "restored" event:
//   {"mode": "replay", "replayed": 3, "total": 3, "duration_ms": 41, "complete": true,
//    "lost": []}
// or, from a snapshot (executions after it replayed on top, when there are any):
//   {"mode": "snapshot", "snapshot_execution_count": 7, "replayed": 0, "total": 0, ...,
//    "lost": ["1 background job (sleep 600 &)"]}
// and, when a replayed execution did not succeed again, also
//   "failed_execution": {"id", "execution_count", "ename", "evalue"}
// ("interpreter_lost": true when replaying it ended the interpreter); when a snapshot existed
// but could not be used and the history was replayed instead, "snapshot_error" says why.
// A history beyond the workspace's restore bounds is not replayed at all: the context starts
// afresh and the event says
//   "state_lost": true, "reason": "...", "limit": "restore.max_replay_cells", "limit_value": 1000
// and the same, without "limit", when executions it would replay were pruned (retention removed
// them because a snapshot covered them, and the snapshot cannot be used).
// The context's JSON carries the same object as "restored" (ContextInfo::lastRestore).
struct RestoreReport {
    enum class Outcome {
        Complete,        // every execution was replayed
        Failed,          // one ended with an error; the replay stopped there
        InterpreterLost, // replaying one ended the interpreter
        HistoryUnreadable,
        OverBound,       // too much to replay: nothing was, the state starts afresh
        HistoryPruned    // retention removed executions it would replay: likewise
    };

    Outcome outcome = Outcome::Complete;
    int replayed = 0;      // executions replayed successfully
    int total = 0;         // executions there were to replay
    qint64 durationMs = 0; // starting the interpreter and replaying
    // The execution whose replay failed, and how (not Complete).
    QString failedExecutionId;
    int failedExecutionCount = 0;
    QString ename;
    QString evalue;
    // From a snapshot: the execution it stood for; 0 for a replay from the base.
    bool fromSnapshot = false;
    int snapshotExecutionCount = 0;
    QStringList lost;       // what the restored state does not have (background jobs, ...)
    QString snapshotError;  // a snapshot there was could not be used: why
    // OverBound: the bound ("restore.max_replay_cells" or "restore.max_replay_seconds"), its
    // value, and a sentence for people; HistoryPruned: the sentence.
    QString limit;
    qint64 limitValue = 0;
    QString reason;

    QJsonObject toJson() const;
    sdk::Event toEvent(const QString &executionId) const;
};

// One restore of a context: its successful executions sent again, in order, to a fresh
// interpreter, each with its original execution count and with its output dropped. An execution
// that was answered when it asked for input (ExecutionRecord::inputs) asks again, and is given
// the same answers in the same order; a question beyond them, and every password (whose answer
// was never kept), gets the end of input. The replay stops at the first execution that does not
// end "ok" again (a file it read is gone, a service it called is down); what was replayed before
// it stays.
//
// The Context drives it: it sends what next() gives, and passes it every session event that
// owns() claims. Threading: the engine thread.
class Replay {
public:
    explicit Replay(QList<storage::ExecutionRecord> executions);

    // Whether replaying `executions` stays within `bounds` (their number, and the sum of their
    // recorded durations: what they cost when they ran is what they are expected to cost again).
    // If not, the report of a restore that replays nothing, naming the bound it is past.
    static std::optional<RestoreReport> exceedsBounds(
            const QList<storage::ExecutionRecord> &executions,
            const WorkspaceSettings::Restore &bounds);

    // The request replaying the next execution, or nullopt when the replay is over.
    std::optional<sdk::ExecuteRequest> next();
    // Whether `event` belongs to the replayed execution in flight.
    bool owns(const sdk::Event &event) const;
    // What to answer the in-flight execution's question `inputRequest` (an InputRequest event
    // that owns() claimed): the recorded answer it stands for, or the end of input.
    struct Answer {
        QString value;
        bool eof = true;
    };
    Answer answer(const sdk::Event &inputRequest);
    // Takes an event that owns() claimed; true when it ended that execution.
    bool take(const sdk::Event &event);
    // The interpreter ended while an execution was being replayed.
    void interpreterEnded(const QString &reason);

    bool isOver() const;
    // The execution count of the execution being replayed; 0 between them.
    int inFlightExecutionCount() const;
    bool lostInterpreter() const { return m_report.outcome == RestoreReport::Outcome::InterpreterLost; }
    // The cwd the interpreter reported after the last replayed execution (empty: none did).
    QString cwd() const { return m_cwd; }
    // So far; durationMs is the caller's to fill in.
    const RestoreReport &report() const { return m_report; }

private:
    void fail(RestoreReport::Outcome outcome);

    QList<storage::ExecutionRecord> m_executions;
    qsizetype m_next = 0;  // index of the next execution to send
    QString m_inFlight;    // request id of the execution being replayed; empty between them
    QJsonArray m_answers;  // the in-flight execution's recorded answers
    qsizetype m_asked = 0; // the questions it has asked so far
    QString m_cwd;
    QString m_ename, m_evalue;  // the in-flight execution's first error
    bool m_over = false;
    RestoreReport m_report;
};

} // namespace replhost::core
