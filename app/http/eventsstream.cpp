// SPDX-License-Identifier: Apache-2.0
#include "eventsstream.h"

#include "httpexchange.h"
#include "ssestream.h"

#include "core/engine.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>

#include <algorithm>

namespace replhost::http {

QJsonObject EventsStream::executionSummary(const core::Execution &execution)
{
    QJsonObject json{
            {QStringLiteral("id"), execution.id()},
            {QStringLiteral("context_id"),
             execution.contextId().isEmpty() ? QJsonValue() : QJsonValue(execution.contextId())},
            {QStringLiteral("workspace"), execution.workspace()},
            {QStringLiteral("language"), execution.language()},
            {QStringLiteral("status"), execution.status()},
            {QStringLiteral("execution_count"), execution.executionCount()},
            {QStringLiteral("started_at"), execution.startedAt().isValid()
                     ? QJsonValue(execution.startedAt().toUTC().toString(Qt::ISODateWithMs))
                     : QJsonValue()},
            {QStringLiteral("replay"), execution.isReplayable()},
            {QStringLiteral("input"), execution.acceptsInput()},
    };
    if (!execution.isFinished()) {
        json.insert(QStringLiteral("code"), execution.code());  // once, when it is announced
    } else {
        json.insert(QStringLiteral("duration_ms"), execution.durationMs());
        json.insert(QStringLiteral("output_bytes"), execution.outputBytes());
        // The last event of a finished execution is its done, and the newest is always in memory.
        const QList<sdk::Event> &recent = execution.events();
        if (!recent.isEmpty() && recent.last().kind == sdk::Event::Kind::Done)
            json.insert(QStringLiteral("done"), recent.last().toJson());
    }
    return json;
}

QJsonObject EventsStream::backgroundEntryJson(const core::BackgroundOutput::Entry &entry)
{
    return {{QStringLiteral("seq"), entry.seq},
            {QStringLiteral("at"), entry.at.toString(Qt::ISODateWithMs)},
            {QStringLiteral("after_execution_id"),
             entry.afterExecutionId.isEmpty() ? QJsonValue() : QJsonValue(entry.afterExecutionId)},
            {QStringLiteral("event"), entry.event.toJson()}};
}

void EventsStream::start(std::shared_ptr<HttpExchange> exchange, core::Engine &engine,
                         const QString &workspace, int keepAliveMs, StreamLimiter::Lease lease)
{
    auto *stream = new EventsStream(std::move(exchange), workspace, keepAliveMs, std::move(lease));
    stream->begin(engine);
}

EventsStream::EventsStream(std::shared_ptr<HttpExchange> exchange, QString workspace,
                           int keepAliveMs, StreamLimiter::Lease lease)
    : m_exchange(std::move(exchange)), m_socket(m_exchange->socket()),
      m_workspace(std::move(workspace)), m_lease(std::move(lease))
{
    m_keepAlive.setInterval(std::max(1, keepAliveMs));
    connect(&m_keepAlive, &QTimer::timeout, this, [this] {
        if (m_queue.empty() && m_dropped == 0 && !congested())
            send(QByteArrayLiteral(": keep-alive\n\n"));
    });
}

void EventsStream::begin(core::Engine &engine)
{
    if (!m_socket || !m_exchange->isConnected()) {
        stop();
        return;
    }
    connect(m_socket, &QAbstractSocket::disconnected, this, &EventsStream::stop);
    connect(m_socket, &QObject::destroyed, this, &EventsStream::stop);
    if (!m_exchange->beginStream(200, {{"Content-Type", "text/event-stream; charset=utf-8"},
                                       {"Cache-Control", "no-cache"},
                                       {"X-Accel-Buffering", "no"}})) {
        stop();
        return;
    }
    // Subscribed before ready is written: everything runs in one thread, so whatever the client
    // reads after ready is either in its answers or among the events that follow.
    core::ContextManager &contexts = engine.contexts();
    connect(&contexts, &core::ContextManager::contextAdded, this,
            [this](const core::ContextInfo &info) {
                if (wanted(info.workspace))
                    post("context_added", info.toJson());
            });
    connect(&contexts, &core::ContextManager::contextChanged, this,
            [this](const core::ContextInfo &info) {
                if (wanted(info.workspace))
                    post("context_changed", info.toJson());
            });
    connect(&contexts, &core::ContextManager::contextRemoved, this,
            [this](const QString &workspace, const QString &id) {
                if (wanted(workspace))
                    post("context_removed", {{QStringLiteral("workspace"), workspace},
                                             {QStringLiteral("id"), id}});
            });
    connect(&contexts, &core::ContextManager::executionStarted, this,
            [this](const core::ExecutionPtr &execution) {
                if (wanted(execution->workspace()))
                    post("execution_started", executionSummary(*execution));
            });
    connect(&contexts, &core::ContextManager::executionFinished, this,
            [this](const core::ExecutionPtr &execution) {
                if (wanted(execution->workspace()))
                    post("execution_finished", executionSummary(*execution));
            });
    connect(&contexts, &core::ContextManager::backgroundOutputAdded, this,
            [this](const QString &workspace, const QString &contextId,
                   const core::BackgroundOutput::Entry &entry) {
                if (!wanted(workspace))
                    return;
                QJsonObject json = backgroundEntryJson(entry);
                json.insert(QStringLiteral("workspace"), workspace);
                json.insert(QStringLiteral("context_id"), contextId);
                post("background_output", json);
            });
    connect(&engine.workspaces(), &core::WorkspaceManager::workspaceAdded, this,
            [this](const storage::WorkspaceRecord &workspace) {
                if (wanted(workspace.name))
                    post("workspace_added", {{QStringLiteral("name"), workspace.name}});
            });
    connect(&engine.workspaces(), &core::WorkspaceManager::workspaceRemoved, this,
            [this](const QString &name) {
                if (wanted(name))
                    post("workspace_removed", {{QStringLiteral("name"), name}});
            });
    connect(m_socket, &QIODevice::bytesWritten, this, [this] {
        if (!congested())
            pump();
    });
    post("ready", {{QStringLiteral("workspace"),
                    m_workspace.isEmpty() ? QJsonValue() : QJsonValue(m_workspace)}});
    if (!m_stopped)
        m_keepAlive.start();
}

bool EventsStream::wanted(const QString &workspace) const
{
    return m_workspace.isEmpty() || workspace == m_workspace;
}

void EventsStream::post(const QByteArray &type, const QJsonObject &data)
{
    if (m_stopped)
        return;
    QByteArray bytes = SseStream::format(-1, type, QJsonDocument(data).toJson(QJsonDocument::Compact));
    if (m_queue.empty() && m_dropped == 0 && !congested()) {
        send(bytes);  // the usual case: a client that keeps up gets it at once
        return;
    }
    m_queuedBytes += bytes.size();
    m_queue.push_back(std::move(bytes));
    if (m_queuedBytes > kMaxQueuedBytes) {
        // The client cannot be given every event: it is told so, and reads its state again.
        m_dropped += qint64(m_queue.size());
        m_queue.clear();
        m_queuedBytes = 0;
    }
    pump();
}

void EventsStream::pump()
{
    if (m_stopped || congested())
        return;
    if (m_dropped > 0) {
        const QJsonObject resync{{QStringLiteral("reason"), QStringLiteral("lagged")},
                                 {QStringLiteral("dropped"), m_dropped}};
        m_dropped = 0;
        if (!send(SseStream::format(-1, "resync", QJsonDocument(resync).toJson(QJsonDocument::Compact))))
            return;
    }
    while (!m_stopped && !congested() && !m_queue.empty()) {
        const QByteArray bytes = std::move(m_queue.front());
        m_queue.pop_front();
        m_queuedBytes -= bytes.size();
        if (!send(bytes))
            return;
    }
}

bool EventsStream::congested() const
{
    return m_socket && m_socket->bytesToWrite() > kHighWaterBytes;
}

bool EventsStream::send(const QByteArray &bytes)
{
    if (m_stopped)
        return false;
    if (!m_exchange->writeChunk(bytes)) {
        stop();
        return false;
    }
    if (m_keepAlive.isActive())
        m_keepAlive.start();  // the keep-alive is for silence only
    return true;
}

void EventsStream::stop()
{
    if (m_stopped)
        return;
    m_stopped = true;
    m_keepAlive.stop();
    m_queue.clear();
    m_lease.reset();  // the client may open another stream at once
    deleteLater();    // the engine's signals find nothing to do until then (m_stopped)
}

} // namespace replhost::http
