// SPDX-License-Identifier: Apache-2.0
#include "execdstream.h"

#include "httpexchange.h"

#include <QDateTime>
#include <QTcpSocket>

namespace replhost::http {

namespace {

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

void ExecdStream::start(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                        ExecdEventFormat::Mode mode, const QString &initId, int pingIntervalMs,
                        StreamLimiter::Lease lease)
{
    auto *stream = new ExecdStream(std::move(exchange), std::move(execution), mode, initId,
                                   pingIntervalMs, std::move(lease));
    stream->begin(headers());
}

void ExecdStream::sendDetached(HttpExchange &exchange, const QString &commandId)
{
    if (!exchange.beginStream(200, headers()))
        return;
    exchange.writeChunk(ExecdEventFormat::frame(ExecdEventFormat::init(commandId, nowMs()))
                        + ExecdEventFormat::frame(ExecdEventFormat::complete(0, nowMs())));
    exchange.endStream();
}

ExecdStream::ExecdStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                         ExecdEventFormat::Mode mode, QString initId, int pingIntervalMs,
                         StreamLimiter::Lease lease)
    : ExecutionStream(std::move(exchange), std::move(execution), pingIntervalMs, std::move(lease)),
      m_format(mode),
      m_initId(std::move(initId))
{
}

HeaderList ExecdStream::headers()
{
    return {{"Content-Type", "text/event-stream"},
            {"Cache-Control", "no-cache"},
            {"X-Accel-Buffering", "no"}};
}

QByteArray ExecdStream::preamble()
{
    return ExecdEventFormat::frame(ExecdEventFormat::init(m_initId, nowMs()));
}

QByteArray ExecdStream::translate(const sdk::Event &event, int)
{
    sdk::Event translated = event;
    if (event.kind == sdk::Event::Kind::Done && !event.fields.contains(QStringLiteral("duration_ms")))
        translated.fields.insert(QStringLiteral("duration_ms"), execution()->durationMs());
    return frames(m_format.translate(translated, nowMs()));
}

QByteArray ExecdStream::frames(const QList<QJsonObject> &events)
{
    QByteArray bytes;
    for (const QJsonObject &wire : events)
        bytes += ExecdEventFormat::frame(wire);
    return bytes;
}

QByteArray ExecdStream::releaseHeld()
{
    return frames(m_format.flushPending(nowMs()));
}

QByteArray ExecdStream::keepAlive()
{
    return ExecdEventFormat::frame(ExecdEventFormat::ping(nowMs()));
}

} // namespace replhost::http
