// SPDX-License-Identifier: Apache-2.0
#include "mcprunwatch.h"

#include "mcpcoderesult.h"

#include "core/executiondocument.h"

namespace replhost::http {

void McpRunWatch::answer(const core::ExecutionPtr &execution, const McpCallPtr &call,
                         std::function<void(const QString &executionId)> interrupt, McpTool::Reply reply)
{
    auto finish = [execution, reply = std::move(reply)] {
        const Result<QJsonObject> document = core::ExecutionDocument::object(*execution, false);
        reply(document ? McpCodeResult::fromDocument(*document) : McpTool::failure(document.error().message));
    };
    if (execution->isFinished()) {
        finish();
        return;
    }
    std::weak_ptr<core::Execution> weak = execution;
    call->onCancelled([weak, interrupt = std::move(interrupt)] {
        if (const core::ExecutionPtr running = weak.lock(); running && !running->isFinished())
            interrupt(running->id());
    });
    if (call->wantsProgress()) {
        QObject::connect(execution.get(), &core::Execution::eventAdded, execution.get(),
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
    // Every execution finishes, however it ends; the connection, and the execution it holds,
    // go once it has fired.
    QObject::connect(execution.get(), &core::Execution::finished, execution.get(), std::move(finish),
                     Qt::SingleShotConnection);
}

} // namespace replhost::http
