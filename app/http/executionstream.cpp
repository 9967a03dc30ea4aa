// SPDX-License-Identifier: Apache-2.0
#include "executionstream.h"

#include "httpexchange.h"

#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcExecutionStream, "replhost.http.stream", QtInfoMsg)

namespace {

// Unsent bytes a stream lets its socket hold before it waits for the client.
constexpr qint64 kHighWaterBytes = 1024 * 1024;
// Events read at a time when the stream is behind (from memory or the history).
constexpr int kPageEvents = 64;

} // namespace

ExecutionStream::ExecutionStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                                 int keepAliveMs, StreamLimiter::Lease lease, int firstIndex)
    : m_exchange(std::move(exchange)), m_execution(std::move(execution)),
      m_socket(m_exchange->socket()), m_lease(std::move(lease)),
      m_nextIndex(std::max(0, firstIndex))
{
    m_keepAlive.setInterval(std::max(1, keepAliveMs));
    connect(&m_keepAlive, &QTimer::timeout, this, [this] { send(keepAlive()); });
    m_hold.setSingleShot(true);
    m_hold.setInterval(kHoldMs);
    connect(&m_hold, &QTimer::timeout, this, [this] {
        if (m_nextIndex < m_execution->eventCount()) {
            m_hold.start();  // what ends the held line may be waiting in the events
            return;
        }
        if (const QByteArray held = releaseHeld(); !held.isEmpty())
            send(held);
    });
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

    // Only now: a write's flush() emits bytesWritten at once, and the head must go first.
    connect(m_socket, &QIODevice::bytesWritten, this, [this] {
        if (!congested())
            pump();
    });
    // Subscribe first, then catch up: everything runs in one thread, so no event can slip in
    // between, and the cursor drops any event delivered twice.
    connect(m_execution.get(), &core::Execution::eventAdded, this, &ExecutionStream::onEvent);
    // The done event normally ends the stream; pump() also ends one whose execution finished
    // without one reaching us.
    connect(m_execution.get(), &core::Execution::finished, this, &ExecutionStream::pump);
    pump();
    if (!m_stopped)
        m_keepAlive.start();
}

void ExecutionStream::onEvent(const sdk::Event &event, int index)
{
    if (m_stopped || index < m_nextIndex)
        return;
    if (index == m_nextIndex && !congested())
        write(event, index);  // the usual case: a client that keeps up gets it at once
    else if (!congested())
        pump();
    // Congested: the socket's bytesWritten resumes from the cursor.
}

void ExecutionStream::pump()
{
    if (m_stopped || m_pumping)
        return;
    m_pumping = true;
    while (!m_stopped && !congested() && m_nextIndex < m_execution->eventCount()) {
        const Result<QList<sdk::Event>> page = m_execution->eventRange(m_nextIndex, kPageEvents);
        if (!page) {
            qCWarning(lcExecutionStream) << "stream of execution" << m_execution->id()
                                         << "cut at event" << m_nextIndex << ":"
                                         << page.error().message;
            stop();  // first, so the abort is not taken for a client that left
            if (m_socket)
                m_socket->abort();
            break;
        }
        for (const sdk::Event &event : *page) {
            if (m_stopped || congested())
                break;
            write(event, m_nextIndex);
        }
    }
    m_pumping = false;
    if (!m_stopped && !m_doneWritten && m_execution->isFinished()
        && m_nextIndex >= m_execution->eventCount()) {
        if (const QByteArray tail = epilogue(); !tail.isEmpty() && !send(tail))
            return;
        finish();
    }
}

void ExecutionStream::write(const sdk::Event &event, int index)
{
    // Both before the write: its flush() can call pump() again.
    m_nextIndex = index + 1;
    m_doneWritten = event.kind == sdk::Event::Kind::Done;
    if (const QByteArray bytes = translate(event, index); !bytes.isEmpty() && !send(bytes))
        return;
    if (event.kind == sdk::Event::Kind::Done) {
        finish();
        return;
    }
    // Timed from the moment something is held, not restarted by later output: text that
    // never ends its line (a progress bar) still goes out every kHoldMs.
    if (!holdsOutput())
        m_hold.stop();
    else if (!m_hold.isActive())
        m_hold.start();
}

bool ExecutionStream::congested() const
{
    return m_socket && m_socket->bytesToWrite() > kHighWaterBytes;
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
    m_hold.stop();
    m_lease.reset();  // the client may open another stream at once
    if (m_execution)
        disconnect(m_execution.get(), nullptr, this, nullptr);
    deleteLater();
}

} // namespace replhost::http
