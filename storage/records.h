// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QString>

namespace replhost::storage {

// Plain rows as stored. Times are milliseconds since the Unix epoch (UTC).

struct WorkspaceRecord {
    QString id;         // opaque, stable
    QString name;       // unique, used in URLs ("default")
    QString directory;  // absolute path of the workspace directory
    qint64 createdAt = 0;
    // The workspace's own settings as a compact JSON object ("{}": the server's defaults for
    // everything). Storage keeps the text as given; core::WorkspaceSettings gives it meaning.
    QString settings = QStringLiteral("{}");
};

enum class EnvScope { Workspace, Context };

// One key of an env layer. `isUnset` records an explicit removal: the key is removed from the
// environment even if a lower layer (or the base environment) defines it.
struct EnvVarRecord {
    QString key;
    QString value;
    bool isUnset = false;
};

// What a context's next interpreter starts from when the last one is gone (host restart,
// eviction): its history replayed, or nothing.
enum class RestorePolicy { Replay, Fresh };

struct ContextRecord {
    QString id;          // UUID without braces
    QString workspaceId;
    QString language;    // handler id ("python")
    QString name;        // optional, for people
    QString cwd;         // absolute
    int executionCount = 0;
    qint64 createdAt = 0;
    qint64 lastUsedAt = 0;
    RestorePolicy restorePolicy = RestorePolicy::Replay;
    // The replay base. The context's state is what a fresh interpreter started in
    // replayBaseCwd has after every execution with status "ok" and an execution count above
    // replayBaseCount, run in order. A deliberate restart, or an interpreter lost during a run,
    // moves the base to the count and cwd of that moment: nothing before it is replayed again.
    int replayBaseCount = 0;
    QString replayBaseCwd;  // absolute; empty: start in cwd
};

// The latest state snapshot of a context, taken by its interpreter (worker protocol, "Snapshots").
// It stands for the context's state after the execution numbered executionCount; whether later
// executions are replayed on top of it is the engine's decision (core::Context).
struct SnapshotRecord {
    QString contextId;
    int executionCount = 0;
    QString format;       // the driver's name for the encoding ("bash-source", "python-pickle")
    QByteArray data;      // empty with a non-empty error: no snapshot could be taken
    QString error;        // why there is no data, for people ("x: cannot pickle 'socket'")
    QString lost = QStringLiteral("[]");  // JSON array of what the snapshot does not keep
    qint64 createdAt = 0;

    bool isUsable() const { return error.isEmpty() && !format.isEmpty(); }
};

struct ExecutionRecord {
    QString id;
    QString contextId;
    qint64 seq = 0;           // order within the context, assigned by storage on insert
    QString code;
    QString status;           // "running", "ok", "error", "interrupted", "aborted", "timeout"
    int executionCount = 0;
    qint64 startedAt = 0;
    qint64 durationMs = -1;   // -1 while running
    qint64 outputBytes = 0;
    bool truncated = false;   // events beyond the stored cap were dropped
    bool replay = true;       // false: a restore never runs it again
    bool outputPruned = false;  // its events were removed by retention (HistoryPruner)
    // The answers its questions were given, in order, as a JSON array (empty: it asked none).
    // Storage keeps the text as given; core::Context writes it and core::Replay reads it. A
    // password's answer is never in it.
    QString inputs;
};

// How much history a workspace keeps (HistoryPruner). 0 means no limit. An execution beyond any
// of them (older than the newest maxExecutions of the workspace, than the newest maxBytes of
// code and output, or than maxAgeMs) loses its output, and its row unless a restore needs it.
struct RetentionLimits {
    QString workspaceId;
    int maxExecutions = 0;
    qint64 maxBytes = 0;
    qint64 maxAgeMs = 0;
};

struct ExecutionEventRecord {
    QString executionId;
    int seq = 0;              // order within the execution
    QByteArray json;          // the event as compact JSON
};

} // namespace replhost::storage
