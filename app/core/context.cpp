// SPDX-License-Identifier: Apache-2.0
#include "context.h"

#include "commitbarrier.h"
#include "jsonwriter.h"
#include "pluginregistry.h"
#include "residencylimiter.h"
#include "storage/historywriter.h"
#include "storage/store.h"
#include "warmpool.h"
#include "workspacemanager.h"
#include "workerconfinement.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>

#include <replhost/sdk/workerprocess.h>

namespace replhost::core {

using sdk::Event;
using sdk::Session;

namespace {

Q_LOGGING_CATEGORY(lcContext, "replhost.context")

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// How long an evicted interpreter may take to answer a snapshot request.
constexpr int kSnapshotTimeoutMs = 10000;

// Bytes an event adds to an execution's output, for the output cap.
qint64 outputSize(const Event &event)
{
    switch (event.kind) {
    case Event::Kind::Stream:
        return event.fields.value(QLatin1String("text")).toString().size();
    case Event::Kind::Display:
    case Event::Kind::Result:
        return QJsonDocument(event.fields.value(QLatin1String("data")).toObject())
            .toJson(QJsonDocument::Compact).size();
    default:
        return 0;
    }
}

// The stored form of what a driver sent in a "snapshot" event or a snapshot_reply.
storage::SnapshotRecord snapshotRecord(const QString &contextId, int executionCount,
                                       const QJsonObject &fields)
{
    storage::SnapshotRecord record;
    record.contextId = contextId;
    record.executionCount = executionCount;
    record.format = fields.value(QLatin1String("format")).toString();
    record.error = fields.value(QLatin1String("error")).toString();
    if (record.error.isEmpty() && record.format.isEmpty())
        record.error = QStringLiteral("the interpreter's snapshot names no format");
    if (record.error.isEmpty())
        record.data = fields.value(QLatin1String("data")).toString().toUtf8();
    record.lost = QString::fromUtf8(
        QJsonDocument(fields.value(QLatin1String("lost")).toArray()).toJson(QJsonDocument::Compact));
    record.createdAt = nowMs();
    return record;
}

} // namespace

Context::Context(ContextManager *manager, storage::ContextRecord record, QString workspaceName,
                 bool dormant)
    : QObject(manager)
    , m_manager(manager)
    , m_record(std::move(record))
    , m_workspaceName(std::move(workspaceName))
    , m_state(dormant ? QStringLiteral("dormant") : QStringLiteral("starting"))
{
    touch();
    if (dormant)
        expectRestore();
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, [this] {
        if (!m_running.execution || !m_session)
            return;
        m_timedOut = true;
        m_session->interrupt(m_running.execution->id());
    });
}

Context::~Context()
{
    // The session's destructor kills the worker's process group; no signals reach us from it.
    if (m_session)
        m_session->disconnect(this);
}

ContextInfo Context::info() const
{
    ContextInfo info;
    info.id = m_record.id;
    info.workspace = m_workspaceName;
    info.language = m_record.language;
    info.name = m_record.name;
    info.cwd = m_record.cwd;
    info.state = m_state;
    info.executionCount = m_record.executionCount;
    info.queued = int(m_queue.size());
    info.pid = m_session ? m_session->info().pid : 0;
    info.createdAt = m_record.createdAt;
    info.lastUsedAt = m_record.lastUsedAt;
    info.languageVersion = m_languageVersion;
    info.restore = m_record.restorePolicy == storage::RestorePolicy::Fresh
                       ? QStringLiteral("fresh")
                       : QStringLiteral("replay");
    info.resident = bool(m_session);
    info.lastRestore = m_lastRestore;
    return info;
}

void Context::setState(const QString &state)
{
    if (m_state == state)
        return;
    m_state = state;
    emit changed();
}

void Context::invalidateEnvironment()
{
    m_desiredEnvValid = false;
    m_appliedIsDesired = false;
}

Environment Context::desiredEnvironment()
{
    if (m_desiredEnvValid)
        return m_desiredEnv;
    Environment env = m_manager->baseEnvironment(m_record.workspaceId);
    if (auto ws = m_manager->m_store->env(storage::EnvScope::Workspace, m_record.workspaceId))
        env = EnvLayers::apply(env, *ws);
    if (auto ctx = m_manager->m_store->env(storage::EnvScope::Context, m_record.id))
        env = EnvLayers::apply(env, *ctx);
    m_desiredEnv = env;
    m_desiredEnvValid = true;
    return env;
}

Result<void> Context::ensureSession()
{
    if (m_session)
        return {};
    auto plugin = m_manager->m_plugins->resolve(m_record.language);
    if (!plugin)
        return plugin.error();
    const PluginEntry *entry = *plugin;
    if (auto allowed = m_manager->checkIsolation(m_record.workspaceId); !allowed)
        return allowed.error();

    sdk::SessionOptions options;
    options.contextId = m_record.id;
    // A replay starts where the state it rebuilds started.
    options.workingDirectory = m_restorePending && !m_record.replayBaseCwd.isEmpty()
                                   ? m_record.replayBaseCwd
                                   : m_record.cwd;
    if (!QDir(options.workingDirectory).exists()) {
        // The directory went away while the context slept: fall back to the workspace root.
        if (auto ws = m_manager->m_store->workspaceById(m_record.workspaceId); ws && ws->has_value())
            options.workingDirectory = ws->value().directory;
    }
    options.environment = desiredEnvironment();
    options.settings = m_manager->workerSettings(entry->id, m_record.workspaceId, m_record.id);

    // A pooled worker has the base environment and a neutral cwd: the first request it gets
    // carries the env layers as a delta and this context's cwd (prepareRequest()).
    std::optional<WarmPool::Worker> pooled =
        m_manager->m_pool->take(entry->id, options.settings, options.environment);
    if (pooled) {
        m_session = std::move(pooled->session);
        m_appliedEnv = pooled->environment;
        m_appliedIsDesired = false;
        m_bindCwd = options.workingDirectory;
    } else {
        m_session = WorkerConfinement::createSession(*entry, options);
        m_appliedEnv = options.environment;
        m_appliedIsDesired = true;
        m_bindCwd.clear();
    }
    m_sessionReady = false;
    Session *session = m_session.get();
    connect(session, &Session::ready, this, &Context::onSessionReady);
    connect(session, &Session::failed, this, &Context::onSessionFailed);
    connect(session, &Session::event, this, &Context::onSessionEvent);
    connect(session, &Session::terminated, this, &Context::onSessionTerminated);
    setState(QStringLiteral("starting"));
    emit m_manager->workerStarted(m_record.language, m_hadWorker);
    m_hadWorker = true;
    if (m_restorePending)
        m_restoreClock.start();
    if (!pooled)
        session->start();
    m_manager->m_residency->admit(this);
    if (pooled && session->state() == Session::State::Idle) {
        // It was ready in the pool, so no ready() will come: one is made up, from the event loop
        // like a real one, so callers finish queueing what waits for it first.
        QMetaObject::invokeMethod(this, [this, guard = QPointer<Session>(session)] {
            if (guard && m_session.get() == guard && !m_sessionReady)
                onSessionReady();
        }, Qt::QueuedConnection);
    }
    return {};
}

void Context::onSessionReady()
{
    m_sessionReady = true;
    m_languageVersion = m_session->info().languageVersion;
    if (m_restorePending) {
        beginRestore();
        return;
    }
    setState(QStringLiteral("idle"));
    answerWhenReady();
    pump();
    m_manager->m_residency->settle();  // a starting worker could not be evicted until now
}

qint64 Context::monotonicNow()
{
    return QDeadlineTimer::current().deadline();
}

void Context::touch()
{
    static quint64 activityCounter = 0;  // the engine thread's only
    m_lastActive = monotonicNow();
    m_activityOrder = ++activityCounter;
}

bool Context::isEvictable() const
{
    return m_session && m_sessionReady && !isRestoring() && !m_running.execution && m_queue.isEmpty()
           && m_whenReady.isEmpty();
}

bool Context::isWarmingUp() const
{
    return m_session && !m_sessionReady && !m_restorePending && !m_running.execution
           && m_queue.isEmpty() && m_whenReady.isEmpty();
}

void Context::evict()
{
    if (!isEvictable())
        return;
    // A clean exit (the shutdown request, then signals) lets the interpreter flush what user code
    // left buffered. The session is no longer this context's: it deletes itself once gone, or
    // with the manager.
    // A driver that takes snapshots on request is asked for one first; the interpreter is shut
    // down once it has answered. A restore that comes before the answer uses what is stored.
    auto *worker = qobject_cast<sdk::WorkerProcess *>(m_session.get());
    const bool snapshot = worker && hasStateSinceBase()
                          && snapshotCapability() == QLatin1String("on_request");
    Session *session = m_session.release();
    session->disconnect(this);
    session->setParent(m_manager);
    connect(session, &Session::terminated, session, &QObject::deleteLater);
    if (snapshot) {
        m_snapshotting = session;
        worker->requestSnapshot([this, writer = m_manager->m_writer, id = m_record.id,
                                 count = m_record.executionCount,
                                 context = QPointer<Context>(this),
                                 guard = QPointer<Session>(session)](Result<QJsonObject> reply) {
            if (reply)
                writer->saveSnapshot(snapshotRecord(id, count, *reply));
            if (guard)
                guard->shutdown();
            if (!context || m_snapshotting != guard)
                return;
            m_snapshotting.clear();
            if (std::exchange(m_restoreWaitsForSnapshot, false) && m_session && m_sessionReady)
                beginRestore();
        });
        // Pickling runs user code (__reduce__): one that never returns costs the snapshot, not
        // the context. The restore then goes on from what is stored.
        QTimer::singleShot(kSnapshotTimeoutMs, session, [this, context = QPointer<Context>(this),
                                                         guard = QPointer<Session>(session)] {
            if (!context || !guard || m_snapshotting != guard)
                return;
            m_snapshotting.clear();
            guard->shutdown();
            if (std::exchange(m_restoreWaitsForSnapshot, false) && m_session && m_sessionReady)
                beginRestore();
        });
    } else {
        session->shutdown();
    }
    m_sessionReady = false;
    expectRestore();
    setState(QStringLiteral("dormant"));
    emit changed();  // pid and residency changed even if the state name did not
}

void Context::expectRestore()
{
    if (!hasStateSinceBase())
        return;  // a fresh interpreter is all the state there is
    if (m_record.restorePolicy == storage::RestorePolicy::Replay)
        m_restorePending = true;
    else
        startAfresh();
}

void Context::startAfresh()
{
    m_restorePending = false;
    if (hasStateSinceBase())
        m_noticeStateLoss = true;
    moveReplayBase();
}

void Context::moveReplayBase()
{
    if (m_record.replayBaseCount == m_record.executionCount
        && m_record.replayBaseCwd == m_record.cwd)
        return;
    m_record.replayBaseCount = m_record.executionCount;
    m_record.replayBaseCwd = m_record.cwd;
    if (auto r = m_manager->m_store->setReplayBase(m_record.id, m_record.replayBaseCount,
                                                   m_record.replayBaseCwd);
        !r) {
        // Kept in memory regardless; only a restore after a host restart would reach back
        // further than it should.
        qCWarning(lcContext) << "context" << m_record.id << r.error().message;
    }
}

void Context::beginRestore()
{
    setState(QStringLiteral("restoring"));
    if (m_snapshotting) {
        m_restoreWaitsForSnapshot = true;  // the snapshot the evicted interpreter is taking
        return;
    }
    m_restorePart = RestoreReport{};
    // The newest runs, and the snapshots taken with them, may still wait in the writer's queue.
    m_manager->m_writer->flush();
    const QString capability = snapshotCapability();
    if (capability.isEmpty()) {
        beginReplay(m_record.replayBaseCount, m_restorePart);
        return;
    }
    std::optional<storage::SnapshotRecord> snapshot;
    QString why;  // the snapshot there is cannot be used
    if (auto read = m_manager->m_store->snapshot(m_record.id); !read) {
        why = read.error().message;
    } else if (read->has_value() && (*read)->executionCount > m_record.replayBaseCount
               && (*read)->executionCount <= m_record.executionCount) {
        // A snapshot at or before the base is from before a restart or a lost state.
        if ((*read)->isUsable())
            snapshot = **read;
        else
            why = (*read)->error;
    }
    if (!snapshot) {
        restoreWithoutSnapshot(why);
        return;
    }

    m_restorePart.fromSnapshot = true;
    m_restorePart.snapshotExecutionCount = snapshot->executionCount;
    for (const QJsonValue &lost : QJsonDocument::fromJson(snapshot->lost.toUtf8()).array())
        m_restorePart.lost.append(lost.toString());
    m_snapshotRestore = SnapshotRestore{{}, *snapshot, {}, {}};
    if (capability == QLatin1String("after_run")) {
        // The snapshot is code in the context's language: it runs like a replayed execution,
        // output dropped, with the count of the execution it stands for.
        sdk::ExecuteRequest request;
        request.id = QStringLiteral("restore-") + m_record.id;
        request.code = QString::fromUtf8(snapshot->data);
        request.executionCount = snapshot->executionCount;
        prepareRequest(request);
        m_snapshotRestore->requestId = request.id;
        m_session->execute(request);
        return;
    }
    auto *worker = qobject_cast<sdk::WorkerProcess *>(m_session.get());
    if (!worker) {
        m_snapshotRestore.reset();
        beginReplay(m_record.replayBaseCount, RestoreReport{});
        return;
    }
    worker->restoreSnapshot(
        {{QStringLiteral("format"), snapshot->format},
         {QStringLiteral("data"), QString::fromLatin1(snapshot->data)}},
        [this, guard = QPointer<Context>(this), session = QPointer<Session>(worker)](
            Result<QJsonObject> reply) {
            if (!guard || !m_snapshotRestore || !session || m_session.get() != session)
                return;  // the restore was stopped, or its interpreter is gone (handled there)
            if (!reply)
                snapshotRestoreFailed(reply.error().message);
            else if (const QString error = reply->value(QLatin1String("error")).toString();
                     !error.isEmpty())
                snapshotRestoreFailed(error);
            else
                snapshotRestored(*reply);
        });
}

void Context::restoreWithoutSnapshot(const QString &why)
{
    RestoreReport part;
    part.snapshotError = why;
    if (snapshotCapability() != QLatin1String("after_run") || !m_manager->isDefaultContext(this)) {
        beginReplay(m_record.replayBaseCount, part);
        return;
    }
    // A shell's default context is where an agent runs commands with side effects: repeating
    // them is worse than starting afresh and saying so.
    m_restorePending = false;
    m_stateResetReason =
        QStringLiteral("this context's shell was started afresh: it had no snapshot to restore "
                       "from (%1), and the default context of %2 is never restored by re-running "
                       "its history")
            .arg(why.isEmpty() ? QStringLiteral("none was taken") : why, m_record.language);
    startAfresh();
    setState(QStringLiteral("idle"));
    answerWhenReady();
    pump();
    m_manager->m_residency->settle();
}

void Context::beginReplay(int afterCount, const RestoreReport &part)
{
    m_restorePart = part;
    auto rows = m_manager->m_store->replayableExecutions(m_record.id, afterCount);
    if (!rows) {
        RestoreReport report = part;
        report.outcome = RestoreReport::Outcome::HistoryUnreadable;
        report.ename = QStringLiteral("HistoryUnreadable");
        report.evalue = rows.error().message;
        report.durationMs = m_restoreClock.elapsed();
        m_restoreReport = report;
        m_lastRestore = report.toJson();
        m_restorePending = false;
        m_noticeStateLoss = true;  // the base stays: the history may be readable next time
        setState(QStringLiteral("idle"));
        answerWhenReady();
        pump();
        return;
    }
    // On top of a snapshot the interpreter already holds the state: it is never thrown away,
    // and retention keeps every execution after the snapshot.
    if (!part.fromSnapshot) {
        // Retention removed executions this replay would run, because a snapshot stood for them
        // (storage::HistoryPruner): replaying what is left would build a state that never was.
        auto pruned = m_manager->m_store->prunedExecutionCount(m_record.id);
        if (pruned && *pruned > afterCount) {
            RestoreReport report = part;
            report.outcome = RestoreReport::Outcome::HistoryPruned;
            report.total = int(rows->size());
            report.reason =
                QStringLiteral("the history this context would replay is gone up to execution "
                               "%1 (the workspace's history limits removed it, as a snapshot "
                               "stood for it)%2; it was started afresh")
                    .arg(*pruned)
                    .arg(part.snapshotError.isEmpty()
                             ? QString()
                             : QStringLiteral(", and the snapshot could not be used: ")
                                   + part.snapshotError);
            restoreAfresh(report);
            return;
        }
        // Past the workspace's bounds a restore would take too long to be worth it, or longer
        // than a client waits: nothing is replayed and the state starts afresh from here, which
        // the restored event says (state_lost, with the bound and the reason).
        const auto settings = m_manager->m_workspaces->settings(m_workspaceName);
        if (const std::optional<RestoreReport> over = Replay::exceedsBounds(
                    *rows, settings ? settings->restore : WorkspaceSettings::Restore{})) {
            RestoreReport report = part;
            report.outcome = over->outcome;
            report.total = over->total;
            report.limit = over->limit;
            report.limitValue = over->limitValue;
            report.reason = over->reason;
            restoreAfresh(report);
            return;
        }
    }
    m_replay.emplace(std::move(*rows));
    continueRestore();
}

void Context::restoreAfresh(RestoreReport report)
{
    report.durationMs = m_restoreClock.elapsed();
    m_restoreReport = report;
    m_lastRestore = report.toJson();
    m_restorePending = false;
    // The interpreter was started where the state started: that is its cwd now.
    if (!m_record.replayBaseCwd.isEmpty())
        m_record.cwd = m_record.replayBaseCwd;
    moveReplayBase();
    setState(QStringLiteral("idle"));
    answerWhenReady();
    pump();
    m_manager->m_residency->settle();
}

void Context::continueRestore()
{
    if (std::optional<sdk::ExecuteRequest> request = m_replay->next()) {
        prepareRequest(*request);
        m_session->execute(*request);
        return;
    }
    finishRestore();
}

void Context::finishRestore()
{
    const RestoreReport &replayed = m_replay->report();
    RestoreReport report = m_restorePart;
    report.outcome = replayed.outcome;
    report.replayed = replayed.replayed;
    report.total = replayed.total;
    report.failedExecutionId = replayed.failedExecutionId;
    report.failedExecutionCount = replayed.failedExecutionCount;
    report.ename = replayed.ename;
    report.evalue = replayed.evalue;
    const QString cwd = m_replay->cwd();
    const bool lost = m_replay->lostInterpreter();
    m_replay.reset();
    endRestore(report, cwd, lost);
}

void Context::endRestore(RestoreReport report, const QString &cwd, bool lostInterpreter)
{
    report.durationMs = m_restoreClock.elapsed();
    if (!cwd.isEmpty())
        m_record.cwd = cwd;
    m_restorePending = false;
    m_restoreReport = report;
    m_lastRestore = report.toJson();
    if (lostInterpreter) {
        // Restoring killed the interpreter. Doing it again would kill the next one too: the
        // context starts afresh from here, and later restores do not reach back past this point.
        detachSession();
        startAfresh();
        setState(QStringLiteral("dead"));
        if (!m_queue.isEmpty() || !m_whenReady.isEmpty()) {
            if (auto r = ensureSession(); !r) {
                failWhenReady(r.error().message);
                while (!m_queue.isEmpty())
                    abort(m_queue.dequeue(), QStringLiteral("StartFailed"), r.error().message);
            }
        }
        return;
    }
    setState(QStringLiteral("idle"));
    answerWhenReady();
    pump();
    m_manager->m_residency->settle();
}

QString Context::snapshotCapability() const
{
    if (!m_session)
        return {};
    const QString capability =
        m_session->info().capabilities.value(QLatin1String("snapshot")).toString();
    return capability == QLatin1String("after_run") || capability == QLatin1String("on_request")
               ? capability
               : QString();
}


void Context::onSnapshotEvent(const Event &event)
{
    // The state after a run, after a replayed one, or after a restore.
    int count = 0;
    if (m_running.execution && event.executionId == m_running.execution->id())
        count = m_record.executionCount;
    else if (m_replay && m_replay->owns(event))
        count = m_replay->inFlightExecutionCount();
    else if (m_snapshotRestore && event.executionId == m_snapshotRestore->requestId)
        count = m_snapshotRestore->snapshot.executionCount;  // the same state, without what it lost
    if (count <= 0)
        return;
    // Queued before the run's finish, so it is durable no later than the finish: a run that
    // finished without a newer snapshot left the state as the stored one has it.
    m_manager->m_writer->saveSnapshot(snapshotRecord(m_record.id, count, event.fields));
}

bool Context::onSnapshotRestoreEvent(const Event &event)
{
    if (m_snapshotRestore->requestId.isEmpty() || event.executionId != m_snapshotRestore->requestId)
        return false;
    if (event.kind == Event::Kind::Error && m_snapshotRestore->ename.isEmpty()) {
        m_snapshotRestore->ename = event.fields.value(QLatin1String("ename")).toString();
        m_snapshotRestore->evalue = event.fields.value(QLatin1String("evalue")).toString();
    }
    if (event.kind != Event::Kind::Done)
        return true;  // its output is dropped
    if (event.fields.value(QLatin1String("state_lost")).toBool()) {
        RestoreReport report = m_restorePart;
        report.outcome = RestoreReport::Outcome::InterpreterLost;
        report.ename = m_snapshotRestore->ename;
        report.evalue = m_snapshotRestore->evalue;
        m_snapshotRestore.reset();
        endRestore(report, {}, true);
        return true;
    }
    // A snapshot script ends with the shell's own options, whose status is 0: a run that
    // failed anyway still leaves everything before the failing line restored.
    QJsonObject reply{{QStringLiteral("cwd"), event.fields.value(QLatin1String("cwd"))}};
    if (event.fields.value(QLatin1String("status")).toString() != QLatin1String("ok"))
        m_restorePart.snapshotError =
            QStringLiteral("the snapshot ran with status \"%1\": %2 %3")
                .arg(event.fields.value(QLatin1String("status")).toString(),
                     m_snapshotRestore->ename, m_snapshotRestore->evalue)
                .trimmed();
    snapshotRestored(reply);
    return true;
}

void Context::snapshotRestored(const QJsonObject &reply)
{
    const int count = m_snapshotRestore->snapshot.executionCount;
    const bool afterRun = snapshotCapability() == QLatin1String("after_run");
    m_snapshotRestore.reset();
    const QString cwd = reply.value(QLatin1String("cwd")).toString();
    if (!cwd.isEmpty()) {
        m_record.cwd = cwd;
        // A pooled worker still to be bound is bound to where the snapshot left it, not to
        // where a replay would have started.
        if (!m_bindCwd.isEmpty())
            m_bindCwd = cwd;
    }
    for (const QJsonValue &lost : reply.value(QLatin1String("lost")).toArray())
        m_restorePart.lost.append(lost.toString());
    if (afterRun) {
        // Taken after every run that changed the state: the runs after it changed nothing.
        endRestore(m_restorePart, {}, false);
        return;
    }
    // Taken on request (eviction, a clean stop): what ran after it is replayed on top.
    beginReplay(count, m_restorePart);
}

void Context::snapshotRestoreFailed(const QString &why)
{
    // The driver restores all or nothing: the interpreter is still fresh, so the whole history
    // is replayed instead.
    m_snapshotRestore.reset();
    RestoreReport part;
    part.snapshotError = QStringLiteral("the snapshot could not be restored: %1").arg(why);
    beginReplay(m_record.replayBaseCount, part);
}

bool Context::snapshotBeforeStop(std::function<void()> done)
{
    if (!isEvictable() || !hasStateSinceBase()
        || snapshotCapability() != QLatin1String("on_request"))
        return false;
    auto *worker = qobject_cast<sdk::WorkerProcess *>(m_session.get());
    if (!worker)
        return false;
    storage::HistoryWriter *writer = m_manager->m_writer;
    worker->requestSnapshot([writer, id = m_record.id, count = m_record.executionCount,
                             done = std::move(done)](Result<QJsonObject> reply) {
        if (reply)
            writer->saveSnapshot(snapshotRecord(id, count, *reply));
        done();
    });
    return true;
}

void Context::stopUnwantedRestore()
{
    if (!isRestoring() || !m_queue.isEmpty() || !m_whenReady.isEmpty())
        return;
    m_replay.reset();
    m_snapshotRestore.reset();
    m_restoreWaitsForSnapshot = false;
    m_session->disconnect(this);
    m_session.reset();  // kills the half-restored interpreter's process group now
    m_sessionReady = false;
    setState(QStringLiteral("dormant"));  // m_restorePending is still set: the next use retries
}

sdk::EnvChange Context::takeContextDelta()
{
    if (m_appliedIsDesired)
        return {};
    const Environment desired = desiredEnvironment();
    sdk::EnvChange delta = EnvLayers::diff(m_appliedEnv, desired);
    m_appliedEnv = desired;
    m_appliedIsDesired = true;
    return delta;
}

void Context::prepareRequest(sdk::ExecuteRequest &request)
{
    const bool binding = !m_bindCwd.isEmpty();
    request.env.context = takeContextDelta();
    if (!binding)
        return;
    // The first request to a worker from the pool: it was spawned without this context.
    request.cwd = std::exchange(m_bindCwd, {});
    request.env.context.set.insert(QStringLiteral("REPLHOST_CONTEXT_ID"), m_record.id);
}

void Context::warmUp()
{
    if (auto r = ensureSession(); !r)
        setState(QStringLiteral("dead"));
}

void Context::enqueue(const ExecutionPtr &execution, const QMap<QString, QString> &execEnv,
                      const QStringList &execUnset, const RunLimits &limits)
{
    Pending pending;
    pending.execution = execution;
    pending.execEnv.set = execEnv;
    pending.execEnv.unset = execUnset;
    pending.limits = limits;
    m_queue.enqueue(pending);
    if (auto r = ensureSession(); !r) {
        while (!m_queue.isEmpty())
            abort(m_queue.dequeue(), QStringLiteral("StartFailed"), r.error().message);
        setState(QStringLiteral("dead"));
        emit changed();
        return;
    }
    pump();
    if (m_running.execution != execution)
        emit changed();  // it waits in the queue; pump() announces the runs it starts
}

void Context::pump()
{
    if (m_running.execution || m_queue.isEmpty() || !m_session || !m_sessionReady || isRestoring())
        return;
    m_running = m_queue.dequeue();
    m_lastExecutionId = m_running.execution->id();
    m_runningOutput = 0;
    m_runningTruncated = false;
    m_timedOut = false;
    const ExecutionPtr &execution = m_running.execution;

    m_record.executionCount += 1;
    m_record.lastUsedAt = nowMs();
    execution->setExecutionCount(m_record.executionCount);
    execution->markRunning();

    sdk::ExecuteRequest request;
    request.id = execution->id();
    request.code = execution->code();
    request.executionCount = m_record.executionCount;
    request.env.exec = m_running.execEnv;
    request.allowInput = execution->acceptsInput();
    prepareRequest(request);
    // The request goes out first: the rest is bookkeeping that nothing can observe before the
    // event loop turns, which is when the worker's events are read (execute() emits none). Across
    // CPUs it then overlaps the worker's wake-up instead of delaying it. The history row is still
    // queued before any event of the run, the notices below included.
    m_session->execute(request);

    storage::ExecutionRecord row;
    row.id = execution->id();
    row.contextId = m_record.id;
    row.code = execution->code();
    row.status = QStringLiteral("running");
    row.executionCount = m_record.executionCount;
    row.startedAt = execution->startedAt().toMSecsSinceEpoch();
    row.replay = execution->isReplayable();
    m_manager->m_writer->insertExecution(row);
    m_manager->m_writer->updateContextUsage(m_record.id, m_record.executionCount, m_record.cwd,
                                            m_record.lastUsedAt);

    if (m_restoreReport) {
        deliver(execution, m_restoreReport->toEvent(execution->id()));
        m_restoreReport.reset();
    }
    if (m_noticeStateLoss) {
        m_noticeStateLoss = false;
        const QString reason = std::exchange(m_stateResetReason, {});
        deliver(execution, Event::other(execution->id(), QStringLiteral("state_reset"),
                                        {{QStringLiteral("reason"),
                                          reason.isEmpty()
                                              ? QStringLiteral("this context's interpreter was "
                                                               "started afresh; variables from "
                                                               "earlier runs are gone")
                                              : reason}}));
    }

    touch();
    if (m_state != QLatin1String("busy"))
        setState(QStringLiteral("busy"));  // emits changed() itself: once is enough
    else
        emit changed();
    emit m_manager->executionStarted(execution);
    if (m_running.limits.timeoutMs > 0)
        m_timeout.start(m_running.limits.timeoutMs);
}

void Context::deliver(const ExecutionPtr &execution, const Event &event)
{
    Q_ASSERT(event.kind != Event::Kind::Done);  // conclude() ends an execution
    {
        const qint64 size = outputSize(event);
        const qint64 cap = m_running.limits.outputBytes;  // 0: no cap
        if (size > 0 && cap > 0 && m_runningOutput + size > cap) {
            qint64 dropped = size;
            const qint64 room = cap - m_runningOutput;
            if (event.kind == Event::Kind::Stream && room > 0) {
                // Keep the part of a stream chunk that fits, so output is cut at the cap itself
                // and not at the start of whichever read crossed it (a read can exceed the cap).
                QString text = event.fields.value(QLatin1String("text")).toString().left(room);
                if (!text.isEmpty() && text.back().isHighSurrogate())
                    text.chop(1);
                if (!text.isEmpty()) {
                    Event head = event;
                    head.fields.insert(QStringLiteral("text"), text);
                    deliver(execution, head);
                    dropped -= text.size();
                }
            }
            if (!m_runningTruncated) {
                m_runningTruncated = true;
                const Event notice = Event::other(
                    execution->id(), QStringLiteral("truncated"),
                    {{QStringLiteral("limit"), QStringLiteral("output_bytes")},
                     {QStringLiteral("limit_value"), cap},
                     {QStringLiteral("limit_bytes"), cap},
                     {QStringLiteral("message"),
                      QStringLiteral("output beyond %1 bytes was dropped (the workspace's "
                                     "limits.output_bytes)")
                          .arg(cap)}});
                deliver(execution, notice);
            }
            m_runningOutput += dropped;
            return;
        }
        m_runningOutput += size;
    }
    record(execution, event);
    execution->addEvent(event);
}

void Context::record(const ExecutionPtr &execution, const Event &event)
{
    // The JSON for history is built on the writer's thread, off the round trip. The writer
    // holds the event until then: its size lets the writer bound what it holds.
    m_manager->m_writer->appendEvent(execution->id(), execution->eventCount(),
                                     [event] { return JsonWriter::eventJson(event); },
                                     Execution::memoryEstimate(event));
}

void Context::conclude(const ExecutionPtr &execution, const Event &done, qint64 outputBytes,
                       bool truncated)
{
    // The done is recorded now and announced once durable (CommitBarrier): the writer logs an
    // end before it returns, together with everything queued before it.
    const qint64 durationMs = execution->startedAt().msecsTo(QDateTime::currentDateTimeUtc());
    record(execution, done);
    const bool durable = m_manager->m_writer->finishExecution(
            execution->id(), done.fields.value(QLatin1String("status")).toString(), durationMs,
            outputBytes, truncated, execution->inputsJson());
    m_manager->m_completions->hold(execution, done, durationMs, durable);
}

void Context::onSessionEvent(const Event &event)
{
    if (event.kind == Event::Kind::Other && event.type == QLatin1String("snapshot")) {
        onSnapshotEvent(event);
        return;
    }
    if (m_snapshotRestore && onSnapshotRestoreEvent(event))
        return;
    if (m_replay && m_replay->owns(event)) {
        if (event.kind == Event::Kind::InputRequest) {
            const Replay::Answer answer = m_replay->answer(event);
            sendAnswer(event.executionId, answer.value, answer.eof);
            return;
        }
        if (m_replay->take(event)) {
            if (m_replay->isOver())
                finishRestore();
            else
                continueRestore();
        }
        return;
    }
    const ExecutionPtr execution = m_running.execution;
    if (!execution || event.executionId != execution->id()) {
        // Output between runs belongs to no execution: the context keeps it for the faces.
        if (event.kind == Event::Kind::Stream || event.kind == Event::Kind::Display) {
            const BackgroundOutput::Entry &entry = m_background.append(event, m_lastExecutionId);
            emit m_manager->backgroundOutputAdded(m_workspaceName, m_record.id, entry);
        }
        return;
    }
    if (event.kind != Event::Kind::Done) {
        deliver(execution, event);
        return;
    }
    finish(execution, event);
}

void Context::finish(const ExecutionPtr &execution, const Event &done)
{
    // The done is announced when this returns, after the bookkeeping below: not at the next
    // loop turn, which would cost every round trip a wake-up of the event loop.
    const CommitBarrier::Batch announceAtTheEnd(m_manager->m_completions);
    m_timeout.stop();
    Event final = done;
    if (m_timedOut) {
        const RunLimits &limits = m_running.limits;
        Event timeout = Event::error(
            execution->id(), QStringLiteral("Timeout"),
            QStringLiteral("the execution exceeded its time limit of %1 ms%2 and was interrupted")
                .arg(limits.timeoutMs)
                .arg(limits.timeoutIsWorkspaceLimit
                         ? QStringLiteral(" (the workspace's limits.timeout_ms)")
                         : QString()));
        timeout.fields.insert(QStringLiteral("limit"), QStringLiteral("timeout_ms"));
        timeout.fields.insert(QStringLiteral("limit_value"), limits.timeoutMs);
        timeout.fields.insert(QStringLiteral("limit_source"),
                              limits.timeoutIsWorkspaceLimit ? QStringLiteral("workspace")
                                                             : QStringLiteral("request"));
        deliver(execution, timeout);
        final.fields.insert(QStringLiteral("status"), QStringLiteral("timeout"));
    }
    if (m_runningTruncated)
        final.fields.insert(QStringLiteral("truncated"), true);
    const QString cwd = final.fields.value(QLatin1String("cwd")).toString();
    if (!cwd.isEmpty())
        m_record.cwd = cwd;
    const bool stateLost = final.fields.value(QLatin1String("state_lost")).toBool();

    // Queued before the end, so that the commit that announces the run also holds the cwd and
    // count a restore starts from.
    m_manager->m_writer->updateContextUsage(m_record.id, m_record.executionCount, m_record.cwd,
                                            m_record.lastUsedAt);
    conclude(execution, final, m_runningOutput, m_runningTruncated);
    m_running = {};
    touch();
    if (stateLost) {
        // The run took the interpreter down (or had to be killed): replaying what led there
        // would likely lead there again, so the state is declared lost.
        dropSession();
        startAfresh();
    }
    if (!stateLost && m_session && m_state != QLatin1String("idle"))
        setState(QStringLiteral("idle"));  // emits changed() itself: once is enough
    else
        emit changed();
    if (!m_queue.isEmpty()) {
        if (auto r = ensureSession(); !r) {
            while (!m_queue.isEmpty())
                abort(m_queue.dequeue(), QStringLiteral("StartFailed"), r.error().message);
            return;
        }
        pump();
    }
    m_manager->m_residency->settle();
}

void Context::abort(const Pending &pending, const QString &ename, const QString &evalue)
{
    const ExecutionPtr &execution = pending.execution;
    const bool wasRunning = execution->status() == QLatin1String("running");
    if (!wasRunning) {
        storage::ExecutionRecord row;
        row.id = execution->id();
        row.contextId = m_record.id;
        row.code = execution->code();
        row.status = QStringLiteral("aborted");
        row.startedAt = execution->startedAt().toMSecsSinceEpoch();
        m_manager->m_writer->insertExecution(row);
    }
    deliver(execution, Event::error(execution->id(), ename, evalue));
    conclude(execution,
             Event::done(execution->id(), QStringLiteral("aborted"),
                         {{QStringLiteral("state_lost"), wasRunning}}),
             0, false);
}

void Context::onSessionFailed(const QString &message)
{
    failWhenReady(QStringLiteral("the %1 interpreter did not start: %2").arg(m_record.language, message));
    dropSession();
    while (!m_queue.isEmpty())
        abort(m_queue.dequeue(), QStringLiteral("StartFailed"),
              QStringLiteral("the %1 interpreter did not start: %2").arg(m_record.language, message));
    setState(QStringLiteral("dead"));
}

void Context::onSessionTerminated(bool expected, const QString &reason)
{
    Q_UNUSED(expected)
    if (m_replay) {
        m_replay->interpreterEnded(reason);
        finishRestore();
        return;
    }
    if (m_snapshotRestore) {
        RestoreReport report = m_restorePart;
        report.outcome = RestoreReport::Outcome::InterpreterLost;
        report.ename = m_snapshotRestore->ename.isEmpty() ? QStringLiteral("WorkerDied")
                                                          : m_snapshotRestore->ename;
        report.evalue = m_snapshotRestore->ename.isEmpty() ? reason : m_snapshotRestore->evalue;
        m_snapshotRestore.reset();
        endRestore(report, {}, true);
        return;
    }
    // A run in progress gets its own WorkerDied/done from the session before this; anything
    // still running here is ended so that no client waits forever.
    const bool duringRun = bool(m_running.execution);
    if (duringRun) {
        Pending running = m_running;
        m_running = {};
        m_timeout.stop();
        abort(running, QStringLiteral("WorkerDied"), reason);
    }
    dropSession();
    // An interpreter that died between runs was not taken down by a run (something outside
    // killed it): the history that built its state is replayed on next use.
    if (duringRun)
        startAfresh();
    else
        expectRestore();
    if (!m_queue.isEmpty()) {
        if (auto r = ensureSession(); r)
            pump();
    }
}

void Context::dropSession()
{
    failWhenReady(QStringLiteral("the %1 interpreter ended").arg(m_record.language));
    if (!m_session)
        return;
    detachSession();
    setState(QStringLiteral("dead"));
}

void Context::detachSession()
{
    m_session->disconnect(this);
    // Deleting later: this may run inside one of the session's own signal emissions.
    m_session.release()->deleteLater();
    m_sessionReady = false;
}

void Context::interruptExecution(const QString &executionId)
{
    for (qsizetype i = 0; i < m_queue.size(); ++i) {
        if (m_queue.at(i).execution->id() == executionId) {
            const Pending pending = m_queue.takeAt(i);
            abort(pending, QStringLiteral("Interrupted"),
                  QStringLiteral("the execution was interrupted before it started"));
            stopUnwantedRestore();
            emit changed();
            return;
        }
    }
    if (m_running.execution && m_running.execution->id() == executionId && m_session)
        m_session->interrupt(executionId);
}

bool Context::sendAnswer(const QString &requestId, const QString &value, bool eof)
{
    bool answered = false;
    // By name: a session that is not a WorkerProcess (or is one of an older SDK) lacks it, and
    // then never asked.
    return m_session
           && QMetaObject::invokeMethod(m_session.get(), "answerInput", Qt::DirectConnection,
                                        Q_RETURN_ARG(bool, answered), Q_ARG(QString, requestId),
                                        Q_ARG(QString, value), Q_ARG(bool, eof))
           && answered;
}

bool Context::answerInput(const ExecutionPtr &execution, const QString &value, bool eof)
{
    if (m_running.execution != execution || !sendAnswer(execution->id(), value, eof))
        return false;
    QJsonObject fields;
    if (eof)
        fields.insert(QStringLiteral("eof"), true);
    else if (execution->inputIsPassword())
        fields.insert(QStringLiteral("password"), true);
    else
        fields.insert(QStringLiteral("value"), value);
    deliver(execution, Event::other(execution->id(), QStringLiteral("input_reply"), fields));
    return true;
}

void Context::interruptAll()
{
    while (!m_queue.isEmpty())
        abort(m_queue.dequeue(), QStringLiteral("Interrupted"),
              QStringLiteral("the context was interrupted before this execution started"));
    if (m_running.execution && m_session)
        m_session->interrupt(m_running.execution->id());
    stopUnwantedRestore();
    emit changed();
}

void Context::beginStop(const QString &reason)
{
    while (!m_queue.isEmpty())
        abort(m_queue.dequeue(), QStringLiteral("Aborted"), reason);
    if (m_running.execution && m_session)
        m_session->interrupt(m_running.execution->id());
    emit changed();
}

void Context::stop(const QString &reason)
{
    m_timeout.stop();
    while (!m_queue.isEmpty())
        abort(m_queue.dequeue(), QStringLiteral("Aborted"), reason);
    if (m_running.execution && m_session && !m_replay) {
        // What the run wrote in its last instant may still be in the pipes: it is taken in
        // before the kill, so the run keeps it (and a done that came ends the run as it says).
        QMetaObject::invokeMethod(m_session.get(), "takeInWrittenOutput", Qt::DirectConnection);
    }
    if (m_running.execution) {
        Pending running = m_running;
        m_running = {};
        abort(running, QStringLiteral("Aborted"), reason);
    }
    failWhenReady(reason);
    m_replay.reset();  // a restore cut short leaves m_restorePending set: the next use retries
    m_snapshotRestore.reset();
    m_restoreWaitsForSnapshot = false;
    if (m_session) {
        m_session->disconnect(this);
        m_session.reset();  // kills the process group now
        m_sessionReady = false;
    }
}

void Context::rename(const QString &name)
{
    m_record.name = name;
    emit changed();
}

void Context::restart()
{
    stop(QStringLiteral("the context was restarted"));
    // A restart is asked for: nobody expects the old state, now or after a later restore.
    m_noticeStateLoss = false;
    m_restorePending = false;
    m_restoreReport.reset();
    moveReplayBase();
    warmUp();
}

void Context::complete(const QString &code, int cursor, ContextManager::Reply reply)
{
    if (m_running.execution) {
        reply(makeError(QStringLiteral("busy"),
                        QStringLiteral("the context is running code; completion needs an idle "
                                       "interpreter")));
        return;
    }
    touch();
    if (!m_session || !m_sessionReady || isRestoring()) {
        // A context that sleeps, starts or restores answers once its interpreter is up.
        if (auto r = ensureSession(); !r) {
            reply(r.error());
            return;
        }
        m_whenReady.append({[this, code, cursor, reply] { complete(code, cursor, reply); }, reply});
        return;
    }
    m_session->complete(code, cursor, std::move(reply));
}

void Context::variables(ContextManager::Reply reply)
{
    if (m_running.execution) {
        reply(makeError(QStringLiteral("busy"),
                        QStringLiteral("the context is running code; variables need an idle "
                                       "interpreter")));
        return;
    }
    touch();
    if (!m_session || !m_sessionReady || isRestoring()) {
        if (auto r = ensureSession(); !r) {
            reply(r.error());
            return;
        }
        m_whenReady.append({[this, reply] { variables(reply); }, reply});
        return;
    }
    m_session->variables(std::move(reply));
}

void Context::answerWhenReady()
{
    const QList<Query> waiting = std::exchange(m_whenReady, {});
    for (const Query &query : waiting)
        query.ask();
}

void Context::failWhenReady(const QString &message)
{
    const QList<Query> waiting = std::exchange(m_whenReady, {});
    for (const Query &query : waiting)
        query.reply(makeError(QStringLiteral("worker_died"), message));
}

} // namespace replhost::core
