// SPDX-License-Identifier: Apache-2.0
#include "opensandboxlifecycleapi.h"

#include "httpexchange.h"
#include "jsonbody.h"
#include "opensandboxerror.h"
#include "opensandboxexecdapi.h"
#include "opensandboxsandboxspec.h"
#include "router.h"
#include "workspaceroute.h"

#include "core/engine.h"
#include "core/envlayers.h"

#include <QTcpSocket>
#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QUrlQuery>
#include <QUuid>

#include <algorithm>
#include <climits>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcLifecycle, "replhost.http.opensandbox.lifecycle", QtInfoMsg)

namespace {

const QString kSandboxNotFound = QStringLiteral("SANDBOX_NOT_FOUND");
// The longest lifetime a client may ask for, so a typo cannot schedule a deletion centuries away.
constexpr qint64 kMaxTimeoutSeconds = qint64(366) * 24 * 3600;

QJsonValue isoTime(qint64 msecsSinceEpoch)
{
    if (msecsSinceEpoch <= 0)
        return QJsonValue();
    return QDateTime::fromMSecsSinceEpoch(msecsSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

QJsonObject metadataJson(const QMap<QString, QString> &metadata)
{
    QJsonObject json;
    for (auto it = metadata.cbegin(); it != metadata.cend(); ++it)
        json.insert(it.key(), it.value());
    return json;
}

void notSupported(HttpExchange &exchange, int status, const QString &message)
{
    exchange.sendError(status, QStringLiteral("NOT_SUPPORTED"), message);
}

// A create that asks for what cannot be honoured (here: "unsupported", also a limit this machine
// cannot enforce) is OpenSandbox's 400 NOT_SUPPORTED, not replhost's 501.
void refuseCreate(HttpExchange &exchange, const Error &error)
{
    if (error.code == QLatin1String("unsupported"))
        notSupported(exchange, 400, error.message);
    else
        OpenSandboxError::send(exchange, error);
}

} // namespace

OpenSandboxLifecycleApi::OpenSandboxLifecycleApi(core::Engine &engine, QByteArray token)
    : m_engine(engine),
      m_token(std::move(token)),
      m_registry(engine.workspaces(),
                 QDir(engine.dataDir()).filePath(QStringLiteral("opensandbox/sandboxes.json")))
{
    if (const Result<void> loaded = m_registry.load(); !loaded)
        qCWarning(lcLifecycle).noquote() << loaded.error().message;
}

QString OpenSandboxLifecycleApi::prefix()
{
    return QStringLiteral("/opensandbox");
}

void OpenSandboxLifecycleApi::registerRoutes(Router &router)
{
    auto bind = [this](void (OpenSandboxLifecycleApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };
    const QString base = prefix() + QStringLiteral("/v1/sandboxes");
    router.add("POST", base, bind(&OpenSandboxLifecycleApi::create));
    router.add("GET", base, bind(&OpenSandboxLifecycleApi::list));
    router.add("GET", base + QStringLiteral("/{id}"), bind(&OpenSandboxLifecycleApi::get));
    router.add("DELETE", base + QStringLiteral("/{id}"), bind(&OpenSandboxLifecycleApi::remove));
    router.add("GET", base + QStringLiteral("/{id}/endpoints/{port}"), bind(&OpenSandboxLifecycleApi::endpoint));
    router.add("POST", base + QStringLiteral("/{id}/renew-expiration"), bind(&OpenSandboxLifecycleApi::renew));
    router.add("PATCH", base + QStringLiteral("/{id}/metadata"), bind(&OpenSandboxLifecycleApi::patchMetadata));
    router.add("POST", base + QStringLiteral("/{id}/pause"), bind(&OpenSandboxLifecycleApi::pauseOrResume));
    router.add("POST", base + QStringLiteral("/{id}/resume"), bind(&OpenSandboxLifecycleApi::pauseOrResume));
    router.add("POST", prefix() + QStringLiteral("/v1/metrics/events"), bind(&OpenSandboxLifecycleApi::telemetry));
}

Result<OpenSandboxRegistry::Record> OpenSandboxLifecycleApi::recordOf(const QString &id) const
{
    const Result<storage::WorkspaceRecord> workspace = m_engine.workspaces().get(id);
    if (!workspace)
        return makeError(workspace.error().code,
                         workspace.error().code == QLatin1String("not_found")
                                 ? QStringLiteral("no sandbox '%1'").arg(id)
                                 : workspace.error().message);
    if (std::optional<OpenSandboxRegistry::Record> record = m_registry.find(id))
        return *record;
    // A workspace made through another face: running, no image, never expiring.
    OpenSandboxRegistry::Record record;
    record.id = workspace->name;
    record.createdAt = workspace->createdAt;
    return record;
}

std::optional<OpenSandboxRegistry::Record> OpenSandboxLifecycleApi::sandboxOf(HttpExchange &exchange) const
{
    Result<OpenSandboxRegistry::Record> record = recordOf(exchange.request().param(QStringLiteral("id")));
    if (!record) {
        OpenSandboxError::send(exchange, record.error(), kSandboxNotFound);
        return std::nullopt;
    }
    return std::move(*record);
}

QJsonObject OpenSandboxLifecycleApi::sandboxJson(const OpenSandboxRegistry::Record &record) const
{
    QJsonObject json{
            {QStringLiteral("id"), record.id},
            {QStringLiteral("status"),
             QJsonObject{{QStringLiteral("state"), QStringLiteral("Running")},
                         {QStringLiteral("reason"), QStringLiteral("WORKSPACE_READY")},
                         {QStringLiteral("message"), QStringLiteral("the replhost workspace is ready")},
                         {QStringLiteral("lastTransitionAt"), isoTime(record.createdAt)}}},
            {QStringLiteral("metadata"), metadataJson(record.metadata)},
            {QStringLiteral("entrypoint"), QJsonArray::fromStringList(record.entrypoint)},
            {QStringLiteral("createdAt"), isoTime(record.createdAt)},
            {QStringLiteral("expiresAt"), isoTime(record.expiresAt)},
    };
    if (!record.image.isEmpty())
        json.insert(QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), record.image}});
    return json;
}

void OpenSandboxLifecycleApi::create(const ExchangePtr &exchange)
{
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    const QJsonObject &body = json->object();
    if (body.contains(QStringLiteral("snapshotId")) && !body.value(QStringLiteral("snapshotId")).isNull()) {
        notSupported(*exchange, 400, QStringLiteral("snapshots are not supported: create the sandbox "
                                                    "from an image"));
        return;
    }
    const QJsonValue image = body.value(QStringLiteral("image"));
    const QString imageUri = image.isObject() ? image.toObject().value(QStringLiteral("uri")).toString()
                                              : image.toString();
    if (imageUri.isEmpty()) {
        exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("field 'image' must be {\"uri\": \"…\"} (it is recorded; "
                                           "replhost's runtimes run the code)"));
        return;
    }
    const Result<QStringList> entrypoint = json->stringList(QStringLiteral("entrypoint"));
    const Result<QMap<QString, QString>> env = json->stringMap(QStringLiteral("env"));
    const Result<QMap<QString, QString>> metadata = json->stringMap(QStringLiteral("metadata"));
    const Result<int> timeout = json->optionalInt(QStringLiteral("timeout"), 0, 1, int(kMaxTimeoutSeconds));
    if (const std::optional<Error> error = OpenSandboxError::first(entrypoint, env, metadata, timeout)) {
        OpenSandboxError::send(*exchange, *error);
        return;
    }

    // A bad request is answered as such whatever this machine can make: the names are checked
    // before the sandbox is.
    for (auto it = env->cbegin(); it != env->cend(); ++it) {
        if (!core::EnvLayers::isValidKey(it.key())) {
            OpenSandboxError::send(*exchange, makeError(QStringLiteral("bad_request"),
                                                        QStringLiteral("invalid environment variable name \"%1\"")
                                                            .arg(it.key())));
            return;
        }
    }

    // What the sandbox is, checked whole before anything is made.
    const Result<QJsonObject> settings = OpenSandboxSandboxSpec::workspaceSettings(
            body, m_engine.sandbox(), OpenSandboxSandboxSpec::cpusOfThisProcess());
    if (!settings) {
        refuseCreate(*exchange, settings.error());
        return;
    }

    // Behind a router the id must be known before the create reaches a server, which is placed
    // by it: the router passes the one the client chose, or one it made, as X-Replhost-Workspace.
    const QString routed = WorkspaceRoute::ofHeader(exchange->request());
    const QString id = routed.isEmpty() ? QUuid::createUuid().toString(QUuid::WithoutBraces) : routed;
    const Result<storage::WorkspaceRecord> workspace = m_engine.workspaces().create(id, {}, *settings);
    if (!workspace) {
        refuseCreate(*exchange, workspace.error());
        return;
    }
    if (const Result<void> envSet = m_engine.workspaces().changeEnv(id, *env, {}, {}); !envSet) {
        // Nothing half-made is left behind.
        if (const Result<void> removed = m_engine.workspaces().remove(id, true); !removed)
            qCWarning(lcLifecycle).noquote() << removed.error().message;
        OpenSandboxError::send(*exchange, envSet.error());
        return;
    }
    OpenSandboxRegistry::Record record;
    record.id = id;
    record.image = imageUri;
    record.entrypoint = *entrypoint;
    record.metadata = *metadata;
    record.createdAt = workspace->createdAt > 0 ? workspace->createdAt
                                                : QDateTime::currentMSecsSinceEpoch();
    record.expiresAt = *timeout > 0 ? record.createdAt + qint64(*timeout) * 1000 : 0;
    record.ownsDirectory = true;
    if (const Result<void> saved = m_registry.put(record); !saved)
        qCWarning(lcLifecycle).noquote() << saved.error().message << "- the expiry is kept until a restart";
    exchange->sendJson(202, sandboxJson(record));
}

void OpenSandboxLifecycleApi::list(const ExchangePtr &exchange)
{
    const HttpRequest &request = exchange->request();
    const Result<qint64> page = request.queryInteger(QStringLiteral("page"), 1, 1, INT_MAX);
    const Result<qint64> pageSize = request.queryInteger(QStringLiteral("pageSize"), 20, 1, 200);
    if (const std::optional<Error> error = OpenSandboxError::first(page, pageSize)) {
        OpenSandboxError::send(*exchange, *error);
        return;
    }
    // Every sandbox is Running: asking only for other states finds none.
    const QStringList states = request.query().allQueryItemValues(QStringLiteral("state"), QUrl::FullyDecoded);
    const bool wantsRunning = states.isEmpty()
            || std::any_of(states.cbegin(), states.cend(), [](const QString &state) {
                   return state.compare(QLatin1String("Running"), Qt::CaseInsensitive) == 0;
               });
    // ?metadata=k=v&k2=v2, the pairs percent-encoded as one value.
    const QUrlQuery wanted(request.queryValue(QStringLiteral("metadata")));

    const Result<QList<storage::WorkspaceRecord>> workspaces = m_engine.workspaces().list();
    if (!workspaces) {
        OpenSandboxError::send(*exchange, workspaces.error());
        return;
    }
    QList<OpenSandboxRegistry::Record> matching;
    for (const storage::WorkspaceRecord &workspace : *workspaces) {
        const Result<OpenSandboxRegistry::Record> record = recordOf(workspace.name);
        if (!record || !wantsRunning)
            continue;
        bool matches = true;
        for (const auto &[key, value] : wanted.queryItems(QUrl::FullyDecoded))
            matches = matches && record->metadata.value(key) == value && record->metadata.contains(key);
        if (matches)
            matching.append(*record);
    }
    std::sort(matching.begin(), matching.end(), [](const auto &a, const auto &b) {
        return a.createdAt != b.createdAt ? a.createdAt < b.createdAt : a.id < b.id;
    });
    const qint64 total = matching.size();
    const qint64 pages = (total + *pageSize - 1) / *pageSize;
    QJsonArray items;
    for (qint64 i = (*page - 1) * *pageSize; i < total && items.size() < *pageSize; ++i)
        items.append(sandboxJson(matching[i]));
    exchange->sendJson(200, QJsonObject{
            {QStringLiteral("items"), items},
            {QStringLiteral("pagination"),
             QJsonObject{{QStringLiteral("page"), *page},
                         {QStringLiteral("pageSize"), *pageSize},
                         {QStringLiteral("totalItems"), total},
                         {QStringLiteral("totalPages"), pages},
                         {QStringLiteral("hasNextPage"), *page < pages}}},
    });
}

void OpenSandboxLifecycleApi::get(const ExchangePtr &exchange)
{
    const std::optional<OpenSandboxRegistry::Record> record = sandboxOf(*exchange);
    if (!record)
        return;
    exchange->sendJson(200, sandboxJson(*record));
}

void OpenSandboxLifecycleApi::remove(const ExchangePtr &exchange)
{
    const std::optional<OpenSandboxRegistry::Record> record = sandboxOf(*exchange);
    if (!record)
        return;
    if (const Result<void> removed = m_engine.workspaces().remove(record->id, record->ownsDirectory); !removed) {
        OpenSandboxError::send(*exchange, removed.error(), kSandboxNotFound);
        return;
    }
    exchange->sendEmpty(204);
}

void OpenSandboxLifecycleApi::endpoint(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("id"));
    bool ok = false;
    const int port = exchange->request().param(QStringLiteral("port")).toInt(&ok);
    if (!ok || port < 1 || port > 65535) {
        exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("port must be a number from 1 to 65535"));
        return;
    }
    if (!sandboxOf(*exchange))
        return;
    // Any port has an endpoint (the SDKs ask for egress's too when they create a sandbox), but
    // only execd's leads anywhere: there is no container whose other ports could be reached.
    // The host is the one the client used (the security gate has checked it).
    const QString host = QString::fromLatin1(exchange->request().header("host")).trimmed();
    exchange->sendJson(200, QJsonObject{
            {QStringLiteral("endpoint"), host + OpenSandboxExecdApi::proxyPath(id, port)},
            {QStringLiteral("headers"),
             QJsonObject{{QString::fromLatin1(execdTokenHeader()), QString::fromLatin1(m_token)}}},
    });
}

void OpenSandboxLifecycleApi::renew(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("id"));
    const std::optional<OpenSandboxRegistry::Record> record = sandboxOf(*exchange);
    if (!record)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    const Result<QString> text = json->requiredString(QStringLiteral("expiresAt"));
    if (!text) {
        OpenSandboxError::send(*exchange, text.error());
        return;
    }
    const QDateTime expiresAt = QDateTime::fromString(*text, Qt::ISODateWithMs);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (!expiresAt.isValid() || expiresAt.toMSecsSinceEpoch() <= now
        || expiresAt.toMSecsSinceEpoch() > now + kMaxTimeoutSeconds * 1000) {
        exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("expiresAt must be an RFC 3339 time in the coming year, "
                                           "not '%1'").arg(*text));
        return;
    }
    if (record->expiresAt == 0) {
        // Only sandboxes created with a timeout expire; a workspace made elsewhere never gets one.
        exchange->sendError(409, QStringLiteral("INVALID_REQUEST_BODY"),
                            QStringLiteral("sandbox '%1' does not expire (it was created without a "
                                           "timeout)").arg(id));
        return;
    }
    OpenSandboxRegistry::Record renewed = *record;
    renewed.expiresAt = expiresAt.toMSecsSinceEpoch();
    if (const Result<void> saved = m_registry.put(renewed); !saved)
        qCWarning(lcLifecycle).noquote() << saved.error().message << "- the expiry is kept until a restart";
    exchange->sendJson(200, QJsonObject{{QStringLiteral("expiresAt"), isoTime(renewed.expiresAt)}});
}

void OpenSandboxLifecycleApi::patchMetadata(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("id"));
    const std::optional<OpenSandboxRegistry::Record> record = sandboxOf(*exchange);
    if (!record)
        return;
    const std::optional<JsonBody> json = OpenSandboxError::jsonBodyOf(*exchange);
    if (!json)
        return;
    // JSON merge patch (RFC 7396) of a string map: null removes a key.
    OpenSandboxRegistry::Record patched = *record;
    for (auto it = json->object().begin(); it != json->object().end(); ++it) {
        if (it.value().isNull()) {
            patched.metadata.remove(it.key());
        } else if (it.value().isString()) {
            patched.metadata.insert(it.key(), it.value().toString());
        } else {
            exchange->sendError(400, QStringLiteral("INVALID_REQUEST_BODY"),
                                QStringLiteral("metadata '%1' must be a string, or null to remove it")
                                        .arg(it.key()));
            return;
        }
    }
    if (const Result<void> saved = m_registry.put(patched); !saved) {
        OpenSandboxError::send(*exchange, saved.error());
        return;
    }
    exchange->sendJson(200, sandboxJson(patched));
}

void OpenSandboxLifecycleApi::pauseOrResume(const ExchangePtr &exchange)
{
    if (!sandboxOf(*exchange))
        return;
    notSupported(*exchange, 501, QStringLiteral("a replhost workspace cannot be paused or resumed: "
                                                "it is always running, and its contexts keep their "
                                                "state in storage"));
}

void OpenSandboxLifecycleApi::telemetry(const ExchangePtr &exchange)
{
    exchange->sendEmpty(204);
}

} // namespace replhost::http
