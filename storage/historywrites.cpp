// SPDX-License-Identifier: Apache-2.0
#include "historywrites.h"

#include <QDataStream>
#include <QIODevice>
#include <QtEndian>

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

namespace {

// Writes what QDataStream (kStreamVersion, big-endian) writes for the same values, straight into
// one buffer: encodeWrites() runs on the engine thread for every run's end, where a QDataStream
// costs a QIODevice call per field. decodeWrites() reads it back with QDataStream, as it reads
// records written by earlier versions, which used one.
class Encoder {
public:
    explicit Encoder(qsizetype reserve) { m_out.reserve(reserve); }

    Encoder &operator<<(quint8 v)
    {
        m_out.append(char(v));
        return *this;
    }
    Encoder &operator<<(bool v) { return *this << quint8(v ? 1 : 0); }
    Encoder &operator<<(qint32 v) { return *this << quint32(v); }
    Encoder &operator<<(quint32 v)
    {
        char bytes[4];
        qToBigEndian(v, bytes);
        m_out.append(bytes, sizeof bytes);
        return *this;
    }
    Encoder &operator<<(qint64 v)
    {
        char bytes[8];
        qToBigEndian(quint64(v), bytes);
        m_out.append(bytes, sizeof bytes);
        return *this;
    }
    // A null string or array is QDataStream's null marker; an empty one has length 0.
    Encoder &operator<<(const QString &v)
    {
        if (v.isNull())
            return *this << kNull;
        *this << quint32(v.size() * sizeof(char16_t));
        const qsizetype at = m_out.size();
        m_out.resize(at + v.size() * qsizetype(sizeof(char16_t)));
        qToBigEndian<char16_t>(v.utf16(), v.size(), m_out.data() + at);
        return *this;
    }
    Encoder &operator<<(const QByteArray &v)
    {
        if (v.isNull())
            return *this << kNull;
        *this << quint32(v.size());
        m_out.append(v);
        return *this;
    }

    QByteArray take() { return std::move(m_out); }

private:
    static constexpr quint32 kNull = 0xffffffff;
    QByteArray m_out;
};

qsizetype stringBytes(const QString &s) { return 4 + s.size() * 2; }

// About what a write takes encoded, so that the buffer is allocated once.
qsizetype sizeHint(const Write &write)
{
    return std::visit(
        Overloaded{
            [](const InsertExecution &w) {
                const ExecutionRecord &e = w.execution;
                return 40 + stringBytes(e.id) + stringBytes(e.contextId) + stringBytes(e.code)
                        + stringBytes(e.status);
            },
            [](const AppendEvent &w) {
                return 16 + stringBytes(w.event.executionId) + w.event.json.size();
            },
            [](const FinishExecution &w) {
                return 32 + stringBytes(w.id) + stringBytes(w.status) + stringBytes(w.inputs);
            },
            [](const UpdateContextUsage &w) {
                return 20 + stringBytes(w.contextId) + stringBytes(w.cwd);
            },
            [](const SaveSnapshot &w) {
                const SnapshotRecord &s = w.snapshot;
                return 32 + stringBytes(s.contextId) + stringBytes(s.format) + s.data.size()
                        + stringBytes(s.error) + stringBytes(s.lost);
            },
        },
        write);
}

} // namespace

QByteArray encodeWrites(std::vector<Write>::const_iterator first,
                        std::vector<Write>::const_iterator last)
{
    static_assert(kStreamVersion == QDataStream::Qt_6_4,
                  "Encoder writes Qt 6.4's format; decodeWrites reads kStreamVersion");
    qsizetype reserve = 5;
    for (auto it = first; it != last; ++it)
        reserve += sizeHint(*it);
    Encoder out(reserve);
    out << kFormat << quint32(last - first);
    for (auto it = first; it != last; ++it) {
        std::visit(Overloaded{
                       [&out](const InsertExecution &w) {
                           const ExecutionRecord &e = w.execution;
                           out << quint8(Kind::Insert) << e.id << e.contextId << e.code
                               << e.status << qint32(e.executionCount) << qint64(e.startedAt)
                               << qint64(e.durationMs) << qint64(e.outputBytes) << e.truncated
                               << e.replay;
                       },
                       [&out](const AppendEvent &w) {
                           Q_ASSERT(!w.makeJson);  // materialize() first
                           out << quint8(Kind::Event) << w.event.executionId
                               << qint32(w.event.seq) << w.event.json;
                       },
                       [&out](const FinishExecution &w) {
                           out << quint8(w.inputs.isEmpty() ? Kind::Finish : Kind::FinishWithInputs)
                               << w.id << w.status << qint64(w.durationMs)
                               << qint64(w.outputBytes) << w.truncated;
                           if (!w.inputs.isEmpty())
                               out << w.inputs;
                       },
                       [&out](const UpdateContextUsage &w) {
                           out << quint8(Kind::Usage) << w.contextId << qint32(w.executionCount)
                               << w.cwd << qint64(w.lastUsedAt);
                       },
                       [&out](const SaveSnapshot &w) {
                           const SnapshotRecord &s = w.snapshot;
                           out << quint8(Kind::Snapshot) << s.contextId
                               << qint32(s.executionCount) << s.format << s.data << s.error
                               << s.lost << qint64(s.createdAt);
                       },
                   },
                   *it);
    }
    return out.take();
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
