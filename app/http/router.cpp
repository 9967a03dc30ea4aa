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
    Route route{method, pattern, split(pattern), {}, std::move(handler), access};
    for (QString &segment : route.segments) {
        const bool placeholder = segment.startsWith(QLatin1Char('{')) && segment.endsWith(QLatin1Char('}'));
        if (placeholder)
            segment = segment.mid(1, segment.size() - 2);
        route.placeholders.append(placeholder);
    }
    m_routes.append(std::move(route));
}

bool Router::sameShape(const Route &route, const QStringList &segments)
{
    if (route.segments.size() != segments.size())
        return false;
    for (qsizetype i = 0; i < segments.size(); ++i) {
        // A placeholder takes any non-empty segment ("//" leaves an empty one); its
        // percent-decoded value is never empty then.
        if (route.placeholders[i] ? segments[i].isEmpty() : segments[i] != route.segments[i])
            return false;
    }
    return true;
}

Router::Match Router::match(const QByteArray &method, const QString &path) const
{
    // Every request comes through here, so routes are compared on their literal segments first
    // and parameters are decoded only for the route that answers.
    const QStringList segments = split(path);
    Match result;
    for (const Route &route : m_routes) {
        if (!sameShape(route, segments))
            continue;
        if (route.method != method) {
            if (!result.allowedMethods.contains(route.method))
                result.allowedMethods.append(route.method);
            result.kind = Match::Kind::MethodNotAllowed;
            continue;
        }
        for (qsizetype i = 0; i < segments.size(); ++i) {
            if (route.placeholders[i])
                result.params.insert(route.segments[i], QUrl::fromPercentEncoding(segments[i].toUtf8()));
        }
        result.kind = Match::Kind::Found;
        result.handler = &route.handler;
        result.access = route.access;
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
