// SPDX-License-Identifier: Apache-2.0
#include "executionreply.h"

#include "httpexchange.h"
#include "ssestream.h"

#include "core/executiondocument.h"

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

} // namespace replhost::http
