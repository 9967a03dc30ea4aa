// SPDX-License-Identifier: Apache-2.0
#include "httpexchange.h"

#include "connectionguard.h"
#include "errorstatus.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcExchange, "replhost.http.exchange", QtInfoMsg)

HttpExchange::HttpExchange(GuardedResponder responder, HttpRequest request, bool closeAfter,
                           ConnectionGuard *guard)
    : m_request(std::move(request)),
      m_responder(std::move(responder)),
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
    return m_responder.isConnected();
}

HeaderList HttpExchange::commonHeaders() const
{
    HeaderList headers = m_extraHeaders;
    headers.emplaceBack("Date", HttpResponse::date());
    if (const QByteArray id = HttpResponse::requestId(m_request.headers); !id.isEmpty())
        headers.emplaceBack("X-Request-ID", id);
    if (m_closeAfter)
        headers.emplaceBack("Connection", "close");
    return headers;
}

bool HttpExchange::writeHead(int status, const HeaderList &headers)
{
    // The status line is Qt's (with its reason phrases); the fields go in one write.
    return m_responder.writeStatusLine(status)
            && m_responder.writeHeaders(headers, commonHeaders());
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
    HeaderList headers;
    if (!contentType.isEmpty())
        headers.emplaceBack(QByteArrayLiteral("Content-Type"), contentType);
    // 204 and 1xx answers have no body and must not carry Content-Length (RFC 9110 §8.6); an
    // answer to HEAD has the GET answer's Content-Length and no body.
    if (status != 204)
        headers.emplaceBack(QByteArrayLiteral("Content-Length"), QByteArray::number(body.size()));
    if (writeHead(status, headers))
        m_responder.writeBody(status == 204 || isHead() ? QByteArray() : body);
    // A complete answer goes to the kernel now: the next request of this connection is looked
    // at only when this one is answered, and a client waits for it.
    m_responder.flush();
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
    HeaderList all = headers;
    if (m_chunkedAllowed)
        all.emplaceBack("Transfer-Encoding", "chunked");
    const bool ok = writeHead(status, all) && m_responder.writeBody({});
    m_responder.flush();  // the client sees the status at once, before the first event
    if (isHead())
        complete();
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
    HeaderList all = headers;
    all.emplaceBack("Content-Length", QByteArray::number(length));
    const bool ok = writeHead(status, all) && m_responder.writeBody({});
    if (isHead() || length == 0) {
        m_responder.flush();
        complete();
    }
    return ok;
}

bool HttpExchange::writeChunk(const QByteArray &data)
{
    if (!m_answered || m_completed)
        return !isHead() && isConnected();
    if (data.isEmpty())
        return isConnected();
    // The frame around the data goes in separate writes to the socket's buffer, not into one
    // concatenation: a chunk can hold tens of kilobytes of output, which would be copied again.
    const bool framed = m_chunkedAllowed && !m_fixedLength;
    const bool ok = (!framed || m_responder.writeRaw(QByteArray::number(data.size(), 16) + "\r\n"))
            && m_responder.writeRaw(data)
            && (!framed || m_responder.writeRaw(QByteArrayLiteral("\r\n")));
    m_responder.flush();
    return ok;
}

void HttpExchange::endStream()
{
    if (!m_answered || m_completed)
        return;
    if (m_chunkedAllowed && !m_fixedLength)
        m_responder.writeRaw(QByteArrayLiteral("0\r\n\r\n"));
    m_responder.flush();
    complete();
}

} // namespace replhost::http
