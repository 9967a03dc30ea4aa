// SPDX-License-Identifier: Apache-2.0
#include "router.h"

#include <QUrl>

namespace replhost::http {

Router::Segments Router::split(QStringView path)
{
    if (path.startsWith(QLatin1Char('/')))
        path = path.sliced(1);
    Segments segments;
    if (path.isEmpty())
        return segments;
    for (const QStringView segment : path.tokenize(QLatin1Char('/')))
        segments.append(segment);
    if (!segments.isEmpty() && segments.back().isEmpty())
        segments.removeLast();  // "/v1/contexts/" is "/v1/contexts"
    return segments;
}

void Router::add(const QByteArray &method, const QString &pattern, Handler handler, Access access)
{
    Route route{method, pattern, {}, {}, std::move(handler), access,
                QString::fromLatin1(method) + QLatin1Char(' ') + pattern};
    for (const QStringView view : split(pattern)) {
        const bool placeholder = view.startsWith(QLatin1Char('{')) && view.endsWith(QLatin1Char('}'));
        route.segments.append((placeholder ? view.sliced(1, view.size() - 2) : view).toString());
        route.placeholders.append(placeholder);
    }
    m_bySegmentCount[route.segments.size()].append(m_routes.size());
    m_routes.append(std::move(route));
}

bool Router::sameShape(const Route &route, const Segments &segments)
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
    // Every request comes through here, so only routes with as many segments are looked at,
    // they are compared on their literal segments first, and parameters are decoded only for
    // the route that answers.
    const Segments segments = split(path);
    // HEAD is answered by every GET route (HttpExchange leaves the body out).
    const bool head = method == "HEAD";
    Match result;
    const auto candidates = m_bySegmentCount.constFind(segments.size());
    if (candidates == m_bySegmentCount.cend())
        return result;
    for (const qsizetype index : *candidates) {
        const Route &route = m_routes[index];
        if (!sameShape(route, segments))
            continue;
        if (route.method != method && !(head && route.method == "GET")) {
            if (!result.allowedMethods.contains(route.method))
                result.allowedMethods.append(route.method);
            result.kind = Match::Kind::MethodNotAllowed;
            continue;
        }
        for (qsizetype i = 0; i < segments.size(); ++i) {
            if (!route.placeholders[i])
                continue;
            // The path is percent-encoded ASCII: a segment without '%' is its own value.
            const QStringView segment = segments[i];
            result.params.insert(route.segments[i],
                                 segment.contains(QLatin1Char('%'))
                                         ? QUrl::fromPercentEncoding(segment.toUtf8())
                                         : segment.toString());
        }
        result.kind = Match::Kind::Found;
        result.handler = &route.handler;
        result.access = route.access;
        result.route = route.name;
        result.allowedMethods.clear();
        return result;
    }
    return result;
}

QStringList Router::routes() const
{
    QStringList out;
    for (const Route &route : m_routes)
        out.append(route.name);
    return out;
}

} // namespace replhost::http
