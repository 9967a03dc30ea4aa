// SPDX-License-Identifier: Apache-2.0
#include "execution.h"

#include <QJsonDocument>
#include <QThread>

namespace replhost::core {

using sdk::Event;

namespace {

// What an event holds in memory, roughly: strings are UTF-16, and every event carries a JSON
// object and a few strings besides its text. Only the window's size depends on it.
constexpr qint64 kEventOverheadBytes = 256;

qint64 stringBytes(const QJsonValue &value)
{
    if (value.isString())
        return 2 * value.toString().size();
    qint64 bytes = 0;
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            bytes += stringBytes(it.value());
    } else if (value.isArray()) {
        for (const QJsonValue &item : value.toArray())
            bytes += stringBytes(item);
    }
    return bytes;
}

} // namespace

qint64 Execution::memoryEstimate(const Event &event)
{
    switch (event.kind) {
    case Event::Kind::Stream:
        return kEventOverheadBytes + stringBytes(event.fields.value(QLatin1String("text")));
    case Event::Kind::Display:
    case Event::Kind::Result:
    case Event::Kind::Error:
        return kEventOverheadBytes + stringBytes(event.fields);
    default:
        return kEventOverheadBytes;
    }
}

namespace {

qint64 utf8Length(QStringView text)
{
    qint64 bytes = text.size();
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char16_t c = text[i].unicode();
        if (c < 0x80)
            continue;
        if (c < 0x800) {
            bytes += 1;
        } else if (QChar::isHighSurrogate(c) && i + 1 < text.size()
                   && QChar::isLowSurrogate(text[i + 1].unicode())) {
            bytes += 2;  // four bytes for the pair's two units
            ++i;
        } else {
            bytes += 2;
        }
    }
    return bytes;
}

qint64 outputOf(const Event &event)
{
    if (event.kind == Event::Kind::Stream)
        return utf8Length(event.fields.value(QLatin1String("text")).toString());
    if (event.kind == Event::Kind::Display || event.kind == Event::Kind::Result)
        return QJsonDocument(event.fields.value(QLatin1String("data")).toObject())
                .toJson(QJsonDocument::Compact).size();
    return 0;
}

} // namespace

Execution::Execution(QString id, QString workspace, QString contextId, QString language,
                     QString code, QObject *parent)
    : QObject(parent)
    , m_id(std::move(id))
    , m_workspace(std::move(workspace))
    , m_contextId(std::move(contextId))
    , m_language(std::move(language))
    , m_code(std::move(code))
    , m_startedAt(QDateTime::currentDateTimeUtc())
{
    // Room for the `started` and `done` every run has: one allocation, not a second to grow.
    m_recent.reserve(2);
}

void Execution::markRunning()
{
    m_status = QStringLiteral("running");
    m_startedAt = QDateTime::currentDateTimeUtc();
}

QString Execution::inputsJson() const
{
    if (m_inputs.isEmpty())
        return {};
    return QString::fromUtf8(QJsonDocument(m_inputs).toJson(QJsonDocument::Compact));
}

void Execution::keepRecentOnly(EventArchive archive, qint64 windowBytes)
{
    m_archive = std::move(archive);
    m_windowBytes = std::max<qint64>(0, windowBytes);
    trimWindow();
}

void Execution::trimWindow()
{
    if (m_windowBytes < 0)
        return;
    // The newest event always stays, so a live subscriber finds what it was just told about.
    while (m_recentBytes > m_windowBytes && m_recent.size() > 1) {
        m_recentBytes -= memoryEstimate(m_recent.constFirst());
        m_recent.removeFirst();  // O(1) in Qt 6: the list keeps free space at its front
        ++m_firstRecent;
    }
}

void Execution::addEvent(const Event &event, qint64 durationMs)
{
    if (m_finished)
        return;  // nothing follows Done
    m_recent.append(event);
    m_outputBytes += outputOf(event);
    if (m_windowBytes >= 0)
        m_recentBytes += memoryEstimate(event);
    if (event.kind == Event::Kind::InputRequest) {
        m_waitingForInput = true;
        m_inputPassword = event.fields.value(QLatin1String("password")).toBool();
    } else if (m_waitingForInput && event.type == QLatin1String("input_reply")) {
        m_waitingForInput = false;
        m_inputs.append(event.fields);
    }
    if (event.kind == Event::Kind::Done) {
        m_waitingForInput = false;
        m_finished = true;
        m_status = event.fields.value(QLatin1String("status")).toString();
        m_durationMs = durationMs >= 0 ? durationMs
                                       : m_startedAt.msecsTo(QDateTime::currentDateTimeUtc());
    }
    const int index = eventCount() - 1;
    // Trimmed after the signal, so that the event is still in memory for its subscribers.
    const Event &added = m_recent.constLast();
    ++m_emitting;
    emit eventAdded(added, index);
    trimWindow();
    if (m_finished)
        emit finished();
    --m_emitting;
}

void Execution::dispose(Execution *execution)
{
    if (execution->m_emitting > 0 || execution->thread() != QThread::currentThread())
        execution->deleteLater();
    else
        delete execution;
}

Result<QList<Event>> Execution::eventRange(int from, int maxCount) const
{
    if (from < 0)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("event index %1 is negative").arg(from));
    const int end = eventCount();
    const int to = maxCount < 0 ? end : int(std::min<qint64>(end, qint64(from) + maxCount));
    if (from >= to)
        return QList<Event>();
    if (from >= m_firstRecent)
        return m_recent.mid(from - m_firstRecent, to - from);
    if (!m_archive)
        return makeError(QStringLiteral("internal"),
                         QStringLiteral("events before %1 of execution %2 left memory without an "
                                        "archive").arg(m_firstRecent).arg(m_id));
    // What left memory comes from the archive; what is still here is added from memory.
    auto archived = m_archive(m_id, from, std::min(to, m_firstRecent));
    if (!archived)
        return archived.error();
    if (archived->isEmpty())
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("events %1 to %2 of execution %3 are missing from the "
                                        "history").arg(from).arg(m_firstRecent - 1).arg(m_id));
    if (to > m_firstRecent && from + archived->size() == m_firstRecent)
        archived->append(m_recent.mid(0, to - m_firstRecent));
    return archived;
}

void Execution::restore(const QString &status, int executionCount, const QDateTime &startedAt,
                        qint64 durationMs, const QList<Event> &events)
{
    m_status = status;
    m_executionCount = executionCount;
    m_startedAt = startedAt;
    m_durationMs = durationMs;
    m_recent = events;
    m_firstRecent = 0;
    m_outputBytes = 0;
    for (const Event &event : events)
        m_outputBytes += outputOf(event);
    m_finished = true;
}

} // namespace replhost::core
