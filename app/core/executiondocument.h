// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "execution.h"

#include <replhost/sdk/result.h>

#include <QByteArray>

namespace replhost::core {

// The JSON document of one execution, the answer of `?wait=true` runs and of
// GET /v1/executions/{id} (docs/http-api.md): its identity, status and timing, stdout and stderr
// joined, the result's MIME bundle, display outputs, the error, the done event's cwd, exit code
// and state_lost, and, with `withEvents`, every event. Written as compact JSON bytes directly
// (JsonWriter), without a QJsonObject in between.
//
// Events that left the execution's memory are read back through its archive, a page at a time;
// the archive's errors are returned. Threading: the execution's (the engine thread).
class ExecutionDocument {
public:
    ExecutionDocument() = delete;

    static Result<QByteArray> write(const Execution &execution, bool withEvents = true);
    // The same document as a QJsonObject, for callers that pick fields out of it.
    static Result<QJsonObject> object(const Execution &execution, bool withEvents = true);
};

} // namespace replhost::core
