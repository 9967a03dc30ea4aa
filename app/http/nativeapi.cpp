// SPDX-License-Identifier: Apache-2.0
#include "nativeapi.h"

#include "eventsstream.h"
#include "executionreply.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "router.h"
#include "streamlimiter.h"
#include "workspaceroute.h"

#include "core/engine.h"
#include "core/warmpool.h"
#include "core/workerconfinement.h"

#include <replhost/sdk/version.h>

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QTcpSocket>

#include <climits>

namespace replhost::http {

namespace {

QString workspaceOf(const HttpExchange &exchange)
{
    return WorkspaceRoute::of(exchange);
}

QString isoTime(qint64 msecsSinceEpoch)
{
    return QDateTime::fromMSecsSinceEpoch(msecsSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

// One row of a context's history (without its events: GET /v1/executions/{id} has those).
QJsonObject historyJson(const storage::ExecutionRecord &record)
{
    return {{QStringLiteral("id"), record.id},
            {QStringLiteral("context_id"), record.contextId},
            {QStringLiteral("seq"), record.seq},
            {QStringLiteral("code"), record.code},
            {QStringLiteral("status"), record.status},
            {QStringLiteral("execution_count"), record.executionCount},
            {QStringLiteral("started_at"), isoTime(record.startedAt)},
            {QStringLiteral("duration_ms"), record.durationMs},
            {QStringLiteral("output_bytes"), record.outputBytes},
            {QStringLiteral("truncated"), record.truncated},
            {QStringLiteral("replay"), record.replay},
            {QStringLiteral("output_pruned"), record.outputPruned}};
}

// An env layer in the shape PATCH accepts: {"set": {KEY: value}, "unset": [KEY]}.
QJsonObject layerJson(const QList<storage::EnvVarRecord> &layer)
{
    QJsonObject set;
    QJsonArray unset;
    for (const storage::EnvVarRecord &var : layer) {
        if (var.isUnset)
            unset.append(var.key);
        else
            set.insert(var.key, var.value);
    }
    return {{QStringLiteral("set"), set}, {QStringLiteral("unset"), unset}};
}

QJsonObject languageJson(const core::PluginEntry &entry)
{
    const bool loaded = entry.state == core::PluginEntry::State::Loaded;
    const bool available = loaded && entry.runtime.available;
    QString reason = loaded ? entry.runtime.reason : entry.error;
    QJsonObject json{
            {QStringLiteral("id"), entry.id},
            {QStringLiteral("name"), entry.name},
            {QStringLiteral("aliases"), QJsonArray::fromStringList(entry.aliases)},
            {QStringLiteral("extensions"), QJsonArray::fromStringList(entry.extensions)},
            {QStringLiteral("state"), core::PluginEntry::stateName(entry.state)},
            {QStringLiteral("available"), available},
            {QStringLiteral("version"), entry.runtime.version},
            {QStringLiteral("plugin_version"), entry.version},
            {QStringLiteral("sdk_version"), entry.sdkVersion},
            {QStringLiteral("capabilities"), entry.capabilities},
    };
    json.insert(QStringLiteral("reason"), available || reason.isEmpty() ? QJsonValue() : QJsonValue(reason));
    return json;
}

struct EnvPatch {
    QMap<QString, QString> set;
    QStringList unset;
    QStringList clear;
};

Result<EnvPatch> parseEnvPatch(const QByteArray &body)
{
    Result<JsonBody> json = JsonBody::parse(body);
    if (!json)
        return json.error();
    EnvPatch patch;
    Result<QMap<QString, QString>> set = json->stringMap(QStringLiteral("set"));
    if (!set)
        return set.error();
    Result<QStringList> unset = json->stringList(QStringLiteral("unset"));
    if (!unset)
        return unset.error();
    Result<QStringList> clear = json->stringList(QStringLiteral("clear"));
    if (!clear)
        return clear.error();
    patch.set = *set;
    patch.unset = *unset;
    patch.clear = *clear;
    return patch;
}

// Fills the fields every run body shares: code, env, env_unset, timeout_ms, replay, input.
Result<core::RunRequest> parseRunBody(const JsonBody &json)
{
    core::RunRequest run;
    Result<QString> code = json.requiredString(QStringLiteral("code"));
    if (!code)
        return code.error();
    Result<QMap<QString, QString>> env = json.stringMap(QStringLiteral("env"));
    if (!env)
        return env.error();
    Result<QStringList> unset = json.stringList(QStringLiteral("env_unset"));
    if (!unset)
        return unset.error();
    Result<int> timeout = json.optionalInt(QStringLiteral("timeout_ms"), 0, 0, INT_MAX);
    if (!timeout)
        return timeout.error();
    Result<bool> replay = json.optionalBool(QStringLiteral("replay"), true);
    if (!replay)
        return replay.error();
    Result<bool> input = json.optionalBool(QStringLiteral("input"), false);
    if (!input)
        return input.error();
    run.replay = *replay;
    run.input = *input;
    run.code = *code;
    run.env = *env;
    run.envUnset = *unset;
    run.timeoutMs = *timeout;
    return run;
}

} // namespace

NativeApi::NativeApi(core::Engine &engine, int sseKeepAliveMs, StreamLimiter &streams)
    : m_engine(engine), m_keepAliveMs(sseKeepAliveMs), m_streams(streams)
{
}

void NativeApi::registerRoutes(Router &router)
{
    auto bind = [this](void (NativeApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };

    router.add("GET", QStringLiteral("/v1/info"), bind(&NativeApi::info));
    router.add("GET", QStringLiteral("/v1/events"), bind(&NativeApi::events));
    router.add("GET", QStringLiteral("/v1/languages"), bind(&NativeApi::languages));
    router.add("GET", QStringLiteral("/v1/plugins"), bind(&NativeApi::plugins));
    router.add("GET", QStringLiteral("/v1/workspaces"), bind(&NativeApi::listWorkspaces));
    router.add("POST", QStringLiteral("/v1/workspaces"), bind(&NativeApi::createWorkspace));
    router.add("GET", QStringLiteral("/v1/workspaces/{ws}"), bind(&NativeApi::getWorkspace));
    router.add("PATCH", QStringLiteral("/v1/workspaces/{ws}"), bind(&NativeApi::patchWorkspace));
    router.add("DELETE", QStringLiteral("/v1/workspaces/{ws}"), bind(&NativeApi::deleteWorkspace));

    for (const QString &prefix : WorkspaceRoute::prefixes()) {
        router.add("GET", prefix + QStringLiteral("/contexts"), bind(&NativeApi::listContexts));
        router.add("POST", prefix + QStringLiteral("/contexts"), bind(&NativeApi::createContext));
        router.add("GET", prefix + QStringLiteral("/contexts/{id}"), bind(&NativeApi::getContext));
        router.add("DELETE", prefix + QStringLiteral("/contexts/{id}"), bind(&NativeApi::deleteContext));
        router.add("PATCH", prefix + QStringLiteral("/contexts/{id}"), bind(&NativeApi::patchContext));
        router.add("POST", prefix + QStringLiteral("/contexts/{id}/restart"), bind(&NativeApi::restartContext));
        router.add("POST", prefix + QStringLiteral("/contexts/{id}/interrupt"), bind(&NativeApi::interruptContext));
        router.add("POST", prefix + QStringLiteral("/contexts/{id}/executions"), bind(&NativeApi::runInContext));
        router.add("GET", prefix + QStringLiteral("/contexts/{id}/executions"), bind(&NativeApi::contextHistory));
        router.add("GET", prefix + QStringLiteral("/contexts/{id}/background-output"),
                   bind(&NativeApi::contextBackgroundOutput));
        router.add("POST", prefix + QStringLiteral("/contexts/{id}/complete"), bind(&NativeApi::completeInContext));
        router.add("GET", prefix + QStringLiteral("/contexts/{id}/variables"), bind(&NativeApi::contextVariables));
        router.add("GET", prefix + QStringLiteral("/contexts/{id}/env"), bind(&NativeApi::getContextEnv));
        router.add("PATCH", prefix + QStringLiteral("/contexts/{id}/env"), bind(&NativeApi::patchContextEnv));
        router.add("POST", prefix + QStringLiteral("/executions"), bind(&NativeApi::run));
        router.add("GET", prefix + QStringLiteral("/executions/{eid}"), bind(&NativeApi::getExecution));
        router.add("GET", prefix + QStringLiteral("/executions/{eid}/events"), bind(&NativeApi::streamExecution));
        router.add("POST", prefix + QStringLiteral("/executions/{eid}/interrupt"), bind(&NativeApi::interruptExecution));
        router.add("POST", prefix + QStringLiteral("/executions/{eid}/input"), bind(&NativeApi::answerInput));
        router.add("GET", prefix + QStringLiteral("/env"), bind(&NativeApi::getWorkspaceEnv));
        router.add("PATCH", prefix + QStringLiteral("/env"), bind(&NativeApi::patchWorkspaceEnv));
    }
}

void NativeApi::info(const ExchangePtr &exchange)
{
    // Every plugin file found, loaded or not, so a client can tell why a language is missing.
    QJsonArray plugins;
    for (const core::PluginEntry &entry : m_engine.plugins().entries()) {
        const bool loaded = entry.state == core::PluginEntry::State::Loaded;
        plugins.append(QJsonObject{
                {QStringLiteral("id"), entry.id},
                {QStringLiteral("file"), entry.fileName},
                {QStringLiteral("version"), entry.version},
                {QStringLiteral("state"), core::PluginEntry::stateName(entry.state)},
                {QStringLiteral("error"), loaded || entry.error.isEmpty() ? QJsonValue() : QJsonValue(entry.error)},
                {QStringLiteral("runtime_available"), loaded && entry.runtime.available},
        });
    }
    // Per language: {"size", "ready", "starting", "hits", "misses", "failures"}.
    QJsonObject warmPool;
    const auto poolState = m_engine.contexts().warmPool().state();
    for (auto it = poolState.cbegin(); it != poolState.cend(); ++it)
        warmPool.insert(it.key(), it.value().toJson());
    exchange->sendJson(200, QJsonObject{
            {QStringLiteral("app_version"), core::Engine::appVersion()},
            {QStringLiteral("sdk_version"), QStringLiteral(REPLHOST_SDK_VERSION_STRING)},
            {QStringLiteral("worker_protocol_version"), sdk::kWorkerProtocolVersion},
            {QStringLiteral("schema_version"), core::Engine::schemaVersion()},
            {QStringLiteral("api_version"), 1},
            {QStringLiteral("plugins"), plugins},
            // How each worker limit is held on this machine (cgroup, rlimit or not at all).
            {QStringLiteral("worker_limits"), core::WorkerConfinement::enforcement()},
            {QStringLiteral("warm_pool"), warmPool},
            // Whether workspaces with isolation "sandbox" can start workers, and if not why.
            {QStringLiteral("sandbox"), m_engine.sandbox().toJson()},
            {QStringLiteral("database"), m_engine.databaseJson()},
    });
}

void NativeApi::events(const ExchangePtr &exchange)
{
    const QString workspace = exchange->request().query().queryItemValue(QStringLiteral("workspace"),
                                                                       QUrl::FullyDecoded);
    if (!workspace.isEmpty()) {
        if (const Result<storage::WorkspaceRecord> known = m_engine.workspaces().get(workspace); !known) {
            exchange->sendError(known.error());
            return;
        }
    }
    if (StreamLimiter::Lease lease = m_streams.admit(*exchange))
        EventsStream::start(exchange, m_engine, workspace, m_keepAliveMs, std::move(lease));
}

void NativeApi::languages(const ExchangePtr &exchange)
{
    QJsonArray list;
    for (const core::PluginEntry &entry : m_engine.plugins().entries())
        list.append(languageJson(entry));
    exchange->sendJson(200, list);
}

void NativeApi::plugins(const ExchangePtr &exchange)
{
    // Where the server looked, in its order, and what it found there: the answer to "I installed
    // a plugin and the language is unknown".
    QJsonArray searchPath;
    for (const core::PluginSearchDir &dir : m_engine.plugins().searchDirs())
        searchPath.append(dir.toJson());
    QJsonArray plugins;
    for (const core::PluginEntry &entry : m_engine.plugins().entries())
        plugins.append(entry.toJson());
    exchange->sendJson(200, QJsonObject{{QStringLiteral("search_path"), searchPath},
                                        {QStringLiteral("plugins"), plugins}});
}

void NativeApi::listWorkspaces(const ExchangePtr &exchange)
{
    const Result<QList<storage::WorkspaceRecord>> workspaces = m_engine.workspaces().list();
    if (!workspaces) {
        exchange->sendError(workspaces.error());
        return;
    }
    QJsonArray list;
    for (const storage::WorkspaceRecord &record : *workspaces) {
        const Result<QJsonObject> json = workspaceJson(record);
        if (!json) {
            exchange->sendError(json.error());
            return;
        }
        list.append(*json);
    }
    exchange->sendJson(200, list);
}

void NativeApi::createWorkspace(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> name = json->requiredString(QStringLiteral("name"));
    if (!name) {
        exchange->sendError(name.error());
        return;
    }
    // A router placed the create by the field, not by the body it cannot read.
    if (const QString routed = WorkspaceRoute::ofHeader(exchange->request());
        !routed.isEmpty() && routed != *name) {
        exchange->sendError(421, QStringLiteral("misdirected"),
                            QStringLiteral("the request creates workspace \"%1\" but was sent for "
                                           "workspace \"%2\" (X-Replhost-Workspace): send "
                                           "X-Replhost-Workspace: %1").arg(*name, routed));
        return;
    }
    const Result<QString> directory = json->optionalString(QStringLiteral("directory"));
    if (!directory) {
        exchange->sendError(directory.error());
        return;
    }
    const Result<QJsonObject> settings = json->optionalObject(QStringLiteral("settings"));
    if (!settings) {
        exchange->sendError(settings.error());
        return;
    }
    const Result<storage::WorkspaceRecord> created =
            m_engine.workspaces().create(*name, *directory, *settings);
    if (!created) {
        exchange->sendError(created.error());
        return;
    }
    const Result<QJsonObject> reply = workspaceJson(*created);
    if (!reply) {
        exchange->sendError(reply.error());
        return;
    }
    exchange->sendJson(201, *reply);
}

void NativeApi::getWorkspace(const ExchangePtr &exchange)
{
    const Result<storage::WorkspaceRecord> record = m_engine.workspaces().get(workspaceOf(*exchange));
    const Result<QJsonObject> reply = record ? workspaceJson(*record) : record.error();
    if (!reply) {
        exchange->sendError(reply.error());
        return;
    }
    exchange->sendJson(200, *reply);
}

void NativeApi::patchWorkspace(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    // Only the settings can change; anything else is refused rather than silently ignored.
    for (const QString &field : json->object().keys()) {
        if (field != QLatin1String("settings")) {
            exchange->sendError(makeError(QStringLiteral("bad_request"),
                                          QStringLiteral("\"%1\" cannot be changed; only "
                                                         "\"settings\" can")
                                              .arg(field)));
            return;
        }
    }
    if (!json->has(QStringLiteral("settings"))) {
        exchange->sendError(makeError(QStringLiteral("bad_request"),
                                      QStringLiteral("field 'settings' is required")));
        return;
    }
    const Result<QJsonObject> patch = json->optionalObject(QStringLiteral("settings"));
    if (!patch) {
        exchange->sendError(patch.error());
        return;
    }
    const QString name = workspaceOf(*exchange);
    const Result<core::WorkspaceSettings> changed = m_engine.workspaces().changeSettings(name, *patch);
    if (!changed) {
        exchange->sendError(changed.error());
        return;
    }
    getWorkspace(exchange);
}

Result<QJsonObject> NativeApi::workspaceJson(const storage::WorkspaceRecord &record) const
{
    const Result<core::WorkspaceSettings> settings = m_engine.workspaces().settings(record.name);
    if (!settings)
        return settings.error();
    return QJsonObject{{QStringLiteral("id"), record.id},
                       {QStringLiteral("name"), record.name},
                       {QStringLiteral("directory"), record.directory},
                       {QStringLiteral("created_at"), isoTime(record.createdAt)},
                       {QStringLiteral("settings"), settings->toJson()}};
}

void NativeApi::deleteWorkspace(const ExchangePtr &exchange)
{
    const Result<void> removed = m_engine.workspaces().remove(
            workspaceOf(*exchange), exchange->request().queryFlag(QStringLiteral("purge")));
    if (!removed) {
        exchange->sendError(removed.error());
        return;
    }
    exchange->sendEmpty(204);
}

void NativeApi::listContexts(const ExchangePtr &exchange)
{
    const QString language = exchange->request().query().queryItemValue(QStringLiteral("language"),
                                                                      QUrl::FullyDecoded);
    const Result<QList<core::ContextInfo>> contexts =
            m_engine.contexts().list(workspaceOf(*exchange), language);
    if (!contexts) {
        exchange->sendError(contexts.error());
        return;
    }
    QJsonArray list;
    for (const core::ContextInfo &info : *contexts)
        list.append(info.toJson());
    exchange->sendJson(200, list);
}

void NativeApi::createContext(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    core::CreateContextRequest request;
    request.workspace = workspaceOf(*exchange);
    const Result<QString> language = json->requiredString(QStringLiteral("language"));
    if (!language) {
        exchange->sendError(language.error());
        return;
    }
    const Result<QString> cwd = json->optionalString(QStringLiteral("cwd"));
    if (!cwd) {
        exchange->sendError(cwd.error());
        return;
    }
    const Result<QString> name = json->optionalString(QStringLiteral("name"));
    if (!name) {
        exchange->sendError(name.error());
        return;
    }
    const Result<QMap<QString, QString>> env = json->stringMap(QStringLiteral("env"));
    if (!env) {
        exchange->sendError(env.error());
        return;
    }
    const Result<QString> restore = json->optionalString(QStringLiteral("restore"));
    if (!restore) {
        exchange->sendError(restore.error());
        return;
    }
    request.language = *language;
    request.cwd = *cwd;
    request.name = *name;
    request.env = *env;
    request.restore = *restore;
    const Result<core::ContextInfo> created = m_engine.contexts().create(request);
    if (!created) {
        exchange->sendError(created.error());
        return;
    }
    exchange->sendJson(201, created->toJson());
}

void NativeApi::getContext(const ExchangePtr &exchange)
{
    const Result<core::ContextInfo> info =
            m_engine.contexts().get(workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")));
    if (!info) {
        exchange->sendError(info.error());
        return;
    }
    exchange->sendJson(200, info->toJson());
}

void NativeApi::deleteContext(const ExchangePtr &exchange)
{
    const Result<void> removed =
            m_engine.contexts().remove(workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")));
    if (!removed) {
        exchange->sendError(removed.error());
        return;
    }
    exchange->sendEmpty(204);
}

void NativeApi::patchContext(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    // The name is the only field a client may change; anything else is refused rather than
    // silently ignored, so a client does not believe it changed the cwd or the language.
    for (const QString &field : json->object().keys()) {
        if (field != QLatin1String("name")) {
            exchange->sendError(makeError(QStringLiteral("bad_request"),
                                          QStringLiteral("\"%1\" cannot be changed; only \"name\" can")
                                              .arg(field)));
            return;
        }
    }
    const Result<QString> name = json->requiredString(QStringLiteral("name"));
    if (!name) {
        exchange->sendError(name.error());
        return;
    }
    const Result<core::ContextInfo> info = m_engine.contexts().rename(
            workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")), *name);
    if (!info) {
        exchange->sendError(info.error());
        return;
    }
    exchange->sendJson(200, info->toJson());
}

void NativeApi::restartContext(const ExchangePtr &exchange)
{
    const Result<core::ContextInfo> info = m_engine.contexts().restart(
            workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")));
    if (!info) {
        exchange->sendError(info.error());
        return;
    }
    exchange->sendJson(200, info->toJson());
}

void NativeApi::interruptContext(const ExchangePtr &exchange)
{
    const QString ws = workspaceOf(*exchange);
    const QString id = exchange->request().param(QStringLiteral("id"));
    if (const Result<void> interrupted = m_engine.contexts().interrupt(ws, id); !interrupted) {
        exchange->sendError(interrupted.error());
        return;
    }
    // 202: the interrupt is on its way; the running execution's stream ends with its outcome.
    const Result<core::ContextInfo> info = m_engine.contexts().get(ws, id);
    if (!info) {
        exchange->sendError(info.error());
        return;
    }
    exchange->sendJson(202, info->toJson());
}

void NativeApi::completeInContext(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> code = json->requiredString(QStringLiteral("code"));
    if (!code) {
        exchange->sendError(code.error());
        return;
    }
    // The cursor counts code points, as the worker protocol does; default: the end of the code.
    const int length = int(code->toUcs4().size());
    const Result<int> cursor = json->optionalInt(QStringLiteral("cursor"), length, 0, length);
    if (!cursor) {
        exchange->sendError(cursor.error());
        return;
    }
    m_engine.contexts().complete(workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")),
                                 *code, *cursor, [exchange](Result<QJsonObject> reply) {
                                     if (!reply)
                                         exchange->sendError(reply.error());
                                     else
                                         exchange->sendJson(200, *reply);
                                 });
}

void NativeApi::contextVariables(const ExchangePtr &exchange)
{
    m_engine.contexts().variables(workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")),
                                  [exchange](Result<QJsonObject> reply) {
                                      if (!reply)
                                          exchange->sendError(reply.error());
                                      else
                                          exchange->sendJson(200, *reply);
                                  });
}

void NativeApi::contextHistory(const ExchangePtr &exchange)
{
    const HttpRequest &request = exchange->request();
    const Result<qint64> before = request.queryInteger(QStringLiteral("before"), 0, 1, LLONG_MAX);
    if (!before) {
        exchange->sendError(before.error());
        return;
    }
    const Result<qint64> limit = request.queryInteger(QStringLiteral("limit"), 50, 1, 500);
    if (!limit) {
        exchange->sendError(limit.error());
        return;
    }
    // One row more than asked says whether there is a next page.
    const Result<QList<storage::ExecutionRecord>> rows = m_engine.contexts().history(
            workspaceOf(*exchange), request.param(QStringLiteral("id")), *before, int(*limit) + 1);
    if (!rows) {
        exchange->sendError(rows.error());
        return;
    }
    QJsonArray list;
    for (qsizetype i = 0; i < rows->size() && i < *limit; ++i)
        list.append(historyJson(rows->at(i)));
    const QJsonValue next = rows->size() > *limit
            ? QJsonValue(QString::number(rows->at(*limit - 1).seq))
            : QJsonValue();
    exchange->sendJson(200, QJsonObject{{QStringLiteral("executions"), list},
                                        {QStringLiteral("next"), next}});
}

void NativeApi::contextBackgroundOutput(const ExchangePtr &exchange)
{
    const HttpRequest &request = exchange->request();
    const Result<qint64> after = request.queryInteger(QStringLiteral("after"), 0, 0, LLONG_MAX);
    if (!after) {
        exchange->sendError(after.error());
        return;
    }
    const Result<qint64> limit = request.queryInteger(QStringLiteral("limit"), 100, 1, 1000);
    if (!limit) {
        exchange->sendError(limit.error());
        return;
    }
    const auto page = m_engine.contexts().backgroundOutput(
            workspaceOf(*exchange), request.param(QStringLiteral("id")), *after, int(*limit));
    if (!page) {
        exchange->sendError(page.error());
        return;
    }
    QJsonArray entries;
    for (const core::BackgroundOutput::Entry &entry : page->entries)
        entries.append(EventsStream::backgroundEntryJson(entry));
    exchange->sendJson(200, QJsonObject{{QStringLiteral("entries"), entries},
                                        {QStringLiteral("last_seq"), page->lastSeq},
                                        {QStringLiteral("dropped"), page->dropped}});
}

void NativeApi::runInContext(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    Result<core::RunRequest> run = parseRunBody(*json);
    if (!run) {
        exchange->sendError(run.error());
        return;
    }
    run->workspace = workspaceOf(*exchange);
    run->contextId = exchange->request().param(QStringLiteral("id"));
    startRun(exchange, std::move(*run));
}

void NativeApi::run(const ExchangePtr &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    Result<core::RunRequest> run = parseRunBody(*json);
    if (!run) {
        exchange->sendError(run.error());
        return;
    }
    const Result<QString> language = json->optionalString(QStringLiteral("language"));
    const Result<QString> contextId = json->optionalString(QStringLiteral("context_id"));
    if (!language || !contextId) {
        exchange->sendError(!language ? language.error() : contextId.error());
        return;
    }
    if (language->isEmpty() == contextId->isEmpty()) {
        exchange->sendError(400, QStringLiteral("bad_request"),
                            QStringLiteral("give exactly one of the fields 'language' (runs in that "
                                           "language's default context) and 'context_id'"));
        return;
    }
    run->workspace = workspaceOf(*exchange);
    run->language = *language;
    run->contextId = *contextId;
    startRun(exchange, std::move(*run));
}

void NativeApi::startRun(const ExchangePtr &exchange, core::RunRequest request)
{
    ExecutionReply::start(exchange, [&] { return m_engine.contexts().run(request); },
                          m_keepAliveMs, m_streams);
}

core::ExecutionPtr NativeApi::findExecution(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("eid"));
    const Result<core::ExecutionPtr> execution = m_engine.contexts().lookupExecution(id);
    if (!execution && execution.error().code != QLatin1String("not_found")) {
        exchange->sendError(execution.error());
        return nullptr;
    }
    if (!execution || (*execution)->workspace() != workspaceOf(*exchange)) {
        exchange->sendError(404, QStringLiteral("not_found"),
                            QStringLiteral("no execution '%1' in workspace '%2'")
                                    .arg(id, workspaceOf(*exchange)));
        return nullptr;
    }
    return *execution;
}

void NativeApi::getExecution(const ExchangePtr &exchange)
{
    if (const core::ExecutionPtr execution = findExecution(exchange))
        ExecutionReply::sendDocument(*exchange, *execution);
}

void NativeApi::streamExecution(const ExchangePtr &exchange)
{
    ExecutionReply::stream(exchange, [this, exchange] { return findExecution(exchange); },
                           m_keepAliveMs, m_streams);
}

void NativeApi::interruptExecution(const ExchangePtr &exchange)
{
    if (const core::ExecutionPtr execution = findExecution(exchange)) {
        ExecutionReply::interrupt(*exchange, *execution, QStringLiteral("execution"), [&] {
            return m_engine.contexts().interruptExecution(execution->id());
        });
    }
}

void NativeApi::answerInput(const ExchangePtr &exchange)
{
    const core::ExecutionPtr execution = findExecution(exchange);
    if (!execution)
        return;
    Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<bool> eof = json->optionalBool(QStringLiteral("eof"), false);
    if (!eof) {
        exchange->sendError(eof.error());
        return;
    }
    QString value;
    if (!*eof) {
        const Result<QString> given = json->requiredString(QStringLiteral("value"));
        if (!given) {
            exchange->sendError(given.error());
            return;
        }
        value = *given;
    }
    if (const Result<void> answered = m_engine.contexts().answerInput(execution->id(), value, *eof);
        !answered) {
        exchange->sendError(answered.error());
        return;
    }
    exchange->sendJson(202, QJsonObject{{QStringLiteral("id"), execution->id()},
                                        {QStringLiteral("status"), execution->status()}});
}

void NativeApi::getWorkspaceEnv(const ExchangePtr &exchange)
{
    const QString ws = workspaceOf(*exchange);
    const Result<QList<storage::EnvVarRecord>> layer = m_engine.workspaces().env(ws);
    if (!layer) {
        exchange->sendError(layer.error());
        return;
    }
    QJsonObject json = layerJson(*layer);
    json.insert(QStringLiteral("workspace"), ws);
    exchange->sendJson(200, json);
}

void NativeApi::patchWorkspaceEnv(const ExchangePtr &exchange)
{
    const Result<EnvPatch> patch = parseEnvPatch(exchange->request().body);
    if (!patch) {
        exchange->sendError(patch.error());
        return;
    }
    const Result<void> changed =
            m_engine.workspaces().changeEnv(workspaceOf(*exchange), patch->set, patch->unset, patch->clear);
    if (!changed) {
        exchange->sendError(changed.error());
        return;
    }
    getWorkspaceEnv(exchange);
}

void NativeApi::getContextEnv(const ExchangePtr &exchange)
{
    const QString ws = workspaceOf(*exchange);
    const QString id = exchange->request().param(QStringLiteral("id"));
    const Result<QList<storage::EnvVarRecord>> layer = m_engine.contexts().env(ws, id);
    if (!layer) {
        exchange->sendError(layer.error());
        return;
    }
    const Result<QMap<QString, QString>> effective = m_engine.contexts().effectiveEnv(ws, id);
    if (!effective) {
        exchange->sendError(effective.error());
        return;
    }
    QJsonObject effectiveJson;
    for (auto it = effective->cbegin(); it != effective->cend(); ++it)
        effectiveJson.insert(it.key(), it.value());
    QJsonObject json = layerJson(*layer);
    json.insert(QStringLiteral("context_id"), id);
    json.insert(QStringLiteral("effective"), effectiveJson);
    exchange->sendJson(200, json);
}

void NativeApi::patchContextEnv(const ExchangePtr &exchange)
{
    const Result<EnvPatch> patch = parseEnvPatch(exchange->request().body);
    if (!patch) {
        exchange->sendError(patch.error());
        return;
    }
    const Result<void> changed = m_engine.contexts().changeEnv(
            workspaceOf(*exchange), exchange->request().param(QStringLiteral("id")), patch->set,
            patch->unset, patch->clear);
    if (!changed) {
        exchange->sendError(changed.error());
        return;
    }
    getContextEnv(exchange);
}

} // namespace replhost::http
