// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QMap>
#include <QPair>
#include <QString>

namespace replhost::core { class PrometheusWriter; }

namespace replhost::http {

// The HTTP face's own counters: requests by route (the pattern, "GET /v1/contexts/{id}", so the
// number of series stays bounded) and status code. Requests refused by the connection guard
// before they reach a route (413, 431, malformed framing) are not counted here; they are logged.
//
// Threading: the server's thread.
class HttpMetrics {
public:
    // `route` empty: the request matched no route.
    void record(const QString &route, int status);

    void write(core::PrometheusWriter &out, int openStreams) const;

private:
    QMap<QPair<QString, int>, quint64> m_requests;
};

} // namespace replhost::http
