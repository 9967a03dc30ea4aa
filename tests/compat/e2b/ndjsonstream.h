// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <memory>
#include <optional>

namespace Poco::Net { class HTTPClientSession; }

// One POST to a replhost-server on 127.0.0.1 whose answer is read as it arrives, one JSON object
// per line (the E2B /execute stream), with Poco::Net: an HTTP stack that shares nothing with the
// server's. No Authorization header is sent: the E2B routes take their token in the path, or
// none on the E2B listener. Network errors give status 0. Threading: the test thread.
class NdjsonStream {
public:
    NdjsonStream(quint16 port, const QString &path, const QByteArray &body);
    ~NdjsonStream();

    int status() const { return m_status; }
    QByteArray contentType() const { return m_contentType; }
    // A body that is not a stream (an error), read to its end.
    QByteArray readBody();

    // The next line as JSON, or nothing when the stream ended or `timeoutMs` passed first.
    // A line that is not a JSON object is returned as {"unparsed": <line>}.
    std::optional<QJsonObject> next(int timeoutMs = 30000);
    // Every line until the stream ends.
    QList<QJsonObject> readAll(int timeoutMs = 60000);
    // Drops the connection without reading the rest.
    void abort();

private:
    std::unique_ptr<Poco::Net::HTTPClientSession> m_connection;
    std::istream *m_body = nullptr;
    int m_status = 0;
    QByteArray m_contentType;
};

// The "type" of every line, in order.
QStringList lineTypes(const QList<QJsonObject> &lines);
