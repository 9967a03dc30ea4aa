// SPDX-License-Identifier: Apache-2.0
#include "opensandboxfilesapi.h"

#include "filedownload.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "multipartbody.h"
#include "opensandboxerror.h"
#include "opensandboxexecdapi.h"
#include "router.h"

#include "core/engine.h"

#include <QTcpSocket>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeDatabase>
#include <QRegularExpression>

#include <sys/stat.h>
#include <unistd.h>

namespace replhost::http {

namespace {

using core::WorkspaceFiles;

const QString kFileNotFound = QStringLiteral("FILE_NOT_FOUND");
// Bounds on what one search or listing walks, so one request cannot pin the server.
constexpr int kMaxEntries = 10000;
constexpr int kMaxDepth = 64;

QString absolutePath(const WorkspaceFiles &files, const QString &relative)
{
    return relative.isEmpty() ? files.root() : files.root() + QLatin1Char('/') + relative;
}

QString isoTime(const QDateTime &time)
{
    return time.toUTC().toString(Qt::ISODateWithMs);
}

// execd's FileInfo. Its mode is the octal permission digits read as a decimal number (755).
QJsonObject fileInfoJson(const WorkspaceFiles &files, const WorkspaceFiles::Entry &entry)
{
    const QString absolute = absolutePath(files, entry.path);
    const QFileInfo info(absolute);
    const QDateTime modified = QDateTime::fromMSecsSinceEpoch(entry.modifiedAt, Qt::UTC);
    QDateTime created = info.birthTime();
    if (!created.isValid())
        created = info.metadataChangeTime();
    if (!created.isValid())
        created = modified;
    return {{QStringLiteral("path"), absolute},
            {QStringLiteral("type"), entry.type},
            {QStringLiteral("size"), entry.size},
            {QStringLiteral("modified_at"), isoTime(modified)},
            {QStringLiteral("created_at"), isoTime(created)},
            {QStringLiteral("owner"), info.owner()},
            {QStringLiteral("group"), info.group()},
            {QStringLiteral("mode"), QString::number(entry.mode, 8).toInt()}};
}

// An execd permission object {"mode": 755, "owner", "group"}: the mode's permission bits, or -1
// when it has none. Owners and groups can only be the server's own (there are no other users to
// hand files to without privileges).
Result<int> permissionMode(const QJsonValue &value, const QString &path)
{
    if (value.isNull() || value.isUndefined())
        return -1;
    if (!value.isObject())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("the permissions of '%1' must be an object with 'mode', "
                                        "'owner' and 'group'").arg(path));
    const QJsonObject permission = value.toObject();
    const QFileInfo self(QStringLiteral("/proc/self"));
    for (const auto &[field, current] : {std::pair{QStringLiteral("owner"), self.owner()},
                                          std::pair{QStringLiteral("group"), self.group()}}) {
        const QString wanted = permission.value(field).toString();
        if (!wanted.isEmpty() && wanted != current)
            return makeError(QStringLiteral("unsupported"),
                             QStringLiteral("files belong to the server's user; %1 '%2' cannot be "
                                            "set (only '%3')").arg(field, wanted, current));
    }
    const QJsonValue mode = permission.value(QStringLiteral("mode"));
    if (mode.isNull() || mode.isUndefined())
        return -1;
    bool ok = false;
    const int bits = QString::number(mode.toInteger(-1)).toInt(&ok, 8);
    if (!mode.isDouble() || !ok || mode.toInteger(-1) < 0 || bits > 07777)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("mode of '%1' must be octal digits such as 644 or 755").arg(path));
    return bits;
}

Result<void> applyMode(const WorkspaceFiles &files, const QString &path, int mode)
{
    if (mode < 0)
        return {};
    const Result<QString> resolved = files.resolve(path);
    if (!resolved)
        return resolved.error();
    if (::chmod(QFile::encodeName(*resolved).constData(), mode_t(mode)) != 0)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot change the mode of '%1': %2")
                                                       .arg(path, QString::fromLocal8Bit(strerror(errno))));
    return {};
}

// Every `path` query parameter; answers 400 MISSING_QUERY when there is none.
std::optional<QStringList> queryPaths(HttpExchange &exchange)
{
    const QStringList paths =
            exchange.request().query().allQueryItemValues(QStringLiteral("path"), QUrl::FullyDecoded);
    if (paths.isEmpty()) {
        OpenSandboxError::missingQuery(exchange, QStringLiteral("path"));
        return std::nullopt;
    }
    return paths;
}

// Entries below `directory`, depth first, down to `depth` levels (1: its own entries). Symlinked
// directories are listed, not entered.
Result<void> walk(const WorkspaceFiles &files, const QString &directory, int depth,
                  const std::function<bool(const WorkspaceFiles::Entry &)> &visit)
{
    const Result<QList<WorkspaceFiles::Entry>> entries = files.list(directory);
    if (!entries)
        return entries.error();
    for (const WorkspaceFiles::Entry &entry : *entries) {
        if (!visit(entry))
            return {};
        if (depth > 1 && entry.type == QLatin1String("directory")) {
            if (const Result<void> below = walk(files, entry.path, depth - 1, visit); !below)
                return below;
        }
    }
    return {};
}

} // namespace

OpenSandboxFilesApi::OpenSandboxFilesApi(core::Engine &engine) : m_engine(engine) {}

void OpenSandboxFilesApi::registerRoutes(Router &router)
{
    auto bind = [this](void (OpenSandboxFilesApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };
    const QString base = OpenSandboxExecdApi::prefix() + QStringLiteral("/{ws}");
    router.add("GET", base + QStringLiteral("/files/info"), bind(&OpenSandboxFilesApi::info));
    router.add("DELETE", base + QStringLiteral("/files"), bind(&OpenSandboxFilesApi::removeFiles));
    router.add("POST", base + QStringLiteral("/files/permissions"), bind(&OpenSandboxFilesApi::setPermissions));
    router.add("POST", base + QStringLiteral("/files/mv"), bind(&OpenSandboxFilesApi::move));
    router.add("GET", base + QStringLiteral("/files/search"), bind(&OpenSandboxFilesApi::search));
    router.add("POST", base + QStringLiteral("/files/replace"), bind(&OpenSandboxFilesApi::replace));
    router.add("POST", base + QStringLiteral("/files/upload"), bind(&OpenSandboxFilesApi::upload));
    router.add("GET", base + QStringLiteral("/files/download"), bind(&OpenSandboxFilesApi::download));
    router.add("GET", base + QStringLiteral("/directories/list"), bind(&OpenSandboxFilesApi::listDirectory));
    router.add("POST", base + QStringLiteral("/directories"), bind(&OpenSandboxFilesApi::makeDirectories));
    router.add("DELETE", base + QStringLiteral("/directories"), bind(&OpenSandboxFilesApi::removeDirectories));
}

std::optional<WorkspaceFiles> OpenSandboxFilesApi::filesOf(HttpExchange &exchange) const
{
    Result<WorkspaceFiles> files = m_engine.workspaces().files(exchange.request().param(QStringLiteral("ws")));
    if (!files) {
        OpenSandboxError::send(exchange, files.error(), QStringLiteral("SANDBOX_NOT_FOUND"));
        return std::nullopt;
    }
    return std::move(*files);
}

void OpenSandboxFilesApi::info(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    const std::optional<QStringList> paths = files ? queryPaths(*exchange) : std::nullopt;
    if (!paths)
        return;
    QJsonObject reply;
    for (const QString &path : *paths) {
        const Result<WorkspaceFiles::Entry> entry = files->stat(path);
        if (!entry) {
            OpenSandboxError::send(*exchange, entry.error(), kFileNotFound);
            return;
        }
        reply.insert(path, fileInfoJson(*files, *entry));
    }
    exchange->sendJson(200, reply);
}

void OpenSandboxFilesApi::removeFiles(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    const std::optional<QStringList> paths = files ? queryPaths(*exchange) : std::nullopt;
    if (!paths)
        return;
    for (const QString &path : *paths) {
        if (const Result<void> removed = files->remove(path, false); !removed) {
            OpenSandboxError::send(*exchange, removed.error(), kFileNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

void OpenSandboxFilesApi::setPermissions(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    // Everything is checked before anything changes.
    QList<QPair<QString, int>> changes;
    for (auto it = json->object().begin(); it != json->object().end(); ++it) {
        const Result<int> mode = permissionMode(it.value(), it.key());
        if (!mode) {
            OpenSandboxError::send(*exchange, mode.error());
            return;
        }
        if (const Result<WorkspaceFiles::Entry> entry = files->stat(it.key()); !entry) {
            OpenSandboxError::send(*exchange, entry.error(), kFileNotFound);
            return;
        }
        changes.append({it.key(), *mode});
    }
    for (const auto &[path, mode] : std::as_const(changes)) {
        if (const Result<void> changed = applyMode(*files, path, mode); !changed) {
            OpenSandboxError::send(*exchange, changed.error(), kFileNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

void OpenSandboxFilesApi::move(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(exchange->request().body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isArray()) {
        exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("the body must be a JSON array of {\"src\", \"dest\"}"));
        return;
    }
    for (const QJsonValue &item : document.array()) {
        const QString src = item.toObject().value(QStringLiteral("src")).toString();
        const QString dest = item.toObject().value(QStringLiteral("dest")).toString();
        if (src.isEmpty() || dest.isEmpty()) {
            exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                                QStringLiteral("every move needs non-empty 'src' and 'dest' strings"));
            return;
        }
        if (const Result<WorkspaceFiles::Entry> moved = files->move(src, dest, true); !moved) {
            OpenSandboxError::send(*exchange, moved.error(), kFileNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

void OpenSandboxFilesApi::search(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const QString root = exchange->request().queryValue(QStringLiteral("path"));
    QString pattern = exchange->request().queryValue(QStringLiteral("pattern"));
    // Names are matched, so leading "**/" (any directory) adds nothing.
    while (pattern.startsWith(QLatin1String("**/")))
        pattern.remove(0, 3);
    if (pattern.isEmpty())
        pattern = QStringLiteral("**");
    const QRegularExpression glob(QRegularExpression::wildcardToRegularExpression(pattern));
    if (!glob.isValid()) {
        exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("'%1' is not a glob pattern").arg(pattern));
        return;
    }
    QJsonArray found;
    const Result<void> walked = walk(*files, root, kMaxDepth, [&](const WorkspaceFiles::Entry &entry) {
        if (entry.type != QLatin1String("directory") && glob.match(entry.name).hasMatch())
            found.append(fileInfoJson(*files, entry));
        return found.size() < kMaxEntries;
    });
    if (!walked) {
        OpenSandboxError::send(*exchange, walked.error(), kFileNotFound);
        return;
    }
    exchange->sendJson(200, found);
}

void OpenSandboxFilesApi::replace(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    // Read and replace everything first, so a refused entry writes nothing.
    QList<QPair<QString, QByteArray>> writes;
    QJsonObject counts;
    for (auto it = json->object().begin(); it != json->object().end(); ++it) {
        const QJsonObject change = it.value().toObject();
        const QJsonValue oldText = change.value(QStringLiteral("old"));
        const QJsonValue newText = change.value(QStringLiteral("new"));
        if (!oldText.isString() || oldText.toString().isEmpty() || !newText.isString()) {
            exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                                QStringLiteral("'%1' needs a non-empty string 'old' and a string 'new'")
                                        .arg(it.key()));
            return;
        }
        const Result<QByteArray> content = files->read(it.key());
        if (!content) {
            OpenSandboxError::send(*exchange, content.error(), kFileNotFound);
            return;
        }
        QByteArray replaced = *content;
        const QByteArray from = oldText.toString().toUtf8();
        const qsizetype count = content->count(from);
        replaced.replace(from, newText.toString().toUtf8());
        writes.append({it.key(), replaced});
        counts.insert(it.key(), QJsonObject{{QStringLiteral("replacedCount"), count}});
    }
    for (const auto &[path, data] : std::as_const(writes)) {
        if (const Result<WorkspaceFiles::Written> written = files->write(path, data, false); !written) {
            OpenSandboxError::send(*exchange, written.error(), kFileNotFound);
            return;
        }
    }
    if (exchange->request().queryFlag(QStringLiteral("verbose")))
        exchange->sendJson(200, counts);
    else
        exchange->sendEmpty(200);
}

void OpenSandboxFilesApi::upload(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const Result<QList<MultipartBody::Part>> parts =
            MultipartBody::parse(exchange->request().header("content-type"), exchange->request().body);
    if (!parts) {
        OpenSandboxError::send(*exchange, parts.error());
        return;
    }
    struct Upload {
        QString path;
        int mode = -1;
        QByteArray data;
    };
    // Each "file" part is described by the "metadata" part before it. Every upload is checked
    // before anything is written, so a refused request writes nothing.
    QList<Upload> uploads;
    std::optional<Upload> described;
    for (const MultipartBody::Part &part : *parts) {
        if (part.name == QLatin1String("metadata")) {
            const Result<JsonBody> metadata = JsonBody::parse(part.data);
            const Result<QString> path = metadata ? metadata->requiredString(QStringLiteral("path"))
                                                  : Result<QString>(metadata.error());
            if (!path) {
                OpenSandboxError::send(*exchange, path.error());
                return;
            }
            const Result<int> mode = permissionMode(metadata->object(), *path);
            const Result<QString> resolved = mode ? files->resolve(*path) : Result<QString>(mode.error());
            if (!resolved) {
                OpenSandboxError::send(*exchange, resolved.error(), kFileNotFound);
                return;
            }
            described = Upload{*path, *mode, {}};
        } else if (part.name == QLatin1String("file")) {
            if (!described) {
                exchange->sendError(400, QStringLiteral("INVALID_FILE_METADATA"),
                                    QStringLiteral("a 'file' part must follow a 'metadata' part "
                                                   "{\"path\": …} that says where it goes"));
                return;
            }
            described->data = part.data;
            uploads.append(*described);
            described.reset();
        }
    }
    if (uploads.isEmpty()) {
        exchange->sendError(400, QStringLiteral("INVALID_FILE"),
                            QStringLiteral("the multipart body has no 'metadata' and 'file' parts"));
        return;
    }
    for (const Upload &upload : std::as_const(uploads)) {
        const Result<WorkspaceFiles::Written> written = files->write(upload.path, upload.data, true);
        const Result<void> moded = written ? applyMode(*files, upload.path, upload.mode)
                                           : Result<void>(written.error());
        if (!moded) {
            OpenSandboxError::send(*exchange, moded.error(), kFileNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

void OpenSandboxFilesApi::download(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const HttpRequest &request = exchange->request();
    if (request.query().hasQueryItem(QStringLiteral("offset")) || request.query().hasQueryItem(QStringLiteral("limit"))) {
        exchange->sendError(400, QStringLiteral("NOT_SUPPORTED"),
                            QStringLiteral("'offset' and 'limit' are not supported; ask for bytes "
                                           "with a Range header"));
        return;
    }
    const QString path = request.queryValue(QStringLiteral("path"));
    if (path.isEmpty()) {
        OpenSandboxError::missingQuery(*exchange, QStringLiteral("path"));
        return;
    }
    Result<std::unique_ptr<QFile>> file = files->open(path);
    if (!file) {
        OpenSandboxError::send(*exchange, file.error(), kFileNotFound);
        return;
    }
    const QByteArray fileName = QFileInfo(path).fileName().toUtf8();
    exchange->addHeader("Content-Disposition",
                        "attachment; filename*=UTF-8''" + QUrl::toPercentEncoding(QString::fromUtf8(fileName)));
    FileDownload::answer(exchange, std::move(*file), "application/octet-stream", request.header("range"));
}

void OpenSandboxFilesApi::listDirectory(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const Result<qint64> depth = exchange->request().queryInteger(QStringLiteral("depth"), 1, 1, kMaxDepth);
    if (!depth) {
        OpenSandboxError::send(*exchange, depth.error());
        return;
    }
    QJsonArray list;
    const Result<void> walked = walk(*files, exchange->request().queryValue(QStringLiteral("path")),
                                     int(*depth), [&](const WorkspaceFiles::Entry &entry) {
                                         list.append(fileInfoJson(*files, entry));
                                         return list.size() < kMaxEntries;
                                     });
    if (!walked) {
        OpenSandboxError::send(*exchange, walked.error(), kFileNotFound);
        return;
    }
    exchange->sendJson(200, list);
}

void OpenSandboxFilesApi::makeDirectories(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    for (auto it = json->object().begin(); it != json->object().end(); ++it) {
        const Result<int> mode = permissionMode(it.value(), it.key());
        const Result<WorkspaceFiles::Written> made = mode ? files->makeDirectory(it.key(), true)
                                                          : Result<WorkspaceFiles::Written>(mode.error());
        const Result<void> moded = made ? applyMode(*files, it.key(), *mode) : Result<void>(made.error());
        if (!moded) {
            OpenSandboxError::send(*exchange, moded.error(), kFileNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

void OpenSandboxFilesApi::removeDirectories(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    const std::optional<QStringList> paths = files ? queryPaths(*exchange) : std::nullopt;
    if (!paths)
        return;
    for (const QString &path : *paths) {
        const Result<WorkspaceFiles::Entry> entry = files->stat(path);
        const Result<void> removed = !entry ? Result<void>(entry.error())
                : entry->type != QLatin1String("directory")
                ? Result<void>(makeError(QStringLiteral("bad_request"),
                                         QStringLiteral("'%1' is not a directory").arg(path)))
                : files->remove(path, true);
        if (!removed) {
            OpenSandboxError::send(*exchange, removed.error(), kFileNotFound);
            return;
        }
    }
    exchange->sendEmpty(200);
}

} // namespace replhost::http
