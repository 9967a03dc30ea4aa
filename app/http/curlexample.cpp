// SPDX-License-Identifier: Apache-2.0
#include "curlexample.h"

namespace replhost::http {

QString CurlExample::python(const QString &baseUrl, const QString &token, const QString &indent)
{
    const QString url = baseUrl;
    QString text;
    text += indent + QStringLiteral("TOKEN=") + token + QLatin1Char('\n');
    text += indent
            + QStringLiteral("CTX=$(curl -s -H \"Authorization: Bearer $TOKEN\" -d "
                             "'{\"language\":\"python\"}' %1/v1/contexts | grep -o "
                             "'\"id\":\"[^\"]*\"' | head -1 | cut -d'\"' -f4)\n")
                      .arg(url);
    text += indent
            + QStringLiteral("curl -s -H \"Authorization: Bearer $TOKEN\" -d '{\"code\":\"x = 41\"}' "
                             "\"%1/v1/contexts/$CTX/executions?wait=true\"\n")
                      .arg(url);
    text += indent
            + QStringLiteral("curl -N -H \"Authorization: Bearer $TOKEN\" -d '{\"code\":\"x + 1\"}' "
                             "%1/v1/contexts/$CTX/executions\n")
                      .arg(url);
    return text;
}

} // namespace replhost::http
