// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jsonbody.h"

#include <replhost/sdk/result.h>

#include <QString>

#include <optional>

namespace replhost::http {

class HttpExchange;

// Errors of the OpenSandbox-compatible surfaces in OpenSandbox's vocabulary: the same
// {"code", "message"} body as every replhost error, with the codes execd and the lifecycle server
// use, so an SDK's exception carries a code its users recognise. The HTTP status is replhost's
// (ErrorStatus), except that a missing query parameter is MISSING_QUERY.
//
//   not_found → `notFoundCode` (CONTEXT_NOT_FOUND, FILE_NOT_FOUND, SANDBOX_NOT_FOUND)
//   bad_request → INVALID_REQUEST_BODY    unknown_language, unsupported, not_implemented →
//   NOT_SUPPORTED    unauthorized → INVALID_API_KEY    anything else → RUNTIME_ERROR
class OpenSandboxError {
public:
    static void send(HttpExchange &exchange, const Error &error,
                     const QString &notFoundCode = QStringLiteral("NOT_FOUND"));
    static void missingQuery(HttpExchange &exchange, const QString &parameter);
    // 200 with Content-Length: 0 when `result` is a success, else its error.
    static void sendEmptyOr(HttpExchange &exchange, const Result<void> &result,
                            const QString &notFoundCode = QStringLiteral("NOT_FOUND"));
    // The request body as a JSON object, or nothing after answering 400 INVALID_REQUEST_BODY.
    static std::optional<JsonBody> jsonBodyOf(HttpExchange &exchange);
    static QString codeFor(const QString &replhostCode, const QString &notFoundCode);

    // The first error among several results (request fields read one by one), if any.
    template <typename... Results>
    static std::optional<Error> first(const Results &...results)
    {
        std::optional<Error> found;
        auto check = [&found](const auto &result) {
            if (!found && !result)
                found = result.error();
        };
        (check(results), ...);
        return found;
    }
};

} // namespace replhost::http
