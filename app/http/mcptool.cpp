// SPDX-License-Identifier: Apache-2.0
#include "mcptool.h"

#include "mcpschema.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace replhost::http {

QJsonObject McpTool::definition() const
{
    return {{QStringLiteral("name"), name},
            {QStringLiteral("title"), title},
            {QStringLiteral("description"), description},
            {QStringLiteral("inputSchema"), inputSchema},
            {QStringLiteral("outputSchema"), outputSchema},
            {QStringLiteral("annotations"), annotations}};
}

QJsonObject McpTool::hints(const QString &title, bool readOnly, bool destructive, bool idempotent)
{
    QJsonObject hints{{QStringLiteral("title"), title},
                      {QStringLiteral("readOnlyHint"), readOnly},
                      {QStringLiteral("openWorldHint"), false}};
    if (!readOnly) {
        hints.insert(QStringLiteral("destructiveHint"), destructive);
        hints.insert(QStringLiteral("idempotentHint"), idempotent);
    }
    return hints;
}

QJsonObject McpTool::failure(const QString &message)
{
    return {{QStringLiteral("content"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                    {QStringLiteral("text"), message}}}},
            {QStringLiteral("isError"), true}};
}

QJsonObject McpTool::success(const QJsonObject &structured)
{
    // The same JSON as text too: clients of revisions before structured content read that.
    return {{QStringLiteral("content"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                    {QStringLiteral("text"),
                                     QString::fromUtf8(QJsonDocument(structured).toJson(QJsonDocument::Compact))}}}},
            {QStringLiteral("structuredContent"), structured},
            {QStringLiteral("isError"), false}};
}

QJsonObject McpTool::workspaceProperty()
{
    return McpSchema::string(QStringLiteral("The workspace (a directory with its contexts and files); "
                                            "\"default\" when absent"));
}

Result<JsonBody> McpTool::arguments(const QJsonObject &arguments)
{
    return JsonBody::parse(QJsonDocument(arguments).toJson(QJsonDocument::Compact), true);
}

QString McpTool::workspace(const JsonBody &arguments)
{
    const Result<QString> workspace = arguments.optionalString(QStringLiteral("workspace"));
    return workspace && !workspace->isEmpty() ? *workspace : QStringLiteral("default");
}

} // namespace replhost::http
