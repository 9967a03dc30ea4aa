// SPDX-License-Identifier: Apache-2.0
#include "mcpcall.h"

#include "mcpmessage.h"

#include <QJsonArray>

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

void McpCall::enableElicitation(SendRequest send, bool withMode)
{
    m_sendRequest = std::move(send);
    m_elicitationMode = withMode;
}

void McpCall::askForText(const QString &message, TextAnswer done)
{
    endQuestions();
    if (!m_sendRequest || m_cancelled) {
        done(std::nullopt);
        return;
    }
    // Unique among this server's requests to all clients, so that a response finds its question.
    static quint64 counter = 0;
    m_questionId = QStringLiteral("replhost-input-%1").arg(++counter);
    m_answer = std::move(done);
    const QJsonObject request{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                              {QStringLiteral("id"), m_questionId},
                              {QStringLiteral("method"), QStringLiteral("elicitation/create")},
                              {QStringLiteral("params"), textQuestion(message, m_elicitationMode)}};
    if (!m_sendRequest(request))
        endQuestions();
}

void McpCall::takeResponse(const QJsonObject &response)
{
    if (!m_answer)
        return;
    m_questionId = QJsonValue::Undefined;
    std::exchange(m_answer, nullptr)(answerText(response.value(QLatin1String("result")).toObject()));
}

void McpCall::setRetry(const QString &requestState, const QJsonObject &inputResponses)
{
    m_requestState = requestState;
    m_inputResponses = inputResponses;
}

QJsonObject McpCall::textQuestion(const QString &message, bool withMode)
{
    QJsonObject params{
            {QStringLiteral("message"), message},
            {QStringLiteral("requestedSchema"),
             QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                         {QStringLiteral("properties"),
                          QJsonObject{{QStringLiteral("value"),
                                       QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                                                   {QStringLiteral("title"), QStringLiteral("Input")},
                                                   {QStringLiteral("description"),
                                                    QStringLiteral("The line the running code reads, "
                                                                   "without its line end")}}}}},
                         {QStringLiteral("required"), QJsonArray{QStringLiteral("value")}}}}};
    if (withMode)
        params.insert(QStringLiteral("mode"), QStringLiteral("form"));
    return params;
}

std::optional<QString> McpCall::answerText(const QJsonObject &elicitResult)
{
    const QJsonValue value = elicitResult.value(QLatin1String("content")).toObject().value(QLatin1String("value"));
    if (elicitResult.value(QLatin1String("action")) != QLatin1String("accept") || !value.isString())
        return std::nullopt;
    return value.toString();
}

void McpCall::endQuestions()
{
    m_questionId = QJsonValue::Undefined;
    if (m_answer)
        std::exchange(m_answer, nullptr)(std::nullopt);
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
