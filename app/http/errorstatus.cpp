// SPDX-License-Identifier: Apache-2.0
#include "errorstatus.h"

#include <QHash>

namespace replhost::http {

int ErrorStatus::forCode(const QString &code)
{
    static const QHash<QString, int> statuses{
        {QStringLiteral("bad_request"), 400},
        {QStringLiteral("unknown_language"), 400},
        {QStringLiteral("unauthorized"), 401},
        {QStringLiteral("forbidden"), 403},
        {QStringLiteral("not_found"), 404},
        {QStringLiteral("method_not_allowed"), 405},
        {QStringLiteral("conflict"), 409},
        {QStringLiteral("busy"), 409},
        {QStringLiteral("worker_died"), 409},
        {QStringLiteral("limit_reached"), 409},
        {QStringLiteral("payload_too_large"), 413},
        {QStringLiteral("range_not_satisfiable"), 416},
        {QStringLiteral("misdirected"), 421},
        {QStringLiteral("too_many_streams"), 429},
        {QStringLiteral("header_fields_too_large"), 431},
        {QStringLiteral("not_implemented"), 501},
        {QStringLiteral("unsupported"), 501},
        {QStringLiteral("unavailable"), 503},
        {QStringLiteral("locked"), 503},
    };
    return statuses.value(code, 500);
}

} // namespace replhost::http
