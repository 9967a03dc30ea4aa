// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "e2beventformat.h"
#include "executionstream.h"

namespace replhost::http {

// Streams one execution to one E2B client as NDJSON (E2bEventFormat): the events that happened
// before the stream began, then live ones, a keepalive line whenever nothing was sent for
// `keepAliveMs`, and end_of_execution last. Output without a line end is sent once it has
// been held for kHoldMs.
//
// Unlike the native streams, a client that leaves before the end interrupts the run, as E2B's
// server does when its SDK gives up (the `timeoutMs` option aborts the request): the context
// keeps its state, and the next run waits for the interrupted one to end.
//
// Ownership and threading: see ExecutionStream. `contexts` must outlive the stream.
class E2bExecutionStream : public ExecutionStream {
    Q_OBJECT
public:
    static void start(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                      core::ContextManager &contexts, int keepAliveMs, StreamLimiter::Lease lease);

private:
    E2bExecutionStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                       core::ContextManager &contexts, int keepAliveMs, StreamLimiter::Lease lease);

    QByteArray translate(const sdk::Event &event, int index) override;
    QByteArray epilogue() override;
    QByteArray keepAlive() override;
    void clientLeft() override;
    bool holdsOutput() const override { return m_format.hasPending(); }
    QByteArray releaseHeld() override;

    static QByteArray lines(const QList<QJsonObject> &objects);

    core::ContextManager &m_contexts;
    E2bEventFormat m_format;
};

} // namespace replhost::http
