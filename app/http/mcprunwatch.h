// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "mcptool.h"

#include "core/contextmanager.h"

#include <functional>

namespace replhost::http {

// Answers a tools/call that started an execution (run_code) or a command (run_command) once it
// has finished, with McpCodeResult. Meanwhile its output goes out as progress notifications when
// the call asked for them (the progress counts the execution's events), and a cancelled call
// interrupts it through `interrupt` (given the execution's id): the run ends as an interrupted
// run does, and its context keeps its state.
//
// Threading: the engine thread.
class McpRunWatch {
public:
    McpRunWatch() = delete;

    static void answer(const core::ExecutionPtr &execution, const McpCallPtr &call,
                       std::function<void(const QString &executionId)> interrupt, McpTool::Reply reply);
};

} // namespace replhost::http
