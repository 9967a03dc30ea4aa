// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "headcheck.h"

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QUrlQuery>

#include <optional>

namespace replhost::http {

// What a handler needs from a request: its header fields and body as Qt HttpServer parsed them,
// its method and target as the head check read them (Qt 6.4 gives the method only as an enum,
// with every method it does not know as "Unknown", and the target only as a QUrl rebuilt with
// the Host field). A plain value: an answer may come long after the request (executions finish
// later).
struct HttpRequest {
    QByteArray method;        // as sent: "GET", "POST", ...
    QString path;             // percent-encoded path, without the query
    QString rawQuery;         // the query as sent (percent-encoded), without the '?'; set once
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    QHostAddress remoteAddress;
    QMap<QString, QString> params;  // path parameters, filled in by the Router
    // A token sent as a path segment, taken out of `path` on arrival (SecurityGate::takePathToken).
    QByteArray pathToken;

    // `head.target` is split into path and query, `head.fields` become the headers: an origin-form target ("/v1/x?y=1") as sent;
    // any other form, or one with characters a URL would re-encode, through QUrl.
    static HttpRequest fromHead(RequestHead head, QByteArray body,
                                const QHostAddress &remoteAddress);

    // The query parsed, on first use (and kept: rawQuery must not change afterwards): most
    // routes read no query, or only a flag.
    const QUrlQuery &query() const;

    // First header with this name (case-insensitive), or empty.
    QByteArray header(QByteArrayView name) const;
    bool hasHeader(QByteArrayView name) const;
    QString param(const QString &name) const { return params.value(name); }
    // "?wait=true" / "?wait=1" / "?wait" → true.
    bool queryFlag(const QString &name) const;
    // The query parameter as an integer in [min, max]; `fallback` when absent or empty.
    // Error "bad_request" naming the parameter otherwise.
    Result<qint64> queryInteger(const QString &name, qint64 fallback, qint64 min, qint64 max) const;
    // The query parameter, percent-decoded; empty when absent.
    QString queryValue(const QString &name) const;

private:
    mutable std::optional<QUrlQuery> m_query;
};

} // namespace replhost::http
