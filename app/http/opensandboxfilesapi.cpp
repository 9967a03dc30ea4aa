// SPDX-License-Identifier: Apache-2.0
#include "opensandboxfilesapi.h"

#include "filedownload.h"
#include "filework.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "multipartbody.h"
#include "opensandboxerror.h"
#include "opensandboxexecdapi.h"
#include "router.h"

#include "core/engine.h"

#include <QDateTime>
#include <QTcpSocket>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeDatabase>
#include <QRegularExpression>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace replhost::http {

namespace {

using core::WorkspaceFiles;

const QString kFileNotFound = QStringLiteral("FILE_NOT_FOUND");
// Bounds on what one search or listing walks, so one request cannot pin the server.
constexpr int kMaxEntries = 10000;
constexpr int kMaxDepth = 64;

// Where the sandbox's code sees the file: the host path, or the sandbox's own with a view.
QString absolutePath(const WorkspaceFiles &files, const QString &relative)
{
    return files.sandboxPath(relative.isEmpty() ? files.root()
                                                : files.root() + QLatin1Char('/') + relative);
}

QString isoTime(qint64 msecs)
{
    return QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC).toString(Qt::ISODateWithMs);
}

QString userName(uid_t uid)
{
    passwd entry {};
    passwd *found = nullptr;
    char buffer[4096];
    if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found)
        return QString::fromLocal8Bit(found->pw_name);
    return QString::number(uid);
}

QString groupName(gid_t gid)
{
    group entry {};
    group *found = nullptr;
    char buffer[4096];
    if (::getgrgid_r(gid, &entry, buffer, sizeof buffer, &found) == 0 && found)
        return QString::fromLocal8Bit(found->gr_name);
    return QString::number(gid);
}

// execd's FileInfo, from what lstat saw through the workspace's descriptor. Its mode is the
// octal permission digits read as a decimal number (755); created_at is the status change time
// (Linux keeps no birth time that every file system reports).
QJsonObject fileInfoJson(const WorkspaceFiles &files, const WorkspaceFiles::Entry &entry)
{
    return {{QStringLiteral("path"), absolutePath(files, entry.path)},
            {QStringLiteral("type"), entry.type},
            {QStringLiteral("size"), entry.size},
            {QStringLiteral("modified_at"), isoTime(entry.modifiedAt)},
            {QStringLiteral("created_at"), isoTime(entry.changedAt)},
            {QStringLiteral("owner"), userName(entry.owner)},
            {QStringLiteral("group"), groupName(entry.group)},
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
    for (const auto &[field, current] : {std::pair{QStringLiteral("owner"), userName(::geteuid())},
                                          std::pair{QStringLiteral("group"), groupName(::getegid())}}) {
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
    return mode < 0 ? Result<void>() : files.setMode(path, mode);
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

// Answers what a route's file work returned, on the engine thread, in execd's words. Empty
// successes are 200 with no body, as execd has them.
auto answerWith(const std::shared_ptr<HttpExchange> &exchange)
{
    return [exchange](const Result<FileReply> &reply) {
        if (!reply)
            OpenSandboxError::send(*exchange, reply.error(), kFileNotFound);
        else if (reply->body.isNull())
            exchange->sendEmpty(reply->status);
        else
            exchange->sendJson(reply->status, reply->body);
    };
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
    m_work.run([files = *files, paths = *paths]() -> Result<FileReply> {
        QJsonObject reply;
        for (const QString &path : paths) {
            const Result<WorkspaceFiles::Entry> entry = files.stat(path);
            if (!entry)
                return entry.error();
            reply.insert(path, fileInfoJson(files, *entry));
        }
        return FileReply{200, reply};
    }, answerWith(exchange));
}

void OpenSandboxFilesApi::removeFiles(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    const std::optional<QStringList> paths = files ? queryPaths(*exchange) : std::nullopt;
    if (!paths)
        return;
    m_work.run([files = *files, paths = *paths]() -> Result<FileReply> {
        for (const QString &path : paths) {
            if (const Result<void> removed = files.remove(path, false); !removed)
                return removed.error();
        }
        return FileReply{};
    }, answerWith(exchange));
}

void OpenSandboxFilesApi::setPermissions(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    QList<QPair<QString, int>> changes;
    for (auto it = json->object().begin(); it != json->object().end(); ++it) {
        const Result<int> mode = permissionMode(it.value(), it.key());
        if (!mode) {
            OpenSandboxError::send(*exchange, mode.error());
            return;
        }
        changes.append({it.key(), *mode});
    }
    m_work.run([files = *files, changes]() -> Result<FileReply> {
        // Everything is checked before anything changes.
        for (const auto &[path, mode] : changes) {
            if (const Result<WorkspaceFiles::Entry> entry = files.stat(path); !entry)
                return entry.error();
        }
        for (const auto &[path, mode] : changes) {
            if (const Result<void> changed = applyMode(files, path, mode); !changed)
                return changed.error();
        }
        return FileReply{};
    }, answerWith(exchange));
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
    QList<QPair<QString, QString>> moves;
    for (const QJsonValue &item : document.array()) {
        const QString src = item.toObject().value(QStringLiteral("src")).toString();
        const QString dest = item.toObject().value(QStringLiteral("dest")).toString();
        if (src.isEmpty() || dest.isEmpty()) {
            exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                                QStringLiteral("every move needs non-empty 'src' and 'dest' strings"));
            return;
        }
        moves.append({src, dest});
    }
    m_work.run([files = *files, moves]() -> Result<FileReply> {
        for (const auto &[src, dest] : moves) {
            if (const Result<WorkspaceFiles::Entry> moved = files.move(src, dest, true); !moved)
                return moved.error();
        }
        return FileReply{};
    }, answerWith(exchange));
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
    m_work.run([files = *files, root, glob]() -> Result<FileReply> {
        QJsonArray found;
        const Result<void> walked = walk(files, root, kMaxDepth, [&](const WorkspaceFiles::Entry &entry) {
            if (entry.type != QLatin1String("directory") && glob.match(entry.name).hasMatch())
                found.append(fileInfoJson(files, entry));
            return found.size() < kMaxEntries;
        });
        if (!walked)
            return walked.error();
        return FileReply{200, found};
    }, answerWith(exchange));
}

void OpenSandboxFilesApi::replace(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    struct Change {
        QString path;
        QByteArray from;
        QByteArray to;
    };
    QList<Change> changes;
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
        changes.append({it.key(), oldText.toString().toUtf8(), newText.toString().toUtf8()});
    }
    const bool verbose = exchange->request().queryFlag(QStringLiteral("verbose"));
    m_work.run([files = *files, changes, verbose]() -> Result<FileReply> {
        // Each file is streamed into its replacement, a block at a time; none is put in place
        // before all are written, so a refused entry changes nothing.
        std::vector<std::unique_ptr<WorkspaceFiles::PendingWrite>> pending;
        QJsonObject counts;
        for (const Change &change : changes) {
            qint64 count = 0;
            auto replaced = files.replaceText(change.path, change.from, change.to, &count);
            if (!replaced)
                return replaced.error();
            pending.push_back(std::move(*replaced));
            counts.insert(change.path, QJsonObject{{QStringLiteral("replacedCount"), count}});
        }
        for (const auto &write : pending) {
            if (const Result<WorkspaceFiles::Written> written = write->commit(); !written)
                return written.error();
        }
        return verbose ? FileReply{200, counts} : FileReply{};
    }, answerWith(exchange));
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
    // Each "file" part is described by the "metadata" part before it.
    QList<Upload> uploads;
    std::optional<Upload> described;
    for (const MultipartBody::Part &part : *parts) {
        if (part.name == QLatin1String("metadata")) {
            const Result<JsonBody> metadata = JsonBody::parse(part.data);
            const Result<QString> path = metadata ? metadata->requiredString(QStringLiteral("path"))
                                                  : Result<QString>(metadata.error());
            const Result<int> mode = path ? permissionMode(metadata->object(), *path)
                                          : Result<int>(path.error());
            if (!mode) {
                OpenSandboxError::send(*exchange, mode.error());
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
    m_work.run([files = *files, uploads]() -> Result<FileReply> {
        // Every path is checked before anything is written, so a refused request writes nothing.
        for (const Upload &upload : uploads) {
            if (const Result<QString> resolved = files.resolve(upload.path); !resolved)
                return resolved.error();
        }
        for (const Upload &upload : uploads) {
            const Result<WorkspaceFiles::Written> written = files.write(upload.path, upload.data, true);
            if (!written)
                return written.error();
            if (const Result<void> moded = applyMode(files, upload.path, upload.mode); !moded)
                return moded.error();
        }
        return FileReply{};
    }, answerWith(exchange));
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
    m_work.run([files = *files, path] { return files.open(path); },
               [this, exchange, path](Result<WorkspaceFiles::OpenFile> file) {
                   if (!file) {
                       OpenSandboxError::send(*exchange, file.error(), kFileNotFound);
                       return;
                   }
                   exchange->addHeader("Content-Disposition",
                                       "attachment; filename*=UTF-8''"
                                               + QUrl::toPercentEncoding(QFileInfo(path).fileName()));
                   FileDownload::answer(exchange, m_work, std::move(*file), "application/octet-stream",
                                        exchange->request().header("range"));
               });
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
    m_work.run([files = *files, path = exchange->request().queryValue(QStringLiteral("path")),
                depth = int(*depth)]() -> Result<FileReply> {
        QJsonArray list;
        const Result<void> walked = walk(files, path, depth, [&](const WorkspaceFiles::Entry &entry) {
            list.append(fileInfoJson(files, entry));
            return list.size() < kMaxEntries;
        });
        if (!walked)
            return walked.error();
        return FileReply{200, list};
    }, answerWith(exchange));
}

void OpenSandboxFilesApi::makeDirectories(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    if (!files)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    QList<QPair<QString, int>> directories;
    for (auto it = json->object().begin(); it != json->object().end(); ++it) {
        const Result<int> mode = permissionMode(it.value(), it.key());
        if (!mode) {
            OpenSandboxError::send(*exchange, mode.error());
            return;
        }
        directories.append({it.key(), *mode});
    }
    m_work.run([files = *files, directories]() -> Result<FileReply> {
        for (const auto &[path, mode] : directories) {
            const Result<WorkspaceFiles::Written> made = files.makeDirectory(path, true);
            if (!made)
                return made.error();
            if (const Result<void> moded = applyMode(files, path, mode); !moded)
                return moded.error();
        }
        return FileReply{};
    }, answerWith(exchange));
}

void OpenSandboxFilesApi::removeDirectories(const ExchangePtr &exchange)
{
    std::optional<WorkspaceFiles> files = filesOf(*exchange);
    const std::optional<QStringList> paths = files ? queryPaths(*exchange) : std::nullopt;
    if (!paths)
        return;
    m_work.run([files = *files, paths = *paths]() -> Result<FileReply> {
        for (const QString &path : paths) {
            const Result<WorkspaceFiles::Entry> entry = files.stat(path);
            if (!entry)
                return entry.error();
            if (entry->type != QLatin1String("directory"))
                return makeError(QStringLiteral("bad_request"),
                                 QStringLiteral("'%1' is not a directory").arg(path));
            if (const Result<void> removed = files.remove(path, true); !removed)
                return removed.error();
        }
        return FileReply{};
    }, answerWith(exchange));
}

} // namespace replhost::http
