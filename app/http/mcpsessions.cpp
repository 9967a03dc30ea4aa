// SPDX-License-Identifier: Apache-2.0
#include "mcpsessions.h"

#include <QUuid>

namespace replhost::http {

QString McpSessions::open(const QString &version, const QJsonObject &capabilities)
{
    if (m_sessions.size() >= kMaxSessions) {
        auto oldest = m_sessions.begin();
        for (auto it = m_sessions.begin(); it != m_sessions.end(); ++it) {
            if (it->lastUsed < oldest->lastUsed)
                oldest = it;
        }
        m_sessions.erase(oldest);
    }
    // QUuid::createUuid() draws from the system's random source: the id is the session's
    // only credential beside the token.
    const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    m_sessions.insert(id, Session{version, capabilities, ++m_clock});
    return id;
}

QString McpSessions::version(const QString &id)
{
    const auto it = m_sessions.find(id);
    if (it == m_sessions.end())
        return {};
    it->lastUsed = ++m_clock;
    return it->version;
}

QJsonObject McpSessions::capabilities(const QString &id) const
{
    return m_sessions.value(id).capabilities;
}

bool McpSessions::close(const QString &id)
{
    return m_sessions.remove(id) > 0;
}

} // namespace replhost::http
