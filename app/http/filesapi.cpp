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
#include <QRegularExpression>
#include <QTcpSocket>

#include <optional>

namespace replhost::http {

namespace {

using core::WorkspaceFiles;

// Files up to this size are read and sent in one piece; larger ones are streamed.
constexpr qint64 kInlineBytes = 1024 * 1024;

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
    if (!request.query.hasQueryItem(QStringLiteral("path")) && !optional) {
        exchange.sendError(400, QStringLiteral("bad_request"),
                           QStringLiteral("query parameter 'path' is required (a path relative to "
                                          "the workspace directory)"));
        return std::nullopt;
    }
    return request.queryValue(QStringLiteral("path"));
}

bool flagOf(const HttpExchange &exchange, const QString &name, bool fallback)
{
    if (!exchange.request().query.hasQueryItem(name))
        return fallback;
    return exchange.request().queryFlag(name);
}

struct ByteRange {
    qint64 first = 0;
    qint64 length = 0;
};

// A single "bytes=" range of RFC 9110 §14.1.2. No value: serve the whole file (absent, malformed
// or multi-range headers may be ignored). Error "range_not_satisfiable" when it starts past the
// end.
Result<std::optional<ByteRange>> parseRange(const QByteArray &header, qint64 size)
{
    static const QRegularExpression single(QStringLiteral("^\\s*bytes\\s*=\\s*(\\d*)\\s*-\\s*(\\d*)\\s*$"));
    const QRegularExpressionMatch match = single.match(QString::fromLatin1(header));
    if (header.isEmpty() || !match.hasMatch())
        return std::optional<ByteRange>();
    const QString firstText = match.captured(1);
    const QString lastText = match.captured(2);
    if (firstText.isEmpty() && lastText.isEmpty())
        return std::optional<ByteRange>();
    bool ok = true;
    ByteRange range;
    if (firstText.isEmpty()) {
        // "bytes=-n": the last n bytes.
        const qint64 suffix = lastText.toLongLong(&ok);
        if (!ok)
            return std::optional<ByteRange>();
        if (suffix == 0 || size == 0)
            return makeError(QStringLiteral("range_not_satisfiable"),
                             QStringLiteral("the range selects no bytes of a %1-byte file").arg(size));
        range.first = std::max<qint64>(0, size - suffix);
        range.length = size - range.first;
        return std::optional<ByteRange>(range);
    }
    range.first = firstText.toLongLong(&ok);
    if (!ok)
        return std::optional<ByteRange>();
    qint64 last = size - 1;
    if (!lastText.isEmpty()) {
        last = lastText.toLongLong(&ok);
        if (!ok || last < range.first)
            return std::optional<ByteRange>();
        last = std::min(last, size - 1);
    }
    if (range.first >= size)
        return makeError(QStringLiteral("range_not_satisfiable"),
                         QStringLiteral("the range starts at byte %1 of a %2-byte file")
                                 .arg(range.first).arg(size));
    range.length = last - range.first + 1;
    return std::optional<ByteRange>(range);
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
    const qint64 size = (*file)->size();
    HeaderList headers{
            {"Content-Type", QMimeDatabase().mimeTypeForFile((*file)->fileName(), QMimeDatabase::MatchExtension)
                                     .name().toLatin1()},
            {"Accept-Ranges", "bytes"}};
    const Result<std::optional<ByteRange>> range = parseRange(exchange->request().header("range"), size);
    if (!range) {
        exchange->addHeader("Content-Range", "bytes */" + QByteArray::number(size));
        exchange->sendError(range.error());
        return;
    }
    int status = 200;
    qint64 first = 0;
    qint64 length = size;
    if (range->has_value()) {
        status = 206;
        first = range->value().first;
        length = range->value().length;
        headers.emplaceBack("Content-Range", "bytes " + QByteArray::number(first) + '-'
                                                     + QByteArray::number(first + length - 1) + '/'
                                                     + QByteArray::number(size));
    }
    if (length <= kInlineBytes) {
        (*file)->seek(first);
        const QByteArray body = (*file)->read(length);
        for (const auto &[name, value] : std::as_const(headers)) {
            if (name != "Content-Type")
                exchange->addHeader(name, value);
        }
        exchange->send(status, headers.front().second, body);
        return;
    }
    FileDownload::start(exchange, std::move(*file), first, length, status, headers);
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
