// SPDX-License-Identifier: Apache-2.0
#include "router.h"

#include <QUrl>

namespace replhost::http {

QStringList Router::split(const QString &path)
{
    QStringList segments = path.split(QLatin1Char('/'));
    if (!segments.isEmpty() && segments.front().isEmpty())
        segments.removeFirst();
    if (!segments.isEmpty() && segments.back().isEmpty())
        segments.removeLast();  // "/v1/contexts/" is "/v1/contexts"
    return segments;
}

void Router::add(const QByteArray &method, const QString &pattern, Handler handler, Access access)
{
    m_routes.append(Route{method, pattern, split(pattern), std::move(handler), access});
}

Router::Match Router::match(const QByteArray &method, const QString &path) const
{
    const QStringList segments = split(path);
    Match result;
    for (const Route &route : m_routes) {
        if (route.segments.size() != segments.size())
            continue;
        QHash<QString, QString> params;
        bool matches = true;
        for (qsizetype i = 0; i < segments.size() && matches; ++i) {
            const QString &want = route.segments[i];
            if (want.startsWith(QLatin1Char('{')) && want.endsWith(QLatin1Char('}'))) {
                const QString value = QUrl::fromPercentEncoding(segments[i].toUtf8());
                matches = !value.isEmpty();
                params.insert(want.mid(1, want.size() - 2), value);
            } else {
                matches = segments[i] == want;
            }
        }
        if (!matches)
            continue;
        if (route.method != method) {
            if (!result.allowedMethods.contains(route.method))
                result.allowedMethods.append(route.method);
            result.kind = Match::Kind::MethodNotAllowed;
            continue;
        }
        result.kind = Match::Kind::Found;
        result.handler = &route.handler;
        result.access = route.access;
        result.params = std::move(params);
        result.route = QString::fromLatin1(route.method) + QLatin1Char(' ') + route.pattern;
        result.allowedMethods.clear();
        return result;
    }
    return result;
}

QStringList Router::routes() const
{
    QStringList out;
    for (const Route &route : m_routes)
        out.append(QString::fromLatin1(route.method) + QLatin1Char(' ') + route.pattern);
    return out;
}

} // namespace replhost::http
