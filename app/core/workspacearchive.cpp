// SPDX-License-Identifier: Apache-2.0
#include "workspacearchive.h"

#include "workspacedirectory.h"

#include "storage/store.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::core {

namespace {

using storage::EnvScope;

constexpr const char *kFilesPrefix = "files/";

Error badArchive(const QString &why)
{
    return makeError(QStringLiteral("bad_request"), QStringLiteral("not a workspace archive: %1").arg(why));
}

struct ArchiveDeleter {
    void operator()(archive *a) const
    {
        // archive_read_free and archive_write_free both close and free; which one depends on
        // the kind, so each owner says.
        if (a)
            archive_free(a);
    }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveDeleter>;
using EntryPtr = std::unique_ptr<archive_entry, decltype(&archive_entry_free)>;

QString relativeTo(const QString &directory, const QString &path)
{
    if (path.isEmpty())
        return {};
    const QString relative = QDir(directory).relativeFilePath(path);
    // Outside the directory (it never should be) comes back as the directory itself.
    if (relative == QLatin1String(".") || relative.startsWith(QLatin1String("..")))
        return {};
    return relative;
}

QString absoluteIn(const QString &directory, const QString &relative)
{
    return relative.isEmpty() ? directory : QDir::cleanPath(directory + QLatin1Char('/') + relative);
}

QJsonArray envJson(const QList<storage::EnvVarRecord> &layer)
{
    QJsonArray out;
    for (const storage::EnvVarRecord &var : layer) {
        QJsonObject item{{QStringLiteral("key"), var.key}};
        if (var.isUnset)
            item.insert(QStringLiteral("unset"), true);
        else
            item.insert(QStringLiteral("value"), var.value);
        out.append(item);
    }
    return out;
}

Result<void> restoreEnv(storage::Store &store, EnvScope scope, const QString &scopeId, const QJsonArray &layer)
{
    for (const QJsonValue &value : layer) {
        const QJsonObject var = value.toObject();
        const QString key = var.value(QStringLiteral("key")).toString();
        if (key.isEmpty())
            return badArchive(QStringLiteral("an env entry without a key"));
        const Result<void> set = var.value(QStringLiteral("unset")).toBool()
                ? store.unsetEnv(scope, scopeId, key)
                : store.setEnv(scope, scopeId, key, var.value(QStringLiteral("value")).toString());
        if (!set)
            return set;
    }
    return {};
}

// A path from the archive, checked: relative, '/'-separated, nothing empty, "." or "..", not
// the directory's marker.
std::optional<QString> safeRelativePath(const QString &path)
{
    QString trimmed = path;
    while (trimmed.endsWith(QLatin1Char('/')))
        trimmed.chop(1);
    if (trimmed.isEmpty() || trimmed.startsWith(QLatin1Char('/')) || trimmed.contains(QChar(0)))
        return std::nullopt;
    for (const QString &part : trimmed.split(QLatin1Char('/'))) {
        if (part.isEmpty() || part == QLatin1String(".") || part == QLatin1String(".."))
            return std::nullopt;
    }
    if (trimmed == QLatin1String(WorkspaceDirectory::kMarkerName))
        return std::nullopt;
    return trimmed;
}

Error ioError(const QString &what, const QString &path)
{
    return makeError(QStringLiteral("io"),
                     QStringLiteral("%1 %2: %3").arg(what, path, QString::fromLocal8Bit(std::strerror(errno))));
}

// A regular file's bytes, opened so that neither a symlink nor a FIFO or device put there by
// code in the workspace can redirect or stall the read. Nothing (and no error) for anything else.
Result<std::optional<QByteArray>> readRegularFile(const QString &path, qint64 budget)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ELOOP || errno == ENXIO ? Result<std::optional<QByteArray>>(std::nullopt)
                                                : ioError(QStringLiteral("cannot read"), path);
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return std::optional<QByteArray>();
    }
    if (info.st_size > budget) {
        ::close(fd);
        return makeError(QStringLiteral("payload_too_large"),
                         QStringLiteral("the workspace's files are larger than the archive's limit"));
    }
    QByteArray data;
    data.resize(qsizetype(info.st_size));
    qsizetype done = 0;
    while (done < data.size()) {
        const ssize_t n = ::read(fd, data.data() + done, size_t(data.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const Error error = ioError(QStringLiteral("cannot read"), path);
            ::close(fd);
            return error;
        }
        if (n == 0)
            break;  // shrunk meanwhile: what was there
        done += n;
    }
    data.truncate(done);
    ::close(fd);
    return std::optional<QByteArray>(std::move(data));
}

la_ssize_t appendToBuffer(archive *, void *buffer, const void *data, size_t size)
{
    static_cast<QByteArray *>(buffer)->append(static_cast<const char *>(data), qsizetype(size));
    return la_ssize_t(size);
}

Result<void> writeEntry(archive *out, const QString &name, bool directory, int mode, const QByteArray &data)
{
    EntryPtr entry(archive_entry_new(), &archive_entry_free);
    // The name's UTF-8 bytes as they are (pack() writes them as the pax "BINARY" charset): the
    // UTF-8 setter has libarchive 3.6 convert them to the locale's charset, and in the C locale
    // that fails for any non-ASCII name and its pax writer then reads a null name.
    const QByteArray path = name.toUtf8();
    archive_entry_copy_pathname(entry.get(), path.constData());
    archive_entry_set_filetype(entry.get(), directory ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(entry.get(), mode_t(mode & 07777));
    archive_entry_set_size(entry.get(), directory ? 0 : la_int64_t(data.size()));
    if (archive_write_header(out, entry.get()) != ARCHIVE_OK)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot archive %1: %2")
                                                       .arg(name, QString::fromUtf8(archive_error_string(out))));
    if (!directory && !data.isEmpty()
        && archive_write_data(out, data.constData(), size_t(data.size())) != la_ssize_t(data.size()))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot archive %1: %2")
                                                       .arg(name, QString::fromUtf8(archive_error_string(out))));
    return {};
}

} // namespace

Result<QJsonObject> WorkspaceArchive::describe(storage::Store &store, const storage::WorkspaceRecord &workspace)
{
    QJsonObject manifest{{QStringLiteral("format"), QLatin1String(kFormat)},
                         {QStringLiteral("version"), kVersion},
                         {QStringLiteral("name"), workspace.name},
                         {QStringLiteral("directory"), workspace.directory},
                         {QStringLiteral("created_at"), double(workspace.createdAt)},
                         {QStringLiteral("settings"),
                          QJsonDocument::fromJson(workspace.settings.toUtf8()).object()}};
    const auto workspaceEnv = store.env(EnvScope::Workspace, workspace.id);
    if (!workspaceEnv)
        return workspaceEnv.error();
    manifest.insert(QStringLiteral("env"), envJson(*workspaceEnv));

    const auto contexts = store.contexts(workspace.id);
    if (!contexts)
        return contexts.error();
    QJsonArray contextList;
    for (const storage::ContextRecord &row : *contexts) {
        QJsonObject context{
                {QStringLiteral("id"), row.id},
                {QStringLiteral("language"), row.language},
                {QStringLiteral("name"), row.name},
                {QStringLiteral("cwd"), relativeTo(workspace.directory, row.cwd)},
                {QStringLiteral("execution_count"), row.executionCount},
                {QStringLiteral("created_at"), double(row.createdAt)},
                {QStringLiteral("last_used_at"), double(row.lastUsedAt)},
                {QStringLiteral("restore_policy"),
                 row.restorePolicy == storage::RestorePolicy::Fresh ? QStringLiteral("fresh") : QStringLiteral("replay")},
                {QStringLiteral("replay_base_count"), row.replayBaseCount},
        };
        if (!row.replayBaseCwd.isEmpty())
            context.insert(QStringLiteral("replay_base_cwd"), relativeTo(workspace.directory, row.replayBaseCwd));
        const auto env = store.env(EnvScope::Context, row.id);
        if (!env)
            return env.error();
        context.insert(QStringLiteral("env"), envJson(*env));
        const auto snapshot = store.snapshot(row.id);
        if (!snapshot)
            return snapshot.error();
        if (snapshot->has_value()) {
            const storage::SnapshotRecord &s = **snapshot;
            context.insert(QStringLiteral("snapshot"),
                           QJsonObject{{QStringLiteral("execution_count"), s.executionCount},
                                       {QStringLiteral("format"), s.format},
                                       {QStringLiteral("data"), QString::fromLatin1(s.data.toBase64())},
                                       {QStringLiteral("error"), s.error},
                                       {QStringLiteral("lost"), QJsonDocument::fromJson(s.lost.toUtf8()).array()},
                                       {QStringLiteral("created_at"), double(s.createdAt)}});
        }
        const auto executions = store.executions(row.id, 0, -1);
        if (!executions)
            return executions.error();
        QJsonArray history;
        for (auto it = executions->crbegin(); it != executions->crend(); ++it) {
            const storage::ExecutionRecord &e = *it;
            const auto events = store.events(e.id);
            if (!events)
                return events.error();
            QJsonArray eventList;
            for (const storage::ExecutionEventRecord &event : *events)
                eventList.append(QJsonObject{{QStringLiteral("seq"), event.seq},
                                             {QStringLiteral("event"), QJsonDocument::fromJson(event.json).object()}});
            QJsonObject execution{{QStringLiteral("id"), e.id},
                                  {QStringLiteral("code"), e.code},
                                  {QStringLiteral("status"), e.status},
                                  {QStringLiteral("execution_count"), e.executionCount},
                                  {QStringLiteral("started_at"), double(e.startedAt)},
                                  {QStringLiteral("duration_ms"), double(e.durationMs)},
                                  {QStringLiteral("output_bytes"), double(e.outputBytes)},
                                  {QStringLiteral("truncated"), e.truncated},
                                  {QStringLiteral("replay"), e.replay},
                                  {QStringLiteral("events"), eventList}};
            // The answers a restore gives the run again.
            if (!e.inputs.isEmpty())
                execution.insert(QStringLiteral("inputs"),
                                 QJsonDocument::fromJson(e.inputs.toUtf8()).array());
            history.append(execution);
        }
        context.insert(QStringLiteral("executions"), history);
        contextList.append(context);
    }
    manifest.insert(QStringLiteral("contexts"), contextList);
    return manifest;
}

Result<QByteArray> WorkspaceArchive::pack(const QJsonObject &manifest, const QString &directory, qint64 maxBytes)
{
    QByteArray buffer;
    ArchivePtr out(archive_write_new());
    archive_write_set_format_pax_restricted(out.get());
    // Names are stored as the bytes they are (UTF-8), whatever the process's locale.
    if (archive_write_set_options(out.get(), "hdrcharset=BINARY") != ARCHIVE_OK)
        return makeError(QStringLiteral("io"), QString::fromUtf8(archive_error_string(out.get())));
    archive_write_set_bytes_in_last_block(out.get(), 1);
    if (archive_write_open(out.get(), &buffer, nullptr, appendToBuffer, nullptr) != ARCHIVE_OK)
        return makeError(QStringLiteral("io"), QString::fromUtf8(archive_error_string(out.get())));

    if (auto written = writeEntry(out.get(), QLatin1String(kManifestName), false, 0600,
                                  QJsonDocument(manifest).toJson(QJsonDocument::Compact));
        !written)
        return written.error();

    qint64 budget = maxBytes;
    QDirIterator walk(directory, QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System,
                      QDirIterator::Subdirectories);  // symlinks are not followed
    QStringList names;
    while (walk.hasNext())
        names.append(walk.next());
    std::sort(names.begin(), names.end());  // parents before their children
    for (const QString &path : std::as_const(names)) {
        const QString relative = QDir(directory).relativeFilePath(path);
        if (relative == QLatin1String(WorkspaceDirectory::kMarkerName))
            continue;
        struct stat info {};
        if (::lstat(QFile::encodeName(path).constData(), &info) != 0)
            continue;  // gone meanwhile
        const QString name = QLatin1String(kFilesPrefix) + relative;
        if (S_ISDIR(info.st_mode)) {
            if (auto written = writeEntry(out.get(), name + QLatin1Char('/'), true, int(info.st_mode), {}); !written)
                return written.error();
            continue;
        }
        if (!S_ISREG(info.st_mode))
            continue;
        const Result<std::optional<QByteArray>> data = readRegularFile(path, budget);
        if (!data)
            return data.error();
        if (!data->has_value())
            continue;
        budget -= (*data)->size();
        if (auto written = writeEntry(out.get(), name, false, int(info.st_mode), **data); !written)
            return written.error();
    }
    if (archive_write_close(out.get()) != ARCHIVE_OK)
        return makeError(QStringLiteral("io"), QString::fromUtf8(archive_error_string(out.get())));
    return buffer;
}

Result<WorkspaceArchive::Contents> WorkspaceArchive::unpack(const QByteArray &bytes)
{
    ArchivePtr in(archive_read_new());
    archive_read_support_format_tar(in.get());
    if (archive_read_open_memory(in.get(), bytes.constData(), size_t(bytes.size())) != ARCHIVE_OK)
        return badArchive(QString::fromUtf8(archive_error_string(in.get())));
    Contents contents;
    bool haveManifest = false;
    archive_entry *entry = nullptr;
    for (;;) {
        const int status = archive_read_next_header(in.get(), &entry);
        if (status == ARCHIVE_EOF)
            break;
        if (status != ARCHIVE_OK && status != ARCHIVE_WARN)
            return badArchive(QString::fromUtf8(archive_error_string(in.get())));
        const char *utf8 = archive_entry_pathname_utf8(entry);
        const QString name = QString::fromUtf8(utf8 ? utf8 : archive_entry_pathname(entry));
        const mode_t type = archive_entry_filetype(entry);
        QByteArray data;
        if (type == AE_IFREG) {
            const la_int64_t size = archive_entry_size(entry);
            if (size < 0 || size > bytes.size())
                return badArchive(QStringLiteral("entry %1 has a bad size").arg(name));
            data.resize(qsizetype(size));
            if (size > 0 && archive_read_data(in.get(), data.data(), size_t(size)) != la_ssize_t(size))
                return badArchive(QStringLiteral("entry %1 is cut short").arg(name));
        }
        if (name == QLatin1String(kManifestName)) {
            QJsonParseError error;
            const QJsonDocument document = QJsonDocument::fromJson(data, &error);
            if (!document.isObject())
                return badArchive(QStringLiteral("the manifest is not a JSON object"));
            contents.manifest = document.object();
            haveManifest = true;
            continue;
        }
        if (!name.startsWith(QLatin1String(kFilesPrefix)))
            return badArchive(QStringLiteral("unexpected entry %1").arg(name));
        const std::optional<QString> relative = safeRelativePath(name.mid(int(qstrlen(kFilesPrefix))));
        if (!relative)
            return badArchive(QStringLiteral("entry %1 would leave the workspace directory").arg(name));
        if (type != AE_IFREG && type != AE_IFDIR)
            return badArchive(QStringLiteral("entry %1 is neither a directory nor a regular file").arg(name));
        contents.entries.append(Entry{*relative, type == AE_IFDIR, int(archive_entry_perm(entry)), std::move(data)});
    }
    if (!haveManifest)
        return badArchive(QStringLiteral("no %1").arg(QLatin1String(kManifestName)));
    if (contents.manifest.value(QStringLiteral("format")).toString() != QLatin1String(kFormat))
        return badArchive(QStringLiteral("the manifest's format is not %1").arg(QLatin1String(kFormat)));
    const int version = contents.manifest.value(QStringLiteral("version")).toInt();
    if (version < 1 || version > kVersion)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("the archive is of version %1; this server reads version %2 "
                                        "and older").arg(version).arg(kVersion));
    return contents;
}

Result<void> WorkspaceArchive::writeFiles(const QList<Entry> &entries, const QString &directory)
{
    const QDir root(directory);
    for (const Entry &entry : entries) {
        if (!entry.directory)
            continue;
        const QString path = root.filePath(entry.path);
        if (!root.mkpath(entry.path))
            return makeError(QStringLiteral("io"), QStringLiteral("cannot create %1").arg(path));
        ::chmod(QFile::encodeName(path).constData(), mode_t((entry.mode & 0777) | 0700));
    }
    for (const Entry &entry : entries) {
        if (entry.directory)
            continue;
        const QString path = root.filePath(entry.path);
        if (const qsizetype slash = entry.path.lastIndexOf(QLatin1Char('/')); slash > 0 && !root.mkpath(entry.path.left(slash)))
            return makeError(QStringLiteral("io"), QStringLiteral("cannot create the directory of %1").arg(path));
        const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              mode_t(entry.mode & 0777));
        if (fd < 0)
            return ioError(QStringLiteral("cannot create"), path);
        qsizetype done = 0;
        while (done < entry.data.size()) {
            const ssize_t n = ::write(fd, entry.data.constData() + done, size_t(entry.data.size() - done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                const Error error = ioError(QStringLiteral("cannot write"), path);
                ::close(fd);
                return error;
            }
            done += n;
        }
        if (::close(fd) != 0)
            return ioError(QStringLiteral("cannot write"), path);
    }
    return {};
}

Result<void> WorkspaceArchive::restore(storage::Store &store, const storage::WorkspaceRecord &workspace,
                                       const QJsonObject &manifest)
{
    return store.transaction([&]() -> Result<void> {
        if (auto env = restoreEnv(store, EnvScope::Workspace, workspace.id,
                                  manifest.value(QStringLiteral("env")).toArray());
            !env)
            return env;
        for (const QJsonValue &value : manifest.value(QStringLiteral("contexts")).toArray()) {
            const QJsonObject context = value.toObject();
            storage::ContextRecord row;
            row.id = context.value(QStringLiteral("id")).toString();
            row.workspaceId = workspace.id;
            row.language = context.value(QStringLiteral("language")).toString();
            if (row.id.isEmpty() || row.language.isEmpty())
                return badArchive(QStringLiteral("a context without an id or a language"));
            row.name = context.value(QStringLiteral("name")).toString();
            row.cwd = absoluteIn(workspace.directory, context.value(QStringLiteral("cwd")).toString());
            row.executionCount = context.value(QStringLiteral("execution_count")).toInt();
            row.createdAt = qint64(context.value(QStringLiteral("created_at")).toDouble());
            row.lastUsedAt = qint64(context.value(QStringLiteral("last_used_at")).toDouble());
            row.restorePolicy = context.value(QStringLiteral("restore_policy")).toString() == QLatin1String("fresh")
                    ? storage::RestorePolicy::Fresh
                    : storage::RestorePolicy::Replay;
            row.replayBaseCount = context.value(QStringLiteral("replay_base_count")).toInt();
            if (context.contains(QStringLiteral("replay_base_cwd")))
                row.replayBaseCwd = absoluteIn(workspace.directory,
                                               context.value(QStringLiteral("replay_base_cwd")).toString());
            if (auto inserted = store.insertContext(row); !inserted)
                return inserted;
            if (auto env = restoreEnv(store, EnvScope::Context, row.id, context.value(QStringLiteral("env")).toArray());
                !env)
                return env;
            for (const QJsonValue &item : context.value(QStringLiteral("executions")).toArray()) {
                const QJsonObject e = item.toObject();
                storage::ExecutionRecord execution;
                execution.id = e.value(QStringLiteral("id")).toString();
                execution.contextId = row.id;
                execution.code = e.value(QStringLiteral("code")).toString();
                execution.status = e.value(QStringLiteral("status")).toString();
                if (execution.status.isEmpty() || execution.status == QLatin1String("running"))
                    execution.status = QStringLiteral("aborted");
                execution.executionCount = e.value(QStringLiteral("execution_count")).toInt();
                execution.startedAt = qint64(e.value(QStringLiteral("started_at")).toDouble());
                execution.durationMs = qint64(e.value(QStringLiteral("duration_ms")).toDouble(-1));
                execution.outputBytes = qint64(e.value(QStringLiteral("output_bytes")).toDouble());
                execution.truncated = e.value(QStringLiteral("truncated")).toBool();
                execution.replay = e.value(QStringLiteral("replay")).toBool(true);
                if (const QJsonArray inputs = e.value(QStringLiteral("inputs")).toArray(); !inputs.isEmpty())
                    execution.inputs = QString::fromUtf8(QJsonDocument(inputs).toJson(QJsonDocument::Compact));
                if (execution.id.isEmpty())
                    return badArchive(QStringLiteral("an execution without an id"));
                const Result<storage::ExecutionRecord> inserted = store.insertExecution(execution);
                if (!inserted)
                    return inserted.error();
                QList<storage::ExecutionEventRecord> events;
                for (const QJsonValue &item : e.value(QStringLiteral("events")).toArray()) {
                    const QJsonObject event = item.toObject();
                    events.append({execution.id, event.value(QStringLiteral("seq")).toInt(),
                                   QJsonDocument(event.value(QStringLiteral("event")).toObject())
                                           .toJson(QJsonDocument::Compact)});
                }
                if (auto stored = store.appendEvents(events); !stored)
                    return stored;
            }
            const QJsonObject snapshot = context.value(QStringLiteral("snapshot")).toObject();
            if (!snapshot.isEmpty()) {
                storage::SnapshotRecord record;
                record.contextId = row.id;
                record.executionCount = snapshot.value(QStringLiteral("execution_count")).toInt();
                record.format = snapshot.value(QStringLiteral("format")).toString();
                record.data = QByteArray::fromBase64(snapshot.value(QStringLiteral("data")).toString().toLatin1());
                // A shell's snapshot is source that names its working directory; a pickle is
                // left as it is (its cwd is the host's to set on each run).
                const QString from = manifest.value(QStringLiteral("directory")).toString();
                if (record.format == QLatin1String("bash-source") && !from.isEmpty() && from != workspace.directory)
                    record.data.replace(from.toUtf8(), workspace.directory.toUtf8());
                record.error = snapshot.value(QStringLiteral("error")).toString();
                record.lost = QString::fromUtf8(
                        QJsonDocument(snapshot.value(QStringLiteral("lost")).toArray()).toJson(QJsonDocument::Compact));
                record.createdAt = qint64(snapshot.value(QStringLiteral("created_at")).toDouble());
                if (auto saved = store.saveSnapshot(record); !saved)
                    return saved;
            }
        }
        return {};
    });
}

} // namespace replhost::core
