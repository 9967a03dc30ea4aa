// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QString>

namespace replhost::http {

// The sessions of MCP's Streamable HTTP transport (revisions 2025-03-26 to 2025-11-25): an
// initialize opens one, its id travels in the Mcp-Session-Id header, and it remembers the
// revision negotiated and the capabilities the client declared. A session scopes the request ids a client's notifications/cancelled
// names, so one client never cancels another's run.
//
// Sessions hold no engine state (contexts belong to workspaces, not to sessions), so losing
// one costs a client only a new initialize: at most kMaxSessions are kept, and the one unused
// the longest makes room for a new one. A client ends its session with DELETE.
//
// Threading: one thread (the server's).
class McpSessions {
public:
    static constexpr int kMaxSessions = 1024;

    // A new session speaking `version`, of a client that declared `capabilities` (its
    // initialize's params.capabilities); returns its id (random, unguessable).
    QString open(const QString &version, const QJsonObject &capabilities = {});
    // The session's revision, or empty when there is no such session. Marks it used.
    QString version(const QString &id);
    // What the session's client declared it can do; empty when there is no such session.
    QJsonObject capabilities(const QString &id) const;
    bool close(const QString &id);
    int size() const { return int(m_sessions.size()); }

private:
    struct Session {
        QString version;
        QJsonObject capabilities;
        quint64 lastUsed = 0;
    };
    QHash<QString, Session> m_sessions;
    quint64 m_clock = 0;
};

} // namespace replhost::http
