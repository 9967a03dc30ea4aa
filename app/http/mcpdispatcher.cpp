// SPDX-License-Identifier: Apache-2.0
#include "mcpdispatcher.h"

#include "mcpfiles.h"
#include "mcpmessage.h"
#include "mcptools.h"

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

QJsonObject McpDispatcher::initializeResult(const QString &version) const
{
    return {{QStringLiteral("protocolVersion"), version},
            {QStringLiteral("capabilities"),
             QJsonObject{{QStringLiteral("tools"), QJsonObject{{QStringLiteral("listChanged"), false}}},
                         {QStringLiteral("resources"), QJsonObject{{QStringLiteral("listChanged"), false},
                                                                   {QStringLiteral("subscribe"), false}}}}},
            {QStringLiteral("serverInfo"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("replhost")},
                         {QStringLiteral("title"), QStringLiteral("replhost code contexts")},
                         {QStringLiteral("version"), core::Engine::appVersion()}}},
            {QStringLiteral("instructions"),
             QStringLiteral("replhost runs code in persistent contexts: live interpreters (Python, JavaScript, "
                            "Bash, Perl, Java, Go, …) whose state carries over from one run_code call to the "
                            "next. Call run_code with a language to use that language's default context, or "
                            "create_context for a context of your own. interrupt stops a run and keeps the "
                            "state; restart_context starts the context afresh.")}};
}

void McpDispatcher::handle(const QJsonObject &request, const QString &version, const McpCallPtr &call,
                           Respond respond)
{
    const QJsonValue id = request.value(QLatin1String("id"));
    const QString method = request.value(QLatin1String("method")).toString();
    const QJsonObject params = request.value(QLatin1String("params")).toObject();
    const auto invalidParams = [&](const QString &why) {
        respond(McpMessage::error(id, McpMessage::kInvalidParams, why));
    };

    if (method == QLatin1String("initialize")) {
        const QJsonValue requested = params.value(QLatin1String("protocolVersion"));
        if (!requested.isString()) {
            invalidParams(QStringLiteral("initialize needs params.protocolVersion, a string such as \"%1\"")
                                  .arg(McpMessage::supportedVersions().first()));
            return;
        }
        respond(McpMessage::result(id, initializeResult(negotiate(requested.toString()))));
        return;
    }
    if (method == QLatin1String("ping")) {
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
    Q_UNUSED(version);
    respond(McpMessage::error(id, McpMessage::kMethodNotFound,
                              QStringLiteral("method '%1' is not one this server has").arg(method)));
}

} // namespace replhost::http
