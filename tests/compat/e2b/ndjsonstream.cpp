// SPDX-License-Identifier: Apache-2.0
#include "ndjsonstream.h"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>

#include <QDeadlineTimer>
#include <QJsonDocument>

#include <istream>
#include <iterator>

NdjsonStream::NdjsonStream(quint16 port, const QString &path, const QByteArray &body)
{
    try {
        m_connection = std::make_unique<Poco::Net::HTTPClientSession>("127.0.0.1", port);
        m_connection->setTimeout(Poco::Timespan(60, 0));
        Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_POST, path.toStdString(),
                                       Poco::Net::HTTPMessage::HTTP_1_1);
        request.setContentType("application/json");
        request.setContentLength(body.size());
        std::ostream &out = m_connection->sendRequest(request);
        out.write(body.constData(), body.size());
        Poco::Net::HTTPResponse reply;
        m_body = &m_connection->receiveResponse(reply);
        m_status = int(reply.getStatus());
        m_contentType = QByteArray::fromStdString(reply.getContentType());
    } catch (const Poco::Exception &) {
        m_status = 0;
        m_body = nullptr;
    }
}

NdjsonStream::~NdjsonStream() = default;

QByteArray NdjsonStream::readBody()
{
    if (!m_body)
        return {};
    try {
        return QByteArray::fromStdString(std::string(std::istreambuf_iterator<char>(*m_body), {}));
    } catch (const Poco::Exception &) {
        return {};
    }
}

std::optional<QJsonObject> NdjsonStream::next(int timeoutMs)
{
    if (!m_body || !m_connection)
        return std::nullopt;
    m_connection->socket().setReceiveTimeout(Poco::Timespan(Poco::Timespan::TimeDiff(timeoutMs) * 1000));
    try {
        std::string line;
        while (std::getline(*m_body, line)) {
            if (line.empty())
                continue;
            const QByteArray bytes = QByteArray::fromStdString(line);
            const QJsonDocument json = QJsonDocument::fromJson(bytes);
            if (!json.isObject())
                return QJsonObject{{QStringLiteral("unparsed"), QString::fromUtf8(bytes)}};
            return json.object();
        }
    } catch (const Poco::Exception &) {
    }
    return std::nullopt;
}

QList<QJsonObject> NdjsonStream::readAll(int timeoutMs)
{
    QList<QJsonObject> lines;
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        std::optional<QJsonObject> line = next(int(std::max<qint64>(1, deadline.remainingTime())));
        if (!line)
            break;
        lines.append(*line);
    }
    return lines;
}

void NdjsonStream::abort()
{
    if (m_connection)
        m_connection->abort();
    m_body = nullptr;
}

QStringList lineTypes(const QList<QJsonObject> &lines)
{
    QStringList types;
    for (const QJsonObject &line : lines)
        types.append(line.value(QStringLiteral("type")).toString());
    return types;
}
