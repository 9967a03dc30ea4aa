// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonObject>

namespace replhost::http {

// The answer of the MCP tools that run something (run_code, run_command): an execution's JSON
// document (core::ExecutionDocument) made into a tools/call result, as an agent reads it.
//
// - content: text blocks for stdout, stderr, the result's text/plain and the error's traceback
//   (only those that are not empty), an image block for every image/png and image/jpeg of the
//   displays and the result, and a line with the status when it is not "ok";
// - structuredContent: {execution_id, context_id, language, status, execution_count,
//   duration_ms, stdout, stderr, result, error, displays, state_lost, exit_code, truncated};
//   `displays` lists each display's MIME types and its text/plain;
// - isError for every status but "ok" (error, timeout, interrupted, aborted).
//
// Text is bounded: stdout and stderr keep at most kTextLimit bytes each (of UTF-8), the
// beginning, with a note giving the execution id under which the whole output is kept; images
// beyond kImageLimit bytes in all are left out with a note too. An agent's context window is
// the scarce thing here, not the server's memory.
//
// Threading: pure functions; any thread.
class McpCodeResult {
public:
    McpCodeResult() = delete;

    static constexpr qsizetype kTextLimit = 32 * 1024;
    static constexpr qsizetype kImageLimit = 8 * 1024 * 1024;

    static QJsonObject fromDocument(const QJsonObject &execution);
    // The outputSchema of the tools that answer with fromDocument().
    static QJsonObject outputSchema();
};

} // namespace replhost::http
