// SPDX-License-Identifier: Apache-2.0
#include "httpexchange.h"

#include "connectionguard.h"
#include "errorstatus.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTcpSocket>

#include <sys/socket.h>
#include <sys/uio.h>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcExchange, "replhost.http.exchange", QtInfoMsg)

HttpExchange::HttpExchange(QTcpSocket *socket, HttpRequest request, bool closeAfter,
                           ConnectionGuard *guard)
    : m_request(std::move(request)),
      m_socket(socket),
      m_guard(guard),
      m_closeAfter(closeAfter)
{
}

HttpExchange::~HttpExchange()
{
    if (m_completed || !m_guard || m_guard->isClosing() || !isConnected())
        return;
    // An answer that was started but not finished (or never started) cannot be completed in
    // order any more; ending the connection is the only honest signal to the client.
    qCWarning(lcExchange).noquote() << "no complete answer for" << m_request.method
                                    << m_request.path << "- closing the connection";
    m_guard->abortConnection();
}

void HttpExchange::addHeader(const QByteArray &name, const QByteArray &value)
{
    m_extraHeaders.emplaceBack(name, value);
}

bool HttpExchange::isConnected() const
{
    return m_socket && m_socket->state() == QAbstractSocket::ConnectedState;
}

HeaderList HttpExchange::commonHeaders() const
{
    HeaderList headers = m_extraHeaders;
    if (m_closeAfter)
        headers.emplaceBack("Connection", "close");
    return headers;
}

bool HttpExchange::write(const QByteArray &bytes)
{
    if (!isConnected())
        return false;
    return m_socket->write(bytes) == bytes.size();
}

bool HttpExchange::writeAnswer(const QByteArray &head, const QByteArray &body)
{
    if (!isConnected())
        return false;
    // A whole answer is written to the kernel at once when nothing is queued before it. Through
    // QTcpSocket it would wait for the next pass of the event loop, and enabling and disabling
    // the socket's write notifier for it wakes the loop twice more. Head and body go as two
    // pieces of one sendmsg(), not copied into one array first. What the kernel does not take
    // (a full send buffer) is queued on the socket, which keeps the order.
    qsizetype sent = 0;
    if (m_socket->bytesToWrite() == 0) {
        iovec pieces[2] = {{const_cast<char *>(head.constData()), size_t(head.size())},
                           {const_cast<char *>(body.constData()), size_t(body.size())}};
        msghdr message{};
        message.msg_iov = pieces;
        message.msg_iovlen = body.isEmpty() ? 1 : 2;
        const ssize_t n = ::sendmsg(int(m_socket->socketDescriptor()), &message,
                                    MSG_NOSIGNAL | MSG_DONTWAIT);
        // An error other than a full buffer is left for the socket to meet and report.
        if (n > 0)
            sent = n;
    }
    const auto queue = [this](const QByteArray &bytes, qsizetype from) {
        const qsizetype rest = bytes.size() - from;
        return rest <= 0 || m_socket->write(bytes.constData() + from, rest) == rest;
    };
    if (sent < head.size())
        return queue(head, sent) && queue(body, 0);
    return queue(body, sent - head.size());
}

void HttpExchange::complete()
{
    if (m_completed)
        return;
    m_completed = true;
    if (m_guard)
        m_guard->endResponse(m_closeAfter);
}

void HttpExchange::answering(int status)
{
    m_answered = true;
    if (m_observer)
        m_observer(m_route, status);
}

void HttpExchange::send(int status, const QByteArray &contentType, const QByteArray &body)
{
    if (m_answered) {
        qCWarning(lcExchange) << "second answer to one request ignored";
        return;
    }
    answering(status);
    HeaderList headers = commonHeaders();
    if (!contentType.isEmpty())
        headers.prepend({QByteArrayLiteral("Content-Type"), contentType});
    // 204 and 1xx answers have no body and must not carry Content-Length (RFC 9110 §8.6).
    if (status == 204)
        writeAnswer(HttpResponse::head(status, headers));
    else if (m_request.method == "HEAD")
        writeAnswer(HttpResponse::head(status, headers, body.size()));
    else
        writeAnswer(HttpResponse::head(status, headers, body.size()), body);
    complete();
}

void HttpExchange::sendJson(int status, const QJsonValue &json)
{
    QByteArray body;
    if (json.isArray())
        body = QJsonDocument(json.toArray()).toJson(QJsonDocument::Compact);
    else
        body = QJsonDocument(json.toObject()).toJson(QJsonDocument::Compact);
    body += '\n';
    send(status, "application/json", body);
}

void HttpExchange::sendEmpty(int status)
{
    send(status, {}, {});
}

void HttpExchange::sendError(int status, const QString &code, const QString &message)
{
    if (status == 401)
        addHeader("WWW-Authenticate", "Bearer");
    send(status, "application/json", HttpResponse::errorBody(code, message));
}

void HttpExchange::sendError(const Error &error)
{
    const QString code = error.code.isEmpty() ? QStringLiteral("internal") : error.code;
    sendError(ErrorStatus::forCode(code), code, error.message);
}

bool HttpExchange::beginStream(int status, const HeaderList &headers)
{
    if (m_answered) {
        qCWarning(lcExchange) << "second answer to one request ignored";
        return false;
    }
    answering(status);
    if (!m_chunkedAllowed)
        m_closeAfter = true;  // the end of the body is the end of the connection
    HeaderList all = headers + commonHeaders();
    if (m_chunkedAllowed)
        all.emplaceBack("Transfer-Encoding", "chunked");
    const bool ok = write(HttpResponse::head(status, all));
    if (ok)
        m_socket->flush();  // the client sees the status at once, before the first event
    return ok;
}

bool HttpExchange::beginBody(int status, const HeaderList &headers, qint64 length)
{
    if (m_answered) {
        qCWarning(lcExchange) << "second answer to one request ignored";
        return false;
    }
    answering(status);
    m_fixedLength = true;
    HeaderList all = headers + commonHeaders();
    all.emplaceBack("Content-Length", QByteArray::number(length));
    const bool ok = write(HttpResponse::head(status, all));
    if (m_request.method == "HEAD" || length == 0) {
        complete();
        return ok;
    }
    return ok;
}

bool HttpExchange::writeChunk(const QByteArray &data)
{
    if (!m_answered || m_completed || data.isEmpty())
        return isConnected();
    // The frame around the data goes in separate writes to the socket's buffer, not into one
    // concatenation: a chunk can hold tens of kilobytes of output, which would be copied again.
    const bool framed = m_chunkedAllowed && !m_fixedLength;
    const bool ok = (!framed || write(QByteArray::number(data.size(), 16) + "\r\n")) && write(data)
            && (!framed || write(QByteArrayLiteral("\r\n")));
    if (ok)
        m_socket->flush();
    return ok;
}

void HttpExchange::endStream()
{
    if (!m_answered || m_completed)
        return;
    if (m_chunkedAllowed && !m_fixedLength)
        write(QByteArrayLiteral("0\r\n\r\n"));
    complete();
}

} // namespace replhost::http
