// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonObject>
#include <QJsonValue>

#include <functional>
#include <memory>

namespace replhost::http {

// One MCP request while it is being answered, as the code answering it sees its transport:
// where progress notifications go (when the client asked for them with a progressToken), and
// whether the client has cancelled it (notifications/cancelled).
//
// Shared between the transport, which cancels, and the answering code, which reports progress
// and stops work when cancelled. Threading: the engine thread.
class McpCall {
public:
    // `notify` sends one notification on the request's answer; it may outlive the client.
    McpCall(QJsonValue progressToken, std::function<void(const QJsonObject &)> notify);

    bool wantsProgress() const;
    // notifications/progress with the request's token; `progress` must grow from one call to
    // the next. Does nothing when no progress was asked for.
    void progress(double progress, const QString &message);

    bool isCancelled() const { return m_cancelled; }
    // Called once, when the client cancels (at once if it already has). Replaces an earlier one.
    void onCancelled(std::function<void()> handler);
    // The client cancelled: the handler runs, and nothing is answered to the request.
    void cancel();

private:
    QJsonValue m_progressToken;
    std::function<void(const QJsonObject &)> m_notify;
    std::function<void()> m_onCancelled;
    bool m_cancelled = false;
};

using McpCallPtr = std::shared_ptr<McpCall>;

} // namespace replhost::http
