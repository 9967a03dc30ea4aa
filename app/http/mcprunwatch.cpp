// SPDX-License-Identifier: Apache-2.0
#include "mcprunwatch.h"

#include "mcpcoderesult.h"
#include "mcpinputstate.h"

#include "core/executiondocument.h"

#include <QTimer>

namespace replhost::http {

namespace {

// How long a question put in an InputRequiredResult waits for the client's retry before the run
// gets the end of input: a client may drop the retry (the spec lets it), and the run must not
// wait for it to its timeout, or for ever.
constexpr int kRetryWaitMs = 10 * 60 * 1000;

// The key of the question in an InputRequiredResult's inputRequests.
const QString kQuestionKey = QStringLiteral("input");

QString messageFor(const QString &prompt)
{
    return prompt.trimmed().isEmpty() ? QStringLiteral("The running code reads a line of input") : prompt;
}

// The question the execution waits for, from its last input_request event.
std::optional<sdk::Event> waitingQuestion(const core::Execution &execution)
{
    if (!execution.isWaitingForInput())
        return std::nullopt;
    const QList<sdk::Event> events = execution.events();
    for (auto it = events.crbegin(); it != events.crend(); ++it) {
        if (it->kind == sdk::Event::Kind::InputRequest)
            return *it;
    }
    return std::nullopt;
}

} // namespace

void McpRunWatch::answer(const core::ExecutionPtr &execution, const McpCallPtr &call,
                         std::function<void(const QString &executionId)> interrupt, McpTool::Reply reply,
                         AnswerInput answerInput)
{
    // Answered once: by the run's end, or by a question the client is to answer in a retry.
    auto replyOnce = std::make_shared<McpTool::Reply>(std::move(reply));
    const auto send = [replyOnce](const QJsonObject &result) {
        if (*replyOnce)
            std::exchange(*replyOnce, nullptr)(result);
    };
    auto finish = [execution, call, send] {
        call->endQuestions();
        const Result<QJsonObject> document = core::ExecutionDocument::object(*execution, false);
        send(document ? McpCodeResult::fromDocument(*document) : McpTool::failure(document.error().message));
    };
    if (execution->isFinished()) {
        finish();
        return;
    }
    // This watch's connections, which a question answered by a retry ends.
    auto connections = std::make_shared<QList<QMetaObject::Connection>>();
    std::weak_ptr<core::Execution> weak = execution;
    call->onCancelled([weak, interrupt = std::move(interrupt)] {
        if (const core::ExecutionPtr running = weak.lock(); running && !running->isFinished())
            interrupt(running->id());
    });
    if (call->wantsProgress()) {
        *connections << QObject::connect(execution.get(), &core::Execution::eventAdded, execution.get(),
                         [call](const sdk::Event &event, int index) {
                             QString message;
                             switch (event.kind) {
                             case sdk::Event::Kind::Stream: {
                                 const QString text = event.fields.value(QLatin1String("text")).toString();
                                 message = event.fields.value(QLatin1String("name")) == QLatin1String("stderr")
                                         ? QStringLiteral("[stderr] ") + text : text;
                                 break;
                             }
                             case sdk::Event::Kind::Display:
                                 message = (event.fields.value(QLatin1String("update")).toBool()
                                                    ? QStringLiteral("[display update %1]")
                                                    : QStringLiteral("[display %1]"))
                                                   .arg(
                                         event.fields.value(QLatin1String("data")).toObject().keys().join(
                                                 QStringLiteral(", ")));
                                 break;
                             case sdk::Event::Kind::Error:
                                 message = QStringLiteral("[error %1]").arg(
                                         event.fields.value(QLatin1String("ename")).toString());
                                 break;
                             case sdk::Event::Kind::Other:
                             case sdk::Event::Kind::ClearOutput:
                             case sdk::Event::Kind::InputRequest:
                                 message = QStringLiteral("[%1]").arg(event.type);  // truncated, restored, …
                                 break;
                             case sdk::Event::Kind::Started:
                             case sdk::Event::Kind::Result:
                             case sdk::Event::Kind::Done:
                                 return;  // nothing to show yet, or the answer follows
                             }
                             call->progress(index + 1, message);
                         });
    }
    if (answerInput && call->canElicit()) {
        core::Execution *run = execution.get();
        const auto ask = [call, answerInput, send, run, connections](const sdk::Event &question) {
            const QString id = question.executionId;
            // The spec forbids asking for a secret in a form. Answered once the question's
            // event has been delivered.
            if (question.fields.value(QLatin1String("password")).toBool()) {
                QMetaObject::invokeMethod(run, [answerInput, id] { answerInput(id, std::nullopt); },
                                          Qt::QueuedConnection);
                return;
            }
            const QString message = messageFor(question.fields.value(QLatin1String("prompt")).toString());
            if (!call->asksByRetry()) {
                call->askForText(message, [answerInput, id](const std::optional<QString> &text) {
                    answerInput(id, text);
                });
                return;
            }
            // The call is answered with the question; the run waits for the retry that brings
            // the answer (answer() again, on the retry's call), or for so long only.
            send({{QStringLiteral("resultType"), QStringLiteral("input_required")},
                  {QStringLiteral("inputRequests"),
                   QJsonObject{{kQuestionKey, QJsonObject{{QStringLiteral("method"), QStringLiteral("elicitation/create")},
                                                          {QStringLiteral("params"), McpCall::textQuestion(message, true)}}}}},
                  {QStringLiteral("requestState"), McpInputState::make(id)}});
            for (const QMetaObject::Connection &connection : std::as_const(*connections))
                QObject::disconnect(connection);
            call->onCancelled(nullptr);  // the retry's call cancels from here on
            const int asked = run->eventCount();
            QTimer::singleShot(kRetryWaitMs, run, [run, answerInput, id, asked] {
                if (run->isWaitingForInput() && run->eventCount() == asked)
                    answerInput(id, std::nullopt);
            });
        };
        // A retry that came without the answer is asked again what the run waits for.
        if (const std::optional<sdk::Event> waiting = waitingQuestion(*execution)) {
            ask(*waiting);
            if (!*replyOnce)
                return;
        }
        *connections << QObject::connect(execution.get(), &core::Execution::eventAdded, execution.get(),
                         [ask](const sdk::Event &event, int) {
                             if (event.kind == sdk::Event::Kind::InputRequest)
                                 ask(event);
                         });
    }
    // Every execution finishes, however it ends; the connection, and the execution it holds,
    // go once it has fired.
    *connections << QObject::connect(execution.get(), &core::Execution::finished, execution.get(),
                                     std::move(finish), Qt::SingleShotConnection);
}

} // namespace replhost::http
