// SPDX-License-Identifier: Apache-2.0
#include "curlexample.h"

namespace replhost::http {

QString CurlExample::python(const QString &baseUrl, const QString &token, const QString &indent,
                           const QString &workspace, const QString &contextId)
{
    const QString url = workspace.isEmpty() || workspace == QLatin1String("default")
            ? baseUrl + QStringLiteral("/v1")
            : QStringLiteral("%1/v1/workspaces/%2").arg(baseUrl, workspace);
    QString text;
    text += indent + QStringLiteral("TOKEN=") + token + QLatin1Char('\n');
    if (!contextId.isEmpty())
        text += indent + QStringLiteral("CTX=") + contextId + QLatin1Char('\n');
    else
        text += indent
                + QStringLiteral("CTX=$(curl -s -H \"Authorization: Bearer $TOKEN\" -d "
                                 "'{\"language\":\"python\"}' %1/contexts | grep -o "
                                 "'\"id\":\"[^\"]*\"' | head -1 | cut -d'\"' -f4)\n")
                          .arg(url);
    text += indent
            + QStringLiteral("curl -s -H \"Authorization: Bearer $TOKEN\" -d '{\"code\":\"x = 41\"}' "
                             "\"%1/contexts/$CTX/executions?wait=true\"\n")
                      .arg(url);
    // -s as well: without it curl draws its progress meter over the streamed events.
    text += indent
            + QStringLiteral("curl -sN -H \"Authorization: Bearer $TOKEN\" -d '{\"code\":\"x + 1\"}' "
                             "%1/contexts/$CTX/executions\n")
                      .arg(url);
    return text;
}

} // namespace replhost::http
