// SPDX-License-Identifier: Apache-2.0
#include "historywrites.h"

#include <QDataStream>
#include <QIODevice>

namespace replhost::storage {

namespace {

// The payload's first byte; a change of any write's fields is a new version.
constexpr quint8 kFormat = 1;
constexpr auto kStreamVersion = QDataStream::Qt_6_4;

// FinishWithInputs is a Finish with the run's answers: a run that asked nothing is logged as a
// Finish, which replhost before it reads too.
enum class Kind : quint8 {
    Insert = 1,
    Event = 2,
    Finish = 3,
    Usage = 4,
    Snapshot = 5,
    FinishWithInputs = 6
};

} // namespace

void materialize(std::vector<Write>::iterator first, std::vector<Write>::iterator last)
{
    for (auto it = first; it != last; ++it) {
        if (auto *append = std::get_if<AppendEvent>(&*it); append && append->makeJson) {
            append->event.json = append->makeJson();
            append->makeJson = nullptr;
        }
    }
}

QByteArray encodeWrites(std::vector<Write>::const_iterator first,
                        std::vector<Write>::const_iterator last)
{
    QByteArray payload;
    QDataStream out(&payload, QIODevice::WriteOnly);
    out.setVersion(kStreamVersion);
    out << kFormat << quint32(last - first);
    for (auto it = first; it != last; ++it) {
        std::visit(Overloaded{
                       [&out](const InsertExecution &w) {
                           const ExecutionRecord &e = w.execution;
                           out << quint8(Kind::Insert) << e.id << e.contextId << e.code
                               << e.status << qint32(e.executionCount) << e.startedAt
                               << e.durationMs << e.outputBytes << e.truncated << e.replay;
                       },
                       [&out](const AppendEvent &w) {
                           Q_ASSERT(!w.makeJson);  // materialize() first
                           out << quint8(Kind::Event) << w.event.executionId
                               << qint32(w.event.seq) << w.event.json;
                       },
                       [&out](const FinishExecution &w) {
                           out << quint8(w.inputs.isEmpty() ? Kind::Finish : Kind::FinishWithInputs)
                               << w.id << w.status << w.durationMs << w.outputBytes << w.truncated;
                           if (!w.inputs.isEmpty())
                               out << w.inputs;
                       },
                       [&out](const UpdateContextUsage &w) {
                           out << quint8(Kind::Usage) << w.contextId << qint32(w.executionCount)
                               << w.cwd << w.lastUsedAt;
                       },
                       [&out](const SaveSnapshot &w) {
                           const SnapshotRecord &s = w.snapshot;
                           out << quint8(Kind::Snapshot) << s.contextId
                               << qint32(s.executionCount) << s.format << s.data << s.error
                               << s.lost << s.createdAt;
                       },
                   },
                   *it);
    }
    return payload;
}

Result<std::vector<Write>> decodeWrites(const QByteArray &payload)
{
    const auto unreadable = [](const QString &why) {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("a pending log record cannot be read: %1").arg(why));
    };
    QDataStream in(payload);
    in.setVersion(kStreamVersion);
    quint8 format = 0;
    quint32 count = 0;
    in >> format >> count;
    if (format != kFormat)
        return unreadable(QStringLiteral("format %1, not %2").arg(format).arg(kFormat));
    std::vector<Write> writes;
    for (quint32 i = 0; i < count && in.status() == QDataStream::Ok; ++i) {
        quint8 kind = 0;
        in >> kind;
        switch (Kind(kind)) {
        case Kind::Insert: {
            ExecutionRecord e;
            qint32 executionCount = 0;
            in >> e.id >> e.contextId >> e.code >> e.status >> executionCount >> e.startedAt
               >> e.durationMs >> e.outputBytes >> e.truncated >> e.replay;
            e.executionCount = executionCount;
            writes.emplace_back(InsertExecution{std::move(e)});
            break;
        }
        case Kind::Event: {
            ExecutionEventRecord event;
            qint32 seq = 0;
            in >> event.executionId >> seq >> event.json;
            event.seq = seq;
            writes.emplace_back(AppendEvent{std::move(event), {}});
            break;
        }
        case Kind::Finish:
        case Kind::FinishWithInputs: {
            FinishExecution w{};
            in >> w.id >> w.status >> w.durationMs >> w.outputBytes >> w.truncated;
            if (Kind(kind) == Kind::FinishWithInputs)
                in >> w.inputs;
            writes.emplace_back(std::move(w));
            break;
        }
        case Kind::Usage: {
            UpdateContextUsage w{};
            qint32 executionCount = 0;
            in >> w.contextId >> executionCount >> w.cwd >> w.lastUsedAt;
            w.executionCount = executionCount;
            writes.emplace_back(std::move(w));
            break;
        }
        case Kind::Snapshot: {
            SnapshotRecord s;
            qint32 executionCount = 0;
            in >> s.contextId >> executionCount >> s.format >> s.data >> s.error >> s.lost
               >> s.createdAt;
            s.executionCount = executionCount;
            writes.emplace_back(SaveSnapshot{std::move(s)});
            break;
        }
        default:
            return unreadable(QStringLiteral("unknown write %1").arg(kind));
        }
    }
    if (in.status() != QDataStream::Ok || !in.atEnd() || writes.size() != count)
        return unreadable(QStringLiteral("it ends early or goes on"));
    return writes;
}

} // namespace replhost::storage
