// SPDX-License-Identifier: Apache-2.0
#include "filesapi.h"

#include "filedownload.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "multipartbody.h"
#include "router.h"
#include "workspaceroute.h"

#include "core/engine.h"
#include "core/workspacefiles.h"

#include <QFile>
#include <QJsonArray>
#include <QMimeDatabase>
#include <QTcpSocket>

#include <optional>

namespace replhost::http {

namespace {

using core::WorkspaceFiles;

// The workspace's files, or an answered error.
std::optional<WorkspaceFiles> filesOf(core::Engine &engine, HttpExchange &exchange)
{
    Result<WorkspaceFiles> files = engine.workspaces().files(WorkspaceRoute::of(exchange));
    if (!files) {
        exchange.sendError(files.error());
        return std::nullopt;
    }
    return std::move(*files);
}

// The `path` query parameter, required unless `optional`; answers 400 when missing.
std::optional<QString> pathOf(HttpExchange &exchange, bool optional = false)
{
    const HttpRequest &request = exchange.request();
    if (!request.query().hasQueryItem(QStringLiteral("path")) && !optional) {
        exchange.sendError(400, QStringLiteral("bad_request"),
                           QStringLiteral("query parameter 'path' is required (a path relative to "
                                          "the workspace directory)"));
        return std::nullopt;
    }
    return request.queryValue(QStringLiteral("path"));
}

bool flagOf(const HttpExchange &exchange, const QString &name, bool fallback)
{
    if (!exchange.request().query().hasQueryItem(name))
        return fallback;
    return exchange.request().queryFlag(name);
}

} // namespace

FilesApi::FilesApi(core::Engine &engine) : m_engine(engine) {}

void FilesApi::registerRoutes(Router &router)
{
    auto bind = [this](void (FilesApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };
    for (const QString &prefix : WorkspaceRoute::prefixes()) {
        router.add("GET", prefix + QStringLiteral("/files"), bind(&FilesApi::list));
        router.add("DELETE", prefix + QStringLiteral("/files"), bind(&FilesApi::remove));
        router.add("GET", prefix + QStringLiteral("/files/content"), bind(&FilesApi::read));
        router.add("PUT", prefix + QStringLiteral("/files/content"), bind(&FilesApi::write));
        router.add("POST", prefix + QStringLiteral("/files/content"), bind(&FilesApi::upload));
        router.add("POST", prefix + QStringLiteral("/files/move"), bind(&FilesApi::move));
        router.add("POST", prefix + QStringLiteral("/files/mkdir"), bind(&FilesApi::makeDirectory));
    }
}

void FilesApi::list(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange, true) : std::nullopt;
    if (!path)
        return;
    const Result<WorkspaceFiles::Entry> directory = files->stat(*path);
    if (!directory) {
        exchange->sendError(directory.error());
        return;
    }
    const Result<QList<WorkspaceFiles::Entry>> entries = files->list(*path);
    if (!entries) {
        exchange->sendError(entries.error());
        return;
    }
    QJsonArray list;
    for (const WorkspaceFiles::Entry &entry : *entries)
        list.append(entry.toJson());
    exchange->sendJson(200, QJsonObject{{QStringLiteral("path"), directory->path},
                                        {QStringLiteral("entries"), list}});
}

void FilesApi::read(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange) : std::nullopt;
    if (!path)
        return;
    Result<std::unique_ptr<QFile>> file = files->open(*path);
    if (!file) {
        exchange->sendError(file.error());
        return;
    }
    const QByteArray type = QMimeDatabase()
                                    .mimeTypeForFile((*file)->fileName(), QMimeDatabase::MatchExtension)
                                    .name().toLatin1();
    FileDownload::answer(exchange, std::move(*file), type, exchange->request().header("range"));
}

void FilesApi::write(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange) : std::nullopt;
    if (!path)
        return;
    const Result<WorkspaceFiles::Written> written =
            files->write(*path, exchange->request().body, flagOf(*exchange, QStringLiteral("parents"), true));
    if (!written) {
        exchange->sendError(written.error());
        return;
    }
    exchange->sendJson(written->created ? 201 : 200, written->entry.toJson());
}

void FilesApi::upload(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> directory = files ? pathOf(*exchange, true) : std::nullopt;
    if (!directory)
        return;
    const Result<QList<MultipartBody::Part>> parts =
            MultipartBody::parse(exchange->request().header("content-type"), exchange->request().body);
    if (!parts) {
        exchange->sendError(parts.error());
        return;
    }
    // Every name is checked before anything is written, so a refused upload writes nothing.
    QList<QPair<QString, QByteArray>> uploads;
    for (const MultipartBody::Part &part : *parts) {
        if (part.fileName.isEmpty())
            continue;  // plain form fields carry no file
        const QString target = directory->isEmpty() ? part.fileName
                                                    : *directory + QLatin1Char('/') + part.fileName;
        if (const Result<QString> resolved = files->resolve(target); !resolved) {
            exchange->sendError(resolved.error());
            return;
        }
        uploads.append({target, part.data});
    }
    if (uploads.isEmpty()) {
        exchange->sendError(400, QStringLiteral("bad_request"),
                            QStringLiteral("the multipart body has no file part (a part with a "
                                           "filename)"));
        return;
    }
    QJsonArray written;
    for (const auto &[target, data] : std::as_const(uploads)) {
        const Result<WorkspaceFiles::Written> result = files->write(target, data, true);
        if (!result) {
            exchange->sendError(result.error());
            return;
        }
        written.append(result->entry.toJson());
    }
    exchange->sendJson(201, QJsonObject{{QStringLiteral("files"), written}});
}

void FilesApi::remove(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange) : std::nullopt;
    if (!path)
        return;
    const Result<void> removed = files->remove(*path, flagOf(*exchange, QStringLiteral("recursive"), false));
    if (!removed) {
        exchange->sendError(removed.error());
        return;
    }
    exchange->sendEmpty(204);
}

void FilesApi::move(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    if (!files)
        return;
    const Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> from = json->requiredString(QStringLiteral("from"));
    const Result<QString> to = json->requiredString(QStringLiteral("to"));
    const Result<bool> overwrite = json->optionalBool(QStringLiteral("overwrite"), false);
    if (!from || !to || !overwrite) {
        exchange->sendError(!from ? from.error() : !to ? to.error() : overwrite.error());
        return;
    }
    const Result<WorkspaceFiles::Entry> moved = files->move(*from, *to, *overwrite);
    if (!moved) {
        exchange->sendError(moved.error());
        return;
    }
    exchange->sendJson(200, moved->toJson());
}

void FilesApi::makeDirectory(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    if (!files)
        return;
    const Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> path = json->requiredString(QStringLiteral("path"));
    const Result<bool> parents = json->optionalBool(QStringLiteral("parents"), true);
    if (!path || !parents) {
        exchange->sendError(!path ? path.error() : parents.error());
        return;
    }
    const Result<WorkspaceFiles::Written> made = files->makeDirectory(*path, *parents);
    if (!made) {
        exchange->sendError(made.error());
        return;
    }
    exchange->sendJson(made->created ? 201 : 200, made->entry.toJson());
}

} // namespace replhost::http
