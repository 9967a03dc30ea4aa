// SPDX-License-Identifier: Apache-2.0
#include "httprequest.h"

#include <QUrl>

#include <algorithm>

namespace replhost::http {

namespace {

// Characters QUrl keeps as they are in a fully encoded path or query. A target made only of
// these (the usual case) is split without building a QUrl. '%' is not among them: QUrl
// normalises escapes (decoding unreserved ones), so such targets take the QUrl path.
bool isVerbatimTargetChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || QByteArrayView("-._~/?!$&'()*+,;=:@").contains(c);
}

} // namespace

HttpRequest HttpRequest::fromHead(RequestFramer::Head head, QByteArray body,
                                  const QHostAddress &remoteAddress)
{
    HttpRequest r;
    const QByteArray &target = head.target;
    const bool verbatim = target.startsWith('/')
            && std::all_of(target.cbegin(), target.cend(), isVerbatimTargetChar);
    if (verbatim) {
        const qsizetype question = target.indexOf('?');
        r.path = QString::fromLatin1(question < 0 ? target : target.first(question));
        if (question >= 0)
            r.query = QUrlQuery(QString::fromLatin1(target.sliced(question + 1)));
    } else {
        const QUrl url = QUrl::fromEncoded(target);
        r.path = url.path(QUrl::FullyEncoded);
        r.query = QUrlQuery(url.query(QUrl::FullyEncoded));
    }
    r.method = std::move(head.method);
    r.headers = std::move(head.fields);
    r.body = std::move(body);
    r.remoteAddress = remoteAddress;
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
