// SPDX-License-Identifier: Apache-2.0
#include "mcpfiles.h"

#include "mcpmessage.h"
#include "mcpschema.h"

#include "core/engine.h"
#include "core/workspacefiles.h"

#include <QMimeDatabase>
#include <QStringDecoder>
#include <QUrl>

#include <optional>

namespace replhost::http {

namespace {

using S = McpSchema;
using core::WorkspaceFiles;

const QString kUriPrefix = QStringLiteral("replhost://workspaces/");

// `data` as text when it is UTF-8 without NUL bytes (what a text file is to an agent).
std::optional<QString> asText(const QByteArray &data)
{
    if (data.contains('\0'))
        return std::nullopt;
    QStringDecoder decoder(QStringDecoder::Utf8);
    QString text = decoder(data);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

QString mimeTypeOf(const QString &path, const QByteArray &data)
{
    static const QMimeDatabase database;
    return database.mimeTypeForFileNameAndData(path, data).name();
}

struct Location {
    QString workspace;
    QString path;
};

std::optional<Location> parseUri(const QString &uri)
{
    if (!uri.startsWith(kUriPrefix))
        return std::nullopt;
    const QString rest = uri.mid(kUriPrefix.size());
    const qsizetype slash = rest.indexOf(QLatin1String("/files/"));
    if (slash <= 0)
        return std::nullopt;
    Location location{QUrl::fromPercentEncoding(rest.left(slash).toUtf8()),
                      QUrl::fromPercentEncoding(rest.mid(slash + 7).toUtf8())};
    if (location.path.isEmpty())
        return std::nullopt;
    return location;
}

} // namespace

McpFiles::McpFiles(core::Engine &engine) : m_engine(engine) {}

QString McpFiles::uriOf(const QString &workspace, const QString &path)
{
    QStringList segments;
    for (const QString &segment : path.split(QLatin1Char('/'), Qt::SkipEmptyParts))
        segments.append(QString::fromLatin1(QUrl::toPercentEncoding(segment)));
    return kUriPrefix + QString::fromLatin1(QUrl::toPercentEncoding(workspace)) + QStringLiteral("/files/")
            + segments.join(QLatin1Char('/'));
}

QList<McpTool> McpFiles::tools()
{
    const QJsonObject entry = S::object({{QStringLiteral("name"), S::string()},
                                         {QStringLiteral("path"), S::string()},
                                         {QStringLiteral("type"),
                                          S::enumeration({QStringLiteral("file"), QStringLiteral("directory"),
                                                          QStringLiteral("symlink"), QStringLiteral("other")})},
                                         {QStringLiteral("size"), S::of({QStringLiteral("integer")})},
                                         {QStringLiteral("modified_at"), S::string()}},
                                        {QStringLiteral("name"), QStringLiteral("path"), QStringLiteral("type")});
    const QJsonObject pathProperty =
            S::string(QStringLiteral("A path relative to the workspace directory (\"src/main.py\")"));
    return {
        {QStringLiteral("list_files"), QStringLiteral("List files"),
         QStringLiteral("Lists a directory of the workspace (its top directory when path is absent): each "
                        "entry's name, path, type (file, directory, symlink) and size. Code run in the "
                        "workspace's contexts starts in this directory, so it reads and writes these files."),
         S::object({{QStringLiteral("path"), S::string(QStringLiteral("A directory relative to the workspace "
                                                                      "directory; absent: the directory itself"))},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}}),
         S::object({{QStringLiteral("path"), S::string()}, {QStringLiteral("entries"), S::arrayOf(entry)}},
                   {QStringLiteral("path"), QStringLiteral("entries")}),
         McpTool::hints(QStringLiteral("List files"), true, false, true),
         [this](const QJsonObject &arguments, const McpCallPtr &, McpTool::Reply reply) {
             listFiles(arguments, std::move(reply));
         }},
        {QStringLiteral("read_file"), QStringLiteral("Read a file"),
         QStringLiteral("Reads a file of the workspace: UTF-8 text as text, anything else base64-encoded "
                        "(images also as image content). At most 4 MiB per call; offset and length read a "
                        "part, and truncated says whether more follows."),
         S::object({{QStringLiteral("path"), pathProperty},
                    {QStringLiteral("offset"), S::integer(QStringLiteral("First byte to read (default 0)"), 0, INT_MAX)},
                    {QStringLiteral("length"), S::integer(QStringLiteral("Bytes to read (default and most: 4 MiB)"),
                                                          0, int(kReadLimit))},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                   {QStringLiteral("path")}),
         S::object({{QStringLiteral("path"), S::string()},
                    {QStringLiteral("size"), S::of({QStringLiteral("integer")})},
                    {QStringLiteral("offset"), S::of({QStringLiteral("integer")})},
                    {QStringLiteral("encoding"), S::enumeration({QStringLiteral("utf-8"), QStringLiteral("base64")})},
                    {QStringLiteral("content"), S::string()},
                    {QStringLiteral("mime_type"), S::string()},
                    {QStringLiteral("truncated"), S::of({QStringLiteral("boolean")})}},
                   {QStringLiteral("path"), QStringLiteral("encoding"), QStringLiteral("content")}),
         McpTool::hints(QStringLiteral("Read a file"), true, false, true),
         [this](const QJsonObject &arguments, const McpCallPtr &, McpTool::Reply reply) {
             readFile(arguments, std::move(reply));
         }},
        {QStringLiteral("write_file"), QStringLiteral("Write a file"),
         QStringLiteral("Writes a file of the workspace, creating missing directories and replacing the file "
                        "if it exists (readers see the old or the new content, never half). content is text, "
                        "or base64 with encoding \"base64\" for binary data."),
         S::object({{QStringLiteral("path"), pathProperty},
                    {QStringLiteral("content"), S::string(QStringLiteral("The whole new content"))},
                    {QStringLiteral("encoding"),
                     S::enumeration({QStringLiteral("utf-8"), QStringLiteral("base64")},
                                    QStringLiteral("How content is written (default utf-8)"))},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                   {QStringLiteral("path"), QStringLiteral("content")}),
         S::object({{QStringLiteral("path"), S::string()},
                    {QStringLiteral("size"), S::of({QStringLiteral("integer")})},
                    {QStringLiteral("created"), S::of({QStringLiteral("boolean")})}},
                   {QStringLiteral("path"), QStringLiteral("size"), QStringLiteral("created")}),
         McpTool::hints(QStringLiteral("Write a file"), false, true, true),
         [this](const QJsonObject &arguments, const McpCallPtr &, McpTool::Reply reply) {
             writeFile(arguments, std::move(reply));
         }},
    };
}

void McpFiles::listFiles(const QJsonObject &arguments, McpTool::Reply reply)
{
    const Result<JsonBody> json = McpTool::arguments(arguments);
    const Result<QString> path = json ? json->optionalString(QStringLiteral("path")) : json.error();
    Result<WorkspaceFiles> files = path ? m_engine.workspaces().files(McpTool::workspace(*json)) : path.error();
    if (!files) {
        reply(McpTool::failure(files.error().message));
        return;
    }
    m_work.run([files = *files, path = *path]() -> QJsonObject {
        const Result<WorkspaceFiles::Entry> directory = files.stat(path);
        const Result<QList<WorkspaceFiles::Entry>> entries = directory ? files.list(path) : directory.error();
        if (!entries)
            return McpTool::failure(entries.error().message);
        QJsonArray list;
        for (const WorkspaceFiles::Entry &entry : *entries)
            list.append(entry.toJson());
        return McpTool::success({{QStringLiteral("path"), directory->path}, {QStringLiteral("entries"), list}});
    }, std::move(reply));
}

void McpFiles::readFile(const QJsonObject &arguments, McpTool::Reply reply)
{
    const Result<JsonBody> json = McpTool::arguments(arguments);
    const Result<QString> path = json ? json->requiredString(QStringLiteral("path")) : json.error();
    const Result<int> offset = path ? json->optionalInt(QStringLiteral("offset"), 0, 0, INT_MAX) : path.error();
    const Result<int> length = offset ? json->optionalInt(QStringLiteral("length"), int(kReadLimit), 0, int(kReadLimit))
                                      : offset.error();
    Result<WorkspaceFiles> files = length ? m_engine.workspaces().files(McpTool::workspace(*json)) : length.error();
    if (!files) {
        reply(McpTool::failure(files.error().message));
        return;
    }
    m_work.run([files = *files, workspace = McpTool::workspace(*json), path = *path, offset = *offset,
                length = *length]() -> QJsonObject {
        const Result<WorkspaceFiles::OpenFile> file = files.open(path);
        const Result<QByteArray> data = file ? file->read(offset, length) : file.error();
        if (!data)
            return McpTool::failure(data.error().message);
        const QString mime = mimeTypeOf(path, *data);
        const std::optional<QString> text = asText(*data);
        QJsonObject structured{{QStringLiteral("path"), file->path},
                               {QStringLiteral("size"), file->size},
                               {QStringLiteral("offset"), offset},
                               {QStringLiteral("encoding"), text ? QStringLiteral("utf-8") : QStringLiteral("base64")},
                               {QStringLiteral("content"), text ? *text : QString::fromLatin1(data->toBase64())},
                               {QStringLiteral("mime_type"), mime},
                               {QStringLiteral("truncated"), offset + data->size() < file->size}};
        QJsonObject answer = McpTool::success(structured);
        QJsonObject block;
        if (text) {
            block = {{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), *text}};
        } else if (mime == QLatin1String("image/png") || mime == QLatin1String("image/jpeg")
                   || mime == QLatin1String("image/gif") || mime == QLatin1String("image/webp")) {
            block = {{QStringLiteral("type"), QStringLiteral("image")},
                     {QStringLiteral("data"), structured.value(QLatin1String("content"))},
                     {QStringLiteral("mimeType"), mime}};
        } else {
            block = {{QStringLiteral("type"), QStringLiteral("resource")},
                     {QStringLiteral("resource"),
                      QJsonObject{{QStringLiteral("uri"), uriOf(workspace, file->path)},
                                  {QStringLiteral("mimeType"), mime},
                                  {QStringLiteral("blob"), structured.value(QLatin1String("content"))}}}};
        }
        answer.insert(QStringLiteral("content"), QJsonArray{block});
        return answer;
    }, std::move(reply));
}

void McpFiles::writeFile(const QJsonObject &arguments, McpTool::Reply reply)
{
    const Result<JsonBody> json = McpTool::arguments(arguments);
    const Result<QString> path = json ? json->requiredString(QStringLiteral("path")) : json.error();
    const Result<QString> content = path ? json->requiredString(QStringLiteral("content")) : path.error();
    const Result<QString> encoding = content ? json->optionalString(QStringLiteral("encoding")) : content.error();
    if (!encoding) {
        reply(McpTool::failure(encoding.error().message));
        return;
    }
    QByteArray data;
    if (encoding->isEmpty() || *encoding == QLatin1String("utf-8")) {
        data = content->toUtf8();
    } else if (*encoding == QLatin1String("base64")) {
        auto decoded = QByteArray::fromBase64Encoding(content->toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded) {
            reply(McpTool::failure(QStringLiteral("content is not valid base64")));
            return;
        }
        data = *decoded;
    } else {
        reply(McpTool::failure(QStringLiteral("encoding must be \"utf-8\" or \"base64\", not \"%1\"").arg(*encoding)));
        return;
    }
    Result<WorkspaceFiles> files = m_engine.workspaces().files(McpTool::workspace(*json));
    if (!files) {
        reply(McpTool::failure(files.error().message));
        return;
    }
    m_work.run([files = *files, path = *path, data = std::move(data)]() -> QJsonObject {
        const Result<WorkspaceFiles::Written> written = files.write(path, data);
        if (!written)
            return McpTool::failure(written.error().message);
        return McpTool::success({{QStringLiteral("path"), written->entry.path},
                                 {QStringLiteral("size"), written->entry.size},
                                 {QStringLiteral("created"), written->created}});
    }, std::move(reply));
}

void McpFiles::listResources(const QJsonValue &id, const QJsonObject &params, Respond respond)
{
    const QJsonValue cursor = params.value(QLatin1String("cursor"));
    bool numeric = true;
    const int from = cursor.isString() ? cursor.toString().toInt(&numeric) : 0;
    if (!numeric || from < 0 || (!cursor.isUndefined() && !cursor.isString())) {
        respond(McpMessage::error(id, McpMessage::kInvalidParams,
                                  QStringLiteral("cursor must be a nextCursor of an earlier resources/list")));
        return;
    }
    const Result<QList<storage::WorkspaceRecord>> workspaces = m_engine.workspaces().list();
    if (!workspaces) {
        respond(McpMessage::error(id, McpMessage::kInternalError, workspaces.error().message));
        return;
    }
    QList<QPair<QString, WorkspaceFiles>> roots;
    for (const storage::WorkspaceRecord &workspace : *workspaces) {
        if (Result<WorkspaceFiles> files = m_engine.workspaces().files(workspace.name))
            roots.append({workspace.name, std::move(*files)});
    }
    m_work.run([roots = std::move(roots), from]() {
        // Breadth first, each directory sorted by name: the same walk gives the same pages.
        QJsonArray all;
        for (const auto &[workspace, files] : roots) {
            QStringList directories{QString()};
            while (!directories.isEmpty() && all.size() < kListedFiles) {
                const Result<QList<WorkspaceFiles::Entry>> entries = files.list(directories.takeFirst());
                if (!entries)
                    continue;
                for (const WorkspaceFiles::Entry &entry : *entries) {
                    if (entry.type == QLatin1String("directory"))
                        directories.append(entry.path);
                    else if (entry.type == QLatin1String("file") && all.size() < kListedFiles)
                        all.append(QJsonObject{{QStringLiteral("uri"), uriOf(workspace, entry.path)},
                                               {QStringLiteral("name"), entry.path},
                                               {QStringLiteral("title"), QStringLiteral("%1 (workspace %2)")
                                                                                 .arg(entry.path, workspace)},
                                               {QStringLiteral("mimeType"), mimeTypeOf(entry.path, {})},
                                               {QStringLiteral("size"), entry.size}});
                }
            }
        }
        QJsonObject result{{QStringLiteral("resources"), QJsonArray()}};
        QJsonArray page;
        for (int i = from; i < all.size() && i < from + kPageSize; ++i)
            page.append(all.at(i));
        result.insert(QStringLiteral("resources"), page);
        if (from + kPageSize < all.size())
            result.insert(QStringLiteral("nextCursor"), QString::number(from + kPageSize));
        return result;
    }, [id, respond = std::move(respond)](const QJsonObject &result) { respond(McpMessage::result(id, result)); });
}

void McpFiles::readResource(const QJsonValue &id, const QJsonObject &params, Respond respond)
{
    const QString uri = params.value(QLatin1String("uri")).toString();
    const std::optional<Location> location = parseUri(uri);
    if (!location) {
        respond(McpMessage::error(id, McpMessage::kInvalidParams,
                                  QStringLiteral("params.uri must be a resource URI of this server, "
                                                 "replhost://workspaces/<workspace>/files/<path>")));
        return;
    }
    Result<WorkspaceFiles> files = m_engine.workspaces().files(location->workspace);
    if (!files) {
        respond(McpMessage::error(id, McpMessage::kResourceNotFound, files.error().message,
                                  QJsonObject{{QStringLiteral("uri"), uri}}));
        return;
    }
    m_work.run([files = *files, path = location->path, uri, id]() {
        const Result<WorkspaceFiles::OpenFile> file = files.open(path);
        if (!file) {
            // Missing or outside the workspace: either way there is no such resource.
            const bool missing = file.error().code == QLatin1String("not_found")
                    || file.error().code == QLatin1String("forbidden");
            return McpMessage::error(id, missing ? McpMessage::kResourceNotFound : McpMessage::kInvalidParams,
                                     file.error().message, QJsonObject{{QStringLiteral("uri"), uri}});
        }
        if (file->size > kReadLimit)
            return McpMessage::error(id, McpMessage::kInvalidParams,
                                     QStringLiteral("%1 has %2 bytes, more than the %3 a resource may have; "
                                                    "read it in parts with the read_file tool")
                                             .arg(path).arg(file->size).arg(kReadLimit));
        const Result<QByteArray> data = file->read(0, kReadLimit);
        if (!data)
            return McpMessage::error(id, McpMessage::kInternalError, data.error().message);
        QJsonObject contents{{QStringLiteral("uri"), uri}, {QStringLiteral("mimeType"), mimeTypeOf(path, *data)}};
        if (const std::optional<QString> text = asText(*data))
            contents.insert(QStringLiteral("text"), *text);
        else
            contents.insert(QStringLiteral("blob"), QString::fromLatin1(data->toBase64()));
        return McpMessage::result(id, {{QStringLiteral("contents"), QJsonArray{contents}}});
    }, std::move(respond));
}

QJsonObject McpFiles::resourceTemplates()
{
    return {{QStringLiteral("resourceTemplates"),
             QJsonArray{QJsonObject{
                     {QStringLiteral("uriTemplate"), kUriPrefix + QStringLiteral("{workspace}/files/{+path}")},
                     {QStringLiteral("name"), QStringLiteral("workspace-file")},
                     {QStringLiteral("title"), QStringLiteral("A file of a workspace")},
                     {QStringLiteral("description"),
                      QStringLiteral("Any regular file inside a workspace directory; the default workspace is "
                                     "\"default\". Text comes back as text, anything else base64-encoded.")}}}}};
}

} // namespace replhost::http
