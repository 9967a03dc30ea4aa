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
