// SPDX-License-Identifier: Apache-2.0
#include "ssestream.h"

#include "httpexchange.h"

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
    // Compact JSON has no raw newlines; split anyway so any data stays valid SSE.
    for (const QByteArray &line : data.split('\n'))
        text += "data: " + line + '\n';
    text += '\n';
    return text;
}

Result<int> SseStream::firstIndexFor(const HttpRequest &request)
{
    QByteArray last = request.header("last-event-id").trimmed();
    if (last.isEmpty())
        last = request.query.queryItemValue(QStringLiteral("last_event_id")).toLatin1().trimmed();
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
    stream->begin();
}

SseStream::SseStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                     int keepAliveMs, int firstIndex, StreamLimiter::Lease lease)
    : m_exchange(std::move(exchange)), m_execution(std::move(execution)),
      m_socket(m_exchange->socket()), m_lease(std::move(lease)),
      m_nextIndex(std::max(0, firstIndex))
{
    m_keepAlive.setInterval(keepAliveMs);
    connect(&m_keepAlive, &QTimer::timeout, this, &SseStream::sendKeepAlive);
}

void SseStream::begin()
{
    if (!m_socket || !m_exchange->isConnected()) {
        stop();
        return;
    }
    connect(m_socket, &QAbstractSocket::disconnected, this, &SseStream::stop);
    connect(m_socket, &QObject::destroyed, this, &SseStream::stop);

    if (!m_exchange->beginStream(200, {{"Content-Type", "text/event-stream; charset=utf-8"},
                                       {"Cache-Control", "no-cache"},
                                       {"X-Accel-Buffering", "no"}})) {
        stop();
        return;
    }

    QJsonObject head{{QStringLiteral("id"), m_execution->id()},
                     {QStringLiteral("context_id"), m_execution->contextId().isEmpty()
                              ? QJsonValue() : QJsonValue(m_execution->contextId())},
                     {QStringLiteral("workspace"), m_execution->workspace()},
                     {QStringLiteral("language"), m_execution->language()},
                     {QStringLiteral("status"), m_execution->status()}};
    if (m_execution->executionCount() > 0)
        head.insert(QStringLiteral("execution_count"), m_execution->executionCount());
    if (!send(format(-1, "execution", QJsonDocument(head).toJson(QJsonDocument::Compact))))
        return;

    // Subscribe first, then replay: everything runs in one thread, so no event can slip in
    // between, and the index check drops any event delivered twice.
    connect(m_execution.get(), &core::Execution::eventAdded, this, &SseStream::onEvent);
    connect(m_execution.get(), &core::Execution::finished, this, [this] {
        // The Done event normally ends the stream; this covers an execution that finishes
        // without one reaching us.
        if (!m_stopped)
            finish();
    });
    const QList<sdk::Event> past = m_execution->events();
    for (int i = m_nextIndex; i < past.size() && !m_stopped; ++i)
        onEvent(past[i], i);
    if (m_stopped)
        return;
    if (m_execution->isFinished()) {
        finish();
        return;
    }
    m_keepAlive.start();
}

void SseStream::onEvent(const sdk::Event &event, int index)
{
    if (m_stopped || index < m_nextIndex)
        return;
    m_nextIndex = index + 1;
    const QByteArray type = event.type.isEmpty() ? QByteArrayLiteral("event") : event.type.toUtf8();
    if (!send(format(index, type, QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact))))
        return;
    m_keepAlive.start();  // the keep-alive is for silence only
    if (event.kind == sdk::Event::Kind::Done)
        finish();
}

void SseStream::sendKeepAlive()
{
    send(QByteArrayLiteral(": keep-alive\n\n"));
}

bool SseStream::send(const QByteArray &text)
{
    if (m_stopped)
        return false;
    if (!m_exchange->writeChunk(text)) {
        stop();
        return false;
    }
    return true;
}

void SseStream::finish()
{
    if (m_stopped)
        return;
    m_exchange->endStream();
    stop();
}

void SseStream::stop()
{
    if (m_stopped)
        return;
    m_stopped = true;
    m_keepAlive.stop();
    m_lease.reset();  // the client may open another stream at once
    if (m_execution)
        disconnect(m_execution.get(), nullptr, this, nullptr);
    deleteLater();
}

} // namespace replhost::http
