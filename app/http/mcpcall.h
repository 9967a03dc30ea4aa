// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace replhost::http {

// One MCP request while it is being answered, as the code answering it sees its transport:
// where progress notifications go (when the client asked for them with a progressToken),
// whether the client has cancelled it (notifications/cancelled), and whether the code may ask
// the client's user a question (elicitation, when the client declared it).
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

    // Elicitation: `send` puts a request to the client on the request's answer (false when it
    // cannot); `withMode`: the revision's elicitation/create names its mode ("form").
    using SendRequest = std::function<bool(const QJsonObject &request)>;
    void enableElicitation(SendRequest send, bool withMode);
    // Elicitation as the stateless revision has it (multi round-trip requests): the call is
    // answered with an InputRequiredResult that carries the question, and the client calls the
    // tool again with the answer (McpRunWatch). askForText() is not used then.
    void enableInputRequired() { m_byRetry = true; }
    bool asksByRetry() const { return m_byRetry; }
    bool canElicit() const { return m_sendRequest || m_byRetry; }
    // What a call that retries brings: its params.requestState (empty: it is no retry) and
    // params.inputResponses.
    void setRetry(const QString &requestState, const QJsonObject &inputResponses);
    QString requestState() const { return m_requestState; }
    QJsonObject inputResponses() const { return m_inputResponses; }
    // The params of an elicitation/create that asks for one line of text with `message`;
    // `withMode` names the form mode.
    static QJsonObject textQuestion(const QString &message, bool withMode);
    // The text an ElicitResult gives: accepted, with a string value; otherwise nothing.
    static std::optional<QString> answerText(const QJsonObject &elicitResult);
    // Asks the client's user for one line of text with an elicitation/create form of one string
    // field, `message` being the question. `done` gets what was entered, or nothing when the user
    // declined or cancelled, the client answered with an error, or the request's answer ended
    // first (endQuestions()). One question at a time: a second one replaces the first, which gets
    // nothing. Only when canElicit(); never for a secret (the spec forbids asking for one in a
    // form).
    using TextAnswer = std::function<void(const std::optional<QString> &text)>;
    void askForText(const QString &message, TextAnswer done);
    // The id of the question that waits for its answer; undefined when none does.
    QJsonValue questionId() const { return m_questionId; }
    // The client's response to the question that waits (the transport matched its id).
    void takeResponse(const QJsonObject &response);
    // No answer can come any more (the client left, the request was answered).
    void endQuestions();

private:
    QJsonValue m_progressToken;
    std::function<void(const QJsonObject &)> m_notify;
    std::function<void()> m_onCancelled;
    bool m_cancelled = false;
    SendRequest m_sendRequest;
    bool m_elicitationMode = false;
    bool m_byRetry = false;
    QString m_requestState;
    QJsonObject m_inputResponses;
    QJsonValue m_questionId = QJsonValue::Undefined;
    TextAnswer m_answer;
};

using McpCallPtr = std::shared_ptr<McpCall>;

} // namespace replhost::http
