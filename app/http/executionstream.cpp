// SPDX-License-Identifier: Apache-2.0
#include "executionstream.h"

#include "httpexchange.h"

#include <QTcpSocket>

namespace replhost::http {

ExecutionStream::ExecutionStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                                 int keepAliveMs, StreamLimiter::Lease lease, int firstIndex)
    : m_exchange(std::move(exchange)), m_execution(std::move(execution)),
      m_socket(m_exchange->socket()), m_lease(std::move(lease)),
      m_nextIndex(std::max(0, firstIndex))
{
    m_keepAlive.setInterval(std::max(1, keepAliveMs));
    connect(&m_keepAlive, &QTimer::timeout, this, [this] { send(keepAlive()); });
}

ExecutionStream::~ExecutionStream() = default;

void ExecutionStream::begin(const HeaderList &headers)
{
    if (!m_socket || !m_exchange->isConnected()) {
        lost();
        return;
    }
    connect(m_socket, &QAbstractSocket::disconnected, this, &ExecutionStream::lost);
    connect(m_socket, &QObject::destroyed, this, &ExecutionStream::lost);

    if (!m_exchange->beginStream(200, headers)) {
        lost();
        return;
    }
    if (const QByteArray head = preamble(); !head.isEmpty() && !send(head))
        return;

    // Subscribe first, then replay: everything runs in one thread, so no event can slip in
    // between, and the index check drops any event delivered twice.
    connect(m_execution.get(), &core::Execution::eventAdded, this, &ExecutionStream::onEvent);
    connect(m_execution.get(), &core::Execution::finished, this, [this] {
        // The done event normally ends the stream; this covers an execution that finishes
        // without one reaching us.
        if (m_stopped)
            return;
        if (const QByteArray tail = epilogue(); !tail.isEmpty() && !send(tail))
            return;
        finish();
    });
    const QList<sdk::Event> past = m_execution->events();
    for (int i = m_nextIndex; i < past.size() && !m_stopped; ++i)
        onEvent(past[i], i);
    if (m_stopped)
        return;
    if (m_execution->isFinished()) {
        finish();
        return;
    }
    m_keepAlive.start();
}

void ExecutionStream::onEvent(const sdk::Event &event, int index)
{
    if (m_stopped || index < m_nextIndex)
        return;
    m_nextIndex = index + 1;
    if (const QByteArray bytes = translate(event, index); !bytes.isEmpty() && !send(bytes))
        return;
    if (event.kind == sdk::Event::Kind::Done)
        finish();
}

bool ExecutionStream::send(const QByteArray &bytes)
{
    if (m_stopped)
        return false;
    if (!m_exchange->writeChunk(bytes)) {
        lost();
        return false;
    }
    if (m_keepAlive.isActive())
        m_keepAlive.start();  // the keep-alive is for silence only
    return true;
}

void ExecutionStream::lost()
{
    if (m_stopped)
        return;
    if (m_execution && !m_execution->isFinished())
        clientLeft();
    stop();
}

void ExecutionStream::finish()
{
    if (m_stopped)
        return;
    m_exchange->endStream();
    stop();
}

void ExecutionStream::stop()
{
    if (m_stopped)
        return;
    m_stopped = true;
    m_keepAlive.stop();
    m_lease.reset();  // the client may open another stream at once
    if (m_execution)
        disconnect(m_execution.get(), nullptr, this, nullptr);
    deleteLater();
}

} // namespace replhost::http
