// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "mcptool.h"

#include "core/contextmanager.h"

#include <functional>
#include <optional>

namespace replhost::http {

// Answers a tools/call that started an execution (run_code) or a command (run_command) once it
// has finished, with McpCodeResult. Meanwhile its output goes out as progress notifications when
// the call asked for them (the progress counts the execution's events), and a cancelled call
// interrupts it through `interrupt` (given the execution's id): the run ends as an interrupted
// run does, and its context keeps its state. When the call can ask its client's user
// (McpCall::canElicit) and `answerInput` is given, each question of the run (an input_request)
// becomes an elicitation, whose text is the answer, and anything else (declined, cancelled, the
// client gone) the end of input; a password is never asked for that way, it gets the end of
// input at once.
//
// Threading: the engine thread.
class McpRunWatch {
public:
    McpRunWatch() = delete;

    // `answerInput` answers the execution's question: the text, or nothing for the end of input.
    using AnswerInput = std::function<void(const QString &executionId, const std::optional<QString> &text)>;
    static void answer(const core::ExecutionPtr &execution, const McpCallPtr &call,
                       std::function<void(const QString &executionId)> interrupt, McpTool::Reply reply,
                       AnswerInput answerInput = nullptr);
};

} // namespace replhost::http
