// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrlQuery>

#include <replhost/sdk/result.h>

class QHttpServerRequest;

namespace replhost::http {

// A copy of what a handler needs from a request. Qt 6.4 reuses one QHttpServerRequest per
// connection and only lends it for the duration of the call, while our answers may come later
// (pipelined requests wait their turn, executions finish later), so we copy.
struct HttpRequest {
    QByteArray method;        // as sent: "GET", "POST", ...
    QString path;             // percent-encoded path, without the query
    QUrlQuery query;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    QHostAddress remoteAddress;
    QHash<QString, QString> params;  // path parameters, filled in by the Router
    // A token sent as a path segment, taken out of `path` on arrival (SecurityGate::takePathToken).
    QByteArray pathToken;

    static HttpRequest fromQt(const QHttpServerRequest &request, const QByteArray &method);

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
};

} // namespace replhost::http
