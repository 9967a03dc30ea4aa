// SPDX-License-Identifier: Apache-2.0
#include "e2bapi.h"

#include "e2bexecutionstream.h"
#include "filedownload.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "multipartbody.h"
#include "router.h"
#include "streamlimiter.h"
#include "workspaceroute.h"

#include "core/engine.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcE2b, "replhost.http.e2b", QtInfoMsg)

namespace {

// E2B's Context object, its cwd where the code sees it (WorkspaceFiles::sandboxPath).
QJsonObject contextJson(const core::ContextInfo &info, const Result<core::WorkspaceFiles> &files)
{
    return {{QStringLiteral("id"), info.id},
            {QStringLiteral("language"), info.language},
            {QStringLiteral("cwd"), files ? files->sandboxPath(info.cwd) : info.cwd}};
}

// What E2B's server answers where FastAPI returns None.
void sendNull(const std::shared_ptr<HttpExchange> &exchange)
{
    exchange->send(200, "application/json", "null");
}

} // namespace

E2bApi::E2bApi(core::Engine &engine, StreamLimiter &streams, QString workspace)
    : m_engine(engine), m_streams(streams), m_workspace(std::move(workspace))
{
}

QString E2bApi::workspaceOf(const ExchangePtr &exchange) const
{
    return WorkspaceRoute::of(*exchange, m_workspace);
}

void E2bApi::registerRoutes(Router &router, const QString &prefix)
{
    auto bind = [this](void (E2bApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) {
            makeDefaultContexts(workspaceOf(exchange));
            (this->*handler)(exchange);
        };
    };
    router.add("GET", prefix + QStringLiteral("/health"), bind(&E2bApi::health));
    router.add("POST", prefix + QStringLiteral("/execute"), bind(&E2bApi::execute));
    router.add("POST", prefix + QStringLiteral("/contexts"), bind(&E2bApi::createContext));
    router.add("GET", prefix + QStringLiteral("/contexts"), bind(&E2bApi::listContexts));
    router.add("POST", prefix + QStringLiteral("/contexts/{id}/restart"), bind(&E2bApi::restartContext));
    router.add("DELETE", prefix + QStringLiteral("/contexts/{id}"), bind(&E2bApi::removeContext));
    router.add("GET", prefix + QStringLiteral("/files"), bind(&E2bApi::readFile));
    router.add("POST", prefix + QStringLiteral("/files"), bind(&E2bApi::writeFiles));
}

void E2bApi::makeDefaultContexts(const QString &workspace)
{
    if (m_defaultContextsMade.contains(workspace))
        return;
    // A workspace that does not exist is said by the route; it gets its contexts once it does.
    if (!m_engine.workspaces().get(workspace))
        return;
    m_defaultContextsMade.insert(workspace);
    for (const QString &language : {QStringLiteral("python"), QStringLiteral("javascript")}) {
        const Result<QList<core::ContextInfo>> existing = m_engine.contexts().list(workspace, language);
        if (!existing || !existing->isEmpty())
            continue;
        core::CreateContextRequest request;
        request.workspace = workspace;
        request.language = language;
        // A runtime that is missing is said by every run in that language; nothing to add here.
        if (const Result<core::ContextInfo> created = m_engine.contexts().create(request); !created)
            qCInfo(lcE2b).noquote() << "no default" << language << "context:" << created.error().message;
    }
}

Result<void> E2bApi::prepareWorkspace(core::Engine &engine, const QString &name)
{
    if (!engine.sandbox().available())
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("the E2B workspace \"%1\" is a sandbox, which this machine "
                                        "cannot make: %2").arg(name, engine.sandbox().reason()));
    if (engine.workspaces().get(name)) {
        const Result<core::WorkspaceSettings> settings = engine.workspaces().settings(name);
        if (!settings)
            return settings.error();
        if (settings->isolation != core::WorkspaceSettings::Isolation::Sandbox
            || settings->viewPath != viewPath())
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("workspace \"%1\" exists with isolation \"%2\" and "
                                            "view_path \"%3\", not a sandbox seen at %4; change "
                                            "its settings or name another workspace")
                                     .arg(name, core::WorkspaceSettings::isolationName(settings->isolation),
                                          settings->viewPath, viewPath()));
        return {};
    }
    const Result<storage::WorkspaceRecord> created = engine.workspaces().create(
            name, QString(),
            QJsonObject{{QStringLiteral("isolation"), QStringLiteral("sandbox")},
                        {QStringLiteral("view_path"), viewPath()}});
    if (!created)
        return created.error();
    return {};
}

Result<QString> E2bApi::engineLanguage(const QString &e2bLanguage)
{
    const QString name = e2bLanguage.trimmed().toLower();
    if (name.isEmpty())
        return QStringLiteral("python");
    return name;
}

void E2bApi::sendError(const ExchangePtr &exchange, const Error &error, const QString &contextId)
{
    if (error.code == QLatin1String("not_found") && !contextId.isEmpty()) {
        exchange->sendError(404, error.code, QStringLiteral("Context %1 not found").arg(contextId));
        return;
    }
    exchange->sendError(error);
}

void E2bApi::health(const ExchangePtr &exchange)
{
    exchange->send(200, "application/json", "\"OK\"");
}

void E2bApi::execute(const ExchangePtr &exchange)
{
    const Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> code = json->requiredString(QStringLiteral("code"));
    const Result<QString> contextId = json->optionalString(QStringLiteral("context_id"));
    const Result<QString> language = json->optionalString(QStringLiteral("language"));
    const Result<QMap<QString, QString>> env = json->stringMap(QStringLiteral("env_vars"));
    if (!code || !contextId || !language || !env) {
        exchange->sendError(!code ? code.error()
                            : !contextId ? contextId.error()
                            : !language  ? language.error()
                                         : env.error());
        return;
    }
    if (!contextId->isEmpty() && !language->isEmpty()) {
        exchange->sendError(400, QStringLiteral("bad_request"),
                            QStringLiteral("Only one of context_id or language can be provided"));
        return;
    }

    core::RunRequest run;
    run.workspace = workspaceOf(exchange);
    run.contextId = *contextId;
    if (run.contextId.isEmpty()) {
        const Result<QString> engineLanguage = E2bApi::engineLanguage(*language);
        if (!engineLanguage) {
            exchange->sendError(engineLanguage.error());
            return;
        }
        run.language = *engineLanguage;
    }
    run.code = *code;
    run.env = *env;

    // The stream's slot is taken before the run starts: a refused client must not leave a run
    // behind that nobody watches.
    StreamLimiter::Lease lease = m_streams.admit(*exchange);
    if (!lease)
        return;
    const Result<core::ExecutionPtr> started = m_engine.contexts().run(run);
    if (!started) {
        sendError(exchange, started.error(), run.contextId);
        return;
    }
    E2bExecutionStream::start(exchange, *started, m_engine.contexts(), kKeepAliveMs, std::move(lease));
}

void E2bApi::createContext(const ExchangePtr &exchange)
{
    const Result<JsonBody> json = JsonBody::parse(exchange->request().body, true);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> language = json->optionalString(QStringLiteral("language"));
    const Result<QString> cwd = json->optionalString(QStringLiteral("cwd"));
    if (!language || !cwd) {
        exchange->sendError(!language ? language.error() : cwd.error());
        return;
    }
    const Result<QString> engineLanguage = E2bApi::engineLanguage(*language);
    if (!engineLanguage) {
        exchange->sendError(engineLanguage.error());
        return;
    }
    core::CreateContextRequest request;
    request.workspace = workspaceOf(exchange);
    request.language = *engineLanguage;
    request.cwd = *cwd;  // empty: the workspace directory (E2B's /home/user in a sandbox with a view)
    const Result<core::ContextInfo> created = m_engine.contexts().create(request);
    if (!created) {
        exchange->sendError(created.error());
        return;
    }
    exchange->sendJson(200, contextJson(*created, m_engine.workspaces().files(request.workspace)));
}

void E2bApi::listContexts(const ExchangePtr &exchange)
{
    const Result<QList<core::ContextInfo>> contexts = m_engine.contexts().list(workspaceOf(exchange));
    if (!contexts) {
        exchange->sendError(contexts.error());
        return;
    }
    const Result<core::WorkspaceFiles> files = m_engine.workspaces().files(workspaceOf(exchange));
    QJsonArray list;
    for (const core::ContextInfo &info : *contexts)
        list.append(contextJson(info, files));
    exchange->sendJson(200, list);
}

void E2bApi::restartContext(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("id"));
    if (const Result<core::ContextInfo> restarted = m_engine.contexts().restart(workspaceOf(exchange), id); !restarted) {
        sendError(exchange, restarted.error(), id);
        return;
    }
    sendNull(exchange);
}

void E2bApi::removeContext(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("id"));
    if (const Result<void> removed = m_engine.contexts().remove(workspaceOf(exchange), id); !removed) {
        sendError(exchange, removed.error(), id);
        return;
    }
    sendNull(exchange);
}

void E2bApi::readFile(const ExchangePtr &exchange)
{
    Result<core::WorkspaceFiles> files = m_engine.workspaces().files(workspaceOf(exchange));
    if (!files) {
        exchange->sendError(files.error());
        return;
    }
    const QString path = exchange->request().queryValue(QStringLiteral("path"));
    if (path.isEmpty()) {
        exchange->sendError(400, QStringLiteral("bad_request"), QStringLiteral("query parameter 'path' is required"));
        return;
    }
    m_work.run([files = *files, path] { return files.open(path); },
               [this, exchange](Result<core::WorkspaceFiles::OpenFile> file) {
                   if (!file) {
                       exchange->sendError(file.error());
                       return;
                   }
                   FileDownload::answer(exchange, m_work, std::move(*file), "application/octet-stream",
                                        exchange->request().header("range"));
               });
}

void E2bApi::writeFiles(const ExchangePtr &exchange)
{
    Result<core::WorkspaceFiles> files = m_engine.workspaces().files(workspaceOf(exchange));
    if (!files) {
        exchange->sendError(files.error());
        return;
    }
    const QString path = exchange->request().queryValue(QStringLiteral("path"));
    m_work.run([files = *files, path, body = exchange->request().body,
                contentType = exchange->request().header("content-type")]() -> Result<FileReply> {
        const Result<QList<MultipartBody::Part>> parts = MultipartBody::parse(contentType, body);
        if (!parts)
            return parts.error();
        QList<std::pair<QString, QByteArray>> writes;
        for (const MultipartBody::Part &part : *parts) {
            if (part.name == QLatin1String("file"))
                writes.append({part.fileName, part.data});
        }
        if (writes.isEmpty())
            return makeError(QStringLiteral("bad_request"), QStringLiteral("the multipart body has no 'file' part"));
        // One part: `path` is the file (envd's write). Several: `path` is their directory.
        if (writes.size() == 1 && !path.isEmpty()) {
            writes.front().first = path;
        } else {
            for (auto &[target, data] : writes) {
                if (target.isEmpty())
                    return makeError(QStringLiteral("bad_request"),
                                     QStringLiteral("every 'file' part needs a filename when several are sent"));
                target = path.isEmpty() ? target : path + QLatin1Char('/') + target;
            }
        }
        for (const auto &[target, data] : std::as_const(writes)) {
            if (const Result<QString> resolved = files.resolve(target); !resolved)
                return resolved.error();
        }
        QJsonArray written;
        for (const auto &[target, data] : std::as_const(writes)) {
            const Result<core::WorkspaceFiles::Written> result = files.write(target, data, true);
            if (!result)
                return result.error();
            written.append(QJsonObject{{QStringLiteral("name"), result->entry.name},
                                       {QStringLiteral("type"), QStringLiteral("file")},
                                       {QStringLiteral("path"), files.sandboxPath(files.root() + QLatin1Char('/') + result->entry.path)}});
        }
        return FileReply{200, written};
    }, [exchange](const Result<FileReply> &reply) {
        if (!reply)
            exchange->sendError(reply.error());
        else
            exchange->sendJson(reply->status, reply->body);
    });
}

} // namespace replhost::http
