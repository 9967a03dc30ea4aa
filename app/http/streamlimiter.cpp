// SPDX-License-Identifier: Apache-2.0
#include "streamlimiter.h"

#include "httpexchange.h"

#include <QTcpSocket>

namespace replhost::http {

StreamLimiter::StreamLimiter(int maxPerClient) : m_max(maxPerClient) {}

namespace {

// One open stream's slot, given back when the last copy of its lease goes.
struct Slot {
    std::shared_ptr<StreamLimiter::Counts> counts;
    QString client;

    ~Slot()
    {
        auto it = counts->perClient.find(client);
        if (it != counts->perClient.end() && --it.value() <= 0)
            counts->perClient.erase(it);
        --counts->total;
    }
};

} // namespace

StreamLimiter::Lease StreamLimiter::acquire(const QHostAddress &client)
{
    // IPv4-mapped IPv6 addresses and plain IPv4 are the same client.
    bool isV4 = false;
    const quint32 v4 = client.toIPv4Address(&isV4);
    const QString key = isV4 ? QHostAddress(v4).toString() : client.toString();
    int &count = m_counts->perClient[key];
    if (m_max > 0 && count >= m_max)
        return nullptr;
    ++count;
    ++m_counts->total;
    auto slot = std::make_shared<Slot>();
    slot->counts = m_counts;
    slot->client = key;
    return slot;
}

StreamLimiter::Lease StreamLimiter::admit(HttpExchange &exchange)
{
    Lease lease = acquire(exchange.request().remoteAddress);
    if (!lease) {
        exchange.addHeader("Retry-After", QByteArray::number(retryAfterSeconds()));
        exchange.sendError(429, QStringLiteral("too_many_streams"),
                           QStringLiteral("this client already has %1 event streams open, the "
                                          "most allowed; close one, or run with ?wait=true")
                                   .arg(m_max));
    }
    return lease;
}

int StreamLimiter::openStreams() const
{
    return m_counts->total;
}

} // namespace replhost::http
