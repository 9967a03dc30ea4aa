// SPDX-License-Identifier: Apache-2.0
#include "e2bexecutionstream.h"

#include <QDateTime>

namespace replhost::http {

void E2bExecutionStream::start(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                               core::ContextManager &contexts, int keepAliveMs,
                               StreamLimiter::Lease lease)
{
    auto *stream = new E2bExecutionStream(std::move(exchange), std::move(execution), contexts,
                                          keepAliveMs, std::move(lease));
    stream->begin({{"Content-Type", "application/x-ndjson"},
                   {"Cache-Control", "no-cache"},
                   {"X-Accel-Buffering", "no"}});
}

E2bExecutionStream::E2bExecutionStream(std::shared_ptr<HttpExchange> exchange,
                                       core::ExecutionPtr execution, core::ContextManager &contexts,
                                       int keepAliveMs, StreamLimiter::Lease lease)
    : ExecutionStream(std::move(exchange), std::move(execution), keepAliveMs, std::move(lease)),
      m_contexts(contexts)
{
}

QByteArray E2bExecutionStream::lines(const QList<QJsonObject> &objects)
{
    QByteArray bytes;
    for (const QJsonObject &object : objects)
        bytes += E2bEventFormat::line(object);
    return bytes;
}

QByteArray E2bExecutionStream::translate(const sdk::Event &event, int)
{
    return lines(m_format.translate(event, QDateTime::currentDateTimeUtc()));
}

QByteArray E2bExecutionStream::releaseHeld()
{
    return lines(m_format.flushPending(QDateTime::currentDateTimeUtc()));
}

QByteArray E2bExecutionStream::epilogue()
{
    return lines(m_format.flushPending(QDateTime::currentDateTimeUtc()))
            + E2bEventFormat::line(E2bEventFormat::endOfExecution());
}

QByteArray E2bExecutionStream::keepAlive()
{
    return E2bEventFormat::line(E2bEventFormat::keepAlive());
}

void E2bExecutionStream::clientLeft()
{
    // Nobody will read the rest: stop the run, as E2B does. A queued run leaves the queue, a
    // running one is interrupted; the context and its state stay. A failure has nobody to be
    // told to (it only means the run is no longer known, so there is nothing to stop).
    static_cast<void>(m_contexts.interruptExecution(execution()->id()));
}

} // namespace replhost::http
