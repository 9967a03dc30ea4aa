// SPDX-License-Identifier: Apache-2.0
#include "mcpdispatcher.h"

#include "mcpfiles.h"
#include "mcpmessage.h"
#include "mcprequestmeta.h"
#include "mcptools.h"

#include <QJsonArray>

#include <optional>

#include "core/engine.h"

namespace replhost::http {

McpDispatcher::McpDispatcher(core::Engine &engine)
    : m_files(std::make_unique<McpFiles>(engine)), m_tools(std::make_unique<McpTools>(engine))
{
    for (McpTool &tool : m_files->tools())
        m_tools->add(std::move(tool));
}

McpDispatcher::~McpDispatcher() = default;

QString McpDispatcher::negotiate(const QString &requested)
{
    return McpMessage::isSupportedVersion(requested) ? requested : McpMessage::supportedVersions().first();
}

namespace {

QJsonObject serverInfo()
{
    return {{QStringLiteral("name"), QStringLiteral("replhost")},
            {QStringLiteral("title"), QStringLiteral("replhost code contexts")},
            {QStringLiteral("version"), core::Engine::appVersion()}};
}

QString instructions()
{
    return QStringLiteral("replhost runs code in persistent contexts: live interpreters (Python, JavaScript, "
                          "TypeScript, Bash, Perl, Java, Go, …) whose state carries over from one run_code call to the "
                          "next. Call run_code with a language to use that language's default context, or "
                          "create_context for a context of your own. interrupt stops a run and keeps the "
                          "state; restart_context starts the context afresh.");
}

// How long a client may keep a result of a stateless revision, and who may share it. What
// depends only on this server's version is the same for every client for as long as the
// process runs; files change under code at any moment, and are one workspace's.
struct CacheHint {
    qint64 ttlMs;
    const char *scope;
};
std::optional<CacheHint> cacheHintFor(const QString &method)
{
    if (method == QLatin1String("server/discover") || method == QLatin1String("tools/list")
        || method == QLatin1String("resources/templates/list"))
        return CacheHint{3600000, "public"};
    if (method == QLatin1String("resources/list") || method == QLatin1String("resources/read"))
        return CacheHint{0, "private"};
    return std::nullopt;
}

} // namespace

QJsonObject McpDispatcher::initializeResult(const QString &version) const
{
    return {{QStringLiteral("protocolVersion"), version},
            {QStringLiteral("capabilities"),
             QJsonObject{{QStringLiteral("tools"), QJsonObject{{QStringLiteral("listChanged"), false}}},
                         {QStringLiteral("resources"), QJsonObject{{QStringLiteral("listChanged"), false},
                                                                   {QStringLiteral("subscribe"), false}}}}},
            {QStringLiteral("serverInfo"), serverInfo()},
            {QStringLiteral("instructions"), instructions()}};
}

QJsonObject McpDispatcher::discoverResult() const
{
    // Lists and resources do not change while the server runs, so nothing is offered to
    // subscribe to (subscriptions/listen is not served).
    return {{QStringLiteral("supportedVersions"), QJsonArray::fromStringList(McpMessage::allVersions())},
            {QStringLiteral("capabilities"),
             QJsonObject{{QStringLiteral("tools"), QJsonObject{}}, {QStringLiteral("resources"), QJsonObject{}}}},
            {QStringLiteral("instructions"), instructions()}};
}

QJsonObject McpDispatcher::asStateless(QJsonObject response, const QString &method)
{
    if (response.contains(QLatin1String("error"))) {
        QJsonObject error = response.value(QLatin1String("error")).toObject();
        if (error.value(QLatin1String("code")).toInt() == McpMessage::kResourceNotFound) {
            error.insert(QStringLiteral("code"), McpMessage::kInvalidParams);
            response.insert(QStringLiteral("error"), error);
        }
        return response;
    }
    QJsonObject result = response.value(QLatin1String("result")).toObject();
    // An InputRequiredResult says so itself.
    if (!result.contains(QLatin1String("resultType")))
        result.insert(QStringLiteral("resultType"), QStringLiteral("complete"));
    QJsonObject meta = result.value(QLatin1String("_meta")).toObject();
    meta.insert(QLatin1String(McpRequestMeta::kServerInfo), serverInfo());
    result.insert(QStringLiteral("_meta"), meta);
    if (const std::optional<CacheHint> hint = cacheHintFor(method)) {
        result.insert(QStringLiteral("ttlMs"), hint->ttlMs);
        result.insert(QStringLiteral("cacheScope"), QLatin1String(hint->scope));
    }
    response.insert(QStringLiteral("result"), result);
    return response;
}

void McpDispatcher::handle(const QJsonObject &request, const QString &version, const McpCallPtr &call,
                           Respond respond)
{
    const QJsonValue id = request.value(QLatin1String("id"));
    const QString method = request.value(QLatin1String("method")).toString();
    const QJsonObject params = request.value(QLatin1String("params")).toObject();
    const bool stateless = McpMessage::isStatelessVersion(version);
    if (stateless) {
        respond = [method, respond = std::move(respond)](const QJsonObject &response) {
            respond(McpDispatcher::asStateless(response, method));
        };
    }
    const auto invalidParams = [&](const QString &why) {
        respond(McpMessage::error(id, McpMessage::kInvalidParams, why));
    };

    if (method == QLatin1String("server/discover")) {
        respond(McpMessage::result(id, discoverResult()));
        return;
    }
    // Both belong to the handshake revisions; the stateless ones removed them.
    if (method == QLatin1String("initialize") && !stateless) {
        const QJsonValue requested = params.value(QLatin1String("protocolVersion"));
        if (!requested.isString()) {
            invalidParams(QStringLiteral("initialize needs params.protocolVersion, a string such as \"%1\"")
                                  .arg(McpMessage::supportedVersions().first()));
            return;
        }
        respond(McpMessage::result(id, initializeResult(negotiate(requested.toString()))));
        return;
    }
    if (method == QLatin1String("ping") && !stateless) {
        respond(McpMessage::result(id, {}));
        return;
    }
    if (method == QLatin1String("tools/list")) {
        respond(McpMessage::result(id, {{QStringLiteral("tools"), m_tools->definitions()}}));
        return;
    }
    if (method == QLatin1String("tools/call")) {
        const QJsonValue name = params.value(QLatin1String("name"));
        if (!name.isString()) {
            invalidParams(QStringLiteral("tools/call needs params.name, the name of a tool from tools/list"));
            return;
        }
        const QJsonValue arguments = params.value(QLatin1String("arguments"));
        if (!arguments.isUndefined() && !arguments.isNull() && !arguments.isObject()) {
            invalidParams(QStringLiteral("params.arguments must be an object"));
            return;
        }
        if (!m_tools->has(name.toString())) {
            invalidParams(QStringLiteral("unknown tool '%1'; tools/list names the tools").arg(name.toString()));
            return;
        }
        m_tools->call(name.toString(), arguments.toObject(), call,
                      [id, respond = std::move(respond)](const QJsonObject &result) {
                          respond(McpMessage::result(id, result));
                      });
        return;
    }
    if (method == QLatin1String("resources/list")) {
        m_files->listResources(id, params, std::move(respond));
        return;
    }
    if (method == QLatin1String("resources/read")) {
        if (!params.value(QLatin1String("uri")).isString()) {
            invalidParams(QStringLiteral("resources/read needs params.uri, a URI from resources/list"));
            return;
        }
        m_files->readResource(id, params, std::move(respond));
        return;
    }
    if (method == QLatin1String("resources/templates/list")) {
        respond(McpMessage::result(id, McpFiles::resourceTemplates()));
        return;
    }
    respond(McpMessage::error(id, McpMessage::kMethodNotFound,
                              QStringLiteral("method '%1' is not one this server has").arg(method)));
}

} // namespace replhost::http
