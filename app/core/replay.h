// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/records.h"

#include <replhost/sdk/event.h>
#include <replhost/sdk/session.h>

#include <QList>
#include <QString>

#include <optional>

namespace replhost::core {

// How a restore went, told to the next run of the context as a "restored" event:
//   {"replayed": 3, "total": 3, "duration_ms": 41, "complete": true}
// and, when a replayed execution did not succeed again, also
//   "failed_execution": {"id", "execution_count", "ename", "evalue"}
// ("interpreter_lost": true when replaying it ended the interpreter).
struct RestoreReport {
    enum class Outcome {
        Complete,        // every execution was replayed
        Failed,          // one ended with an error; the replay stopped there
        InterpreterLost, // replaying one ended the interpreter
        HistoryUnreadable
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

    sdk::Event toEvent(const QString &executionId) const;
};

// One restore of a context: its successful executions sent again, in order, to a fresh
// interpreter, each with its original execution count and with its output dropped. The replay
// stops at the first execution that does not end "ok" again (a file it read is gone, a service
// it called is down); what was replayed before it stays.
//
// The Context drives it: it sends what next() gives, and passes it every session event that
// owns() claims. Threading: the engine thread.
class Replay {
public:
    explicit Replay(QList<storage::ExecutionRecord> executions);

    // The request replaying the next execution, or nullopt when the replay is over.
    std::optional<sdk::ExecuteRequest> next();
    // Whether `event` belongs to the replayed execution in flight.
    bool owns(const sdk::Event &event) const;
    // Takes an event that owns() claimed; true when it ended that execution.
    bool take(const sdk::Event &event);
    // The interpreter ended while an execution was being replayed.
    void interpreterEnded(const QString &reason);

    bool isOver() const;
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
    QString m_cwd;
    QString m_ename, m_evalue;  // the in-flight execution's first error
    bool m_over = false;
    RestoreReport m_report;
};

} // namespace replhost::core
