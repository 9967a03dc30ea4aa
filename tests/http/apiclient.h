// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

#include <memory>
#include <optional>

namespace Poco::Net { class HTTPClientSession; class StreamSocket; }

using Headers = QList<QPair<QByteArray, QByteArray>>;

// An HTTP client built on Poco::Net, an HTTP stack independent of the server's, so the tests
// check the wire format rather than agreeing with Qt about it. Every call opens its own
// connection unless said otherwise. Network errors come back as status 0 with the reason in
// body. Threading: the test thread.
class ApiClient {
public:
    ApiClient(quint16 port, QByteArray token);

    struct Response {
        int status = 0;
        QByteArray body;
        Headers headers;
        QByteArray header(const QByteArray &name) const;
        QJsonObject object() const;
        QJsonArray array() const;
    };

    // Sends `Authorization: Bearer <token>` unless `withToken` is false or headers has one.
    Response request(const QByteArray &method, const QString &path, const QByteArray &body = {},
                     const Headers &headers = {}, bool withToken = true) const;
    Response get(const QString &path) const { return request("GET", path); }
    Response post(const QString &path, const QJsonObject &body) const;
    Response patch(const QString &path, const QJsonObject &body) const;
    Response del(const QString &path) const { return request("DELETE", path); }

    struct Event {
        QByteArray id;
        QByteArray type;
        QByteArray data;
        QJsonObject json() const;
    };

    // Reads a Server-Sent Events stream as it arrives.
    class Stream {
    public:
        ~Stream();
        int status() const { return m_status; }
        QByteArray contentType() const { return m_contentType; }
        // The next event, or nothing when the stream ended or timed out.
        std::optional<Event> next(int timeoutMs = 30000);
        // Drops the connection without reading the rest.
        void abort();

    private:
        friend class ApiClient;
        std::unique_ptr<Poco::Net::HTTPClientSession> m_connection;
        std::istream *m_body = nullptr;
        int m_status = 0;
        QByteArray m_contentType;
    };

    std::unique_ptr<Stream> openStream(const QByteArray &method, const QString &path,
                                       const QJsonObject &body = {},
                                       const Headers &headers = {}) const;
    // Every event of a stream until it ends.
    QList<Event> stream(const QString &path, const QJsonObject &body, int timeoutMs = 60000) const;

    // Conveniences over the native API. `prefix` is "/v1" or "/v1/workspaces/<name>".
    // Why `language` cannot be used on this server (plugin missing, runtime missing), or empty.
    QString missingLanguage(const QString &language) const;
    // The new context's id, or empty (with a warning saying why).
    QString createContext(const QString &language, const QString &prefix = QStringLiteral("/v1")) const;
    // Runs `code` with ?wait=true and returns the execution document.
    QJsonObject runAndWait(const QString &contextId, const QString &code,
                           const QJsonObject &extra = {}, const QString &prefix = QStringLiteral("/v1")) const;
    // Polls the context until its state is `state` (or the time is up).
    bool waitForContextState(const QString &contextId, const QString &state, int timeoutMs = 20000,
                             const QString &prefix = QStringLiteral("/v1")) const;
    // The text/plain of an execution document's result.
    static QString resultText(const QJsonObject &execution);
    // Whether an execution document's events include one of `type`.
    static bool hasEvent(const QJsonObject &execution, const QString &type);

    quint16 port() const { return m_port; }
    QByteArray token() const { return m_token; }

private:
    quint16 m_port;
    QByteArray m_token;
};

// A bare TCP connection to the server, for what a well-behaved client never sends.
class RawConnection {
public:
    explicit RawConnection(quint16 port);
    // From `fromAddress` (another loopback address, e.g. 127.0.0.2) to 127.0.0.1.
    RawConnection(quint16 port, const QString &fromAddress);
    ~RawConnection();

    bool send(const QByteArray &bytes);
    // Reads until `count` complete responses (head + Content-Length body, or a chunked body)
    // arrived, the peer closed or the time is up. Returns what was read.
    QByteArray readResponses(int count, int timeoutMs = 10000);
    // Reads until the peer closes the connection; `closed` says whether it did in time.
    QByteArray readUntilClosed(int timeoutMs, bool *closed);

private:
    std::unique_ptr<Poco::Net::StreamSocket> m_socket;
    QByteArray m_pending;
};

// Splits responses read off a connection: status codes in order.
QList<int> statusCodes(const QByteArray &responses);
