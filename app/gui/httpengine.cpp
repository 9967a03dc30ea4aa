// SPDX-License-Identifier: Apache-2.0
#include "httpengine.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLockFile>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <utility>
#include <cerrno>
#include <csignal>

namespace replhost::gui {

using sdk::Event;

namespace {

QString workspaceName(const QString &workspace)
{
    return workspace.isEmpty() ? core::WorkspaceManager::defaultName() : workspace;
}

qint64 msecsOf(const QJsonValue &isoTime)
{
    const QDateTime when = QDateTime::fromString(isoTime.toString(), Qt::ISODateWithMs);
    return when.isValid() ? when.toMSecsSinceEpoch() : 0;
}

core::PluginSearchDir searchDirFromJson(const QJsonObject &json)
{
    return {json.value(QLatin1String("directory")).toString(), json.value(QLatin1String("origin")).toString()};
}

core::PluginEntry pluginFromJson(const QJsonObject &json)
{
    core::PluginEntry entry;
    const QString state = json.value(QLatin1String("state")).toString();
    for (const auto candidate : {core::PluginEntry::State::Loaded, core::PluginEntry::State::Incompatible,
                                 core::PluginEntry::State::Broken, core::PluginEntry::State::Shadowed}) {
        if (core::PluginEntry::stateName(candidate) == state)
            entry.state = candidate;
    }
    entry.fileName = json.value(QLatin1String("file")).toString();
    entry.foundIn = searchDirFromJson(json);
    entry.error = json.value(QLatin1String("error")).toString();
    entry.id = json.value(QLatin1String("id")).toString();
    entry.name = json.value(QLatin1String("name")).toString();
    entry.version = json.value(QLatin1String("version")).toString();
    entry.sdkVersion = json.value(QLatin1String("sdk_version")).toString();
    entry.lexer = json.value(QLatin1String("lexer")).toString();
    for (const QJsonValue &alias : json.value(QLatin1String("aliases")).toArray())
        entry.aliases << alias.toString();
    for (const QJsonValue &extension : json.value(QLatin1String("extensions")).toArray())
        entry.extensions << extension.toString();
    entry.capabilities = json.value(QLatin1String("capabilities")).toObject();
    entry.provider = json.value(QLatin1String("provider")).toString();
    entry.runtime.available = json.value(QLatin1String("available")).toBool();
    entry.runtime.version = json.value(QLatin1String("runtime_version")).toString();
    entry.runtime.executable = json.value(QLatin1String("executable")).toString();
    if (entry.state == core::PluginEntry::State::Loaded)
        entry.runtime.reason = json.value(QLatin1String("reason")).toString();
    return entry;
}

storage::WorkspaceRecord workspaceFromJson(const QJsonObject &json)
{
    storage::WorkspaceRecord ws;
    ws.id = json.value(QLatin1String("id")).toString();
    ws.name = json.value(QLatin1String("name")).toString();
    ws.directory = json.value(QLatin1String("directory")).toString();
    ws.createdAt = msecsOf(json.value(QLatin1String("created_at")));
    ws.settings = QString::fromUtf8(QJsonDocument(json.value(QLatin1String("settings")).toObject())
                                            .toJson(QJsonDocument::Compact));
    return ws;
}

// The effective settings of a Workspace answer. The server checked them already; what the client
// cannot check again is left to it: the volumes (their host paths are the server's allowed ones,
// which only it knows) are read as given. The API shows effective values only, so whether the
// network was chosen is guessed: a value other than the isolation's own must have been.
Result<core::WorkspaceSettings> settingsFromJson(const QJsonObject &workspace)
{
    QJsonObject json = workspace.value(QLatin1String("settings")).toObject();
    const QJsonArray volumes = json.take(QLatin1String("volumes")).toArray();
    Result<core::WorkspaceSettings> settings = core::WorkspaceSettings::fromJson(json, core::WorkspaceSettings());
    if (!settings)
        return settings;
    for (const QJsonValue &value : volumes) {
        const QJsonObject volume = value.toObject();
        settings->volumes.append({volume.value(QLatin1String("host_path")).toString(),
                                  volume.value(QLatin1String("mount_path")).toString(),
                                  volume.value(QLatin1String("read_only")).toBool(true)});
    }
    settings->networkChosen =
            settings->network != (settings->isolation != core::WorkspaceSettings::Isolation::Sandbox);
    return settings;
}

storage::ExecutionRecord historyFromJson(const QJsonObject &json)
{
    storage::ExecutionRecord record;
    record.id = json.value(QLatin1String("id")).toString();
    record.contextId = json.value(QLatin1String("context_id")).toString();
    record.seq = json.value(QLatin1String("seq")).toInteger();
    record.code = json.value(QLatin1String("code")).toString();
    record.status = json.value(QLatin1String("status")).toString();
    record.executionCount = json.value(QLatin1String("execution_count")).toInt();
    record.startedAt = msecsOf(json.value(QLatin1String("started_at")));
    record.durationMs = json.value(QLatin1String("duration_ms")).toInteger(-1);
    record.outputBytes = json.value(QLatin1String("output_bytes")).toInteger();
    record.truncated = json.value(QLatin1String("truncated")).toBool();
    record.replay = json.value(QLatin1String("replay")).toBool(true);
    record.outputPruned = json.value(QLatin1String("output_pruned")).toBool();
    return record;
}

// One entry of a context's background output, as the server lists and announces it.
core::BackgroundOutput::Entry backgroundEntryFromJson(const QJsonObject &json)
{
    core::BackgroundOutput::Entry entry;
    entry.seq = json.value(QLatin1String("seq")).toInteger();
    entry.at = QDateTime::fromString(json.value(QLatin1String("at")).toString(), Qt::ISODateWithMs);
    entry.afterExecutionId = json.value(QLatin1String("after_execution_id")).toString();
    entry.event = Event::fromJson(json.value(QLatin1String("event")).toObject());
    return entry;
}

// {"set": {KEY: value}, "unset": [KEY]}, sorted by key as the engine lists a layer.
QList<storage::EnvVarRecord> layerFromJson(const QJsonObject &json)
{
    QList<storage::EnvVarRecord> layer;
    const QJsonObject set = json.value(QLatin1String("set")).toObject();
    for (auto it = set.constBegin(); it != set.constEnd(); ++it)
        layer.append(storage::EnvVarRecord{it.key(), it.value().toString(), false});
    for (const QJsonValue &key : json.value(QLatin1String("unset")).toArray())
        layer.append(storage::EnvVarRecord{key.toString(), QString(), true});
    std::sort(layer.begin(), layer.end(), [](const auto &a, const auto &b) { return a.key < b.key; });
    return layer;
}

QJsonObject stringsToJson(const QMap<QString, QString> &strings)
{
    QJsonObject json;
    for (auto it = strings.constBegin(); it != strings.constEnd(); ++it)
        json.insert(it.key(), it.value());
    return json;
}

// What a failed reply means, from the server's error body when it sent one.
Error errorOf(QNetworkReply *reply, const QByteArray &body, const QUrl &server)
{
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status > 0) {
        const QJsonObject json = QJsonDocument::fromJson(body).object();
        const QString code = json.value(QLatin1String("code")).toString();
        if (!code.isEmpty())
            return Error{code, json.value(QLatin1String("message")).toString()};
        return Error{QStringLiteral("unavailable"),
                     QObject::tr("replhost-server at %1 answered %2").arg(server.toString()).arg(status)};
    }
    return Error{QStringLiteral("unavailable"),
                 QObject::tr("replhost-server at %1 cannot be reached: %2").arg(server.toString(), reply->errorString())};
}

} // namespace

Result<ServerEndpoint> ServerEndpoint::inDataDir(const QString &dataDir, const QByteArray &tokenOverride)
{
    const QString urlPath = QDir(dataDir).filePath(QStringLiteral("server.json"));
    QFile urlFile(urlPath);
    if (!urlFile.exists())
        return makeError(QStringLiteral("not_found"),
                         QObject::tr("no running replhost-server found: %1 does not exist").arg(urlPath));
    if (!urlFile.open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("io"), QObject::tr("cannot read %1: %2").arg(urlPath, urlFile.errorString()));
    const QJsonObject json = QJsonDocument::fromJson(urlFile.readAll()).object();
    ServerEndpoint endpoint;
    endpoint.url = QUrl(json.value(QLatin1String("url")).toString());
    endpoint.pid = json.value(QLatin1String("pid")).toInteger();
    if (!endpoint.url.isValid() || endpoint.url.scheme() != QLatin1String("http") || endpoint.pid <= 0)
        return makeError(QStringLiteral("bad_request"),
                         QObject::tr("%1 is not a server URL file ({\"url\": ..., \"pid\": ...})").arg(urlPath));
    // EPERM: the process exists but is somebody else's.
    if (::kill(pid_t(endpoint.pid), 0) != 0 && errno != EPERM)
        return makeError(QStringLiteral("stale"),
                         QObject::tr("stale server URL file %1: process %2 is not running").arg(urlPath).arg(endpoint.pid));
    // Which program holds the directory, for the title: the lock names it.
    endpoint.holder = QStringLiteral("replhost-server");
    QLockFile lock(QDir(dataDir).filePath(QStringLiteral("lock")));
    qint64 lockPid = 0;
    QString host, application;
    if (lock.getLockInfo(&lockPid, &host, &application) && lockPid == endpoint.pid && !application.isEmpty())
        endpoint.holder = application;
    if (!tokenOverride.isEmpty()) {
        endpoint.token = tokenOverride;
    } else {
        const QString tokenPath = QDir(dataDir).filePath(QStringLiteral("token"));
        QFile tokenFile(tokenPath);
        if (!tokenFile.open(QIODevice::ReadOnly))
            return makeError(QStringLiteral("io"),
                             QObject::tr("cannot read the token file %1: %2").arg(tokenPath, tokenFile.errorString()));
        endpoint.token = tokenFile.readAll().trimmed();
    }
    // The token travels in a header: a line break in it would split the request.
    if (endpoint.token.isEmpty() || endpoint.token.contains('\n') || endpoint.token.contains('\r')
        || endpoint.token.contains(' '))
        return makeError(QStringLiteral("bad_request"), QObject::tr("the server's token is empty or malformed"));
    return endpoint;
}

// One Server-Sent Events stream: splits what the reply delivers into messages (event, id,
// data) as they arrive. A reply that is not 200 is an error, whose JSON body it keeps. The
// reply stays a child of its manager (so that the engine's destructor finds and abandons it);
// the stream deletes it, and itself, once it has ended.
class HttpEngine::EventStream : public QObject {
public:
    using MessageHandler = std::function<void(const QByteArray &event, const QString &id, const QByteArray &data)>;
    using EndHandler = std::function<void(Result<void>)>;

    EventStream(QNetworkReply *reply, QUrl server, MessageHandler onMessage, EndHandler onEnd, QObject *parent)
        : QObject(parent), m_reply(reply), m_server(std::move(server)), m_onMessage(std::move(onMessage)),
          m_onEnd(std::move(onEnd))
    {
        connect(reply, &QNetworkReply::readyRead, this, &EventStream::read);
        connect(reply, &QNetworkReply::finished, this, &EventStream::finish);
    }

private:
    bool isStream() const
    {
        return m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 200;
    }

    void read()
    {
        m_buffer += m_reply->readAll();
        if (!isStream())
            return;  // an error's JSON body, read at the end
        for (qsizetype end = m_buffer.indexOf("\n\n"); end >= 0; end = m_buffer.indexOf("\n\n")) {
            const QByteArray block = m_buffer.left(end);
            m_buffer.remove(0, end + 2);
            QByteArray event, data;
            QString id;
            for (const QByteArray &line : block.split('\n')) {
                if (line.startsWith(':'))
                    continue;  // a comment: the keep-alive
                const qsizetype colon = line.indexOf(':');
                const QByteArray field = colon < 0 ? line : line.left(colon);
                QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
                if (value.startsWith(' '))
                    value.remove(0, 1);
                if (field == "event")
                    event = value;
                else if (field == "data")
                    data += data.isEmpty() ? value : "\n" + value;
                else if (field == "id")
                    id = QString::fromUtf8(value);
            }
            if (!data.isEmpty())
                m_onMessage(event.isEmpty() ? QByteArrayLiteral("message") : event, id, data);
        }
    }

    void finish()
    {
        read();
        const EndHandler onEnd = m_onEnd;
        if (m_reply->error() != QNetworkReply::NoError || !isStream())
            onEnd(errorOf(m_reply, m_buffer, m_server));
        else
            onEnd(Result<void>());
        m_reply->deleteLater();
        deleteLater();
    }

    QNetworkReply *m_reply;
    QUrl m_server;
    MessageHandler m_onMessage;
    EndHandler m_onEnd;
    QByteArray m_buffer;
};

// One run this client follows, through one stream at a time: its POST's (a run of this client),
// or GET …/events from after the last event taken in.
struct HttpEngine::Follow {
    core::ExecutionPtr execution;
    int lastId = -1;         // the SSE id of the last event taken in
    int resumes = 0;         // resumes since an event last came
    bool own = false;        // started by this client
    bool announced = false;  // executionStarted was emitted for it
    bool streaming = true;   // a stream of it is open, or about to be opened again
    QJsonObject finishedNotice;  // the engine's execution_finished for it, once that came
};

HttpEngine::HttpEngine(ServerEndpoint endpoint, QString dataDir, QObject *parent)
    : EngineClient(parent)
    , m_endpoint(std::move(endpoint))
    , m_dataDir(std::move(dataDir))
    , m_network(new QNetworkAccessManager(this))
    , m_streams(new QNetworkAccessManager(this))
    , m_watch(new QNetworkAccessManager(this))
{
    // The server is on this machine: no proxy, whatever the environment says.
    for (QNetworkAccessManager *manager : {m_network, m_streams, m_watch})
        manager->setProxy(QNetworkProxy::NoProxy);
}

HttpEngine::~HttpEngine()
{
    // No reply is called from here on: what is still on its way is abandoned.
    for (QNetworkAccessManager *manager : {m_network, m_streams, m_watch}) {
        for (QNetworkReply *reply : manager->findChildren<QNetworkReply *>()) {
            reply->disconnect();
            reply->abort();
        }
    }
}

QString HttpEngine::description() const
{
    return tr("%1 on %2:%3 (pid %4)")
            .arg(m_endpoint.holder, m_endpoint.url.host())
            .arg(m_endpoint.url.port())
            .arg(m_endpoint.pid);
}

QString HttpEngine::workspacePath(const QString &workspace, const QString &path) const
{
    return QStringLiteral("/v1/workspaces/") + QString::fromLatin1(QUrl::toPercentEncoding(workspaceName(workspace)))
           + path;
}

QNetworkReply *HttpEngine::send(const QByteArray &verb, const QString &path, const QJsonObject *body,
                                const RawHeaders &headers, QNetworkAccessManager *manager)
{
    QUrl url = m_endpoint.url;
    const qsizetype query = path.indexOf(QLatin1Char('?'));
    url.setPath(url.path() + (query < 0 ? path : path.left(query)), QUrl::TolerantMode);
    if (query >= 0)
        url.setQuery(path.mid(query + 1));
    QNetworkRequest request(url);
    request.setRawHeader("Authorization", "Bearer " + m_endpoint.token);
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    const bool streamed = verb == "POST" && path.endsWith(QLatin1String("/executions"));
    if (streamed || manager)
        request.setRawHeader("Accept", "text/event-stream");
    for (const auto &[name, value] : headers)
        request.setRawHeader(name, value);
    QByteArray payload;
    if (body) {
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        payload = QJsonDocument(*body).toJson(QJsonDocument::Compact);
    }
    // A stream holds its connection until the run ends: streams have a manager (and so a
    // connection pool) of their own, so that they never queue the requests that stop them.
    if (!manager)
        manager = streamed ? m_streams : m_network;
    return manager->sendCustomRequest(request, verb, payload);
}

void HttpEngine::request(const QByteArray &verb, const QString &path, const QJsonObject *body, JsonReply answer)
{
    QNetworkReply *reply = send(verb, path, body);
    const QUrl server = m_endpoint.url;
    connect(reply, &QNetworkReply::finished, this, [this, reply, server, answer] {
        reply->deleteLater();
        const QByteArray data = reply->readAll();
        const bool answered = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).isValid();
        if (reply->error() != QNetworkReply::NoError) {
            const Error error = errorOf(reply, data, server);
            if (!answered)
                noteLost(error.message);
            answer(error);
            return;
        }
        m_lost = false;
        if (data.trimmed().isEmpty()) {
            answer(QJsonDocument());
            return;
        }
        QJsonParseError parseError;
        const QJsonDocument json = QJsonDocument::fromJson(data, &parseError);
        if (parseError.error != QJsonParseError::NoError) {
            answer(makeError(QStringLiteral("unavailable"),
                             tr("replhost-server at %1 sent what is not JSON: %2")
                                     .arg(server.toString(), parseError.errorString())));
            return;
        }
        answer(json);
    });
}

void HttpEngine::connectToServer(std::function<void(Result<void>)> done)
{
    request("GET", QStringLiteral("/v1/plugins"), nullptr, [this, done](Result<QJsonDocument> plugins) {
        if (!plugins) {
            done(plugins.error());
            return;
        }
        m_plugins.clear();
        m_searchDirs.clear();
        for (const QJsonValue &dir : plugins->object().value(QLatin1String("search_path")).toArray())
            m_searchDirs.append(searchDirFromJson(dir.toObject()));
        for (const QJsonValue &entry : plugins->object().value(QLatin1String("plugins")).toArray())
            m_plugins.append(pluginFromJson(entry.toObject()));
        readWorkspacesAndContexts([this, done](Result<Listing> listing) {
            if (!listing) {
                done(listing.error());
                return;
            }
            m_workspaces = listing->workspaces;
            m_contexts = listing->contexts;
            subscribe();
            done(Result<void>());
        });
    });
}

void HttpEngine::refresh()
{
    const quint64 generation = ++m_refreshes;
    readWorkspacesAndContexts([this, generation](Result<Listing> listing) {
        if (!listing || generation != m_refreshes)
            return;  // unreachable (said already), or a later refresh answers
        // Announced as if the engine were here: what came, what changed, what went.
        for (const storage::WorkspaceRecord &ws : listing->workspaces) {
            if (!workspace(ws.name))
                emit workspaceAdded(ws.name);
        }
        const QList<storage::WorkspaceRecord> before = std::exchange(m_workspaces, listing->workspaces);
        for (const core::ContextInfo &info : listing->contexts) {
            const std::optional<core::ContextInfo> known = context(info.workspace, info.id);
            if (!known || known->toJson() != info.toJson())
                remember(info);
        }
        const QList<core::ContextInfo> contextsBefore = m_contexts;
        for (const core::ContextInfo &info : contextsBefore) {
            const bool listed = std::any_of(listing->contexts.cbegin(), listing->contexts.cend(),
                                            [&info](const core::ContextInfo &c) { return c.id == info.id; });
            if (!listed)
                forget(info.workspace, info.id);
        }
        for (const storage::WorkspaceRecord &ws : before) {
            if (!workspace(ws.name))
                emit workspaceRemoved(ws.name);
        }
    });
}

void HttpEngine::readWorkspacesAndContexts(std::function<void(Result<Listing>)> done)
{
    request("GET", QStringLiteral("/v1/workspaces"), nullptr, [this, done](Result<QJsonDocument> workspaces) {
        if (!workspaces) {
            done(workspaces.error());
            return;
        }
        Listing listing;
        for (const QJsonValue &ws : workspaces->array())
            listing.workspaces.append(workspaceFromJson(ws.toObject()));
        readContexts(0, std::move(listing), done);
    });
}

void HttpEngine::readContexts(int workspaceIndex, Listing listing, std::function<void(Result<Listing>)> done)
{
    if (workspaceIndex >= listing.workspaces.size()) {
        done(std::move(listing));
        return;
    }
    const QString name = listing.workspaces.at(workspaceIndex).name;
    request("GET", workspacePath(name, QStringLiteral("/contexts")), nullptr,
            [this, workspaceIndex, listing, done](Result<QJsonDocument> contexts) mutable {
        if (!contexts) {
            done(contexts.error());
            return;
        }
        for (const QJsonValue &context : contexts->array())
            listing.contexts.append(core::ContextInfo::fromJson(context.toObject()));
        readContexts(workspaceIndex + 1, std::move(listing), done);
    });
}

QStringList HttpEngine::availableLanguages() const
{
    QStringList languages;
    for (const core::PluginEntry &entry : m_plugins) {
        if (entry.state == core::PluginEntry::State::Loaded && entry.runtime.available)
            languages << entry.id;
    }
    return languages;
}

std::optional<storage::WorkspaceRecord> HttpEngine::workspace(const QString &name) const
{
    const QString wanted = workspaceName(name);
    for (const storage::WorkspaceRecord &ws : m_workspaces) {
        if (ws.name == wanted)
            return ws;
    }
    return std::nullopt;
}

QList<core::ContextInfo> HttpEngine::contexts(const QString &workspace, const QString &language) const
{
    const QString wanted = workspaceName(workspace);
    QList<core::ContextInfo> found;
    for (const core::ContextInfo &info : m_contexts) {
        if (info.workspace == wanted && (language.isEmpty() || info.language == language))
            found.append(info);
    }
    return found;
}

std::optional<core::ContextInfo> HttpEngine::context(const QString &workspace, const QString &id) const
{
    const QString wanted = workspaceName(workspace);
    for (const core::ContextInfo &info : m_contexts) {
        if (info.id == id && info.workspace == wanted)
            return info;
    }
    return std::nullopt;
}

core::ContextInfo HttpEngine::remember(const core::ContextInfo &info)
{
    for (core::ContextInfo &known : m_contexts) {
        if (known.id == info.id) {
            known = info;
            emit contextChanged(info);
            return info;
        }
    }
    m_contexts.append(info);
    emit contextAdded(info);
    return info;
}

void HttpEngine::forget(const QString &workspace, const QString &id)
{
    const auto gone = std::remove_if(m_contexts.begin(), m_contexts.end(),
                                     [&id](const core::ContextInfo &info) { return info.id == id; });
    if (gone == m_contexts.end())
        return;
    m_contexts.erase(gone, m_contexts.end());
    emit contextRemoved(workspaceName(workspace), id);
}

void HttpEngine::refreshContext(const QString &workspace, const QString &id)
{
    request("GET", workspacePath(workspace, QStringLiteral("/contexts/") + id), nullptr,
            [this, workspace, id](Result<QJsonDocument> json) {
        if (json)
            remember(core::ContextInfo::fromJson(json->object()));
        else if (json.error().code == QLatin1String("not_found"))
            forget(workspace, id);
    });
}

void HttpEngine::requestContext(const QByteArray &verb, const QString &path, const QJsonObject *body,
                                Reply<core::ContextInfo> reply)
{
    request(verb, path, body, [this, reply](Result<QJsonDocument> json) {
        if (!json) {
            reply(json.error());
            return;
        }
        reply(remember(core::ContextInfo::fromJson(json->object())));
    });
}

void HttpEngine::createContext(const core::CreateContextRequest &request, Reply<core::ContextInfo> reply)
{
    QJsonObject body{{QStringLiteral("language"), request.language}};
    if (!request.cwd.isEmpty())
        body.insert(QStringLiteral("cwd"), request.cwd);
    if (!request.name.isEmpty())
        body.insert(QStringLiteral("name"), request.name);
    if (!request.env.isEmpty())
        body.insert(QStringLiteral("env"), stringsToJson(request.env));
    if (!request.restore.isEmpty())
        body.insert(QStringLiteral("restore"), request.restore);
    requestContext("POST", workspacePath(request.workspace, QStringLiteral("/contexts")), &body, std::move(reply));
}

void HttpEngine::renameContext(const QString &workspace, const QString &id, const QString &name,
                               Reply<core::ContextInfo> reply)
{
    const QJsonObject body{{QStringLiteral("name"), name}};
    requestContext("PATCH", workspacePath(workspace, QStringLiteral("/contexts/") + id), &body, std::move(reply));
}

void HttpEngine::restartContext(const QString &workspace, const QString &id, Reply<void> reply)
{
    requestContext("POST", workspacePath(workspace, QStringLiteral("/contexts/%1/restart").arg(id)), nullptr,
                   [reply](Result<core::ContextInfo> info) {
        if (!info)
            reply(info.error());
        else
            reply(Result<void>());
    });
}

void HttpEngine::removeContext(const QString &workspace, const QString &id, Reply<void> reply)
{
    request("DELETE", workspacePath(workspace, QStringLiteral("/contexts/") + id), nullptr,
            [this, workspace, id, reply](Result<QJsonDocument> json) {
        if (!json) {
            reply(json.error());
            return;
        }
        forget(workspace, id);
        reply(Result<void>());
    });
}

void HttpEngine::interrupt(const QString &workspace, const QString &id, Reply<void> reply)
{
    requestContext("POST", workspacePath(workspace, QStringLiteral("/contexts/%1/interrupt").arg(id)), nullptr,
                   [reply](Result<core::ContextInfo> info) {
        if (!info)
            reply(info.error());
        else
            reply(Result<void>());
    });
}

void HttpEngine::run(const core::RunRequest &request, Reply<core::ExecutionPtr> reply)
{
    QJsonObject body{{QStringLiteral("code"), request.code},
                     {QStringLiteral("input"), request.input},
                     {QStringLiteral("replay"), request.replay}};
    if (request.timeoutMs > 0)
        body.insert(QStringLiteral("timeout_ms"), request.timeoutMs);
    if (!request.env.isEmpty())
        body.insert(QStringLiteral("env"), stringsToJson(request.env));
    if (!request.envUnset.isEmpty())
        body.insert(QStringLiteral("env_unset"), QJsonArray::fromStringList(request.envUnset));
    QString path;
    if (!request.contextId.isEmpty()) {
        path = workspacePath(request.workspace, QStringLiteral("/contexts/%1/executions").arg(request.contextId));
    } else {
        body.insert(QStringLiteral("language"), request.language);
        path = workspacePath(request.workspace, QStringLiteral("/executions"));
    }

    // The stream's first message says which execution it is; its events follow.
    auto follow = std::make_shared<FollowPtr>();
    auto answered = std::make_shared<bool>(false);
    const QString code = request.code;
    const bool input = request.input, replay = request.replay;
    QPointer<HttpEngine> self(this);
    ++m_runsUnnamed;
    const auto onMessage = [self, follow, answered, reply, code, input, replay](
                                   const QByteArray &type, const QString &id, const QByteArray &data) {
        if (!self)
            return;
        const QJsonObject json = QJsonDocument::fromJson(data).object();
        if (type != "execution") {
            if (*follow)
                self->takeEvent(*follow, id, json);
            return;
        }
        if (*follow)
            return;
        auto *created = new core::Execution(json.value(QLatin1String("id")).toString(),
                                            json.value(QLatin1String("workspace")).toString(),
                                            json.value(QLatin1String("context_id")).toString(),
                                            json.value(QLatin1String("language")).toString(), code);
        *follow = std::make_shared<Follow>();
        (*follow)->execution = core::ExecutionPtr(created, &core::Execution::dispose);
        (*follow)->own = true;
        created->setExecutionCount(json.value(QLatin1String("execution_count")).toInt());
        created->setAcceptsInput(input);
        created->setReplayable(replay);
        self->m_running.insert(created->id(), *follow);
        *answered = true;
        reply((*follow)->execution);
        self->refreshContext(created->workspace(), created->contextId());
        --self->m_runsUnnamed;
        self->settleHeldAnnouncements();
    };
    const auto onEnd = [self, follow, answered, reply](Result<void> ended) {
        if (!self)
            return;
        if (!*answered) {
            *answered = true;
            reply(ended ? Result<core::ExecutionPtr>(makeError(QStringLiteral("unavailable"),
                                                               tr("the server ended the run's stream before it began")))
                        : Result<core::ExecutionPtr>(ended.error()));
            --self->m_runsUnnamed;
            self->settleHeldAnnouncements();
            return;
        }
        self->runStreamEnded(*follow, ended);
    };
    new EventStream(send("POST", path, &body), m_endpoint.url, onMessage, onEnd, this);
}

void HttpEngine::takeEvent(const FollowPtr &follow, const QString &id, const QJsonObject &json)
{
    const core::ExecutionPtr run = follow->execution;
    if (run->isFinished())
        return;
    bool numbered = false;
    const int index = id.toInt(&numbered);
    if (numbered) {
        if (index <= follow->lastId)
            return;  // taken in already, before a resume
        follow->lastId = index;
    }
    follow->resumes = 0;
    const Event event = Event::fromJson(json);
    if (event.kind == Event::Kind::Started && !follow->announced) {
        // Announced when it starts, as the engine announces a run: a queued one is the
        // business of whoever queued it until then.
        follow->announced = true;
        run->setExecutionCount(event.fields.value(QLatin1String("execution_count")).toInt());
        run->markRunning();
        emit executionStarted(run);
    }
    if (event.kind == Event::Kind::Done) {
        run->setExecutionCount(event.fields.value(QLatin1String("execution_count")).toInt(run->executionCount()));
        run->addEvent(event, qint64(event.fields.value(QLatin1String("duration_ms")).toDouble()));
        endFollow(follow);
        return;
    }
    run->addEvent(event);
}

void HttpEngine::endFollow(const FollowPtr &follow)
{
    const core::ExecutionPtr run = follow->execution;
    m_running.remove(run->id());
    keepFinished(run);
    refreshContext(run->workspace(), run->contextId());
}

void HttpEngine::finishFromNotice(const FollowPtr &follow)
{
    const Event done = Event::fromJson(follow->finishedNotice.value(QLatin1String("done")).toObject());
    if (follow->execution->isFinished() || done.kind != Event::Kind::Done)
        return;
    follow->execution->setExecutionCount(follow->finishedNotice.value(QLatin1String("execution_count")).toInt());
    follow->execution->addEvent(done, follow->finishedNotice.value(QLatin1String("duration_ms")).toInteger(-1));
    endFollow(follow);
}

void HttpEngine::openRunStream(const FollowPtr &follow)
{
    const core::ExecutionPtr run = follow->execution;
    RawHeaders headers;
    if (follow->lastId >= 0)
        headers.append({QByteArrayLiteral("Last-Event-ID"), QByteArray::number(follow->lastId)});
    follow->streaming = true;
    QPointer<HttpEngine> self(this);
    const auto onMessage = [self, follow](const QByteArray &type, const QString &id, const QByteArray &data) {
        if (self && type != "execution")  // the stream's head: the run is known
            self->takeEvent(follow, id, QJsonDocument::fromJson(data).object());
    };
    const auto onEnd = [self, follow](Result<void> ended) {
        if (self)
            self->runStreamEnded(follow, ended);
    };
    // A run of this client's resumes on the connections of its runs, so that it never waits
    // behind the streams of other clients' runs.
    new EventStream(send("GET", workspacePath(run->workspace(), QStringLiteral("/executions/%1/events").arg(run->id())),
                         nullptr, headers, follow->own ? m_streams : m_watch),
                    m_endpoint.url, onMessage, onEnd, this);
}

void HttpEngine::runStreamEnded(const FollowPtr &follow, const Result<void> &ended)
{
    follow->streaming = false;
    const core::ExecutionPtr run = follow->execution;
    if (run->isFinished())
        return;
    const QString why = ended ? tr("the stream of run %1 ended before its end").arg(run->id()) : ended.error().message;
    // Refused by the server (the run is unknown, too many streams): resuming would be refused
    // too. Another client's run then ends with the engine's execution_finished.
    if (!ended && ended.error().code != QLatin1String("unavailable")) {
        if (follow->own)
            noteLost(why);
        finishFromNotice(follow);
        return;
    }
    resume(follow, why);
}

void HttpEngine::resume(const FollowPtr &follow, const QString &why)
{
    const core::ExecutionPtr run = follow->execution;
    if (follow->resumes >= kResumeAttempts) {
        noteLost(tr("the stream of run %1 broke and could not be resumed: %2").arg(run->id(), why));
        finishFromNotice(follow);
        return;
    }
    const int delayMs = kResumeFirstMs << follow->resumes;
    ++follow->resumes;
    follow->streaming = true;  // on its way again
    QTimer::singleShot(delayMs, this, [this, follow] {
        if (follow->execution->isFinished()) {
            follow->streaming = false;
            return;
        }
        openRunStream(follow);
    });
}

void HttpEngine::subscribe()
{
    QPointer<HttpEngine> self(this);
    auto ready = std::make_shared<bool>(false);
    const auto onMessage = [self, ready](const QByteArray &type, const QString &, const QByteArray &data) {
        *ready = *ready || type == "ready";
        if (self)
            self->takeEngineEvent(type, QJsonDocument::fromJson(data).object());
    };
    const auto onEnd = [self, ready](Result<void> ended) {
        if (!self)
            return;
        // A stream that was open and dropped is opened again first; only a stream that cannot
        // be opened says the server cannot be reached.
        if (!ended && !*ready)
            self->noteLost(ended.error().message);
        QTimer::singleShot(self->m_reconnectMs, self.data(), &HttpEngine::subscribe);
        self->m_reconnectMs = std::min(self->m_reconnectMs * 2, kReconnectMaxMs);
    };
    new EventStream(send("GET", QStringLiteral("/v1/events"), nullptr, {}, m_watch), m_endpoint.url, onMessage,
                    onEnd, this);
}

void HttpEngine::takeEngineEvent(const QByteArray &type, const QJsonObject &json)
{
    if (type == "ready" || type == "resync") {
        // What was read before may be out of date, or events were missed: read it again.
        m_reconnectMs = kReconnectFirstMs;
        m_lost = false;
        refresh();
    } else if (type == "context_added" || type == "context_changed") {
        remember(core::ContextInfo::fromJson(json));
    } else if (type == "context_removed") {
        forget(json.value(QLatin1String("workspace")).toString(), json.value(QLatin1String("id")).toString());
    } else if (type == "execution_started") {
        runAnnounced(json);
    } else if (type == "execution_finished") {
        if (const FollowPtr follow = m_running.value(json.value(QLatin1String("id")).toString())) {
            follow->finishedNotice = json;
            if (!follow->streaming)
                finishFromNotice(follow);
        }
    } else if (type == "background_output") {
        emit backgroundOutputAdded(json.value(QLatin1String("workspace")).toString(),
                                   json.value(QLatin1String("context_id")).toString(), backgroundEntryFromJson(json));
    } else if (type == "workspace_added" || type == "workspace_removed") {
        refresh();
    }
}

void HttpEngine::runAnnounced(const QJsonObject &summary)
{
    const QString id = summary.value(QLatin1String("id")).toString();
    if (id.isEmpty() || followedExecution(id))
        return;  // this client's own, or followed already
    if (m_runsUnnamed > 0) {
        m_heldAnnouncements.append(summary);  // it may be one of those
        return;
    }
    auto *created = new core::Execution(id, summary.value(QLatin1String("workspace")).toString(),
                                        summary.value(QLatin1String("context_id")).toString(),
                                        summary.value(QLatin1String("language")).toString(),
                                        summary.value(QLatin1String("code")).toString());
    auto follow = std::make_shared<Follow>();
    follow->execution = core::ExecutionPtr(created, &core::Execution::dispose);
    follow->announced = true;
    created->setExecutionCount(summary.value(QLatin1String("execution_count")).toInt());
    created->setAcceptsInput(summary.value(QLatin1String("input")).toBool());
    created->setReplayable(summary.value(QLatin1String("replay")).toBool(true));
    created->markRunning();
    m_running.insert(id, follow);
    emit executionStarted(follow->execution);
    openRunStream(follow);
}

void HttpEngine::settleHeldAnnouncements()
{
    if (m_runsUnnamed > 0)
        return;
    for (const QJsonObject &summary : std::exchange(m_heldAnnouncements, {}))
        runAnnounced(summary);
}

void HttpEngine::noteLost(const QString &why)
{
    // Said once, until the server answers again.
    if (m_lost)
        return;
    m_lost = true;
    emit connectionLost(why);
}

void HttpEngine::keepFinished(const core::ExecutionPtr &execution)
{
    m_finished.push_back(execution);
    while (m_finished.size() > size_t(kFinishedKept))
        m_finished.pop_front();
}

void HttpEngine::answerInput(const QString &executionId, const QString &value, bool eof, Reply<void> reply)
{
    const core::ExecutionPtr execution = followedExecution(executionId);
    const QJsonObject body = eof ? QJsonObject{{QStringLiteral("eof"), true}}
                                 : QJsonObject{{QStringLiteral("value"), value}};
    request("POST",
            workspacePath(execution ? execution->workspace() : QString(),
                          QStringLiteral("/executions/%1/input").arg(executionId)),
            &body, [reply](Result<QJsonDocument> json) {
        if (!json)
            reply(json.error());
        else
            reply(Result<void>());
    });
}

core::ExecutionPtr HttpEngine::followedExecution(const QString &executionId) const
{
    if (const auto running = m_running.constFind(executionId); running != m_running.constEnd())
        return (*running)->execution;
    for (const core::ExecutionPtr &execution : m_finished) {
        if (execution->id() == executionId)
            return execution;
    }
    return {};
}

void HttpEngine::executionEvents(const QString &executionId, Reply<QList<Event>> reply)
{
    if (const core::ExecutionPtr execution = followedExecution(executionId)) {
        reply(execution->eventRange());  // this client keeps every event of what it follows
        return;
    }
    // The short form: an execution id is unique on the server, whatever its workspace.
    request("GET", QStringLiteral("/v1/executions/") + executionId, nullptr, [reply](Result<QJsonDocument> json) {
        if (!json) {
            reply(json.error());
            return;
        }
        QList<Event> events;
        for (const QJsonValue &event : json->object().value(QLatin1String("events")).toArray())
            events.append(Event::fromJson(event.toObject()));
        reply(events);
    });
}

void HttpEngine::history(const QString &workspace, const QString &contextId, int limit,
                         Reply<QList<storage::ExecutionRecord>> reply)
{
    historyPage(workspace, contextId, limit, QString(), {}, std::move(reply));
}

void HttpEngine::historyPage(const QString &workspace, const QString &contextId, int limit, const QString &before,
                             QList<storage::ExecutionRecord> records, Reply<QList<storage::ExecutionRecord>> reply)
{
    // The server gives at most kHistoryPage a page: more is read page by page, older ones
    // from where the last page ended (its `next`).
    const int wanted = std::clamp(limit - int(records.size()), 1, kHistoryPage);
    QString path = workspacePath(workspace, QStringLiteral("/contexts/%1/executions?limit=%2").arg(contextId).arg(wanted));
    if (!before.isEmpty())
        path += QStringLiteral("&before=") + QString::fromLatin1(QUrl::toPercentEncoding(before));
    request("GET", path, nullptr,
            [this, workspace, contextId, limit, records, reply](Result<QJsonDocument> json) mutable {
        if (!json) {
            reply(json.error());
            return;
        }
        for (const QJsonValue &entry : json->object().value(QLatin1String("executions")).toArray())
            records.append(historyFromJson(entry.toObject()));
        const QString next = json->object().value(QLatin1String("next")).toString();
        if (records.size() >= limit || next.isEmpty()) {
            reply(records);
            return;
        }
        historyPage(workspace, contextId, limit, next, std::move(records), std::move(reply));
    });
}

void HttpEngine::backgroundOutput(const QString &workspace, const QString &contextId,
                                  Reply<QList<core::BackgroundOutput::Entry>> reply)
{
    const QString path = workspacePath(workspace, QStringLiteral("/contexts/%1/background-output?limit=1000").arg(contextId));
    request("GET", path, nullptr, [reply](Result<QJsonDocument> json) {
        if (!json) {
            reply(json.error());
            return;
        }
        QList<core::BackgroundOutput::Entry> entries;
        for (const QJsonValue &value : json->object().value(QLatin1String("entries")).toArray())
            entries.append(backgroundEntryFromJson(value.toObject()));
        reply(entries);
    });
}

void HttpEngine::complete(const QString &workspace, const QString &id, const QString &code, int cursor,
                          Reply<QJsonObject> reply)
{
    const QJsonObject body{{QStringLiteral("code"), code}, {QStringLiteral("cursor"), cursor}};
    request("POST", workspacePath(workspace, QStringLiteral("/contexts/%1/complete").arg(id)), &body,
            [reply](Result<QJsonDocument> json) {
        if (!json)
            reply(json.error());
        else
            reply(json->object());
    });
}

void HttpEngine::variables(const QString &workspace, const QString &id, Reply<QJsonObject> reply)
{
    request("GET", workspacePath(workspace, QStringLiteral("/contexts/%1/variables").arg(id)), nullptr,
            [reply](Result<QJsonDocument> json) {
        if (!json)
            reply(json.error());
        else
            reply(json->object());
    });
}

void HttpEngine::envLayer(const QString &workspace, const QString &contextId,
                          Reply<QList<storage::EnvVarRecord>> reply)
{
    const QString path = workspacePath(workspace, contextId.isEmpty() ? QStringLiteral("/env")
                                                                      : QStringLiteral("/contexts/%1/env").arg(contextId));
    request("GET", path, nullptr, [reply](Result<QJsonDocument> json) {
        if (!json)
            reply(json.error());
        else
            reply(layerFromJson(json->object()));
    });
}

void HttpEngine::changeEnvLayer(const QString &workspace, const QString &contextId,
                                const QMap<QString, QString> &set, const QStringList &unset,
                                const QStringList &clear, Reply<void> reply)
{
    const QString path = workspacePath(workspace, contextId.isEmpty() ? QStringLiteral("/env")
                                                                      : QStringLiteral("/contexts/%1/env").arg(contextId));
    const QJsonObject body{{QStringLiteral("set"), stringsToJson(set)},
                           {QStringLiteral("unset"), QJsonArray::fromStringList(unset)},
                           {QStringLiteral("clear"), QJsonArray::fromStringList(clear)}};
    request("PATCH", path, &body, [reply](Result<QJsonDocument> json) {
        if (!json)
            reply(json.error());
        else
            reply(Result<void>());
    });
}

void HttpEngine::effectiveEnv(const QString &workspace, const QString &contextId,
                              Reply<QMap<QString, QString>> reply)
{
    request("GET", workspacePath(workspace, QStringLiteral("/contexts/%1/env").arg(contextId)), nullptr,
            [reply](Result<QJsonDocument> json) {
        if (!json) {
            reply(json.error());
            return;
        }
        QMap<QString, QString> env;
        const QJsonObject effective = json->object().value(QLatin1String("effective")).toObject();
        for (auto it = effective.constBegin(); it != effective.constEnd(); ++it)
            env.insert(it.key(), it.value().toString());
        reply(env);
    });
}

void HttpEngine::workspaceSettings(const QString &workspace, Reply<core::WorkspaceSettings> reply)
{
    request("GET", workspacePath(workspace, QString()), nullptr, [this, reply](Result<QJsonDocument> json) {
        replyWorkspaceSettings(std::move(json), reply);
    });
}

void HttpEngine::changeWorkspaceSettings(const QString &workspace, const QJsonObject &patch,
                                         Reply<core::WorkspaceSettings> reply)
{
    const QJsonObject body{{QStringLiteral("settings"), patch}};
    request("PATCH", workspacePath(workspace, QString()), &body, [this, reply](Result<QJsonDocument> json) {
        replyWorkspaceSettings(std::move(json), reply);
    });
}

void HttpEngine::replyWorkspaceSettings(Result<QJsonDocument> json, const Reply<core::WorkspaceSettings> &reply)
{
    if (!json) {
        reply(json.error());
        return;
    }
    const QJsonObject answer = json->object();
    // What workspace() answers follows what the server just said.
    const storage::WorkspaceRecord record = workspaceFromJson(answer);
    for (storage::WorkspaceRecord &known : m_workspaces) {
        if (known.name == record.name)
            known = record;
    }
    reply(settingsFromJson(answer));
}

} // namespace replhost::gui
