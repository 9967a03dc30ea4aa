// SPDX-License-Identifier: Apache-2.0
#include "contextmanager.h"

#include "commitbarrier.h"
#include "context.h"
#include "envlayers.h"
#include "pluginregistry.h"
#include "residencylimiter.h"
#include "storage/historywriter.h"
#include "storage/store.h"
#include "warmpool.h"
#include "workerconfinement.h"
#include "workspacemanager.h"

#include <replhost/sdk/workerprocess.h>

#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMetaMethod>
#include <QPointer>
#include <QTimer>
#include <QUuid>

#include <algorithm>
#include <charconv>
#include <climits>

namespace replhost::core {

using storage::EnvScope;

namespace {

QString newId() { return QUuid::createUuid().toString(QUuid::WithoutBraces); }

const QString &shutdownReason()
{
    static const QString reason = QStringLiteral("replhost is shutting down");
    return reason;
}

Error shuttingDownError()
{
    return makeError(QStringLiteral("unavailable"), shutdownReason());
}

// Resolves `cwd` inside the workspace with the file routes' resolver (WorkspaceFiles): relative
// paths are taken from its directory, a sandbox's own paths are mapped (its view path, its /tmp),
// and no step may lead out of it. Every refusal is "bad_request" here:
// it is a field of the request that cannot be used.
Result<QString> confine(const Result<WorkspaceFiles> &files, const QString &cwd)
{
    if (!files)
        return files.error();
    const Result<QString> directory = files->directory(cwd);
    if (!directory)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("cwd \"%1\" cannot be used: %2").arg(cwd, directory.error().message));
    return directory;
}

Result<void> checkContextName(const QString &name)
{
    constexpr qsizetype kMaxNameLength = 200;
    if (name.size() > kMaxNameLength)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("a context name has at most %1 characters").arg(kMaxNameLength));
    for (const QChar c : name) {
        if (c.category() == QChar::Other_Control)
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("a context name cannot contain control characters"));
    }
    return {};
}

} // namespace

QJsonObject ContextInfo::toJson() const
{
    return QJsonObject{
        {QStringLiteral("id"), id},
        {QStringLiteral("workspace"), workspace},
        {QStringLiteral("language"), language},
        {QStringLiteral("name"), name},
        {QStringLiteral("cwd"), cwd},
        {QStringLiteral("state"), state},
        {QStringLiteral("resident"), resident},
        {QStringLiteral("restore"), restore},
        {QStringLiteral("execution_count"), executionCount},
        {QStringLiteral("queued"), queued},
        {QStringLiteral("pid"), pid},
        {QStringLiteral("created_at"), QDateTime::fromMSecsSinceEpoch(createdAt, Qt::UTC)
                                           .toString(Qt::ISODateWithMs)},
        {QStringLiteral("last_used_at"), lastUsedAt > 0
             ? QJsonValue(QDateTime::fromMSecsSinceEpoch(lastUsedAt, Qt::UTC).toString(Qt::ISODateWithMs))
             : QJsonValue()},
        {QStringLiteral("language_version"), languageVersion},
        {QStringLiteral("restored"), lastRestore.isEmpty() ? QJsonValue() : QJsonValue(lastRestore)},
    };
}

ContextInfo ContextInfo::fromJson(const QJsonObject &json)
{
    const auto msecsOf = [&json](QLatin1String key) {
        const QDateTime when = QDateTime::fromString(json.value(key).toString(), Qt::ISODateWithMs);
        return when.isValid() ? when.toMSecsSinceEpoch() : 0;
    };
    ContextInfo info;
    info.id = json.value(QLatin1String("id")).toString();
    info.workspace = json.value(QLatin1String("workspace")).toString();
    info.language = json.value(QLatin1String("language")).toString();
    info.name = json.value(QLatin1String("name")).toString();
    info.cwd = json.value(QLatin1String("cwd")).toString();
    info.state = json.value(QLatin1String("state")).toString();
    info.resident = json.value(QLatin1String("resident")).toBool();
    info.restore = json.value(QLatin1String("restore")).toString();
    info.executionCount = json.value(QLatin1String("execution_count")).toInt();
    info.queued = json.value(QLatin1String("queued")).toInt();
    info.pid = json.value(QLatin1String("pid")).toInteger();
    info.createdAt = msecsOf(QLatin1String("created_at"));
    info.lastUsedAt = msecsOf(QLatin1String("last_used_at"));
    info.languageVersion = json.value(QLatin1String("language_version")).toString();
    info.lastRestore = json.value(QLatin1String("restored")).toObject();
    return info;
}

ContextManager::ContextManager(storage::Store *store, storage::HistoryWriter *writer,
                               PluginRegistry *plugins, WorkspaceManager *workspaces,
                               QJsonObject languageSettings, int finishedExecutionsKept,
                               QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_writer(writer)
    , m_plugins(plugins)
    , m_workspaces(workspaces)
    , m_languageSettings(std::move(languageSettings))
    , m_finishedKept(finishedExecutionsKept)
    , m_executionIdPrefix(newId())
{
    m_completions = new CommitBarrier(
            m_writer, [this](const ExecutionPtr &execution) { remember(execution); }, this);
    m_residency = new ResidencyLimiter(m_contexts, this);
    m_residency->setLimits(64, 0);
    // Pooled workers are started as workers of the default workspace would be.
    m_pool = new WarmPool(
        m_plugins,
        [this](const QString &language) {
            auto ws = m_workspaces->get({});
            return workerSettings(language, ws ? ws->id : QString());
        },
        this);
    connect(m_workspaces, &WorkspaceManager::envChanged, this, [this](const QString &workspaceId) {
        for (Context *context : std::as_const(m_contexts)) {
            if (context->record().workspaceId == workspaceId)
                context->invalidateEnvironment();
        }
    });
    connect(m_workspaces, &WorkspaceManager::aboutToRemove, this,
            &ContextManager::removeWorkspaceContexts, Qt::DirectConnection);
}

void ContextManager::removeWorkspaceContexts(const QString &workspaceId)
{
    QList<Context *> doomed;
    for (Context *context : std::as_const(m_contexts)) {
        if (context->record().workspaceId == workspaceId)
            doomed.append(context);
    }
    for (Context *context : doomed)
        context->stop(QStringLiteral("the workspace was deleted"));
    // The aborted runs are recorded before the workspace's rows (and with them the history)
    // are deleted, so the writer never writes rows for a context that no longer exists.
    announceEndedNow();
    for (Context *context : doomed) {
        const QString id = context->record().id;
        const QString wsName = context->workspaceName();
        m_contexts.remove(id);
        delete context;
        emit contextRemoved(wsName, id);
    }
}

ContextManager::~ContextManager()
{
    shutdownAll();
}

Result<void> ContextManager::load()
{
    auto workspaces = m_store->workspaces();
    if (!workspaces)
        return workspaces.error();
    for (const auto &ws : *workspaces) {
        if (auto loaded = load(ws); !loaded)
            return loaded;
    }
    return {};
}

Result<void> ContextManager::load(const storage::WorkspaceRecord &workspace)
{
    auto rows = m_store->contexts(workspace.id);
    if (!rows)
        return rows.error();
    for (const auto &row : *rows) {
        if (m_contexts.contains(row.id))
            continue;
        auto *context = new Context(this, row, workspace.name, /*dormant=*/true);
        connect(context, &Context::changed, this,
                [this, context] { announceChange(context); });
        m_contexts.insert(row.id, context);
        emit contextAdded(context->info());
    }
    return {};
}

Result<Context *> ContextManager::find(const QString &workspace, const QString &id) const
{
    auto ws = m_workspaces->get(workspace);
    if (!ws)
        return ws.error();
    Context *context = m_contexts.value(id);
    if (!context || context->record().workspaceId != ws->id)
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("no context \"%1\" in workspace \"%2\"").arg(id, ws->name));
    return context;
}

Result<ContextInfo> ContextManager::create(const CreateContextRequest &request)
{
    if (m_shuttingDown)
        return shuttingDownError();
    auto ws = m_workspaces->get(request.workspace);
    if (!ws)
        return ws.error();
    auto plugin = m_plugins->resolve(request.language);
    if (!plugin)
        return plugin.error();
    if (auto r = checkContextName(request.name); !r)
        return r.error();
    auto cwd = confine(m_workspaces->files(ws->name), request.cwd);
    if (!cwd)
        return cwd.error();
    for (auto it = request.env.cbegin(); it != request.env.cend(); ++it) {
        if (!EnvLayers::isValidKey(it.key()))
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("invalid environment variable name \"%1\"").arg(it.key()));
    }
    storage::RestorePolicy policy = storage::RestorePolicy::Replay;
    if (request.restore == QLatin1String("fresh"))
        policy = storage::RestorePolicy::Fresh;
    else if (!request.restore.isEmpty() && request.restore != QLatin1String("replay"))
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("restore must be \"replay\" or \"fresh\", not \"%1\"")
                             .arg(request.restore));
    if (auto r = checkContextLimit(*ws); !r)
        return r.error();
    // A context that could never start is refused now rather than at its first run.
    if (auto r = checkIsolation(ws->id); !r)
        return r.error();

    storage::ContextRecord row;
    row.id = newId();
    row.workspaceId = ws->id;
    row.language = (*plugin)->id;
    row.name = request.name;
    row.cwd = *cwd;
    row.restorePolicy = policy;
    row.replayBaseCwd = *cwd;
    // Creation times are strictly increasing so "the oldest context" (the default one of its
    // language) is well defined even for contexts created within the same millisecond.
    row.createdAt = QDateTime::currentMSecsSinceEpoch();
    for (const Context *other : std::as_const(m_contexts))
        row.createdAt = std::max(row.createdAt, other->record().createdAt + 1);
    auto stored = m_store->transaction([&]() -> Result<void> {
        if (auto r = m_store->insertContext(row); !r)
            return r;
        for (auto it = request.env.cbegin(); it != request.env.cend(); ++it) {
            if (auto r = m_store->setEnv(EnvScope::Context, row.id, it.key(), it.value()); !r)
                return r;
        }
        return {};
    });
    if (!stored)
        return stored.error();

    auto *context = new Context(this, row, ws->name, /*dormant=*/false);
    connect(context, &Context::changed, this, [this, context] { announceChange(context); });
    m_contexts.insert(row.id, context);
    context->warmUp();
    const ContextInfo info = context->info();
    emit contextAdded(info);
    return info;
}

Result<void> ContextManager::checkContextLimit(const storage::WorkspaceRecord &workspace) const
{
    auto settings = m_workspaces->settings(workspace.name);
    if (!settings)
        return settings.error();
    const int limit = settings->limits.maxContexts;
    if (limit == 0)
        return {};
    const auto count = std::count_if(m_contexts.cbegin(), m_contexts.cend(),
                                     [&workspace](const Context *context) {
                                         return context->record().workspaceId == workspace.id;
                                     });
    if (count < limit)
        return {};
    return makeError(QStringLiteral("limit_reached"),
                     QStringLiteral("workspace \"%1\" already has %2 contexts, its limit "
                                    "(limits.max_contexts = %3); delete a context or raise the "
                                    "limit in the workspace's settings")
                         .arg(workspace.name)
                         .arg(count)
                         .arg(limit));
}

Result<ContextInfo> ContextManager::get(const QString &workspace, const QString &id) const
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    return (*context)->info();
}

QList<ContextInfo> ContextManager::all() const
{
    QList<ContextInfo> infos;
    infos.reserve(m_contexts.size());
    for (const Context *context : std::as_const(m_contexts))
        infos.append(context->info());
    return infos;
}

Result<QList<ContextInfo>> ContextManager::list(const QString &workspace,
                                                const QString &language) const
{
    auto ws = m_workspaces->get(workspace);
    if (!ws)
        return ws.error();
    QString languageId;
    if (!language.isEmpty()) {
        auto plugin = m_plugins->resolve(language);
        if (!plugin && plugin.error().code == QLatin1String("unknown_language"))
            return plugin.error();
        languageId = plugin ? (*plugin)->id : language.toLower();
    }
    QList<Context *> matching;
    for (Context *context : std::as_const(m_contexts)) {
        if (context->record().workspaceId != ws->id)
            continue;
        if (!languageId.isEmpty() && context->record().language != languageId)
            continue;
        matching.append(context);
    }
    std::sort(matching.begin(), matching.end(), [](Context *a, Context *b) {
        return a->record().createdAt != b->record().createdAt
                   ? a->record().createdAt < b->record().createdAt
                   : a->record().id < b->record().id;
    });
    QList<ContextInfo> infos;
    for (Context *context : matching)
        infos.append(context->info());
    return infos;
}

Result<void> ContextManager::remove(const QString &workspace, const QString &id)
{
    auto found = find(workspace, id);
    if (!found)
        return found.error();
    Context *context = *found;
    context->stop(QStringLiteral("the context was deleted"));
    announceEndedNow();  // its history rows must exist before the cascade deletes them
    if (auto r = m_store->deleteContext(id); !r)
        return r;
    m_contexts.remove(id);
    const QString wsName = context->workspaceName();
    delete context;
    emit contextRemoved(wsName, id);
    return {};
}

Result<ContextInfo> ContextManager::rename(const QString &workspace, const QString &id,
                                           const QString &name)
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    if (auto r = checkContextName(name); !r)
        return r.error();
    if (auto r = m_store->renameContext(id, name); !r)
        return r.error();
    (*context)->rename(name);
    return (*context)->info();
}

Result<ContextInfo> ContextManager::restart(const QString &workspace, const QString &id)
{
    if (m_shuttingDown)
        return shuttingDownError();
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    (*context)->restart();
    announceEndedNow();  // what the restart ended has ended when it returns
    return (*context)->info();
}

Result<void> ContextManager::interrupt(const QString &workspace, const QString &id)
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    (*context)->interruptAll();
    if (m_completions->held() > 0)
        announceEndedNow();  // the queued runs it ended have ended when it returns
    return {};
}

Result<ExecutionPtr> ContextManager::run(const RunRequest &request)
{
    if (m_shuttingDown)
        return shuttingDownError();
    auto ws = m_workspaces->get(request.workspace);
    if (!ws)
        return ws.error();
    for (const QString &key : request.env.keys() + request.envUnset) {
        if (!EnvLayers::isValidKey(key))
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("invalid environment variable name \"%1\"").arg(key));
    }
    if (request.timeoutMs < 0)
        return makeError(QStringLiteral("bad_request"), QStringLiteral("timeout_ms must be >= 0"));
    auto settings = m_workspaces->settings(ws->name);
    if (!settings)
        return settings.error();
    Context::RunLimits limits;
    limits.timeoutMs = settings->effectiveTimeoutMs(request.timeoutMs);
    limits.timeoutIsWorkspaceLimit = limits.timeoutMs > 0
                                     && limits.timeoutMs == settings->limits.timeoutMs
                                     && request.timeoutMs != limits.timeoutMs;
    limits.outputBytes = settings->limits.outputBytes;

    Context *context = nullptr;
    if (!request.contextId.isEmpty()) {
        if (!request.language.isEmpty())
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("give either a context id or a language, not both"));
        auto found = find(ws->name, request.contextId);
        if (!found)
            return found.error();
        context = *found;
    } else if (!request.language.isEmpty()) {
        auto plugin = m_plugins->resolve(request.language);
        if (!plugin)
            return plugin.error();
        auto existing = list(ws->name, (*plugin)->id);
        if (!existing)
            return existing.error();
        if (existing->isEmpty()) {
            CreateContextRequest create;
            create.workspace = ws->name;
            create.language = (*plugin)->id;
            auto created = this->create(create);
            if (!created)
                return created.error();
            context = m_contexts.value(created->id);
        } else {
            context = m_contexts.value(existing->first().id);
        }
    } else {
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("give a context id or a language to run the code in"));
    }

    // A language that takes no environment per run (a Jupyter kernel gets its environment when
    // it starts) says so rather than running without what was asked for.
    if (!request.env.isEmpty() || !request.envUnset.isEmpty()) {
        auto plugin = m_plugins->resolve(context->record().language);
        if (plugin && !(*plugin)->capabilities.value(QLatin1String("env_per_execution")).toBool(true))
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("%1 takes no environment for one run (its capability "
                                            "env_per_execution is false): set the variables on "
                                            "the context or the workspace")
                                 .arg((*plugin)->id));
    }

    auto execution = ExecutionPtr(new Execution(nextExecutionId(), ws->name, context->record().id,
                                                context->record().language, request.code),
                                  &Execution::dispose);
    execution->keepRecentOnly(historyArchive(), m_eventWindowBytes);
    execution->setReplayable(request.replay);
    execution->setAcceptsInput(request.input);
    m_executions.insert(execution->id(), execution);
    context->enqueue(execution, request.env, request.envUnset, limits);
    if (m_completions->isHolding(execution->id()))
        announceEndedNow();  // it could not start: it has ended when run() returns
    return execution;
}

Result<ContextManager::BackgroundPage> ContextManager::backgroundOutput(const QString &workspace,
                                                                       const QString &id,
                                                                       qint64 afterSeq, int limit) const
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    const BackgroundOutput &log = (*context)->backgroundOutput();
    return BackgroundPage{log.after(afterSeq, limit), log.lastSeq(), log.dropped()};
}

QString ContextManager::nextExecutionId()
{
    // One allocation, the counter's digits written in place (the operator+ chain made three).
    char digits[24];
    const char *const end = std::to_chars(digits, digits + sizeof digits, ++m_executionsMade).ptr;
    QString id;
    id.reserve(m_executionIdPrefix.size() + 1 + (end - digits));
    id.append(m_executionIdPrefix)
            .append(QLatin1Char('-'))
            .append(QLatin1StringView(digits, end - digits));
    return id;
}

void ContextManager::announceChange(const Context *context)
{
    static const QMetaMethod signal = QMetaMethod::fromSignal(&ContextManager::contextChanged);
    if (isSignalConnected(signal))
        emit contextChanged(context->info());
}

void ContextManager::remember(const ExecutionPtr &execution)
{
    // Running executions stay in m_executions; finished ones are kept up to a bound, oldest out.
    m_finishedOrder.append(execution->id());
    while (m_finishedOrder.size() > m_finishedKept)
        m_executions.remove(m_finishedOrder.takeFirst());
    emit executionFinished(execution);
}

Result<ExecutionPtr> ContextManager::execution(const QString &executionId) const
{
    const ExecutionPtr execution = m_executions.value(executionId);
    if (!execution)
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("no running or recent execution \"%1\"").arg(executionId));
    return execution;
}

Result<ExecutionPtr> ContextManager::lookupExecution(const QString &executionId)
{
    if (const ExecutionPtr live = m_executions.value(executionId))
        return live;
    // Finished executions leave memory after their rows were queued: commit them before looking.
    m_writer->flush();
    auto row = m_store->execution(executionId);
    if (!row)
        return row.error();
    const Error missing = makeError(QStringLiteral("not_found"),
                                    QStringLiteral("no execution \"%1\"").arg(executionId));
    if (!row->has_value())
        return missing;
    const storage::ExecutionRecord &record = row->value();
    auto context = m_store->context(record.contextId);
    if (!context)
        return context.error();
    if (!context->has_value())
        return missing;
    auto ws = m_store->workspaceById(context->value().workspaceId);
    if (!ws)
        return ws.error();
    if (!ws->has_value())
        return missing;
    auto events = storedEvents(executionId, 0, INT_MAX);
    if (!events)
        return events.error();

    auto execution = ExecutionPtr(new Execution(record.id, ws->value().name, record.contextId,
                                                context->value().language, record.code),
                                  &Execution::dispose);
    // A row still "running" here belongs to no live context (its engine ended without finishing
    // it); it is reported as it was left.
    execution->restore(record.status, record.executionCount,
                       QDateTime::fromMSecsSinceEpoch(record.startedAt, Qt::UTC),
                       record.durationMs, *events);
    execution->keepRecentOnly(historyArchive(), m_eventWindowBytes);
    return execution;
}

EventArchive ContextManager::historyArchive()
{
    // Executions can outlive the manager (a stream still holds one at shutdown).
    return [manager = QPointer<ContextManager>(this)](const QString &executionId, int from,
                                                      int to) -> Result<QList<sdk::Event>> {
        if (!manager)
            return makeError(QStringLiteral("unavailable"),
                             QStringLiteral("the engine has shut down; its history is closed"));
        return manager->storedEvents(executionId, from, to);
    };
}

Result<QList<sdk::Event>> ContextManager::storedEvents(const QString &executionId, int from,
                                                       int to)
{
    m_writer->flush();  // the newest events are in the writer's queue until its next batch
    auto rows = m_store->events(executionId, from, to);
    if (!rows)
        return rows.error();
    QList<sdk::Event> events;
    events.reserve(rows->size());
    for (const storage::ExecutionEventRecord &event : *rows)
        events.append(sdk::Event::fromJson(QJsonDocument::fromJson(event.json).object()));
    return events;
}

Result<QList<storage::ExecutionRecord>> ContextManager::history(const QString &workspace,
                                                                const QString &id,
                                                                qint64 beforeSeq, int limit)
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    m_writer->flush();  // the newest runs are in the writer's queue until its next batch
    return m_store->executions(id, beforeSeq, limit);
}

Result<void> ContextManager::interruptExecution(const QString &executionId)
{
    auto execution = this->execution(executionId);
    if (!execution)
        return execution.error();
    if ((*execution)->isFinished())
        return {};
    if (Context *context = m_contexts.value((*execution)->contextId()))
        context->interruptExecution(executionId);
    if (m_completions->isHolding(executionId))
        announceEndedNow();  // it was queued: it has ended when the call returns
    return {};
}

Result<void> ContextManager::answerInput(const QString &executionId, const QString &value,
                                         bool eof)
{
    auto execution = this->execution(executionId);
    if (!execution)
        return execution.error();
    const ExecutionPtr &run = *execution;
    if (run->isFinished())
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("execution %1 has finished (%2)").arg(executionId, run->status()));
    if (!eof && value.size() > kMaxInputChars)
        return makeError(QStringLiteral("payload_too_large"),
                         QStringLiteral("an answer is at most %1 characters; this one has %2")
                                 .arg(kMaxInputChars)
                                 .arg(value.size()));
    Context *context = m_contexts.value(run->contextId());
    if (!run->isWaitingForInput() || !context || !context->answerInput(run, value, eof))
        return makeError(QStringLiteral("conflict"),
                         run->acceptsInput()
                                 ? QStringLiteral("execution %1 is not waiting for input").arg(executionId)
                                 : QStringLiteral("execution %1 takes no input: its run request did not "
                                                  "say \"input\": true")
                                           .arg(executionId));
    return {};
}

Result<QList<storage::EnvVarRecord>> ContextManager::env(const QString &workspace,
                                                         const QString &id) const
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    return m_store->env(EnvScope::Context, id);
}

Result<void> ContextManager::changeEnv(const QString &workspace, const QString &id,
                                       const QMap<QString, QString> &set,
                                       const QStringList &unset, const QStringList &clear)
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    for (const QString &key : set.keys() + unset + clear) {
        if (!EnvLayers::isValidKey(key))
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("invalid environment variable name \"%1\"").arg(key));
    }
    auto done = m_store->transaction([&]() -> Result<void> {
        for (auto it = set.cbegin(); it != set.cend(); ++it) {
            if (auto r = m_store->setEnv(EnvScope::Context, id, it.key(), it.value()); !r)
                return r;
        }
        for (const QString &key : unset) {
            if (auto r = m_store->unsetEnv(EnvScope::Context, id, key); !r)
                return r;
        }
        for (const QString &key : clear) {
            if (auto r = m_store->clearEnv(EnvScope::Context, id, key); !r)
                return r;
        }
        return {};
    });
    if (done)
        (*context)->invalidateEnvironment();
    return done;
}

Result<QMap<QString, QString>> ContextManager::effectiveEnv(const QString &workspace,
                                                            const QString &id) const
{
    auto context = find(workspace, id);
    if (!context)
        return context.error();
    // What the worker is started with, not only the layers: the SDK adds what every worker gets
    // (TERM=dumb, REPLHOST_CONTEXT_ID, a sandbox's HOME and TMPDIR), by the rule it starts
    // workers with. A run's own env layer comes on top.
    const storage::ContextRecord &record = (*context)->record();
    sdk::SessionOptions options;
    options.contextId = record.id;
    options.environment = (*context)->desiredEnvironment();
    // The settings decide a sandbox's part; a language whose plugin is gone has none to give.
    if (auto plugin = m_plugins->resolve(record.language))
        options.settings = workerSettings((*plugin)->id, record.workspaceId, record.id);
    return sdk::WorkerProcess::workerEnvironment(options);
}

void ContextManager::complete(const QString &workspace, const QString &id, const QString &code,
                              int cursor, Reply reply)
{
    auto context = find(workspace, id);
    if (!context) {
        reply(context.error());
        return;
    }
    (*context)->complete(code, cursor, std::move(reply));
}

void ContextManager::variables(const QString &workspace, const QString &id, Reply reply)
{
    auto context = find(workspace, id);
    if (!context) {
        reply(context.error());
        return;
    }
    (*context)->variables(std::move(reply));
}

void ContextManager::setResidencyLimits(int maxResidentWorkers, int idleTimeoutMs)
{
    m_residency->setLimits(maxResidentWorkers, idleTimeoutMs);
}

Result<ContextInfo> ContextManager::evict(const QString &workspace, const QString &id)
{
    auto found = find(workspace, id);
    if (!found)
        return found.error();
    Context *context = *found;
    if (context->isResident() && !context->isEvictable())
        return makeError(QStringLiteral("busy"),
                         QStringLiteral("context \"%1\" is running, starting or restoring; it can "
                                        "be made dormant once it is idle")
                             .arg(id));
    context->evict();
    return context->info();
}

void ContextManager::setWarmPoolSizes(int defaultSize, const QMap<QString, int> &perLanguage)
{
    m_pool->setSizes(defaultSize, perLanguage);
}

QJsonObject ContextManager::workerSettings(const QString &language, const QString &workspaceId,
                                           const QString &contextId) const
{
    Q_UNUSED(contextId)
    QJsonObject settings = m_languageSettings.value(language).toObject();
    // Which members of the SDK's request structs the plugin's own objects have (SessionOptions).
    if (auto plugin = m_plugins->resolve(language))
        settings.insert(QStringLiteral("sdk_version"), (*plugin)->sdkVersion);
    // The worker-level part of the workspace's settings, as they are when the worker starts.
    auto ws = m_store->workspaceById(workspaceId);
    if (!ws || !ws->has_value())
        return settings;
    auto workspace = m_workspaces->settings(ws->value().name);
    if (!workspace)
        return settings;
    const QJsonObject confinement =
        WorkerConfinement::forWorkspace(*workspace, ws->value().directory, m_sandbox);
    if (!confinement.isEmpty())
        settings.insert(QStringLiteral("confinement"), confinement);
    return settings;
}

Environment ContextManager::baseEnvironment(const QString &workspaceId) const
{
    auto ws = m_store->workspaceById(workspaceId);
    if (!ws || !ws->has_value())
        return EnvLayers::base();
    auto workspace = m_workspaces->settings(ws->value().name);
    if (!workspace)
        return EnvLayers::base();
    return WorkerConfinement::baseEnvironment(
        WorkerConfinement::forWorkspace(*workspace, ws->value().directory, m_sandbox));
}

Result<void> ContextManager::checkIsolation(const QString &workspaceId) const
{
    auto ws = m_store->workspaceById(workspaceId);
    if (!ws || !ws->has_value())
        return {};
    auto workspace = m_workspaces->settings(ws->value().name);
    if (!workspace)
        return workspace.error();
    return WorkerConfinement::sandboxRefusal(*workspace, m_sandbox);
}

bool ContextManager::isDefaultContext(const Context *context) const
{
    const storage::ContextRecord &record = context->record();
    return std::none_of(m_contexts.cbegin(), m_contexts.cend(), [&record](const Context *other) {
        return other->record().workspaceId == record.workspaceId
               && other->record().language == record.language
               && other->record().createdAt < record.createdAt;
    });
}

void ContextManager::shutdownAll(std::chrono::milliseconds grace)
{
    m_shuttingDown = true;
    m_pool->stop();
    const auto anyRunning = [this] {
        // Looked at afresh each time: contexts may be deleted while the loop runs.
        return std::any_of(m_contexts.cbegin(), m_contexts.cend(),
                           [](const Context *context) { return context->hasRunningExecution(); });
    };
    if (grace.count() > 0) {
        const QDeadlineTimer deadline(grace);
        for (Context *context : std::as_const(m_contexts))
            context->beginStop(shutdownReason());
        if (anyRunning()) {
            // Every way an execution ends passes through remember(), which emits this.
            QEventLoop loop;
            const QMetaObject::Connection finished = connect(
                    this, &ContextManager::executionFinished, &loop, [&loop, &anyRunning] {
                        if (!anyRunning())
                            loop.quit();
                    });
            QTimer::singleShot(int(std::max<qint64>(deadline.remainingTime(), 0)), &loop,
                               &QEventLoop::quit);
            loop.exec();
            disconnect(finished);
        }
        // Interpreters that take snapshots on request keep their state across a clean stop:
        // asked together, waited for within what is left of the grace.
        struct Waiting {
            int count = 0;
            QPointer<QEventLoop> loop;
        };
        auto waiting = std::make_shared<Waiting>();
        for (Context *context : std::as_const(m_contexts)) {
            if (context->snapshotBeforeStop([waiting] {
                    if (--waiting->count == 0 && waiting->loop)
                        waiting->loop->quit();
                }))
                ++waiting->count;
        }
        if (waiting->count > 0 && deadline.remainingTime() > 0) {
            QEventLoop loop;
            waiting->loop = &loop;
            QTimer::singleShot(int(std::max<qint64>(deadline.remainingTime(), 0)), &loop,
                               &QEventLoop::quit);
            loop.exec();
        }
    }
    for (Context *context : std::as_const(m_contexts))
        context->stop(shutdownReason());
    announceEndedNow();  // the loop may not turn again to announce them
}

void ContextManager::announceEndedNow()
{
    m_writer->flush();
    m_completions->releaseCommitted();
}

} // namespace replhost::core
