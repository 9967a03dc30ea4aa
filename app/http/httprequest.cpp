// SPDX-License-Identifier: Apache-2.0
#include "httprequest.h"

#include <QHttpServerRequest>

namespace replhost::http {

HttpRequest HttpRequest::fromQt(const QHttpServerRequest &request, const QByteArray &method)
{
    HttpRequest r;
    r.method = method;
    // Only the path and query of url() are used: Qt builds its authority from the client's Host
    // header, which SecurityGate checks separately.
    const QUrl url = request.url();
    r.path = url.path(QUrl::FullyEncoded);
    r.query = QUrlQuery(url.query(QUrl::FullyEncoded));
    r.headers = request.headers();
    r.body = request.body();
    r.remoteAddress = request.remoteAddress();
    return r;
}

QByteArray HttpRequest::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers) {
        if (QByteArrayView(key).compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

bool HttpRequest::hasHeader(QByteArrayView name) const
{
    for (const auto &header : headers) {
        if (QByteArrayView(header.first).compare(name, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

bool HttpRequest::queryFlag(const QString &name) const
{
    if (!query.hasQueryItem(name))
        return false;
    const QString value = query.queryItemValue(name).toLower();
    return value.isEmpty() || value == QLatin1String("true") || value == QLatin1String("1")
            || value == QLatin1String("yes");
}

} // namespace replhost::http

namespace replhost::http {

Result<qint64> HttpRequest::queryInteger(const QString &name, qint64 fallback, qint64 min,
                                         qint64 max) const
{
    const QString text = queryValue(name).trimmed();
    if (text.isEmpty())
        return fallback;
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    if (!ok || value < min || value > max)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("query parameter '%1' must be an integer from %2 to %3, "
                                        "not '%4'").arg(name).arg(min).arg(max).arg(text));
    return value;
}

QString HttpRequest::queryValue(const QString &name) const
{
    return query.queryItemValue(name, QUrl::FullyDecoded);
}

} // namespace replhost::http
