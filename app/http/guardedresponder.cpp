// SPDX-License-Identifier: Apache-2.0
#include "guardedresponder.h"

namespace replhost::http {

GuardedResponder::GuardedResponder(QHttpServerResponder &&responder, QTcpSocket *socket)
    : m_responder(std::move(responder)), m_socket(socket)
{
}

bool GuardedResponder::isConnected() const
{
    return m_responder && m_socket && m_socket->isOpen()
            && m_socket->state() == QAbstractSocket::ConnectedState;
}

bool GuardedResponder::writeStatusLine(int status)
{
    if (!isConnected())
        return false;
    m_responder->writeStatusLine(QHttpServerResponder::StatusCode(status));
    return true;
}

bool GuardedResponder::writeHeaders(const HeaderList &first, const HeaderList &second)
{
    if (!isConnected())
        return false;
    const QByteArray lines = HttpResponse::fieldLines(first, second);
    return m_socket->write(lines) == lines.size();
}

bool GuardedResponder::writeBody(const QByteArray &bytes)
{
    if (!isConnected())
        return false;
    m_responder->writeBody(bytes);
    return true;
}

bool GuardedResponder::writeRaw(const QByteArray &bytes)
{
    if (!isConnected())
        return false;
    return m_socket->write(bytes) == bytes.size();
}

void GuardedResponder::flush()
{
    if (isConnected())
        m_socket->flush();
}

} // namespace replhost::http
