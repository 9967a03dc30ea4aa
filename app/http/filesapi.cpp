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

// Answers what a route's file work returned, on the engine thread.
auto answerWith(const std::shared_ptr<HttpExchange> &exchange)
{
    return [exchange](const Result<FileReply> &reply) {
        if (!reply)
            exchange->sendError(reply.error());
        else if (reply->body.isNull())
            exchange->sendEmpty(reply->status);
        else
            exchange->sendJson(reply->status, reply->body);
    };
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
    m_work.run([files = *files, path = *path]() -> Result<FileReply> {
        const Result<WorkspaceFiles::Entry> directory = files.stat(path);
        if (!directory)
            return directory.error();
        const Result<QList<WorkspaceFiles::Entry>> entries = files.list(path);
        if (!entries)
            return entries.error();
        QJsonArray list;
        for (const WorkspaceFiles::Entry &entry : *entries)
            list.append(entry.toJson());
        return FileReply{200, QJsonObject{{QStringLiteral("path"), directory->path},
                                          {QStringLiteral("entries"), list}}};
    }, answerWith(exchange));
}

void FilesApi::read(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange) : std::nullopt;
    if (!path)
        return;
    m_work.run([files = *files, path = *path] { return files.open(path); },
               [this, exchange](Result<WorkspaceFiles::OpenFile> file) {
                   if (!file) {
                       exchange->sendError(file.error());
                       return;
                   }
                   const QByteArray type = QMimeDatabase()
                                                   .mimeTypeForFile(file->path, QMimeDatabase::MatchExtension)
                                                   .name().toLatin1();
                   FileDownload::answer(exchange, m_work, std::move(*file), type,
                                        exchange->request().header("range"));
               });
}

void FilesApi::write(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange) : std::nullopt;
    if (!path)
        return;
    // The body is shared with the request, not copied: it is written from where it arrived.
    m_work.run([files = *files, path = *path, body = exchange->request().body,
                parents = flagOf(*exchange, QStringLiteral("parents"), true)]() -> Result<FileReply> {
        const Result<WorkspaceFiles::Written> written = files.write(path, body, parents);
        if (!written)
            return written.error();
        return FileReply{written->created ? 201 : 200, written->entry.toJson()};
    }, answerWith(exchange));
}

void FilesApi::upload(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> directory = files ? pathOf(*exchange, true) : std::nullopt;
    if (!directory)
        return;
    m_work.run([files = *files, directory = *directory, body = exchange->request().body,
                contentType = exchange->request().header("content-type")]() -> Result<FileReply> {
        const Result<QList<MultipartBody::Part>> parts = MultipartBody::parse(contentType, body);
        if (!parts)
            return parts.error();
        // Every name is checked before anything is written, so a refused upload writes nothing.
        QList<std::pair<QString, QByteArray>> uploads;
        for (const MultipartBody::Part &part : *parts) {
            if (part.fileName.isEmpty())
                continue;  // plain form fields carry no file
            const QString target = directory.isEmpty() ? part.fileName
                                                       : directory + QLatin1Char('/') + part.fileName;
            if (const Result<QString> resolved = files.resolve(target); !resolved)
                return resolved.error();
            uploads.append({target, part.data});
        }
        if (uploads.isEmpty())
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("the multipart body has no file part (a part with a "
                                            "filename)"));
        QJsonArray written;
        for (const auto &[target, data] : std::as_const(uploads)) {
            const Result<WorkspaceFiles::Written> result = files.write(target, data, true);
            if (!result)
                return result.error();
            written.append(result->entry.toJson());
        }
        return FileReply{201, QJsonObject{{QStringLiteral("files"), written}}};
    }, answerWith(exchange));
}

void FilesApi::remove(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(m_engine, *exchange);
    const std::optional<QString> path = files ? pathOf(*exchange) : std::nullopt;
    if (!path)
        return;
    m_work.run([files = *files, path = *path,
                recursive = flagOf(*exchange, QStringLiteral("recursive"), false)]() -> Result<FileReply> {
        if (const Result<void> removed = files.remove(path, recursive); !removed)
            return removed.error();
        return FileReply{204, QJsonValue::Null};
    }, answerWith(exchange));
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
    m_work.run([files = *files, from = *from, to = *to, overwrite = *overwrite]() -> Result<FileReply> {
        const Result<WorkspaceFiles::Entry> moved = files.move(from, to, overwrite);
        if (!moved)
            return moved.error();
        return FileReply{200, moved->toJson()};
    }, answerWith(exchange));
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
    m_work.run([files = *files, path = *path, parents = *parents]() -> Result<FileReply> {
        const Result<WorkspaceFiles::Written> made = files.makeDirectory(path, parents);
        if (!made)
            return made.error();
        return FileReply{made->created ? 201 : 200, made->entry.toJson()};
    }, answerWith(exchange));
}

} // namespace replhost::http
