// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "records.h"

#include <replhost/sdk/result.h>

#include <QByteArray>

#include <functional>
#include <variant>
#include <vector>

namespace replhost::storage {

// The writes HistoryWriter queues, and their encoding in its PendingLog. Internal to storage.

struct InsertExecution {
    ExecutionRecord execution;
};
struct AppendEvent {
    ExecutionEventRecord event;
    std::function<QByteArray()> makeJson;  // if set, makes event.json on the writer's thread
};
struct FinishExecution {
    QString id;
    QString status;
    qint64 durationMs;
    qint64 outputBytes;
    bool truncated;
    QString inputs;  // ExecutionRecord::inputs
    // Set by the writer once finishExecution() has told its caller that the end is durable, so
    // that the commit listener is not told again. Not part of the log's encoding.
    bool reported = false;
};
struct UpdateContextUsage {
    QString contextId;
    int executionCount;
    QString cwd;
    qint64 lastUsedAt;
};
struct SaveSnapshot {
    SnapshotRecord snapshot;
};
using Write = std::variant<InsertExecution, AppendEvent, FinishExecution, UpdateContextUsage,
                           SaveSnapshot>;

// For std::visit over a Write with one lambda per kind.
template <typename... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;  // not implied for aggregates by every compiler yet

// Makes the JSON of every AppendEvent in [first, last) that has a makeJson, so that the write
// holds only data (and can be encoded).
void materialize(std::vector<Write>::iterator first, std::vector<Write>::iterator last);

// The writes [first, last), materialized, as one payload; and back. decodeWrites fails
// ("storage") on a payload it cannot read, which a checksummed record is only when another
// version of replhost wrote it.
QByteArray encodeWrites(std::vector<Write>::const_iterator first,
                        std::vector<Write>::const_iterator last);
Result<std::vector<Write>> decodeWrites(const QByteArray &payload);

} // namespace replhost::storage
