// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "execdeventformat.h"
#include "executionstream.h"

namespace replhost::http {

// Streams one execution or command to one client in OpenSandbox execd's format
// (ExecdEventFormat): "init" first, carrying the id DELETE /code?id= (or /command?id=) takes;
// then the execution's events; a "ping" whenever nothing was sent for the ping interval; the
// stream ends after the terminal event.
//
// The stream is only begun for an execution that exists, so every error a request can meet is
// answered as JSON before it (never an empty stream, which the Go SDK rejects). A client that
// leaves only ends its stream, as with execd: the run goes on, DELETE /code?id= stops it.
//
// Ownership and threading: ExecutionStream's.
class ExecdStream : public ExecutionStream {
    Q_OBJECT
public:
    // `initId`: the context id for code, the command id for commands.
    static void start(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                      ExecdEventFormat::Mode mode, const QString &initId, int pingIntervalMs,
                      StreamLimiter::Lease lease);
    // A background command's answer: "init" and "execution_complete" at once, while the command
    // runs on (its output is read through GET /command/{id}/logs).
    static void sendDetached(HttpExchange &exchange, const QString &commandId);

private:
    ExecdStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                ExecdEventFormat::Mode mode, QString initId, int pingIntervalMs,
                StreamLimiter::Lease lease);

    static HeaderList headers();

    QByteArray preamble() override;
    QByteArray translate(const sdk::Event &event, int index) override;
    QByteArray keepAlive() override;
    bool holdsOutput() const override { return m_format.hasPending(); }
    QByteArray releaseHeld() override;
    // An execution that finished without its done event reaching the stream: what was held.
    QByteArray epilogue() override { return releaseHeld(); }
    static QByteArray frames(const QList<QJsonObject> &events);

    ExecdEventFormat m_format;
    QString m_initId;
};

} // namespace replhost::http
