// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jsonbody.h"
#include "mcpcall.h"

#include <QJsonObject>
#include <QString>

#include <functional>

namespace replhost::http {

// One MCP tool: what tools/list says of it, and the code that answers tools/call. The answer
// is a tools/call result (content, structuredContent matching outputSchema, isError), given to
// the reply once, maybe later.
struct McpTool {
    using Reply = std::function<void(const QJsonObject &result)>;
    using Handler = std::function<void(const QJsonObject &arguments, const McpCallPtr &call, Reply reply)>;

    QString name;
    QString title;
    QString description;
    QJsonObject inputSchema;
    QJsonObject outputSchema;
    QJsonObject annotations;
    Handler handler;

    QJsonObject definition() const;

    // readOnlyHint, and for a tool that changes something destructiveHint and idempotentHint;
    // openWorldHint false (every tool acts on this server only).
    static QJsonObject hints(const QString &title, bool readOnly, bool destructive, bool idempotent);
    // A tools/call result that is an error: one text block, isError.
    static QJsonObject failure(const QString &message);
    // A tools/call result with `structured` as structuredContent and as text.
    static QJsonObject success(const QJsonObject &structured);
    // The `workspace` argument's schema, which every tool has.
    static QJsonObject workspaceProperty();
    // A call's arguments, read with the native API's field rules (and its messages).
    static Result<JsonBody> arguments(const QJsonObject &arguments);
    // The `workspace` argument, "default" when absent.
    static QString workspace(const JsonBody &arguments);
};

} // namespace replhost::http
