// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QStringView>
#include <QVarLengthArray>

#include <functional>
#include <memory>

namespace replhost::http {

class HttpExchange;

// Maps (method, path) to a handler. Patterns are literal segments and {name} placeholders, which
// match one non-empty segment (percent-decoded into HttpRequest::params): "/v1/contexts/{id}".
//
// One security gate runs before every route, unknown paths and wrong methods get JSON errors
// (404, 405 with Allow), and every route has exactly one method; a GET route answers HEAD too.
//
// Threading: fill before serving; match() is const.
class Router {
public:
    using Handler = std::function<void(const std::shared_ptr<HttpExchange> &)>;
    enum class Access { TokenRequired, Public };

    void add(const QByteArray &method, const QString &pattern, Handler handler,
             Access access = Access::TokenRequired);

    struct Match {
        enum class Kind { Found, MethodNotAllowed, NotFound };
        Kind kind = Kind::NotFound;
        const Handler *handler = nullptr;
        Access access = Access::TokenRequired;
        // A map, not a hash: a route has one or two parameters, and a QHash's first insertion
        // and its destruction (a span of 128 slots) cost more than the whole route match.
        QMap<QString, QString> params;
        QString route;                  // for Found: "METHOD pattern"
        QByteArrayList allowedMethods;  // for MethodNotAllowed
    };

    // `path` is percent-encoded, as on the request line.
    Match match(const QByteArray &method, const QString &path) const;

    // Every registered "METHOD pattern", in registration order (for documentation checks).
    QStringList routes() const;

private:
    struct Route {
        QByteArray method;
        QString pattern;
        QStringList segments;     // a placeholder's entry is its name, without braces
        QList<bool> placeholders; // per segment
        Handler handler;
        Access access;
        QString name;             // "METHOD pattern"
    };
    using Segments = QVarLengthArray<QStringView, 16>;
    static Segments split(QStringView path);
    static bool sameShape(const Route &route, const Segments &segments);

    QList<Route> m_routes;
    // Indexes into m_routes by number of segments, in registration order: a request is compared
    // with the routes of its own length only.
    QHash<qsizetype, QList<qsizetype>> m_bySegmentCount;
};

} // namespace replhost::http
