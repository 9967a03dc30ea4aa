// SPDX-License-Identifier: Apache-2.0
#include "httprequest.h"

#include "chartable.h"

#include <QUrl>

#include <algorithm>

namespace replhost::http {

namespace {

// Characters QUrl keeps as they are in a fully encoded path or query. A target made only of
// these (the usual case) is split without building a QUrl. '%' is not among them: QUrl
// normalises escapes (decoding unreserved ones), so such targets take the QUrl path.
constexpr CharTable kVerbatimTargetChars("-._~/?!$&'()*+,;=:@");

bool isVerbatimTargetChar(char c)
{
    return kVerbatimTargetChars.contains(c);
}

} // namespace

HttpRequest HttpRequest::fromHead(RequestHead head, QByteArray body,
                                  const QHostAddress &remoteAddress)
{
    HttpRequest r;
    const QByteArray &target = head.target;
    const bool verbatim = target.startsWith('/')
            && std::all_of(target.cbegin(), target.cend(), isVerbatimTargetChar);
    if (verbatim) {
        const qsizetype question = target.indexOf('?');
        // Views: QByteArray::first() and sliced() would copy before the conversion copies again.
        const QByteArrayView view(target);
        r.path = QString::fromLatin1(question < 0 ? view : view.first(question));
        if (question >= 0)
            r.rawQuery = QString::fromLatin1(view.sliced(question + 1));
    } else {
        const QUrl url = QUrl::fromEncoded(target);
        r.path = url.path(QUrl::FullyEncoded);
        r.rawQuery = url.query(QUrl::FullyEncoded);
    }
    r.method = std::move(head.method);
    r.headers = std::move(head.fields);
    r.body = std::move(body);
    r.remoteAddress = remoteAddress;
    return r;
}

namespace {

// Names of other lengths are passed over without a case-insensitive comparison: a request's
// headers are looked up several times each.
bool sameName(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && a.compare(b, Qt::CaseInsensitive) == 0;
}

} // namespace

QByteArray HttpRequest::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers) {
        if (sameName(key, name))
            return value;
    }
    return {};
}

bool HttpRequest::hasHeader(QByteArrayView name) const
{
    for (const auto &header : headers) {
        if (sameName(header.first, name))
            return true;
    }
    return false;
}

const QUrlQuery &HttpRequest::query() const
{
    if (!m_query)
        m_query.emplace(rawQuery);
    return *m_query;
}

bool HttpRequest::queryFlag(const QString &name) const
{
    const auto isSet = [](QStringView value) {
        return value.isEmpty() || value.compare(QLatin1String("true"), Qt::CaseInsensitive) == 0
                || value == QLatin1String("1")
                || value.compare(QLatin1String("yes"), Qt::CaseInsensitive) == 0;
    };
    if (rawQuery.contains(QLatin1Char('%'))) {
        // Escapes are QUrlQuery's to decode.
        return query().hasQueryItem(name) && isSet(query().queryItemValue(name));
    }
    // The first item of that name, as QUrlQuery::queryItemValue() takes it: "name", "name=" or
    // "name=value", items separated by '&'.
    for (const QStringView item : QStringView(rawQuery).tokenize(QLatin1Char('&'))) {
        const qsizetype equals = item.indexOf(QLatin1Char('='));
        if ((equals < 0 ? item : item.first(equals)) == name)
            return isSet(equals < 0 ? QStringView() : item.sliced(equals + 1));
    }
    return false;
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
    return query().queryItemValue(name, QUrl::FullyDecoded);
}

} // namespace replhost::http
