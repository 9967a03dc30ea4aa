// SPDX-License-Identifier: Apache-2.0
#include "mcpanswer.h"

#include "httpexchange.h"
#include "mcpmessage.h"

#include <QTcpSocket>

namespace replhost::http {

McpAnswer::McpAnswer(std::shared_ptr<HttpExchange> exchange, bool streamable, int keepAliveMs,
                     StreamLimiter::Lease lease)
    : m_exchange(std::move(exchange)), m_lease(std::move(lease)), m_streamable(streamable)
{
    m_keepAlive.setInterval(keepAliveMs);
    connect(&m_keepAlive, &QTimer::timeout, this, [this] {
        if (!m_exchange->writeChunk(QByteArrayLiteral(": keep-alive\n\n")))
            finish();
    });
}

McpAnswer::~McpAnswer()
{
    // An answer dropped unanswered (its request was never responded to): the exchange must not
    // be left without one.
    if (!m_done && m_exchange && !m_exchange->isAnswered())
        m_exchange->sendEmpty(202);
    else if (m_streaming && !m_done)
        m_exchange->endStream();
}

QByteArray McpAnswer::event(const QJsonObject &message)
{
    return QByteArrayLiteral("event: message\ndata: ") + McpMessage::compact(message) + "\n\n";
}

bool McpAnswer::begin()
{
    if (m_streaming)
        return true;
    if (!m_exchange->beginStream(200, {{"Content-Type", "text/event-stream"},
                                       {"Cache-Control", "no-cache"},
                                       {"X-Accel-Buffering", "no"}}))
        return false;
    m_streaming = true;
    if (m_keepAlive.interval() > 0)
        m_keepAlive.start();
    return true;
}

void McpAnswer::notify(const QJsonObject &notification)
{
    if (m_done || !m_streamable)
        return;
    if (!begin() || !m_exchange->writeChunk(event(notification)))
        finish();
    else if (m_keepAlive.isActive())
        m_keepAlive.start();  // quiet from now on
}

void McpAnswer::respond(const QJsonObject &response, int status)
{
    if (m_done)
        return;
    if (m_streaming) {
        m_exchange->writeChunk(event(response));
        finish();
        return;
    }
    m_done = true;
    m_exchange->send(status, QByteArrayLiteral("application/json"), McpMessage::compact(response));
    m_lease.reset();
}

void McpAnswer::cancelWhenClientLeaves(const McpCallPtr &call)
{
    const std::weak_ptr<McpCall> weak = call;
    whenClientLeaves([weak] {
        if (const McpCallPtr open = weak.lock())
            open->cancel();
    });
}

void McpAnswer::whenClientLeaves(std::function<void()> handler)
{
    const auto left = [this, handler = std::move(handler)] {
        if (!m_done)
            handler();
    };
    QTcpSocket *socket = m_exchange->socket();
    if (!socket || !m_exchange->isConnected()) {
        left();
        return;
    }
    connect(socket, &QAbstractSocket::disconnected, this, left);
    connect(socket, &QObject::destroyed, this, left);
}

void McpAnswer::abandon()
{
    if (m_done)
        return;
    if (m_streaming) {
        finish();
        return;
    }
    m_done = true;
    m_exchange->sendEmpty(202);
    m_lease.reset();
}

void McpAnswer::finish()
{
    if (m_done)
        return;
    m_done = true;
    m_keepAlive.stop();
    m_exchange->endStream();
    m_lease.reset();
}

} // namespace replhost::http
