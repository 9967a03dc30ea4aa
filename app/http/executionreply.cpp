// SPDX-License-Identifier: Apache-2.0
#include "executionreply.h"

#include "httpexchange.h"
#include "ssestream.h"

#include "core/executiondocument.h"

#include <QJsonObject>
#include <QTcpSocket>

namespace replhost::http {

void ExecutionReply::send(const std::shared_ptr<HttpExchange> &exchange,
                          const core::ExecutionPtr &execution, bool wait, int keepAliveMs,
                          StreamLimiter::Lease lease)
{
    if (!wait) {
        SseStream::start(exchange, execution, keepAliveMs, 0, std::move(lease));
        return;
    }
    if (execution->isFinished()) {
        sendDocument(*exchange, *execution);
        return;
    }
    QTcpSocket *socket = exchange->socket();
    if (!socket)
        return;  // the client has gone; the execution runs on
    // The socket is the connection's context object: if the client goes, the connection (and
    // with it the exchange) goes too. A weak pointer, because the execution owns this slot.
    std::weak_ptr<core::Execution> weak = execution;
    QObject::connect(execution.get(), &core::Execution::finished, socket,
                     [exchange, weak] {
                         if (const core::ExecutionPtr done = weak.lock())
                             sendDocument(*exchange, *done);
                     },
                     Qt::SingleShotConnection);
}

void ExecutionReply::start(const std::shared_ptr<HttpExchange> &exchange,
                           const std::function<Result<core::ExecutionPtr>()> &start,
                           int keepAliveMs, StreamLimiter &streams)
{
    const bool wait = exchange->request().queryFlag(QStringLiteral("wait"));
    StreamLimiter::Lease lease;
    if (!wait) {
        lease = streams.admit(*exchange);
        if (!lease)
            return;
    }
    const Result<core::ExecutionPtr> started = start();
    if (!started) {
        exchange->sendError(started.error());
        return;
    }
    send(exchange, *started, wait, keepAliveMs, std::move(lease));
}

void ExecutionReply::sendDocument(HttpExchange &exchange, const core::Execution &execution)
{
    Result<QByteArray> document = core::ExecutionDocument::write(execution);
    if (!document) {
        exchange.sendError(document.error());
        return;
    }
    document->append('\n');
    exchange.send(200, QByteArrayLiteral("application/json"), *document);
}

void ExecutionReply::stream(const std::shared_ptr<HttpExchange> &exchange,
                            const std::function<core::ExecutionPtr()> &find, int keepAliveMs,
                            StreamLimiter &streams)
{
    const Result<int> first = SseStream::firstIndexFor(exchange->request());
    if (!first) {
        exchange->sendError(first.error());
        return;
    }
    const core::ExecutionPtr execution = find();
    if (!execution)
        return;
    if (StreamLimiter::Lease lease = streams.admit(*exchange))
        SseStream::start(exchange, execution, keepAliveMs, *first, std::move(lease));
}

void ExecutionReply::interrupt(HttpExchange &exchange, const core::Execution &execution,
                               const QString &noun, const std::function<Result<void>()> &interrupt)
{
    if (execution.isFinished()) {
        exchange.sendError(409, QStringLiteral("conflict"),
                           QStringLiteral("%1 '%2' has already finished (status %3)")
                                   .arg(noun, execution.id(), execution.status()));
        return;
    }
    if (const Result<void> interrupted = interrupt(); !interrupted) {
        exchange.sendError(interrupted.error());
        return;
    }
    exchange.sendJson(202, QJsonObject{{QStringLiteral("id"), execution.id()},
                                       {QStringLiteral("status"), execution.status()}});
}

} // namespace replhost::http
