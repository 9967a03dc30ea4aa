// SPDX-License-Identifier: Apache-2.0
#include "httpmetrics.h"

#include "core/prometheuswriter.h"

namespace replhost::http {

void HttpMetrics::record(const QString &route, int status)
{
    ++m_requests[{route.isEmpty() ? QStringLiteral("unmatched") : route, status}];
}

void HttpMetrics::write(core::PrometheusWriter &out, int openStreams) const
{
    out.family(QStringLiteral("replhost_http_requests_total"), QStringLiteral("counter"),
               QStringLiteral("HTTP requests answered, by route and status code."));
    for (auto it = m_requests.cbegin(); it != m_requests.cend(); ++it)
        out.sample(QStringLiteral("replhost_http_requests_total"),
                   {{QStringLiteral("route"), it.key().first},
                    {QStringLiteral("code"), QString::number(it.key().second)}},
                   double(it.value()));
    out.family(QStringLiteral("replhost_http_streams_open"), QStringLiteral("gauge"),
               QStringLiteral("Event streams open now."));
    out.sample(QStringLiteral("replhost_http_streams_open"), {}, openStreams);
}

} // namespace replhost::http
