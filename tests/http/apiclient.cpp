// SPDX-License-Identifier: Apache-2.0
#include "apiclient.h"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/StreamCopier.h>

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QDebug>
#include <QRegularExpression>
#include <QThread>

#include <sstream>

namespace {

std::string str(const QByteArray &bytes)
{
    return std::string(bytes.constData(), size_t(bytes.size()));
}

} // namespace

ApiClient::ApiClient(quint16 port, QByteArray token) : m_port(port), m_token(std::move(token)) {}

QByteArray ApiClient::Response::header(const QByteArray &name) const
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

QJsonObject ApiClient::Response::object() const
{
    return QJsonDocument::fromJson(body).object();
}

QJsonArray ApiClient::Response::array() const
{
    return QJsonDocument::fromJson(body).array();
}

QJsonObject ApiClient::Event::json() const
{
    return QJsonDocument::fromJson(data).object();
}

ApiClient::Response ApiClient::request(const QByteArray &method, const QString &path,
                                       const QByteArray &body, const Headers &headers,
                                       bool withToken) const
{
    Response response;
    try {
        Poco::Net::HTTPClientSession connection("127.0.0.1", m_port);
        connection.setTimeout(Poco::Timespan(60, 0));
        Poco::Net::HTTPRequest request(str(method), path.toStdString(),
                                       Poco::Net::HTTPMessage::HTTP_1_1);
        bool haveAuthorization = false;
        bool haveContentType = false;
        for (const auto &[name, value] : headers) {
            request.add(str(name), str(value));
            haveAuthorization = haveAuthorization || name.compare("authorization", Qt::CaseInsensitive) == 0;
            haveContentType = haveContentType || name.compare("content-type", Qt::CaseInsensitive) == 0;
        }
        if (withToken && !haveAuthorization)
            request.set("Authorization", "Bearer " + str(m_token));
        if (!body.isEmpty() || method == "POST" || method == "PATCH" || method == "PUT") {
            if (!haveContentType)
                request.setContentType("application/json");
            request.setContentLength(body.size());
        }
        std::ostream &out = connection.sendRequest(request);
        out.write(body.constData(), body.size());
        Poco::Net::HTTPResponse reply;
        std::istream &in = connection.receiveResponse(reply);
        std::ostringstream collected;
        Poco::StreamCopier::copyStream(in, collected);
        response.status = int(reply.getStatus());
        const std::string text = collected.str();
        response.body = QByteArray(text.data(), qsizetype(text.size()));
        for (const auto &[name, value] : reply)
            response.headers.append({QByteArray::fromStdString(name), QByteArray::fromStdString(value)});
    } catch (const Poco::Exception &e) {
        response.status = 0;
        response.body = QByteArray::fromStdString(e.displayText());
    }
    return response;
}

ApiClient::Response ApiClient::post(const QString &path, const QJsonObject &body) const
{
    return request("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

ApiClient::Response ApiClient::patch(const QString &path, const QJsonObject &body) const
{
    return request("PATCH", path, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

ApiClient::Stream::~Stream() = default;

std::unique_ptr<ApiClient::Stream> ApiClient::openStream(const QByteArray &method, const QString &path,
                                                         const QJsonObject &body,
                                                         const Headers &headers) const
{
    auto stream = std::unique_ptr<Stream>(new Stream);
    try {
        stream->m_connection = std::make_unique<Poco::Net::HTTPClientSession>("127.0.0.1", m_port);
        stream->m_connection->setTimeout(Poco::Timespan(60, 0));
        Poco::Net::HTTPRequest request(str(method), path.toStdString(), Poco::Net::HTTPMessage::HTTP_1_1);
        request.set("Authorization", "Bearer " + str(m_token));
        request.set("Accept", "text/event-stream");
        for (const auto &[name, value] : headers)
            request.set(str(name), str(value));
        const QByteArray payload = method == "GET" ? QByteArray()
                                                   : QJsonDocument(body).toJson(QJsonDocument::Compact);
        if (method != "GET") {
            request.setContentType("application/json");
            request.setContentLength(payload.size());
        }
        std::ostream &out = stream->m_connection->sendRequest(request);
        out.write(payload.constData(), payload.size());
        Poco::Net::HTTPResponse reply;
        stream->m_body = &stream->m_connection->receiveResponse(reply);
        stream->m_status = int(reply.getStatus());
        stream->m_contentType = QByteArray::fromStdString(reply.getContentType());
    } catch (const Poco::Exception &) {
        stream->m_status = 0;
        stream->m_body = nullptr;
    }
    return stream;
}

std::optional<ApiClient::Event> ApiClient::Stream::next(int timeoutMs)
{
    if (!m_body || !m_connection)
        return std::nullopt;
    m_connection->socket().setReceiveTimeout(Poco::Timespan(Poco::Timespan::TimeDiff(timeoutMs) * 1000));
    Event event;
    bool any = false;
    try {
        std::string line;
        while (std::getline(*m_body, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            if (line.empty()) {
                if (any)
                    return event;
                continue;
            }
            if (line.front() == ':')
                continue;  // comment (keep-alive)
            const auto colon = line.find(':');
            const std::string field = line.substr(0, colon);
            std::string value = colon == std::string::npos ? std::string() : line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ')
                value.erase(0, 1);
            any = true;
            if (field == "id")
                event.id = QByteArray::fromStdString(value);
            else if (field == "event")
                event.type = QByteArray::fromStdString(value);
            else if (field == "data")
                event.data += (event.data.isEmpty() ? QByteArray() : QByteArray("\n")) + QByteArray::fromStdString(value);
        }
    } catch (const Poco::Exception &) {
    }
    m_body = nullptr;
    return std::nullopt;
}

void ApiClient::Stream::abort()
{
    if (m_connection)
        m_connection->abort();
    m_body = nullptr;
}

QList<ApiClient::Event> ApiClient::stream(const QString &path, const QJsonObject &body, int timeoutMs) const
{
    QList<Event> events;
    const std::unique_ptr<Stream> s = openStream("POST", path, body);
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        std::optional<Event> event = s->next(int(std::max<qint64>(1, deadline.remainingTime())));
        if (!event)
            break;
        events.append(*event);
    }
    return events;
}

QString ApiClient::missingLanguage(const QString &language) const
{
    const Response languages = get(QStringLiteral("/v1/languages"));
    for (const QJsonValue &value : languages.array()) {
        const QJsonObject entry = value.toObject();
        if (entry.value(QStringLiteral("id")).toString() != language)
            continue;
        if (entry.value(QStringLiteral("available")).toBool())
            return {};
        return QStringLiteral("%1 is not available: %2")
                .arg(language, entry.value(QStringLiteral("reason")).toString());
    }
    return QStringLiteral("the %1 plugin is not built").arg(language);
}

QString ApiClient::createContext(const QString &language, const QString &prefix) const
{
    const Response created = post(prefix + QStringLiteral("/contexts"), {{QStringLiteral("language"), language}});
    if (created.status != 201)
        qWarning() << "create context:" << created.status << created.body;
    return created.object().value(QStringLiteral("id")).toString();
}

QJsonObject ApiClient::runAndWait(const QString &contextId, const QString &code, const QJsonObject &extra,
                                  const QString &prefix) const
{
    QJsonObject body = extra;
    body.insert(QStringLiteral("code"), code);
    const Response response =
            post(prefix + QStringLiteral("/contexts/%1/executions?wait=true").arg(contextId), body);
    if (response.status != 200)
        qWarning() << "run:" << response.status << response.body;
    return response.object();
}

bool ApiClient::waitForContextState(const QString &contextId, const QString &state, int timeoutMs,
                                    const QString &prefix) const
{
    QDeadlineTimer deadline(timeoutMs);
    do {
        const Response context = get(prefix + QStringLiteral("/contexts/") + contextId);
        if (context.object().value(QStringLiteral("state")).toString() == state)
            return true;
        QThread::msleep(20);
    } while (!deadline.hasExpired());
    return false;
}

QString ApiClient::resultText(const QJsonObject &execution)
{
    return execution.value(QStringLiteral("result")).toObject().value(QStringLiteral("text/plain")).toString();
}

bool ApiClient::hasEvent(const QJsonObject &execution, const QString &type)
{
    for (const QJsonValue &event : execution.value(QStringLiteral("events")).toArray()) {
        if (event.toObject().value(QStringLiteral("type")).toString() == type)
            return true;
    }
    return false;
}

RawConnection::RawConnection(quint16 port)
    : m_socket(std::make_unique<Poco::Net::StreamSocket>(Poco::Net::SocketAddress("127.0.0.1", port)))
{
}

RawConnection::RawConnection(quint16 port, const QString &fromAddress)
    : m_socket(std::make_unique<Poco::Net::StreamSocket>())
{
    m_socket->impl()->bind(Poco::Net::SocketAddress(fromAddress.toStdString(), 0));
    m_socket->connect(Poco::Net::SocketAddress("127.0.0.1", port));
}

RawConnection::~RawConnection() = default;

bool RawConnection::send(const QByteArray &bytes)
{
    try {
        qsizetype sent = 0;
        while (sent < bytes.size()) {
            const int n = m_socket->sendBytes(bytes.constData() + sent, int(bytes.size() - sent));
            if (n <= 0)
                return false;
            sent += n;
        }
        return true;
    } catch (const Poco::Exception &) {
        return false;
    }
}

namespace {

// Length of the first complete response in `data`, or -1.
qsizetype completeResponseLength(const QByteArray &data)
{
    const qsizetype headEnd = data.indexOf("\r\n\r\n");
    if (headEnd < 0)
        return -1;
    const QByteArray head = data.left(headEnd).toLower();
    const qsizetype bodyStart = headEnd + 4;
    static const QRegularExpression length(QStringLiteral("\r\ncontent-length: *(\\d+)"));
    const auto match = length.match(QString::fromLatin1(head));
    if (match.hasMatch()) {
        const qsizetype total = bodyStart + match.captured(1).toLongLong();
        return data.size() >= total ? total : -1;
    }
    if (head.contains("\r\ntransfer-encoding: chunked")) {
        const qsizetype end = data.indexOf("\r\n0\r\n\r\n", bodyStart - 2);
        return end < 0 ? -1 : end + 7;
    }
    return bodyStart;  // no body (204, or a head-only answer)
}

} // namespace

QByteArray RawConnection::readResponses(int count, int timeoutMs)
{
    QByteArray all;
    QDeadlineTimer deadline(timeoutMs);
    int complete = 0;
    char buffer[65536];
    while (complete < count && !deadline.hasExpired()) {
        for (qsizetype n = completeResponseLength(m_pending); n > 0; n = completeResponseLength(m_pending)) {
            all += m_pending.left(n);
            m_pending.remove(0, n);
            if (++complete == count)
                return all;
        }
        try {
            m_socket->setReceiveTimeout(Poco::Timespan(std::max<qint64>(1, deadline.remainingTime()) * 1000));
            const int n = m_socket->receiveBytes(buffer, sizeof buffer);
            if (n <= 0)
                break;
            m_pending.append(buffer, n);
        } catch (const Poco::Exception &) {
            break;
        }
    }
    return all + m_pending;
}

QByteArray RawConnection::readUntilClosed(int timeoutMs, bool *closed)
{
    QByteArray all = std::exchange(m_pending, {});
    *closed = false;
    QDeadlineTimer deadline(timeoutMs);
    char buffer[65536];
    while (!deadline.hasExpired()) {
        try {
            m_socket->setReceiveTimeout(Poco::Timespan(std::max<qint64>(1, deadline.remainingTime()) * 1000));
            const int n = m_socket->receiveBytes(buffer, sizeof buffer);
            if (n <= 0) {
                *closed = true;
                break;
            }
            all.append(buffer, n);
        } catch (const Poco::TimeoutException &) {
            break;
        } catch (const Poco::Exception &) {
            *closed = true;  // reset by the peer counts as closed
            break;
        }
    }
    return all;
}

QList<int> statusCodes(const QByteArray &responses)
{
    QList<int> codes;
    static const QRegularExpression status(QStringLiteral("HTTP/1\\.1 (\\d{3}) "));
    auto it = status.globalMatch(QString::fromLatin1(responses));
    while (it.hasNext())
        codes.append(it.next().captured(1).toInt());
    return codes;
}
