// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

namespace replhost::http {

// The one place that turns an Error::code (from core, storage or this layer) into an HTTP
// status, so every route answers the same way:
//   bad_request, unknown_language → 400    unauthorized → 401    forbidden → 403
//   not_found → 404    method_not_allowed → 405    conflict, busy, worker_died → 409
//   payload_too_large → 413    range_not_satisfiable → 416    header_fields_too_large → 431
//   too_many_streams → 429    unavailable, locked → 503 (the language is known but its
//   runtime is missing; the message names what to install)    not_implemented, unsupported
//   → 501 (the language cannot do what was asked, e.g. completion)
//   anything else (internal, storage, io, …) → 500.
class ErrorStatus {
public:
    static int forCode(const QString &code);
};

} // namespace replhost::http
