// SPDX-License-Identifier: Apache-2.0
#include "mcpcall.h"

#include "mcpmessage.h"

namespace replhost::http {

McpCall::McpCall(QJsonValue progressToken, std::function<void(const QJsonObject &)> notify)
    : m_progressToken(std::move(progressToken)), m_notify(std::move(notify))
{
}

bool McpCall::wantsProgress() const
{
    return (m_progressToken.isString() || m_progressToken.isDouble()) && m_notify;
}

void McpCall::progress(double progress, const QString &message)
{
    if (!wantsProgress() || m_cancelled)
        return;
    QJsonObject params{{QStringLiteral("progressToken"), m_progressToken},
                       {QStringLiteral("progress"), progress}};
    if (!message.isEmpty())
        params.insert(QStringLiteral("message"), message);
    m_notify(McpMessage::notification(QStringLiteral("notifications/progress"), params));
}

void McpCall::onCancelled(std::function<void()> handler)
{
    m_onCancelled = std::move(handler);
    if (m_cancelled && m_onCancelled)
        std::exchange(m_onCancelled, nullptr)();
}

void McpCall::cancel()
{
    if (m_cancelled)
        return;
    m_cancelled = true;
    if (m_onCancelled)
        std::exchange(m_onCancelled, nullptr)();
}

} // namespace replhost::http
