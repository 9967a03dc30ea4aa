// SPDX-License-Identifier: Apache-2.0
#include "mcpendpoint.h"

#include "httpexchange.h"
#include "mcpanswer.h"
#include "mcpdispatcher.h"
#include "mcpmessage.h"
#include "mcprequestmeta.h"
#include "router.h"
#include "streamlimiter.h"
#include "workspaceroute.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

namespace replhost::http {

namespace {

void sendRpcError(HttpExchange &exchange, int status, const QJsonValue &id, int code, const QString &message,
                  const QJsonValue &data = QJsonValue::Undefined)
{
    exchange.send(status, QByteArrayLiteral("application/json"),
                  McpMessage::compact(McpMessage::error(id, code, message, data)));
}

// The media type of a Content-Type field without its parameters, lower-case.
QByteArray essence(const QByteArray &field)
{
    const qsizetype semicolon = field.indexOf(';');
    return (semicolon < 0 ? field : field.first(semicolon)).trimmed().toLower();
}

// Whether an Accept field admits `type` ("application/json"): listed, or through a wildcard.
bool accepts(const QByteArray &accept, const QByteArray &type)
{
    const QByteArray family = type.first(type.indexOf('/')) + "/*";  // `type` has a '/'

    for (const QByteArray &item : accept.split(',')) {
        const QByteArray range = essence(item);
        if (range == type || range == family || range == "*/*")
            return true;
    }
    return false;
}

QString inFlightKey(const QString &session, const QJsonValue &id)
{
    return session + QLatin1Char('\n') + McpMessage::idKey(id);
}

// A tool call that names no workspace acts on the one the request was sent for
// (X-Replhost-Workspace), which is where a router placed it; one that names a workspace keeps it.
QJsonObject inRoutedWorkspace(QJsonObject message, const QString &workspace)
{
    if (workspace.isEmpty() || message.value(QLatin1String("method")) != QLatin1String("tools/call"))
        return message;
    const QJsonValue paramsValue = message.value(QLatin1String("params"));
    QJsonObject params = paramsValue.toObject();
    const QJsonValue argumentsValue = params.value(QLatin1String("arguments"));
    QJsonObject arguments = argumentsValue.toObject();
    // A malformed call is left for the dispatcher to refuse as it is.
    if (!paramsValue.isObject() || !(argumentsValue.isObject() || argumentsValue.isUndefined())
        || arguments.contains(QLatin1String("workspace")))
        return message;
    arguments.insert(QLatin1String("workspace"), workspace);
    params.insert(QLatin1String("arguments"), arguments);
    message.insert(QLatin1String("params"), params);
    return message;
}

} // namespace

McpEndpoint::McpEndpoint(core::Engine &engine, int sseKeepAliveMs, StreamLimiter &streams)
    : m_keepAliveMs(sseKeepAliveMs),
      m_streams(streams),
      m_dispatcher(std::make_unique<McpDispatcher>(engine)),
      m_inFlight(std::make_shared<InFlight>()),
      m_questions(std::make_shared<InFlight>())
{
}

McpEndpoint::~McpEndpoint() = default;

void McpEndpoint::registerRoutes(Router &router)
{
    router.add("POST", QLatin1String(kPath), [this](const ExchangePtr &exchange) { post(exchange); });
    router.add("DELETE", QLatin1String(kPath), [this](const ExchangePtr &exchange) { remove(exchange); });
}

void McpEndpoint::post(const ExchangePtr &exchange)
{
    const HttpRequest &http = exchange->request();
    if (essence(http.header("content-type")) != "application/json") {
        sendRpcError(*exchange, 415, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("a message to /mcp is sent with Content-Type: application/json"));
        return;
    }
    const QByteArray accept = http.header("accept");
    const bool acceptsJson = accept.isEmpty() || accepts(accept, "application/json");
    const bool acceptsStream = accepts(accept, "text/event-stream");
    if (!acceptsJson && !acceptsStream) {
        sendRpcError(*exchange, 406, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("answers from /mcp are application/json or text/event-stream; send "
                                    "Accept: application/json, text/event-stream"));
        return;
    }

    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(http.body, &parseError);
    const QString headerVersion = QString::fromLatin1(http.header("mcp-protocol-version").trimmed());
    // A request of a stateless revision has no session: whatever Mcp-Session-Id says is ignored.
    if (document.isObject() && McpRequestMeta::isStateless(document.object(), headerVersion)) {
        const QJsonObject message = document.object();
        if (McpMessage::classify(message) == McpMessage::Kind::Request) {
            if (const std::optional<McpRequestMeta::Refusal> refusal = McpRequestMeta::check(message, &http)) {
                sendRpcError(*exchange, refusal->httpStatus, message.value(QLatin1String("id")), refusal->code,
                             refusal->message, refusal->data);
                return;
            }
        }
        // A notification needs nothing: over HTTP a stateless client cancels by closing the
        // request's connection.
        single(exchange, inRoutedWorkspace(message, WorkspaceRoute::ofHeader(http)), {},
               McpRequestMeta::version(message).value_or(McpMessage::statelessVersions().first()), acceptsStream);
        return;
    }

    const QString session = QString::fromLatin1(http.header("mcp-session-id").trimmed());
    QString version;
    if (!session.isEmpty()) {
        version = m_sessions.version(session);
        if (version.isEmpty()) {
            // The spec's signal to start again with initialize.
            sendRpcError(*exchange, 404, QJsonValue(), McpMessage::kInvalidRequest,
                         QStringLiteral("no session '%1' (it ended or the server restarted); send "
                                        "initialize again without Mcp-Session-Id").arg(session));
            return;
        }
    }
    if (!headerVersion.isEmpty()) {
        // (A stateless revision gets here only with a batch, which batch() refuses.)
        if (!McpMessage::isSupportedVersion(headerVersion) && !McpMessage::isStatelessVersion(headerVersion)) {
            sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kInvalidRequest,
                         QStringLiteral("MCP-Protocol-Version %1 is not one this server speaks (%2)")
                                 .arg(headerVersion, McpMessage::supportedVersions().join(QStringLiteral(", "))),
                         QJsonObject{{QStringLiteral("supported"),
                                      QJsonArray::fromStringList(McpMessage::supportedVersions())}});
            return;
        }
        if (!version.isEmpty() && version != headerVersion) {
            sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kInvalidRequest,
                         QStringLiteral("MCP-Protocol-Version %1 is not the revision of this session (%2)")
                                 .arg(headerVersion, version));
            return;
        }
        version = headerVersion;
    }
    if (version.isEmpty())
        version = McpMessage::assumedVersion();

    // QJsonDocument (Qt 6.4) reads objects and arrays only: a bare scalar is JSON all the same,
    // just not a message.
    if (parseError.error != QJsonParseError::NoError
        && QJsonDocument::fromJson("[" + http.body + "]").array().size() == 1) {
        sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("a JSON-RPC message must be an object"));
        return;
    }
    if (parseError.error != QJsonParseError::NoError) {
        sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kParseError,
                     QStringLiteral("the body is not JSON: %1 at offset %2")
                             .arg(parseError.errorString())
                             .arg(parseError.offset));
        return;
    }
    if (document.isArray()) {
        batch(exchange, document.array(), session, version);
        return;
    }
    single(exchange, inRoutedWorkspace(document.object(), WorkspaceRoute::ofHeader(http)), session, version,
           acceptsStream);
}

void McpEndpoint::single(const ExchangePtr &exchange, const QJsonObject &message, const QString &session,
                         const QString &version, bool acceptsStream)
{
    QString why;
    switch (McpMessage::classify(message, &why)) {
    case McpMessage::Kind::Invalid: {
        const QJsonValue id = message.value(QLatin1String("id"));
        sendRpcError(*exchange, 400, id.isString() || id.isDouble() ? id : QJsonValue(),
                     McpMessage::kInvalidRequest, why);
        return;
    }
    case McpMessage::Kind::Notification:
    case McpMessage::Kind::Response:
        notification(message, session);
        exchange->sendEmpty(202);
        return;
    case McpMessage::Kind::Request:
        request(exchange, message, session, version, acceptsStream);
        return;
    }
}

void McpEndpoint::request(const ExchangePtr &exchange, const QJsonObject &message, const QString &session,
                          const QString &version, bool acceptsStream)
{
    const QJsonValue id = message.value(QLatin1String("id"));
    if (message.value(QLatin1String("method")) == QLatin1String("initialize")) {
        if (!session.isEmpty()) {
            sendRpcError(*exchange, 400, id, McpMessage::kInvalidRequest,
                         QStringLiteral("session '%1' is initialized already; to start again, send "
                                        "initialize without Mcp-Session-Id").arg(session));
            return;
        }
        const QJsonObject capabilities = message.value(QLatin1String("params")).toObject()
                                                 .value(QLatin1String("capabilities")).toObject();
        m_dispatcher->handle(message, version, std::make_shared<McpCall>(QJsonValue(), nullptr),
                             [this, exchange, capabilities](const QJsonObject &response) {
                                 const QJsonValue negotiated = response.value(QLatin1String("result"))
                                                                       .toObject()
                                                                       .value(QLatin1String("protocolVersion"));
                                 if (negotiated.isString()) {
                                     exchange->addHeader("Mcp-Session-Id",
                                                         m_sessions.open(negotiated.toString(), capabilities)
                                                                 .toLatin1());
                                     // A page's script may read it (an allowed Origin only gets here).
                                     exchange->addHeader("Access-Control-Expose-Headers", "Mcp-Session-Id");
                                 }
                                 exchange->send(200, QByteArrayLiteral("application/json"),
                                                McpMessage::compact(response));
                             });
        return;
    }

    const QJsonValue token = message.value(QLatin1String("params")).toObject()
                                     .value(QLatin1String("_meta")).toObject()
                                     .value(QLatin1String("progressToken"));
    // A client that takes elicitation is asked the questions of the code a tool call runs, on
    // the call's answer, which is then an event stream.
    const bool elicits = !session.isEmpty() && acceptsStream
            && message.value(QLatin1String("method")) == QLatin1String("tools/call")
            && McpMessage::takesFormElicitation(version, m_sessions.capabilities(session));
    const bool streamable = acceptsStream && (token.isString() || token.isDouble() || elicits);
    StreamLimiter::Lease lease;
    if (streamable) {
        lease = m_streams.admit(*exchange);
        if (!lease)
            return;  // answered 429
    }
    const QString key = inFlightKey(session, id);
    if (!session.isEmpty()) {
        if (const auto running = m_inFlight->value(key).lock()) {
            sendRpcError(*exchange, 400, id, McpMessage::kInvalidRequest,
                         QStringLiteral("request id %1 is in use by a request of this session that has "
                                        "not been answered yet")
                                 .arg(id.toVariant().toString()));
            return;
        }
    }
    auto answer = std::make_shared<McpAnswer>(exchange, streamable, m_keepAliveMs, std::move(lease));
    std::weak_ptr<McpAnswer> weakAnswer = answer;
    auto call = std::make_shared<McpCall>(token, [weakAnswer](const QJsonObject &notification) {
        if (const auto open = weakAnswer.lock())
            open->notify(notification);
    });
    if (!session.isEmpty())
        m_inFlight->insert(key, call);
    if (elicits) {
        std::weak_ptr<McpCall> weakCall = call;
        std::weak_ptr<InFlight> questions = m_questions;
        call->enableElicitation(
                [weakAnswer, weakCall, questions, session](const QJsonObject &question) {
                    const auto open = weakAnswer.lock();
                    const auto table = questions.lock();
                    if (!open || !table || open->isDone())
                        return false;
                    // Questions a client never answered go with their calls.
                    if (table->size() > McpSessions::kMaxSessions)
                        table->removeIf([](InFlight::iterator entry) { return entry.value().expired(); });
                    table->insert(inFlightKey(session, question.value(QLatin1String("id"))), weakCall);
                    open->notify(question);
                    return !open->isDone();
                },
                version >= QLatin1String("2025-11-25"));
        answer->whenClientLeaves([weakCall] {
            if (const McpCallPtr open = weakCall.lock())
                open->endQuestions();
        });
    }
    const bool stateless = McpMessage::isStatelessVersion(version);
    if (stateless && message.value(QLatin1String("method")) == QLatin1String("tools/call")) {
        // The stateless revision asks by answering the call (InputRequiredResult), and the
        // client calls again with the answer and the state it was given.
        const QJsonObject params = message.value(QLatin1String("params")).toObject();
        if (McpMessage::takesFormElicitation(
                    version, params.value(QLatin1String("_meta")).toObject()
                                     .value(QLatin1String(McpRequestMeta::kClientCapabilities)).toObject()))
            call->enableInputRequired();
        call->setRetry(params.value(QLatin1String("requestState")).toString(),
                       params.value(QLatin1String("inputResponses")).toObject());
    }
    // Without sessions there is no notifications/cancelled over HTTP: the client cancels by
    // closing the request's connection.
    if (stateless)
        answer->cancelWhenClientLeaves(call);
    std::weak_ptr<InFlight> inFlight = m_inFlight;
    m_dispatcher->handle(message, version, call,
                         [answer, call, key, inFlight, stateless](const QJsonObject &response) {
                             if (const auto table = inFlight.lock(); table && table->value(key).lock() == call)
                                 table->remove(key);
                             if (call->isCancelled()) {
                                 answer->abandon();  // the spec: no response to a cancelled request
                                 return;
                             }
                             // A stateless revision tells a method this server lacks apart from
                             // a missing endpoint by the JSON-RPC body of a 404.
                             const bool unknownMethod = response.value(QLatin1String("error")).toObject()
                                                                .value(QLatin1String("code")).toInt()
                                     == McpMessage::kMethodNotFound;
                             answer->respond(response, stateless && unknownMethod ? 404 : 200);
                         });
}

void McpEndpoint::batch(const ExchangePtr &exchange, const QJsonArray &messages, const QString &session,
                        const QString &version)
{
    if (version != QLatin1String("2025-03-26")) {
        sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("revision %1 has no batches; send one message per POST").arg(version));
        return;
    }
    if (messages.isEmpty()) {
        sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("an empty batch"));
        return;
    }
    // The responses in the order they come; the answer goes when the last request is done.
    struct Collected {
        QJsonArray responses;
        int pending = 0;
        bool sealed = false;
    };
    auto collected = std::make_shared<Collected>();
    const auto finishIfDone = [exchange, collected] {
        if (!collected->sealed || collected->pending > 0)
            return;
        if (collected->responses.isEmpty())
            exchange->sendEmpty(202);
        else
            exchange->send(200, QByteArrayLiteral("application/json"),
                           QJsonDocument(collected->responses).toJson(QJsonDocument::Compact));
    };
    std::weak_ptr<InFlight> inFlight = m_inFlight;
    for (const QJsonValue &value : messages) {
        QString why;
        const QJsonObject message = inRoutedWorkspace(value.toObject(),
                                                      WorkspaceRoute::ofHeader(exchange->request()));
        const QJsonValue id = message.value(QLatin1String("id"));
        switch (McpMessage::classify(value, &why)) {
        case McpMessage::Kind::Invalid:
            collected->responses.append(McpMessage::error(id.isString() || id.isDouble() ? id : QJsonValue(),
                                                          McpMessage::kInvalidRequest, why));
            break;
        case McpMessage::Kind::Notification:
        case McpMessage::Kind::Response:
            notification(message, session);
            break;
        case McpMessage::Kind::Request: {
            if (message.value(QLatin1String("method")) == QLatin1String("initialize")) {
                collected->responses.append(McpMessage::error(
                        id, McpMessage::kInvalidRequest, QStringLiteral("initialize cannot be part of a batch")));
                break;
            }
            auto call = std::make_shared<McpCall>(QJsonValue(), nullptr);
            const QString key = inFlightKey(session, id);
            if (!session.isEmpty())
                m_inFlight->insert(key, call);
            ++collected->pending;
            m_dispatcher->handle(message, version, call,
                                 [collected, call, key, inFlight, finishIfDone](const QJsonObject &response) {
                                     if (const auto table = inFlight.lock(); table && table->value(key).lock() == call)
                                         table->remove(key);
                                     if (!call->isCancelled())
                                         collected->responses.append(response);
                                     --collected->pending;
                                     finishIfDone();
                                 });
            break;
        }
        }
    }
    collected->sealed = true;
    finishIfDone();
}

void McpEndpoint::notification(const QJsonObject &message, const QString &session)
{
    if (session.isEmpty())
        return;
    // A response answers a question the server asked in this session (elicitation/create).
    if (McpMessage::classify(message) == McpMessage::Kind::Response) {
        const QJsonValue id = message.value(QLatin1String("id"));
        const McpCallPtr call = m_questions->take(inFlightKey(session, id)).lock();
        if (call && call->questionId() == id)
            call->takeResponse(message);
        return;
    }
    // Notifications other than a cancellation need nothing: notifications/initialized only
    // marks the end of the handshake.
    if (message.value(QLatin1String("method")) != QLatin1String("notifications/cancelled"))
        return;
    const QJsonValue requestId = message.value(QLatin1String("params")).toObject().value(QLatin1String("requestId"));
    if (!requestId.isString() && !requestId.isDouble())
        return;
    // An unknown or finished request is no error: the answer and the cancellation crossed.
    if (const McpCallPtr call = m_inFlight->value(inFlightKey(session, requestId)).lock())
        call->cancel();
}

void McpEndpoint::remove(const ExchangePtr &exchange)
{
    const QString session = QString::fromLatin1(exchange->request().header("mcp-session-id").trimmed());
    if (session.isEmpty()) {
        sendRpcError(*exchange, 400, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("DELETE /mcp ends the session named by the Mcp-Session-Id header"));
        return;
    }
    if (!m_sessions.close(session)) {
        sendRpcError(*exchange, 404, QJsonValue(), McpMessage::kInvalidRequest,
                     QStringLiteral("no session '%1'").arg(session));
        return;
    }
    exchange->sendEmpty(204);
}

} // namespace replhost::http
