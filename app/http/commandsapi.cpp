// SPDX-License-Identifier: Apache-2.0
#include "commandsapi.h"

#include "executionreply.h"
#include "httpexchange.h"
#include "jsonbody.h"
#include "router.h"
#include "streamlimiter.h"
#include "workspaceroute.h"

#include "core/engine.h"

#include <QTcpSocket>

#include <climits>

namespace replhost::http {

CommandsApi::CommandsApi(core::Engine &engine, int sseKeepAliveMs, StreamLimiter &streams)
    : m_engine(engine), m_keepAliveMs(sseKeepAliveMs), m_streams(streams)
{
}

void CommandsApi::registerRoutes(Router &router)
{
    auto bind = [this](void (CommandsApi::*handler)(const ExchangePtr &)) {
        return [this, handler](const ExchangePtr &exchange) { (this->*handler)(exchange); };
    };
    for (const QString &prefix : WorkspaceRoute::prefixes()) {
        router.add("POST", prefix + QStringLiteral("/commands"), bind(&CommandsApi::run));
        router.add("GET", prefix + QStringLiteral("/commands/{cid}"), bind(&CommandsApi::get));
        router.add("GET", prefix + QStringLiteral("/commands/{cid}/events"), bind(&CommandsApi::events));
        router.add("POST", prefix + QStringLiteral("/commands/{cid}/interrupt"), bind(&CommandsApi::interrupt));
    }
}

void CommandsApi::run(const ExchangePtr &exchange)
{
    const Result<JsonBody> json = JsonBody::parse(exchange->request().body);
    if (!json) {
        exchange->sendError(json.error());
        return;
    }
    const Result<QString> command = json->requiredString(QStringLiteral("command"));
    if (!command) {
        exchange->sendError(command.error());
        return;
    }
    const Result<QString> cwd = json->optionalString(QStringLiteral("cwd"));
    const Result<QMap<QString, QString>> env = json->stringMap(QStringLiteral("env"));
    const Result<int> timeout = json->optionalInt(QStringLiteral("timeout_ms"), 0, 0, INT_MAX);
    if (!cwd || !env || !timeout) {
        exchange->sendError(!cwd ? cwd.error() : !env ? env.error() : timeout.error());
        return;
    }
    core::CommandRequest request;
    request.workspace = WorkspaceRoute::of(*exchange);
    request.command = *command;
    request.cwd = *cwd;
    request.env = *env;
    request.timeoutMs = *timeout;

    ExecutionReply::start(exchange, [&] { return m_engine.commands().run(request); },
                          m_keepAliveMs, m_streams);
}

core::ExecutionPtr CommandsApi::find(const ExchangePtr &exchange)
{
    const QString id = exchange->request().param(QStringLiteral("cid"));
    const QString ws = WorkspaceRoute::of(*exchange);
    const Result<core::ExecutionPtr> command = m_engine.commands().command(id);
    if (!command || (*command)->workspace() != ws) {
        exchange->sendError(404, QStringLiteral("not_found"),
                            QStringLiteral("no running or recent command '%1' in workspace '%2'")
                                    .arg(id, ws));
        return nullptr;
    }
    return *command;
}

void CommandsApi::get(const ExchangePtr &exchange)
{
    if (const core::ExecutionPtr command = find(exchange))
        ExecutionReply::sendDocument(*exchange, *command);
}

void CommandsApi::events(const ExchangePtr &exchange)
{
    ExecutionReply::stream(exchange, [this, exchange] { return find(exchange); }, m_keepAliveMs,
                           m_streams);
}

void CommandsApi::interrupt(const ExchangePtr &exchange)
{
    if (const core::ExecutionPtr command = find(exchange)) {
        ExecutionReply::interrupt(*exchange, *command, QStringLiteral("command"), [&] {
            return m_engine.commands().interrupt(command->id());
        });
    }
}

} // namespace replhost::http
