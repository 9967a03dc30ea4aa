// SPDX-License-Identifier: Apache-2.0
#include "opensandboxexecdapi.h"

#include "execdstream.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "opensandboxerror.h"
#include "router.h"
#include "streamlimiter.h"

#include "core/engine.h"
#include "core/executiondocument.h"

#include <QTcpSocket>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>

#include <climits>

#include <unistd.h>

namespace replhost::http {

namespace {

const QString kContextNotFound = QStringLiteral("CONTEXT_NOT_FOUND");

QJsonObject contextJson(const core::ContextInfo &info)
{
    return {{QStringLiteral("id"), info.id}, {QStringLiteral("language"), info.language}};
}

QString isoTime(const QDateTime &time)
{
    return time.toUTC().toString(Qt::ISODateWithMs);
}

} // namespace

OpenSandboxExecdApi::OpenSandboxExecdApi(core::Engine &engine, int pingIntervalMs,
                                         StreamLimiter &streams)
    : m_engine(engine), m_pingIntervalMs(pingIntervalMs), m_streams(streams)
{
}

QString OpenSandboxExecdApi::prefix()
{
    return QStringLiteral("/opensandbox/execd");
}

QString OpenSandboxExecdApi::basePath(const QString &workspace)
{
    return prefix() + QLatin1Char('/') + QString::fromLatin1(QUrl::toPercentEncoding(workspace));
}

QString OpenSandboxExecdApi::proxyPath(const QString &workspace, int port)
{
    return QStringLiteral("/opensandbox/sandboxes/%1/proxy/%2")
            .arg(QString::fromLatin1(QUrl::toPercentEncoding(workspace))).arg(port);
}

void OpenSandboxExecdApi::servePathOfProxy(QString &path)
{
    static const QString kSandboxes = QStringLiteral("/opensandbox/sandboxes/");
    static const QString kProxy = QStringLiteral("/proxy/%1").arg(kExecdPort);
    if (!path.startsWith(kSandboxes))
        return;
    const qsizetype idEnd = path.indexOf(QLatin1Char('/'), kSandboxes.size());
    if (idEnd <= kSandboxes.size() || QStringView(path).mid(idEnd, kProxy.size()) != kProxy)
        return;
    const qsizetype rest = idEnd + kProxy.size();
    if (rest < path.size() && path.at(rest) != QLatin1Char('/'))
        return;  // another port that starts with execd's digits
    // "/opensandbox/sandboxes/<id>/proxy/44772/x" → "/opensandbox/execd/<id>/x"
    path = prefix() + path.mid(kSandboxes.size() - 1, idEnd - kSandboxes.size() + 1) + path.mid(rest);
}

void OpenSandboxExecdApi::registerRoutes(Router &router)
{
    auto bind = [this](void (OpenSandboxExecdApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };
    const QString base = prefix() + QStringLiteral("/{ws}");
    router.add("GET", base + QStringLiteral("/ping"), bind(&OpenSandboxExecdApi::ping));
    router.add("POST", base + QStringLiteral("/code/context"), bind(&OpenSandboxExecdApi::createContext));
    router.add("GET", base + QStringLiteral("/code/contexts"), bind(&OpenSandboxExecdApi::listContexts));
    router.add("DELETE", base + QStringLiteral("/code/contexts"), bind(&OpenSandboxExecdApi::deleteContexts));
    router.add("GET", base + QStringLiteral("/code/contexts/{id}"), bind(&OpenSandboxExecdApi::getContext));
    router.add("DELETE", base + QStringLiteral("/code/contexts/{id}"), bind(&OpenSandboxExecdApi::deleteContext));
    router.add("POST", base + QStringLiteral("/code"), bind(&OpenSandboxExecdApi::runCode));
    router.add("DELETE", base + QStringLiteral("/code"), bind(&OpenSandboxExecdApi::interruptCode));
    router.add("POST", base + QStringLiteral("/command"), bind(&OpenSandboxExecdApi::runCommand));
    router.add("DELETE", base + QStringLiteral("/command"), bind(&OpenSandboxExecdApi::interruptCommand));
    router.add("GET", base + QStringLiteral("/command/status/{id}"), bind(&OpenSandboxExecdApi::commandStatus));
    router.add("GET", base + QStringLiteral("/command/{id}/logs"), bind(&OpenSandboxExecdApi::commandLogs));
    router.add("GET", base + QStringLiteral("/metrics"), bind(&OpenSandboxExecdApi::metrics));
}

std::optional<QString> OpenSandboxExecdApi::workspaceOf(HttpExchange &exchange) const
{
    const QString ws = exchange.request().param(QStringLiteral("ws"));
    if (const auto record = m_engine.workspaces().get(ws); !record) {
        OpenSandboxError::send(exchange, record.error(), QStringLiteral("SANDBOX_NOT_FOUND"));
        return std::nullopt;
    }
    return ws;
}

void OpenSandboxExecdApi::ping(const ExchangePtr &exchange)
{
    if (workspaceOf(*exchange))
        exchange->sendEmpty(200);
}

void OpenSandboxExecdApi::createContext(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    const Result<QString> language = json->requiredString(QStringLiteral("language"));
    const Result<QString> cwd = json->optionalString(QStringLiteral("cwd"));
    if (const std::optional<Error> error = OpenSandboxError::first(language, cwd)) {
        OpenSandboxError::send(*exchange, *error);
        return;
    }
    core::CreateContextRequest request;
    request.workspace = *ws;
    request.language = *language;
    request.cwd = *cwd;
    const Result<core::ContextInfo> created = m_engine.contexts().create(request);
    if (!created) {
        OpenSandboxError::send(*exchange, created.error(), kContextNotFound);
        return;
    }
    QJsonObject reply = contextJson(*created);
    if (!cwd->isEmpty())
        reply.insert(QStringLiteral("cwd"), *cwd);
    exchange->sendJson(200, reply);
}

void OpenSandboxExecdApi::listContexts(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const Result<QList<core::ContextInfo>> contexts = m_engine.contexts().list(
            *ws, exchange->request().queryValue(QStringLiteral("language")));
    if (!contexts) {
        OpenSandboxError::send(*exchange, contexts.error(), kContextNotFound);
        return;
    }
    QJsonArray list;
    for (const core::ContextInfo &info : *contexts)
        list.append(contextJson(info));
    exchange->sendJson(200, list);
}

void OpenSandboxExecdApi::deleteContexts(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const QString language = exchange->request().queryValue(QStringLiteral("language"));
    if (language.isEmpty()) {
        OpenSandboxError::missingQuery(*exchange, QStringLiteral("language"));
        return;
    }
    const Result<QList<core::ContextInfo>> contexts = m_engine.contexts().list(*ws, language);
    if (!contexts) {
        OpenSandboxError::send(*exchange, contexts.error(), kContextNotFound);
        return;
    }
    for (const core::ContextInfo &info : *contexts) {
        if (const Result<void> removed = m_engine.contexts().remove(*ws, info.id); !removed) {
            OpenSandboxError::send(*exchange, removed.error(), kContextNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

void OpenSandboxExecdApi::getContext(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const Result<core::ContextInfo> info =
            m_engine.contexts().get(*ws, exchange->request().param(QStringLiteral("id")));
    if (!info) {
        OpenSandboxError::send(*exchange, info.error(), kContextNotFound);
        return;
    }
    exchange->sendJson(200, contextJson(*info));
}

void OpenSandboxExecdApi::deleteContext(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const Result<void> removed =
            m_engine.contexts().remove(*ws, exchange->request().param(QStringLiteral("id")));
    OpenSandboxError::sendEmptyOr(*exchange, removed, kContextNotFound);
}

void OpenSandboxExecdApi::runCode(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    const Result<QString> code = json->requiredString(QStringLiteral("code"));
    if (!code) {
        OpenSandboxError::send(*exchange, code.error());
        return;
    }
    const QJsonValue contextValue = json->object().value(QStringLiteral("context"));
    if (!contextValue.isNull() && !contextValue.isUndefined() && !contextValue.isObject()) {
        exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("field 'context' must be an object with 'id' or "
                                           "'language'"));
        return;
    }
    const Result<JsonBody> context = JsonBody::parse(
            QJsonDocument(contextValue.toObject()).toJson(QJsonDocument::Compact));
    const Result<QString> contextId = context->optionalString(QStringLiteral("id"));
    const Result<QString> language = context->optionalString(QStringLiteral("language"));
    if (const std::optional<Error> error = OpenSandboxError::first(contextId, language)) {
        OpenSandboxError::send(*exchange, *error);
        return;
    }

    StreamLimiter::Lease lease = m_streams.admit(*exchange);
    if (!lease)
        return;
    if (contextId->isEmpty() && language->isEmpty()) {
        // execd runs code without a language as a shell command.
        core::CommandRequest request;
        request.workspace = *ws;
        request.command = *code;
        const Result<core::ExecutionPtr> started = m_engine.commands().run(request);
        if (!started) {
            OpenSandboxError::send(*exchange, started.error());
            return;
        }
        ExecdStream::start(exchange, *started, ExecdEventFormat::Mode::Command, (*started)->id(),
                           m_pingIntervalMs, std::move(lease));
        return;
    }
    core::RunRequest request;
    request.workspace = *ws;
    request.code = *code;
    // A context id wins over a language, as in execd.
    if (!contextId->isEmpty())
        request.contextId = *contextId;
    else
        request.language = *language;
    const Result<core::ExecutionPtr> started = m_engine.contexts().run(request);
    if (!started) {
        OpenSandboxError::send(*exchange, started.error(), kContextNotFound);
        return;
    }
    ExecdStream::start(exchange, *started, ExecdEventFormat::Mode::Code, (*started)->contextId(),
                       m_pingIntervalMs, std::move(lease));
}

void OpenSandboxExecdApi::interruptCode(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const QString id = exchange->request().queryValue(QStringLiteral("id"));
    if (id.isEmpty()) {
        OpenSandboxError::missingQuery(*exchange, QStringLiteral("id"));
        return;
    }
    // The id of an execd stream's "init": a context for code, a command for code run without a
    // language.
    const Result<void> interrupted = m_engine.contexts().interrupt(*ws, id);
    if (interrupted) {
        exchange->sendEmpty(200);
        return;
    }
    if (interrupted.error().code != QLatin1String("not_found")) {
        OpenSandboxError::send(*exchange, interrupted.error(), kContextNotFound);
        return;
    }
    if (findCommand(*ws, id)) {
        interruptCommand(exchange);
        return;
    }
    exchange->sendError(404, kContextNotFound,
                        QStringLiteral("no context or command '%1' in sandbox '%2'").arg(id, *ws));
}

void OpenSandboxExecdApi::runCommand(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    const Result<QString> command = json->requiredString(QStringLiteral("command"));
    const Result<QString> cwd = json->optionalString(QStringLiteral("cwd"));
    const Result<bool> background = json->optionalBool(QStringLiteral("background"), false);
    const Result<int> timeout = json->optionalInt(QStringLiteral("timeout"), 0, 0, INT_MAX);
    const Result<QMap<QString, QString>> envs = json->stringMap(QStringLiteral("envs"));
    const Result<int> uid = json->optionalInt(QStringLiteral("uid"), -1, 0, INT_MAX);
    const Result<int> gid = json->optionalInt(QStringLiteral("gid"), -1, 0, INT_MAX);
    if (const std::optional<Error> error = OpenSandboxError::first(command, cwd, background, timeout, envs, uid, gid)) {
        OpenSandboxError::send(*exchange, *error);
        return;
    }
    // Commands run as the server's user: there is no container whose users could be switched to.
    if ((*uid >= 0 && uid_t(*uid) != ::getuid()) || (*gid >= 0 && gid_t(*gid) != ::getgid())) {
        exchange->sendError(400, QStringLiteral("NOT_SUPPORTED"),
                            QStringLiteral("commands run as the server's user (uid %1, gid %2); "
                                           "another uid or gid is not supported")
                                    .arg(::getuid()).arg(::getgid()));
        return;
    }
    core::CommandRequest request;
    request.workspace = *ws;
    request.command = *command;
    request.cwd = *cwd;
    request.env = *envs;
    request.timeoutMs = *timeout;

    StreamLimiter::Lease lease = m_streams.admit(*exchange);
    if (!lease)
        return;
    const Result<core::ExecutionPtr> started = m_engine.commands().run(request);
    if (!started) {
        OpenSandboxError::send(*exchange, started.error());
        return;
    }
    if (*background)
        ExecdStream::sendDetached(*exchange, (*started)->id());
    else
        ExecdStream::start(exchange, *started, ExecdEventFormat::Mode::Command, (*started)->id(),
                           m_pingIntervalMs, std::move(lease));
}

core::ExecutionPtr OpenSandboxExecdApi::findCommand(const QString &workspace, const QString &id) const
{
    const Result<core::ExecutionPtr> command = m_engine.commands().command(id);
    if (!command || (*command)->workspace() != workspace)
        return nullptr;
    return *command;
}

void OpenSandboxExecdApi::interruptCommand(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const QString id = exchange->request().queryValue(QStringLiteral("id"));
    if (id.isEmpty()) {
        OpenSandboxError::missingQuery(*exchange, QStringLiteral("id"));
        return;
    }
    if (!findCommand(*ws, id)) {
        exchange->sendError(404, QStringLiteral("NOT_FOUND"),
                            QStringLiteral("no running or recent command '%1' in sandbox '%2'").arg(id, *ws));
        return;
    }
    // A finished command is left alone; interrupting it is not an error.
    if (const Result<void> interrupted = m_engine.commands().interrupt(id); !interrupted) {
        OpenSandboxError::send(*exchange, interrupted.error());
        return;
    }
    exchange->sendEmpty(200);
}

void OpenSandboxExecdApi::commandStatus(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const QString id = exchange->request().param(QStringLiteral("id"));
    const core::ExecutionPtr command = findCommand(*ws, id);
    if (!command) {
        exchange->sendError(404, QStringLiteral("NOT_FOUND"),
                            QStringLiteral("no running or recent command '%1' in sandbox '%2'").arg(id, *ws));
        return;
    }
    const Result<QJsonObject> document = core::ExecutionDocument::object(*command, false);
    if (!document) {
        OpenSandboxError::send(*exchange, document.error());
        return;
    }
    const QJsonObject &summary = *document;
    const QJsonObject error = summary.value(QStringLiteral("error")).toObject();
    QJsonObject status{
            {QStringLiteral("id"), command->id()},
            {QStringLiteral("content"), command->code()},
            {QStringLiteral("running"), !command->isFinished()},
            {QStringLiteral("exit_code"), summary.value(QStringLiteral("exit_code"))},
            {QStringLiteral("error"), error.isEmpty() ? QJsonValue()
                                                      : error.value(QStringLiteral("evalue"))},
            {QStringLiteral("started_at"), isoTime(command->startedAt())},
            {QStringLiteral("finished_at"), command->isFinished()
                     ? QJsonValue(isoTime(command->startedAt().addMSecs(command->durationMs())))
                     : QJsonValue()},
    };
    exchange->sendJson(200, status);
}

void OpenSandboxExecdApi::commandLogs(const ExchangePtr &exchange)
{
    const std::optional<QString> ws = workspaceOf(*exchange);
    if (!ws)
        return;
    const Result<qint64> cursor =
            exchange->request().queryInteger(QStringLiteral("cursor"), 0, 0, LLONG_MAX);
    if (!cursor) {
        OpenSandboxError::send(*exchange, cursor.error());
        return;
    }
    const QString id = exchange->request().param(QStringLiteral("id"));
    const core::ExecutionPtr command = findCommand(*ws, id);
    if (!command) {
        exchange->sendError(404, QStringLiteral("NOT_FOUND"),
                            QStringLiteral("no running or recent command '%1' in sandbox '%2'").arg(id, *ws));
        return;
    }
    // stdout and stderr in the order they arrived, as complete lines (and the last partial line
    // once the command has finished), from line `cursor` on.
    QString output;
    for (const sdk::Event &event : command->events()) {
        if (event.kind == sdk::Event::Kind::Stream)
            output += event.fields.value(QStringLiteral("text")).toString();
    }
    QStringList lines = output.split(QLatin1Char('\n'));
    if (!command->isFinished() || lines.back().isEmpty())
        lines.removeLast();
    QString text;
    for (qsizetype i = *cursor; i < lines.size(); ++i)
        text += lines[i] + QLatin1Char('\n');
    exchange->addHeader("EXECD-COMMANDS-TAIL-CURSOR", QByteArray::number(lines.size()));
    exchange->send(200, "text/plain; charset=utf-8", text.toUtf8());
}

void OpenSandboxExecdApi::metrics(const ExchangePtr &exchange)
{
    if (!workspaceOf(*exchange))
        return;
    const Result<core::HostUsage::Sample> sample = m_usage.sample();
    if (!sample) {
        OpenSandboxError::send(*exchange, sample.error());
        return;
    }
    exchange->sendJson(200, QJsonObject{
            {QStringLiteral("cpu_count"), sample->cpuCount},
            {QStringLiteral("cpu_used_pct"), sample->cpuUsedPercent},
            {QStringLiteral("mem_total_mib"), sample->memoryTotalMiB},
            {QStringLiteral("mem_used_mib"), sample->memoryUsedMiB},
            {QStringLiteral("timestamp"), QDateTime::currentMSecsSinceEpoch()},
    });
}

} // namespace replhost::http
