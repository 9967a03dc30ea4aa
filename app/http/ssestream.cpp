// SPDX-License-Identifier: Apache-2.0
#include "ssestream.h"

#include "httpexchange.h"

#include "core/jsonwriter.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>

#include <climits>

namespace replhost::http {

QByteArray SseStream::format(qint64 id, const QByteArray &type, const QByteArray &data)
{
    QByteArray text;
    text.reserve(data.size() + type.size() + 32);
    if (id >= 0)
        text += "id: " + QByteArray::number(id) + '\n';
    text += "event: " + type + '\n';
    // Compact JSON has no raw newlines, so the split (a copy of each line) is for other data only.
    if (!data.contains('\n')) {
        text += "data: ";
        text += data;
        text += "\n\n";
        return text;
    }
    for (const QByteArray &line : data.split('\n'))
        text += "data: " + line + '\n';
    text += '\n';
    return text;
}

Result<int> SseStream::firstIndexFor(const HttpRequest &request)
{
    QByteArray last = request.header("last-event-id").trimmed();
    if (last.isEmpty())
        last = request.query().queryItemValue(QStringLiteral("last_event_id")).toLatin1().trimmed();
    if (last.isEmpty())
        return 0;
    bool ok = false;
    const int index = last.toInt(&ok);
    if (!ok || index < -1 || index == INT_MAX)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("Last-Event-ID must be the id of an event of this stream "
                                        "(an integer from 0), not '%1'")
                                 .arg(QString::fromLatin1(last)));
    return index + 1;
}

void SseStream::start(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                      int keepAliveMs, int firstIndex, StreamLimiter::Lease lease)
{
    auto *stream = new SseStream(std::move(exchange), std::move(execution), keepAliveMs,
                                 firstIndex, std::move(lease));
    stream->begin({{"Content-Type", "text/event-stream; charset=utf-8"},
                   {"Cache-Control", "no-cache"},
                   {"X-Accel-Buffering", "no"}});
}

SseStream::SseStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                     int keepAliveMs, int firstIndex, StreamLimiter::Lease lease)
    : ExecutionStream(std::move(exchange), std::move(execution), keepAliveMs, std::move(lease),
                      firstIndex)
{
}

QByteArray SseStream::preamble()
{
    const core::ExecutionPtr &run = execution();
    QJsonObject head{{QStringLiteral("id"), run->id()},
                     {QStringLiteral("context_id"), run->contextId().isEmpty()
                              ? QJsonValue() : QJsonValue(run->contextId())},
                     {QStringLiteral("workspace"), run->workspace()},
                     {QStringLiteral("language"), run->language()},
                     {QStringLiteral("status"), run->status()}};
    if (run->executionCount() > 0)
        head.insert(QStringLiteral("execution_count"), run->executionCount());
    return format(-1, "execution", QJsonDocument(head).toJson(QJsonDocument::Compact));
}

QByteArray SseStream::translate(const sdk::Event &event, int index)
{
    const QByteArray type = event.type.isEmpty() ? QByteArrayLiteral("event") : event.type.toUtf8();
    return format(index, type, core::JsonWriter::eventJson(event));
}

QByteArray SseStream::keepAlive()
{
    return QByteArrayLiteral(": keep-alive\n\n");
}

} // namespace replhost::http
