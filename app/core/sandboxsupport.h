// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace replhost::core {

// Whether workers can run in a bubblewrap sandbox on this machine (workspace isolation
// "sandbox"), found once when the engine opens: bwrap is looked up (a configured path, else
// PATH) and really run (`bwrap --ro-bind / / true`), because an installed bwrap can still be
// unusable, for instance for an unprivileged user where user namespaces are disabled.
//
// A plain value: copy freely, any thread. Constant after probe().
class SandboxSupport {
public:
    // Blocks for as long as the trial run takes (bounded at a few seconds). `hidden`: paths no
    // sandbox may show, whatever its worker's command names (the data directory, which holds
    // the database, the token and the other workspaces).
    static SandboxSupport probe(const QString &configuredBwrap, const QStringList &hidden = {});

    bool available() const { return m_available; }
    // bwrap as configured (even when unusable) or as found on PATH; empty when none was
    // configured or found.
    const QString &bwrap() const { return m_bwrap; }
    // Why sandboxes are unavailable and what to do about it; empty when available.
    const QString &reason() const { return m_reason; }
    const QStringList &hidden() const { return m_hidden; }

    // {"available": bool, "bwrap": path or null, "reason": text or null}
    QJsonObject toJson() const;

private:
    bool m_available = false;
    QString m_bwrap;
    QString m_reason;
    QStringList m_hidden;
};

} // namespace replhost::core
