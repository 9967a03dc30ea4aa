// SPDX-License-Identifier: Apache-2.0
#include "execution.h"

#include <QJsonArray>

namespace replhost::core {

using sdk::Event;

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
}

void Execution::markRunning()
{
    m_status = QStringLiteral("running");
    m_startedAt = QDateTime::currentDateTimeUtc();
}

void Execution::addEvent(const Event &event)
{
    if (m_finished)
        return;  // nothing follows Done
    m_events.append(event);
    if (event.kind == Event::Kind::Done) {
        m_finished = true;
        m_status = event.fields.value(QLatin1String("status")).toString();
        m_durationMs = m_startedAt.msecsTo(QDateTime::currentDateTimeUtc());
    }
    emit eventAdded(m_events.constLast(), int(m_events.size()) - 1);
    if (m_finished)
        emit finished();
}

void Execution::restore(const QString &status, int executionCount, const QDateTime &startedAt,
                        qint64 durationMs, const QList<Event> &events)
{
    m_status = status;
    m_executionCount = executionCount;
    m_startedAt = startedAt;
    m_durationMs = durationMs;
    m_events = events;
    m_finished = true;
}

QJsonObject Execution::toJson(bool withEvents) const
{
    QString out, err;
    QJsonObject result;
    QJsonValue error;
    QJsonArray displays, events;
    bool stateLost = false;
    QJsonValue cwd;
    QJsonValue exitCode;
    for (const Event &e : m_events) {
        switch (e.kind) {
        case Event::Kind::Stream:
            (e.fields.value(QLatin1String("name")).toString() == QLatin1String("stderr") ? err : out)
                += e.fields.value(QLatin1String("text")).toString();
            break;
        case Event::Kind::Result:
            result = e.fields.value(QLatin1String("data")).toObject();
            break;
        case Event::Kind::Display:
            displays.append(e.fields.value(QLatin1String("data")));
            break;
        case Event::Kind::Error:
            error = QJsonObject{{QStringLiteral("ename"), e.fields.value(QLatin1String("ename"))},
                                {QStringLiteral("evalue"), e.fields.value(QLatin1String("evalue"))},
                                {QStringLiteral("traceback"), e.fields.value(QLatin1String("traceback"))}};
            break;
        case Event::Kind::Done:
            stateLost = e.fields.value(QLatin1String("state_lost")).toBool();
            cwd = e.fields.value(QLatin1String("cwd"));
            exitCode = e.fields.value(QLatin1String("exit_code"));
            break;
        default:
            break;
        }
        if (withEvents)
            events.append(e.toJson());
    }
    QJsonObject json{
        {QStringLiteral("id"), m_id},
        {QStringLiteral("workspace"), m_workspace},
        {QStringLiteral("context_id"), m_contextId.isEmpty() ? QJsonValue() : QJsonValue(m_contextId)},
        {QStringLiteral("language"), m_language},
        {QStringLiteral("status"), m_status},
        {QStringLiteral("execution_count"), m_executionCount},
        {QStringLiteral("started_at"), m_startedAt.toString(Qt::ISODateWithMs)},
        {QStringLiteral("duration_ms"), m_durationMs},
        {QStringLiteral("stdout"), out},
        {QStringLiteral("stderr"), err},
        {QStringLiteral("result"), result.isEmpty() ? QJsonValue() : QJsonValue(result)},
        {QStringLiteral("displays"), displays},
        {QStringLiteral("error"), error},
        {QStringLiteral("state_lost"), stateLost},
        {QStringLiteral("code"), m_code},
    };
    if (!cwd.isUndefined())
        json.insert(QStringLiteral("cwd"), cwd);
    if (!exitCode.isUndefined())
        json.insert(QStringLiteral("exit_code"), exitCode);
    if (withEvents)
        json.insert(QStringLiteral("events"), events);
    return json;
}

} // namespace replhost::core
